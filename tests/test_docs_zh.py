"""The Chinese docs (docs/zh, and each package's README.zh.md) read as written in
Chinese: one term per idea (docs/zh/glossary.md), full-width punctuation, no
hard-wrapped paragraphs, emphasis that renders, diagrams with Chinese labels.  The
terms are checked wherever a learner reads Chinese: the notebooks' text and the
Chinese labels of the lab's tables, figures and viewer too."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.markdown import code_line_numbers, without_code_spans

pytestmark = pytest.mark.docs  # pins the docs: see README, "Two commands"

REPO = Path(__file__).resolve().parent.parent
ZH_DOCS = sorted(
    [*(REPO / "docs/zh").glob("*.md"), *REPO.glob("README.zh.md"), *REPO.glob("*/README.zh.md")]
)
ZH_NOTEBOOKS = sorted((REPO / "notebooks/zh").glob("*.ipynb"))
# Modules whose Chinese strings are labels a learner sees (bench_* hold test data).
LABEL_MODULES = sorted(p for p in (REPO / "lab").glob("*.py") if not p.name.startswith("bench"))
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
    "检查程序": "检查器（checker）",
    "最大上下文|上下文峰值": "峰值上下文（peak context）",
    "摘要行": "汇总行（summary line）",
    "总结": "报告（子智能体的）或摘要（压缩的）",
    "缺陷": "bug",
    "分叉": "fork",
    "应答": "响应（HTTP 的）或回复（模型的）",
    "倒排列表": "倒排表",
    "道门": "入口（`run_tool`）",
    "形状": "格式或结构",
    "一台服务(?!器)": "一个服务",
    r"第 ?\d ?级|(?<![上量])级(?=[ |）])": "阶段（stage）",
    "(?:章|文本|协议)对(?:第|工具)": "X 与 Y",
    "导论": "导言",
    "检索到的记忆": "召回的记忆（recall）",
    "笔记本电脑": "电脑：笔记本只指 Jupyter 的笔记本（notebook）",
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


def notebook_text(notebook: Path) -> list[tuple[str, str]]:
    """(cell and line, text) of the Chinese a notebook shows: its Markdown cells, and
    the Chinese string literals of its code cells (titles, axis labels, table headers)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    found = []
    for index, cell in enumerate(cells):
        source = "".join(cell["source"])
        lines = source.splitlines() if cell["cell_type"] == "markdown" else chinese_strings(source)
        found += [(f"cell {index}", without_code_spans(line)) for line in lines]
    return found


def chinese_strings(source: str) -> list[str]:
    """The string literals holding Chinese in a piece of Python source."""
    pairs = re.findall(r"\"([^\"\n]*)\"|'([^'\n]*)'", source)
    return [string for pair in pairs for string in pair if HAN.search(string)]


def label_text(module: Path) -> list[tuple[str, str]]:
    """(line, text) of the Chinese strings a lab module puts in tables, figures, the viewer."""
    text = module.read_text(encoding="utf-8")
    return [
        (str(number), string)
        for number, line in enumerate(text.splitlines(), start=1)
        for string in chinese_strings(line)
    ]


def misused_terms(where: str, lines: list[tuple[object, str]]) -> list[str]:
    """Each variant the glossary replaces, and each unglossed English term, in these lines."""
    found = []
    for number, line in lines:
        line = re.sub(r"\]\([^)]*\)", "]", line)  # link targets are paths, not prose
        for pattern, term in BANNED.items():
            for match in re.finditer(pattern, line):
                found.append(f"{where}:{number}: '{match.group(0)}', write {term}")
        for english, gloss in ENGLISH_ONLY_AS_GLOSS.items():
            chinese, bracket = gloss.split("（")
            unglossed = re.sub(rf"{chinese}\*{{0,2}}（{bracket}", "", line)
            if re.search(rf"(?<![\w-]){english}(?![\w-])", unglossed, re.IGNORECASE):
                found.append(
                    f"{where}:{number}: '{english}' in Chinese prose; write {chinese} "
                    f"(the English only as a gloss at first use: {gloss})"
                )
    return found


@pytest.mark.parametrize("doc", [d for d in ZH_DOCS if d.name != "glossary.md"], ids=relative)
def test_one_term_per_idea(doc: Path) -> None:
    found = misused_terms(relative(doc), prose(doc))
    assert not found, "terms not fixed by docs/zh/glossary.md:\n" + "\n".join(found)


@pytest.mark.parametrize("notebook", ZH_NOTEBOOKS, ids=relative)
def test_notebooks_use_the_glossary_terms(notebook: Path) -> None:
    found = misused_terms(relative(notebook), notebook_text(notebook))
    assert not found, "terms not fixed by docs/zh/glossary.md:\n" + "\n".join(found)


@pytest.mark.parametrize("module", LABEL_MODULES, ids=relative)
def test_lab_labels_use_the_glossary_terms(module: Path) -> None:
    found = misused_terms(relative(module), label_text(module))
    assert not found, "terms not fixed by docs/zh/glossary.md:\n" + "\n".join(found)


ITALIC = re.compile(r"(?<![*A-Za-z0-9_\\])\*(?![*\s])[^*]*?[" + CJK + r"][^*]*?(?<![*\s])\*(?!\*)")


@pytest.mark.parametrize("doc", ZH_DOCS, ids=relative)
def test_no_italics_on_chinese_text(doc: Path) -> None:
    """Chinese has no italic type: a slanted 汉字 reads as a rendering fault. Use **bold**."""
    slanted = [
        f"{relative(doc)}:{number}: {match.group(0)}"
        for number, line in prose(doc)
        for match in ITALIC.finditer(line)
    ]
    assert not slanted, "italics on Chinese text (write **bold**):\n" + "\n".join(slanted)


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


def chinese_counterpart(path: Path) -> Path | None:
    """The Chinese page of an English one: docs/en/X.md, notebooks/en/X, a README.md."""
    parts = path.relative_to(REPO).parts
    if parts[:2] in (("docs", "en"), ("notebooks", "en")):
        return REPO.joinpath(parts[0], "zh", *parts[2:])
    if path.name == "README.md":
        return path.with_name("README.zh.md")
    return None


@pytest.mark.parametrize("doc", ZH_DOCS, ids=relative)
def test_chinese_pages_link_to_chinese_pages(doc: Path) -> None:
    """A reader of Chinese follows a link to the Chinese page where there is one; only the
    language switch at the top leads to the English page."""
    english = []
    for number, line in prose(doc):
        for text, target in re.findall(r"\[([^\]]*)\]\(([^)\s#]+)[^)]*\)", line):
            if text == "English" or re.match(r"[a-z]+:", target):
                continue
            path = (doc.parent / target).resolve()
            counterpart = chinese_counterpart(path) if REPO in path.parents else None
            if counterpart and counterpart != path and counterpart.exists():
                english.append(f"{relative(doc)}:{number}: {target}, write {counterpart.name}")
    assert not english, "links to English pages that have a Chinese one:\n" + "\n".join(english)


@pytest.mark.parametrize(
    "doc",
    sorted([*(REPO / "docs/en").glob("*.md"), *(REPO / "docs/zh").glob("*.md")]),
    ids=relative,
)
def test_every_page_opens_with_a_language_switch(doc: Path) -> None:
    other = "zh" if doc.parent.name == "en" else "en"
    third = doc.read_text(encoding="utf-8").splitlines()[2]
    link = f"](../{other}/{doc.name})"
    assert link in third, f"{relative(doc)}: line 3 should switch language, linking {link[2:-1]}"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_lab_flag_table_lists_every_flag_of_compare(lang: str) -> None:
    """docs/<lang>/lab.md's table of `python -m lab compare` flags, against its parser."""
    from lab.compare.command import build_parser

    flags = {
        flag
        for action in build_parser()._actions
        for flag in action.option_strings
        if flag.startswith("--") and flag != "--help"
    }
    text = (REPO / "docs" / lang / "lab.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `(--[\w-]+)", text, re.M))
    assert flags <= listed, f"docs/{lang}/lab.md's flag table lacks {sorted(flags - listed)}"


IT_PER_1000 = 6  # 它 per 1,000 Chinese characters of a page, at most: its referent stays clear
LONGEST_SENTENCE = 100  # characters of one sentence, at most
FIGURE = re.compile(r"^<!-- figure: .*?^<!-- /figure -->$", re.DOTALL | re.MULTILINE)


def sentences(doc: Path) -> list[tuple[int, str]]:
    """(line, sentence) of a page's own prose: not code, not a figure the code prints
    (`python -m lab.figures` writes those), code spans and link targets left out; a
    sentence ends after 。！？, at the end of a line, and at a table cell's edge."""
    text = FIGURE.sub(lambda block: "\n" * block.group(0).count("\n"), doc.read_text("utf-8"))
    code = code_line_numbers(text)
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if number in code:
            continue
        line = re.sub(r"\]\([^)]*\)", "]", without_code_spans(line))
        for cell in line.split("|"):
            found += [(number, s.strip()) for s in re.split(r"(?<=[。！？])", cell) if s.strip()]
    return found


@pytest.mark.parametrize("doc", ZH_DOCS, ids=relative)
def test_it_is_used_only_where_its_referent_is_plain(doc: Path) -> None:
    """它 stands for a noun the reader must find again: written Chinese names the thing,
    or leaves the subject out, far more often than English says "it"."""
    text = "".join(sentence for _, sentence in sentences(doc))
    its, han = text.count("它"), len(HAN.findall(text))
    allowed = IT_PER_1000 * han // 1000
    lines = sorted({number for number, sentence in sentences(doc) if "它" in sentence})
    assert its <= allowed, (
        f"{relative(doc)}: 它 {its} times in {han:,} characters, at most {allowed} "
        f"({IT_PER_1000} per 1,000); on lines {lines}"
    )


@pytest.mark.parametrize("doc", ZH_DOCS, ids=relative)
def test_no_sentence_runs_past_100_characters(doc: Path) -> None:
    long = [
        f"{relative(doc)}:{number}: {len(sentence)} characters: {sentence[:40]}…"
        for number, sentence in sentences(doc)
        if len(sentence) > LONGEST_SENTENCE and HAN.search(sentence)
    ]
    assert not long, f"sentences over {LONGEST_SENTENCE} characters:\n" + "\n".join(long)
