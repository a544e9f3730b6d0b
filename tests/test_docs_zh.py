"""The Chinese docs (docs/zh, and each package's README.zh.md) read as written in
Chinese: one term per idea (docs/zh/glossary.md), full-width punctuation, no
hard-wrapped paragraphs, emphasis that renders, diagrams with Chinese labels."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.markdown import code_line_numbers, without_code_spans

pytestmark = pytest.mark.docs  # pins the docs: see README, "Two commands"

REPO = Path(__file__).resolve().parent.parent
ZH_DOCS = sorted([*(REPO / "docs/zh").glob("*.md"), *REPO.glob("*/README.zh.md")])
CJK = r"\u3400-\u9fff\uf900-\ufaff"
CJK_PUNCTUATION = "，。：；！？、（）“”‘’《》「」【】…—"
HAN = re.compile(f"[{CJK}]")

# Variants the glossary replaces, as patterns, with the term to use instead.  The
# glossary itself names them (that is its job), so it is not checked for them.
BANNED = {
    "录音带": "录像带",
    "磁带": "录像带",
    "重放": "回放",
    "分派": "分发（分发表）",
    "词元": "token",
    "秘钥": "密钥",
    "供应商": "服务商",
    "提供商": "服务商",
    "子代理": "子智能体",
    "回合": "轮",
    "观察结果": "观察",
    "系统提示(?!词)": "系统提示词",
    "工作文件夹": "工作目录",
    "(?<!演示)工作区": "演示工作区（demo workspace）或工作目录（work directory）",
    "待办列表": "待办清单",
    "工具模式": "工具 schema",
    "幻觉观察": "编造的观察",
}
# English terms the glossary translates: in Chinese prose they appear only as the
# gloss after the Chinese term at its first use, e.g. 录像带（cassette）.
ENGLISH_ONLY_AS_GLOSS = {"cassette": "录像带（cassette）", "key": "API 密钥（API key）"}


def prose(doc: Path) -> list[tuple[int, str]]:
    """(line number, text) of every line outside code blocks, code spans removed."""
    text = doc.read_text(encoding="utf-8")
    code = code_line_numbers(text)
    return [
        (number, without_code_spans(line))
        for number, line in enumerate(text.splitlines(), start=1)
        if number not in code
    ]


def relative(path: Path) -> str:
    return str(path.relative_to(REPO))


@pytest.mark.parametrize("doc", [d for d in ZH_DOCS if d.name != "glossary.md"], ids=relative)
def test_one_term_per_idea(doc: Path) -> None:
    found = []
    for number, line in prose(doc):
        line = re.sub(r"\]\([^)]*\)", "]", line)  # link targets are paths, not prose
        for pattern, term in BANNED.items():
            for match in re.finditer(pattern, line):
                found.append(f"{relative(doc)}:{number}: '{match.group(0)}', write {term}")
        for english, gloss in ENGLISH_ONLY_AS_GLOSS.items():
            chinese, bracket = gloss.split("（")
            unglossed = re.sub(rf"{chinese}\*?（{bracket}", "", line)
            if re.search(rf"(?<![\w-]){english}(?![\w-])", unglossed, re.IGNORECASE):
                found.append(
                    f"{relative(doc)}:{number}: '{english}' in Chinese prose; write {chinese} "
                    f"(the English only as a gloss at first use: {gloss})"
                )
    assert not found, "terms not fixed by docs/zh/glossary.md:\n" + "\n".join(found)


@pytest.mark.parametrize("doc", ZH_DOCS, ids=relative)
def test_punctuation_between_chinese_characters_is_full_width(doc: Path) -> None:
    wrong = [
        f"{relative(doc)}:{number}: '{match.group(0)}'"
        for number, line in prose(doc)
        for match in re.finditer(f"[{CJK}][,:;!?()][{CJK}]|[{CJK}][,;]|[,;(][{CJK}]", line)
    ]
    assert not wrong, "ASCII punctuation inside Chinese text (use ，：；（）):\n" + "\n".join(wrong)


BLOCK_START = re.compile(r"\s*([-*+] |\d+\. |#|\||>|<!--|```)")


@pytest.mark.parametrize("doc", ZH_DOCS, ids=relative)
def test_paragraphs_are_not_hard_wrapped(doc: Path) -> None:
    """One paragraph, one line: a line break inside Chinese text can render as a space."""
    lines = dict(prose(doc))
    wrapped = [
        f"{relative(doc)}:{number + 1}"
        for number, line in lines.items()
        if line.strip()
        and not line.lstrip().startswith(("|", "<!--"))
        and lines.get(number + 1, "").strip()
        and not BLOCK_START.match(lines[number + 1])
        and (HAN.search(line) or HAN.search(lines[number + 1]))
    ]
    assert not wrapped, "a paragraph continues on the next line:\n" + "\n".join(wrapped)


EMPHASIS = re.compile(r"(?<![*\w])(\*\*?)(?![*\s])(.+?)(?<![*\s])\1(?!\*)")


@pytest.mark.parametrize("doc", ZH_DOCS, ids=relative)
def test_emphasis_renders_next_to_chinese_punctuation(doc: Path) -> None:
    """`*检查：*继续` does not render: a closing `*` after punctuation needs a space or
    punctuation after it. Keep the punctuation outside: `*检查*：继续`."""
    broken = []
    for number, line in prose(doc):
        for match in EMPHASIS.finditer(line):
            after = line[match.end() : match.end() + 1]
            before = line[match.start() - 1 : match.start()] if match.start() else ""
            closes_badly = match.group(2)[-1] in CJK_PUNCTUATION and HAN.match(after or " ")
            opens_badly = match.group(2)[0] in CJK_PUNCTUATION and HAN.match(before or " ")
            if closes_badly or opens_badly:
                broken.append(f"{relative(doc)}:{number}: {match.group(0)}{after}")
    assert not broken, "emphasis that will not render:\n" + "\n".join(broken)


DIAGRAM = re.compile("[▲▼◄►┌┐└┘┬┴├┤]")


@pytest.mark.parametrize("doc", ZH_DOCS, ids=relative)
def test_diagrams_have_chinese_labels(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    for block in re.findall(r"^```\n(.*?)^```", text, re.DOTALL | re.MULTILINE):
        if DIAGRAM.search(block):
            assert HAN.search(block), f"{relative(doc)}: a diagram without Chinese labels"
