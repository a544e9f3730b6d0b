"""How chapter 0's checks judge a reply: as the corpus test does.

`outcome` is what the learner's parser makes of a reply, in the shape of a corpus
case's `expect`; `first_miss` finds the first made reply it reads wrongly, and
`corpus_problem` whether `tests/data/react_replies.jsonl` is as an exercise leaves it.
An exercise moves one case; every other case the course ships must stay as it is, or a
parser that breaks a variant could pass by changing what that case expects.  So the
shipped cases are known here by a digest of their reply and what it expects
(`chapter0_corpus.digests`, which `tests/v0_react_text/test_v0_parser.py` keeps true).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from . import chapter0_replies as made
from .check import REPO, Said, Verdict

CORPUS = REPO / "tests" / "data" / "react_replies.jsonl"
DIGESTS = Path(__file__).with_name("chapter0_corpus.digests")  # "id digest", a line each
# The texts of the two cases the exercises move, as the course ships them: the exercise
# changes what the case expects, never the reply itself.
SHIPPED = {
    "single-backticks": 'Action: bash\nAction Input: `{"command": "ls"}`',
    "zh-translated-keywords": '思考：我先看看有哪些文件。\n行动：bash\n行动输入：{"command": "ls"}',
}
CHINESE_LINE = re.compile(
    r"^[ \t]*(?:\*\*[ \t]*)?(思考|行动输入|行动|最终答案)[ \t]*(?:\*\*)?[:：]", re.M
)


# --- judging a reply the way the corpus test does ----------------------------------------


def outcome(text: str) -> dict[str, Any]:
    """What the learner's parser makes of `text`, in the corpus's `expect` shape."""
    from v0_react_text import parser

    try:
        step = parser.parse(text)
    except parser.FormatError as error:
        return {"type": "error", "message": str(error)}
    except Exception as error:  # the parser's contract is FormatError only: say what broke
        return {"type": "crash", "message": repr(error)}
    if isinstance(step, parser.Action):
        return {"type": "action", "tool": step.tool, "args": step.args, "thought": step.thought}
    return {"type": "final", "answer": step.answer, "thought": step.thought}


def meets(got: dict[str, Any], expect: dict[str, Any]) -> bool:
    """Whether a parse outcome is what a corpus case (or a made reply) expects."""
    if got["type"] != expect["type"]:
        return False
    if expect["type"] == "error":
        return all(phrase in got["message"] for phrase in expect.get("message_contains", []))
    return all(got.get(key) == value for key, value in expect.items())


def shown(got: dict[str, Any]) -> str:
    if got["type"] in ("error", "crash"):
        return f"{got['type']}: {got['message']}"
    return json.dumps({k: v for k, v in got.items() if k != "type"}, ensure_ascii=False)


def first_miss(replies: list[made.Reply]) -> tuple[made.Reply, dict[str, Any]] | None:
    """The first reply the learner's parser does not read as it must, and what it gave."""
    for reply in replies:
        got = outcome(reply.text)
        if not meets(got, reply.expect):
            return reply, got
    return None


def missed(reply: made.Reply, got: dict[str, Any]) -> Said:
    """The verdict's account of a reply read wrongly: the reply itself, to reproduce it."""
    error = reply.expect["type"] == "error"
    return Said(
        f"the reply {reply.text!r} gave {shown(got)}; it should give "
        + ("a format error" if error else shown(reply.expect)),
        f"回复 {reply.text!r} 得到 {shown(got)}；应当得到 "
        + ("格式错误" if error else shown(reply.expect)),
    )


def corpus() -> list[dict[str, Any]]:
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def digest(case: dict[str, Any]) -> str:
    """What a case is, as a line of hex: its reply and what it expects (not its note)."""
    words = json.dumps([case["text"], case["expect"]], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(words.encode("utf-8")).hexdigest()[:16]


def shipped_digests() -> dict[str, str]:
    """The digest of each case the course ships, by id, but the cases the exercises move."""
    lines = DIGESTS.read_text(encoding="utf-8").splitlines()
    return dict(line.split() for line in lines if line.strip())


def changed_case(cases: list[dict[str, Any]]) -> str | None:
    """The id of a shipped case (not one an exercise moves) that is gone or changed."""
    found: dict[str, set[str]] = {}  # each id's digests: a case added under a shipped id too
    for case in cases:
        found.setdefault(case["id"], set()).add(digest(case))
    for case_id, shipped in shipped_digests().items():
        if found.get(case_id) != {shipped}:
            return case_id
    return None


def corpus_problem(cases: list[dict[str, Any]], moved: str) -> Verdict | None:
    """Why the corpus is not as the exercise leaves it, or None: the moved case keeps its
    reply and expects the action it now gives, every other shipped case is as shipped, and
    every case gives what it expects."""
    case = next((c for c in cases if c["id"] == moved), None)
    if case is None or case["text"] != SHIPPED[moved]:
        seen = Said(
            f"the corpus case `{moved}` is gone or its reply was changed",
            f"语料里的 `{moved}` 不见了，或者它的回复被改过",
        )
        hint = Said(
            f"keep its text {SHIPPED[moved]!r} and change only its `expect`",
            f"保留它的文本 {SHIPPED[moved]!r}，只改它的 `expect`",
        )
        return Verdict(False, seen, hint)
    changed = changed_case(cases)
    if changed:
        seen = Said(
            f"the corpus case `{changed}` is gone, or its reply or what it expects was changed",
            f"语料里的 `{changed}` 不见了，或者它的回复或期望被改过",
        )
        hint = Said(
            f"the exercise moves `{moved}` alone: put `{changed}` back as the course ships it "
            "and make the parser give what it expects",
            f"这个练习只移动 `{moved}`：把 `{changed}` 恢复成课程发布时的样子，"
            "再让解析器给出它期望的结果",
        )
        return Verdict(False, seen, hint)
    for case in cases:
        got = outcome(case["text"])
        if not meets(got, case["expect"]):
            seen = Said(
                f"the corpus case `{case['id']}` expects {case['expect']['type']}, "
                f"the parser gives {shown(got)}",
                f"语料里的 `{case['id']}` 期望 {case['expect']['type']}，解析器给出 {shown(got)}",
            )
            hint = Said(
                "make each case's `expect` what the parser now gives (`pytest "
                "tests/v0_react_text/test_v0_parser.py` shows them all)",
                "把每一条的 `expect` 改成解析器现在给出的结果"
                "（`pytest tests/v0_react_text/test_v0_parser.py` 会全部列出）",
            )
            return Verdict(False, seen, hint)
    return None
