"""What the notebooks in `notebooks/` share: the lab's records, labels in two languages,
a font for Chinese, and one colour per chapter.

    from lab import plots
    plots.use_language("zh")                   # Chinese labels need a font that has them
    t = plots.translator("zh")                 # t("turn", "轮") -> "轮"
    records = plots.compare(["one-bug"], chapters="v0,v1")

A notebook gets its runs by running `python -m lab compare --json FILE` itself and
reading the records back: what it plots is what the command measures, and the same
settings (`--model`, `--runs`, `--replay-dir`) make it live or replay a recording.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from .compare.record import Record
from .compare.report import aligned
from .words import word

REPO = Path(__file__).resolve().parent.parent

# Fonts with Chinese characters, by the name matplotlib knows them under: Debian's
# fonts-noto-cjk first, then what macOS and Windows ship.
CJK_FONTS = (
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "Noto Sans SC",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
    "PingFang SC",
    "Hiragino Sans GB",
    "Heiti SC",
    "Microsoft YaHei",
    "SimHei",
)
CJK_FILES = ("cjk", "sourcehan", "wqy", "pingfang", "hiragino", "msyh", "simhei")
INSTALL_CJK = (
    "no font with Chinese characters was found, so Chinese labels would show as empty "
    "boxes: install one (Debian, Ubuntu: apt-get install fonts-noto-cjk; Fedora: dnf "
    "install google-noto-sans-cjk-fonts), then restart the notebook's kernel"
)

# One colour per chapter, the same in every notebook and on the run viewer's page:
# Okabe and Ito's colours, told apart by colour-blind eyes too, darkest first.
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#7A5C00", "#56B4E9", "#444444")
STATUS_COLOURS = {"pending": "#d9d9d9", "in_progress": "#f2b134", "completed": "#3a923a"}


# --- labels and fonts -------------------------------------------------------------------


def translator(lang: str) -> Callable[[str, str], str]:
    """`t(english, chinese)`: the label in the notebook's language.  The code cells of the
    two notebooks are the same; only `LANG` differs, and this picks the words."""
    if lang not in ("en", "zh"):
        raise ValueError(f"LANG must be 'en' or 'zh', not {lang!r}")
    return (lambda en, zh: zh) if lang == "zh" else (lambda en, zh: en)


def use_language(lang: str) -> str | None:
    """Set matplotlib up for the notebook's figures; for Chinese, with a CJK font.

    Returns the font chosen for Chinese, or None for English, which needs none.
    The font comes first in the list and DejaVu Sans after it, so a glyph the CJK
    font lacks is taken from DejaVu instead of drawn as an empty box.
    """
    import matplotlib

    translator(lang)  # refuses a language other than en and zh
    matplotlib.rcParams.update(
        {
            "figure.dpi": 100,
            "savefig.dpi": 100,
            "figure.constrained_layout.use": True,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.titlesize": "medium",
            "figure.titlesize": "large",
        }
    )
    if lang != "zh":
        return None
    font = cjk_font()
    matplotlib.rcParams["font.family"] = "sans-serif"
    matplotlib.rcParams["font.sans-serif"] = [font, "DejaVu Sans"]
    return font


def cjk_font(candidates: tuple[str, ...] = CJK_FONTS) -> str:
    """The first of `candidates` that this system has, or a RuntimeError saying what to install.

    matplotlib keeps its list of fonts in a cache written the first time it ran, so a font
    installed after that is not in the list: the font folders are searched again, and
    the CJK fonts found there are added, before giving up.
    """
    from matplotlib import font_manager

    def known() -> list[str]:
        names = {entry.name for entry in font_manager.fontManager.ttflist}
        return [name for name in candidates if name in names]

    if not known():
        for path in font_manager.findSystemFonts():
            if any(part in Path(path).name.lower() for part in CJK_FILES):
                font_manager.fontManager.addfont(path)
    found = known()
    if not found:
        raise RuntimeError(INSTALL_CJK)
    return found[0]


def chapter_colour(chapter: str) -> str:
    """`v2_todos` is always the third colour, whichever chapters a figure shows."""
    return COLOURS[int(chapter[1]) % len(COLOURS)]


def chapter_label(chapter: str, lang: str) -> str:
    """A short name for an axis: `ch. 2` or `第 2 章`."""
    return f"第 {chapter[1]} 章" if lang == "zh" else f"ch. {chapter[1]}"


def show_table(headers: list[str], rows: list[list[object]]) -> None:
    """Show a table in the notebook, as Markdown (it reads as text outside Jupyter, too)."""
    from IPython.display import Markdown, display

    display(Markdown(aligned(headers, [[str(cell) for cell in row] for row in rows])))


# --- the lab's records ------------------------------------------------------------------


def compare(
    tasks: list[str] | None = None,
    *,
    chapters: str | None = None,
    model: str | None = None,
    runs: int = 1,
    run_dir: str | Path | None = None,
    window: int | None = None,
) -> list[Record]:
    """Run `python -m lab compare … --json FILE` and read its records back.

    Offline (no `model`, no `run_dir`) the chapters replay their scripted cassettes;
    with `model` they run live, `runs` times each; with `run_dir` they replay the runs
    a live comparison kept there with `--record-dir`.  The command is printed, so the
    notebook says what it ran; its progress lines are kept out of the notebook.
    """
    argv = [f"--task={task}" for task in tasks or []]
    argv += [f"--chapters={chapters}"] if chapters else []
    argv += [f"--window={window}"] if window else []
    shown = list(argv)
    if run_dir:  # the command runs from the repository, the notebook from its own folder
        folder = Path(run_dir).resolve()
        argv.append(f"--replay-dir={folder}")
        inside = folder.is_relative_to(REPO)  # shown as from the repository, wherever it is
        shown.append(f"--replay-dir={folder.relative_to(REPO) if inside else folder}")
    elif model:
        argv += [f"--model={model}", f"--runs={runs}", "--jobs=4"]
        shown = list(argv)
    print(" ".join(["python -m lab compare", *map(shlex.quote, shown), "--json FILE"]))
    with tempfile.TemporaryDirectory(prefix="notebook-records-") as folder:
        path = Path(folder) / "records.json"
        done = subprocess.run(
            [sys.executable, "-m", "lab", "compare", *argv, f"--json={path}"],
            cwd=REPO,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0 or not path.exists():
            why = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
            raise RuntimeError(f"python -m lab compare failed: {why[0]}")
        return read_records(path)


def read_records(path: str | Path) -> list[Record]:
    """The records of a `--json` file, as `Record`s; fields a newer lab added are left out."""
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    names = {field.name for field in dataclasses.fields(Record)}
    return [
        Record(**{key: value for key, value in record.items() if key in names})
        for record in document["records"]
    ]


def by_chapter(records: list[Record], task: str) -> dict[str, list[Record]]:
    """One task's records, grouped by chapter, in the order of the comparison."""
    grouped: dict[str, list[Record]] = {}
    for record in records:
        if record.task == task:
            grouped.setdefault(record.chapter, []).append(record)
    return grouped


def source_of(records: list[Record], lang: str) -> str:
    """Where the replies came from, in a few words, for a figure's title."""
    kinds = sorted({record.provenance for record in records})
    models = sorted({record.model for record in records if record.provenance != "scripted"})
    translator(lang)  # refuses a language other than en and zh
    words = {
        "scripted": "scripted replays, not a measurement",
        "recorded": "recorded runs of {}, replayed",
        "live": "live runs of {}",
    }
    shown = ", ".join(models)
    parts = (word(words.get(kind, kind), lang).format(shown) for kind in kinds)
    return word("; ", lang).join(parts)


def turn_of_call(messages: list[dict], call_id: str) -> int:
    """The turn (from 1) whose reply made the tool call `call_id`; 0 if none did."""
    turn = 0
    for message in messages:
        if message["role"] != "assistant":
            continue
        turn += 1
        content = message["content"]
        if isinstance(content, list) and any(block.get("id") == call_id for block in content):
            return turn
    return 0


def requests(record: Record) -> list[list[dict]]:
    """The conversation as each model call of a run received it: the messages before each
    reply.  A note the loop closed the run with (`[stopped after …]`) was no reply."""
    messages = record.messages
    replies = [index for index, message in enumerate(messages) if message["role"] == "assistant"]
    return [messages[:index] for index in replies[: record.turns]]
