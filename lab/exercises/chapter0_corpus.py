"""How chapter 0's checks judge a reply: as the corpus test does.

`outcome` is what the learner's parser makes of a reply, in the shape of a corpus
case's `expect`; `first_miss` finds the first made reply it reads wrongly, and
`corpus_problem` whether `tests/data/react_replies.jsonl` is as an exercise leaves it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import chapter0_replies as made
from .check import REPO, Said, Verdict

CORPUS = REPO / "tests" / "data" / "react_replies.jsonl"
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


def corpus_problem(cases: list[dict[str, Any]], moved: str) -> Verdict | None:
    """Why the corpus is not as the exercise leaves it, or None: the moved case keeps its
    reply and expects the action it now gives, and every case gives what it expects."""
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
                "tests/test_v0_parser.py` shows them all)",
                "把每一条的 `expect` 改成解析器现在给出的结果"
                "（`pytest tests/test_v0_parser.py` 会全部列出）",
            )
            return Verdict(False, seen, hint)
    return None
