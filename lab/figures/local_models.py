"""A real local model's figures: what its server let through, and its recorded runs.

Neither is measured when the docs are printed, since no model runs then.  What a
server lets through was measured by `python -m lab.server_check --json FILE` against
the running server, one file per setting in `lab/recorded/server-check/`; the runs were
recorded by `python -m lab compare --model SPEC --record-dir DIR` and are replayed here,
their tools running for real in a scratch copy of the task, as `--replay-dir` replays them.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from lab.compare.comparison import compare, plan
from lab.compare.progress import Progress
from lab.compare.report import task_table
from lab.compare.sources import Replayed
from lab.server_check import Probe, load, verdicts
from lab.tasks import load_task

from .demos import scratch_folder
from .markdown import REPO, table

RECORDED = REPO / "lab" / "recorded"
SERVER_CHECKS = RECORDED / "server-check"

ZH = {
    "server setting": "服务配置",
    "task, without → with the tools": "任务，不带 → 带上工具",
    'a call\'s result, "ok" → 60 lines': '调用的结果，"ok" → 60 行',
    "a question that needs no tool": "一个不需要工具的问题",
    "arrive": "送到了",
    "dropped": "被丢掉",
    "tokens in": "输入 token",
    "the answer": "回答",
    "no text": "没有文本",
    "an answer": "是回答",
    "no answer": "不是回答",
    "no `--chat_format`: the model's own template": "不加 `--chat_format`：模型自带的模板",
    "calls": "调用",
}


def said(text: str, lang: str) -> str:
    return ZH.get(text, text) if lang == "zh" else text


def server_checks() -> list[tuple[dict[str, Any], list[Probe]]]:
    """Every setting measured, in the order of their file names."""
    return [load(path) for path in sorted(SERVER_CHECKS.glob("*.json"))]


def pair(first: int, second: int, arrived: bool, lang: str) -> str:
    verdict = said("arrive" if arrived else "dropped", lang)
    colon = "：" if lang == "zh" else ": "
    return f"{first:,} → {second:,} {said('tokens in', lang)}{colon}{verdict}"


def answer(probe: Probe, verdict: str, lang: str) -> str:
    """What the model's reply to a question that needs no tool held, and whether the agent
    takes it for an answer (`verdicts` in lab/server_check.py)."""
    text = probe.text.strip()
    parts = [f"`{json.dumps(text[:40], ensure_ascii=False)}`" if text else said("no text", lang)]
    parts[0] += ("：" if lang == "zh" else ": ") + said(
        "an answer" if verdict.startswith("arrives") else "no answer", lang
    )
    if probe.tool_calls:
        calls = ", ".join(f"`{call.strip()}`" for call in probe.tool_calls)
        parts.append(f"{said('calls', lang)} {calls}")
    return ("；" if lang == "zh" else "; ").join(parts)


def server_check(lang: str = "en") -> str:
    """Per server setting: did the tools arrive, did a call's result, what a plain answer was.

    The prompt tokens are the server's own count; a part arrived when it added at least a
    quarter of its estimated size (`lab/server_check.py`, `verdicts`)."""
    headers = [
        "server setting",
        "task, without → with the tools",
        'a call\'s result, "ok" → 60 lines',
        "a question that needs no tool",
    ]
    rows = []
    for kept, probes in server_checks():
        bare, tooled, short, long, question = probes
        judged = verdicts(probes)
        rows.append(
            [
                said(kept["setting"], lang),
                pair(
                    bare.prompt_tokens,
                    tooled.prompt_tokens,
                    judged["tools"].startswith("arrive"),
                    lang,
                ),
                pair(
                    short.prompt_tokens,
                    long.prompt_tokens,
                    judged["results"].startswith("arrive"),
                    lang,
                ),
                answer(question, judged["text"], lang),
            ]
        )
    return table([said(header, lang) for header in headers], rows)


def replayed_records(folder: str, task: str) -> list:
    """Every chapter's recorded run of `task` in lab/recorded/FOLDER, replayed and checked."""
    source = Replayed(RECORDED / folder)
    with scratch_folder() as scratch:
        jobs, _ = plan([load_task(task)], sorted_chapters(source, task), 1, source)
        quiet = Progress(io.StringIO())
        return compare(jobs, source, progress=quiet, scratch=scratch).records


def sorted_chapters(source: Replayed, task: str) -> list[str]:
    """The chapters with a finished run of `task` (a recording still growing is `.partial`)."""
    return sorted({path.parent.name for path in (source.folder / task).glob("*/*.jsonl")})


def recorded_table(folder: str, task: str, lang: str = "en") -> str:
    """The table `python -m lab compare --replay-dir lab/recorded/FOLDER` prints for `task`,
    under the line that says which model and day the runs come from."""
    records = replayed_records(folder, task)
    first = next(Path(RECORDED, folder, task).glob("*/*.jsonl"))
    header = json.loads(first.read_text(encoding="utf-8").splitlines()[0])
    # The setup (weights, server, flags) stays in the headers: the doc around says it.
    source = f"`{header['model']}` · {header['recorded_at'][:10]}"
    lead = ("录制：" if lang == "zh" else "Recorded: ") + source
    return lead + "\n\n" + task_table(records, wall=False, lang=lang, columns=None)
