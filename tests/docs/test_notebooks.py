"""The notebooks: the same code in both languages, committed with their outputs, and each
one runs top to bottom, headless and offline, without an error or a warning.

Each notebook is executed as a reader would run it, in a fresh kernel, two at a time
(the machine the course targets has two cores).  A cell that writes to stderr fails
the test: that is where Python's warnings go, matplotlib's "Glyph … missing from
font" among them, which is how a Chinese label drawn without a CJK font shows up.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from lab import plots
from tests import REPO
from tests.conftest import PROVIDER_VARIABLES
from tests.docs.test_docs_zh import BANNED, CJK

if TYPE_CHECKING:  # nbformat takes seconds to import: only the tests that read a notebook do
    import nbformat

pytestmark = pytest.mark.docs  # pins the docs: see README, "Two commands"

NOTEBOOKS = sorted((REPO / "notebooks").glob("*/*.ipynb"))
NAMES = sorted({path.name for path in NOTEBOOKS})
EXPECTED = ["00_side_by_side", "01_text_vs_tools", "02_planning", "03_delegation"]
EXPECTED += ["04_long_sessions", "05_memory"]
LANG = re.compile(r'^LANG = "(en|zh)"', re.MULTILINE)
CELL_TIME_LIMIT = 600  # a guard against a hang: a cell takes seconds, even on a busy machine
RUNS_HEADLESS = "test_runs_headless_offline_without_errors_or_warnings"
Ran = tuple["nbformat.NotebookNode", str]  # the notebook as it ran, and its error


def relative(path: Path) -> str:
    return str(path.relative_to(REPO))


def read(path: Path) -> nbformat.NotebookNode:
    import nbformat

    return nbformat.read(path, as_version=4)


def code_cells(notebook: nbformat.NotebookNode) -> list[str]:
    return [cell.source for cell in notebook.cells if cell.cell_type == "code"]


def problems(notebook: nbformat.NotebookNode) -> list[str]:
    """Every error and every line on stderr in the notebook's outputs, with its cell."""
    found = []
    for number, cell in enumerate(notebook.cells, start=1):
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                found.append(f"cell {number}: {output.ename}: {output.evalue}")
            elif output.output_type == "stream" and output.name == "stderr":
                found.append(f"cell {number} wrote to stderr: {output.text.strip()[:500]}")
    return found


def has_cjk_font() -> bool:
    try:
        plots.cjk_font()
    except RuntimeError:
        return False
    return True


def test_every_notebook_is_there_in_both_languages() -> None:
    for lang in ("en", "zh"):
        names = sorted(path.stem for path in (REPO / "notebooks" / lang).glob("*.ipynb"))
        assert names == EXPECTED, f"notebooks/{lang}"


@pytest.mark.parametrize("name", NAMES)
def test_the_code_is_the_same_in_both_languages(name: str) -> None:
    """Only the first cell's `LANG = "…"` differs; the prose around the code is translated."""
    english = code_cells(read(REPO / "notebooks/en" / name))
    chinese = code_cells(read(REPO / "notebooks/zh" / name))
    assert LANG.search(english[0]).group(1) == "en"
    assert LANG.search(chinese[0]).group(1) == "zh"
    assert [LANG.sub('LANG = "en"', cell) for cell in chinese] == english
    assert all(not LANG.search(cell) for cell in english[1:]), "LANG is set in the first cell"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=relative)
def test_committed_with_outputs_from_one_run_top_to_bottom(path: Path) -> None:
    """A reader on a code-hosting page sees every table and figure without running anything."""
    notebook = read(path)
    counts = [cell.execution_count for cell in notebook.cells if cell.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1)), "run it again from the top, in order"
    outputs = [output for cell in notebook.cells for output in cell.get("outputs", [])]
    assert any("image/png" in output.get("data", {}) for output in outputs), "no figure"
    assert any("| ---" in output.get("data", {}).get("text/markdown", "") for output in outputs)
    assert not problems(notebook)


@pytest.mark.parametrize("path", sorted((REPO / "notebooks/zh").glob("*.ipynb")), ids=relative)
def test_chinese_prose_follows_the_glossary_and_full_width_punctuation(path: Path) -> None:
    wrong = []
    for number, cell in enumerate(read(path).cells, start=1):
        if cell.cell_type != "markdown":
            continue
        text = re.sub(r"```.*?```|`[^`]*`|\]\([^)]*\)", "", cell.source, flags=re.DOTALL)
        wrong += [f"cell {number}: '{m.group(0)}'" for m in re.finditer(
            f"[{CJK}][,:;!?()][{CJK}]|[{CJK}][,;]|[,;(][{CJK}]", text)]
        wrong += [f"cell {number}: '{m.group(0)}', write {term}"
                  for pattern, term in BANNED.items() for m in re.finditer(pattern, text)]
    assert not wrong, "\n".join(wrong)


# --- running them -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def executed(request: pytest.FixtureRequest) -> dict[Path, Ran]:
    """The notebooks this session tests, each run in a fresh kernel, two at a time (rather
    than one by one in their tests, which would take twice as long)."""
    selected = {
        item.callspec.params["path"]
        for item in request.session.items
        if getattr(item, "originalname", "") == RUNS_HEADLESS
    }
    chinese = has_cjk_font() or os.environ.get("CI") == "true"
    runnable = [p for p in NOTEBOOKS if p in selected and (chinese or p.parent.name != "zh")]
    # matplotlib builds its font cache on its first import and says so on stderr:
    # done here, so that no notebook is blamed for it.
    subprocess.run([sys.executable, "-c", "import matplotlib.pyplot"], check=True)

    def run(path: Path) -> Ran:
        from nbclient import NotebookClient

        notebook = read(path)
        client = NotebookClient(
            notebook,
            timeout=CELL_TIME_LIMIT,
            kernel_name="python3",
            resources={"metadata": {"path": str(path.parent)}},
        )
        try:
            client.execute()
        except Exception as error:  # the failing cell's error, reported by its test
            return notebook, str(error).strip()[-2000:]
        return notebook, ""

    with pytest.MonkeyPatch.context() as patch:  # the kernels inherit no provider's key
        for name in PROVIDER_VARIABLES:
            patch.delenv(name, raising=False)
        with ThreadPoolExecutor(max_workers=2) as pool:
            return dict(zip(runnable, pool.map(run, runnable), strict=True))


@pytest.mark.slow  # end to end: see tests/conftest.py
@pytest.mark.parametrize("path", NOTEBOOKS, ids=relative)
def test_runs_headless_offline_without_errors_or_warnings(
    path: Path, executed: dict[Path, Ran]
) -> None:
    if path not in executed:
        pytest.skip("no font with Chinese characters here: apt-get install fonts-noto-cjk")
    notebook, error = executed[path]
    assert not error, error
    found = problems(notebook)
    if any("missing from font" in line for line in found):
        found.insert(0, plots.INSTALL_CJK)
    assert not found, "\n".join(found)


# --- the font for Chinese labels -----------------------------------------------------------


def test_a_missing_cjk_font_is_a_clear_error() -> None:
    with pytest.raises(RuntimeError, match="apt-get install fonts-noto-cjk"):
        plots.cjk_font(candidates=("A Font No System Has",))


@pytest.mark.skipif(
    not has_cjk_font() and os.environ.get("CI") != "true",
    reason="no font with Chinese characters here: apt-get install fonts-noto-cjk",
)
def test_chinese_labels_are_drawn_with_a_font_that_has_them(
    recwarn: pytest.WarningsRecorder,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        font = plots.use_language("zh")
        figure, axes = plt.subplots()
        axes.set_title("每一轮读到的上下文（token）")
        axes.set_xlabel("轮 −1")
        figure.savefig(os.devnull, format="png")
        plt.close(figure)
    finally:
        matplotlib.rcdefaults()
    missing = [str(w.message) for w in recwarn if "missing from font" in str(w.message)]
    assert not missing, f"drawn with {font}: {missing}"
