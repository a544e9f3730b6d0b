"""How close is the token estimate of `llm/tokens.py` to a real tokenizer?

    pip install tiktoken && pip install --no-deps dashscope
    python -m lab.token_check

The reference is Qwen's tokenizer: its vocabulary file, `qwen.tiktoken`, ships inside
the `dashscope` package, and `tiktoken` runs it.  Only that file is read, which is
why `--no-deps` may skip the rest of the SDK's dependencies.  Any other tokenizer
saved as a Hugging Face `tokenizer.json` works too:

    pip install tokenizers
    python -m lab.token_check --tokenizer-json PATH

The texts are the course's own, in four kinds: English prose (paragraphs of the
English docs), Chinese prose (paragraphs of the Chinese docs), Python code (the
top-level definitions of every module) and JSON tool traffic (every line of the
cassettes and test data, and each tool schema).  For each kind it prints the mean
and the worst relative error of the estimate, next to the error of the usual rule
of thumb, a quarter of the length; then how many tokens the tools' output cap
(`OUTPUT_LIMIT` bytes) holds.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

from llm.tokens import estimate_text
from v1_tool_loop.tools import OUTPUT_LIMIT, TOOLS

REPO = Path(__file__).resolve().parent.parent
CODE_FOLDERS = ["llm", "lab", "tests", *sorted(p.name for p in REPO.glob("v[0-9]_*"))]
MIN_PROSE = 100  # characters: shorter samples are a handful of tokens, where ±1 is ±10%
MIN_CODE = 200

# Qwen's pre-tokenizer, as the `dashscope` package defines it next to the file.
QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")

NEEDS_QWEN = (
    "this check needs Qwen's tokenizer: pip install tiktoken && pip install --no-deps "
    "dashscope (or give --tokenizer-json PATH with the tokenizers package installed)"
)

Counter = Callable[[str], int]


def paragraphs(path: Path) -> list[str]:
    """The paragraphs of a Markdown file, fenced code left out."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    return [part.strip() for part in re.split(r"\n\s*\n", text) if len(part.strip()) >= MIN_PROSE]


def definitions(path: Path) -> list[str]:
    """The top-level pieces of a module, which the formatter separates by two blank lines."""
    pieces = path.read_text(encoding="utf-8").split("\n\n\n")
    return [piece.strip() for piece in pieces if len(piece.strip()) >= MIN_CODE]


def corpus() -> dict[str, list[str]]:
    """The course's own texts, sorted by kind."""
    english = [REPO / "README.md", REPO / "llm/README.md", *sorted(REPO.glob("docs/en/*.md"))]
    chinese = [p for path in sorted(REPO.glob("docs/zh/*.md")) for p in paragraphs(path)]
    modules = sorted(p for folder in CODE_FOLDERS for p in (REPO / folder).rglob("*.py"))
    lines = [
        line
        for folder in CODE_FOLDERS
        for path in sorted((REPO / folder).rglob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    return {
        "English prose": [p for path in english for p in paragraphs(path)],
        # A Chinese paragraph may be a command or a table of names: keep the ones
        # where at least one character in five is Chinese.
        "Chinese prose": [p for p in chinese if len(CJK_CHAR.findall(p)) * 5 >= len(p)],
        "Python code": [piece for path in modules for piece in definitions(path)],
        "JSON tool traffic": lines + [json.dumps(schema, ensure_ascii=False) for schema in TOOLS],
    }


def qwen_tokenizer() -> tuple[str, Counter]:
    """Qwen's tokenizer from the vocabulary file inside the `dashscope` package."""
    try:
        import tiktoken.load
    except ImportError:
        raise SystemExit(NEEDS_QWEN) from None
    spec = importlib.util.find_spec("dashscope")  # found, not imported: its deps may be absent
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(NEEDS_QWEN)
    vocabulary = Path(spec.submodule_search_locations[0]) / "resources" / "qwen.tiktoken"
    if not vocabulary.exists():
        raise SystemExit(f"no {vocabulary}: this dashscope release does not ship qwen.tiktoken")
    encoding = tiktoken.Encoding(
        "qwen",
        pat_str=QWEN_PATTERN,
        mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(vocabulary)),
        special_tokens={},
    )
    version = importlib.metadata.version("dashscope")
    name = f"Qwen's tokenizer (qwen.tiktoken from dashscope {version})"
    return name, lambda text: len(encoding.encode(text, disallowed_special=()))


def json_tokenizer(path: Path) -> tuple[str, Counter]:
    """Any tokenizer saved as a Hugging Face tokenizer.json."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise SystemExit(
            "--tokenizer-json needs the tokenizers package: pip install tokenizers"
        ) from None
    if not path.is_file():
        raise SystemExit(f"no tokenizer.json at {path}")
    tokenizer = Tokenizer.from_file(str(path))

    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False).ids)

    return f"the tokenizer in {path}", count


def errors(samples: list[str], estimate: Counter, count: Counter) -> list[float]:
    """Relative error of `estimate` against the real `count`, one per sample."""
    return [(estimate(text) - count(text)) / count(text) for text in samples]


def percent(value: float) -> str:
    return f"{value * 100:+.1f}%"


def first_bytes(samples: list[str], size: int) -> str:
    """The samples joined, repeated if need be, cut to `size` bytes of UTF-8."""
    text = "\n\n".join(samples)
    text *= size // len(text.encode()) + 1
    return text.encode()[:size].decode(errors="ignore")


def print_errors(kinds: dict[str, list[str]], count: Counter) -> None:
    """One row per kind: how the estimate and a quarter of the length compare with `count`."""
    print(
        f"{'kind of text':20}{'samples':>8}{'chars/token':>13}"
        f"{'mean error':>12}{'worst error':>13}{'len/4 mean':>12}{'len/4 worst':>13}"
    )
    for kind, samples in kinds.items():
        ours = errors(samples, estimate_text, count)
        rule = errors(samples, lambda text: round(len(text) / 4), count)
        chars_per_token = sum(map(len, samples)) / sum(map(count, samples))
        print(
            f"{kind:20}{len(samples):>8}{chars_per_token:>13.2f}"
            f"{statistics.mean(map(abs, ours)) * 100:>11.1f}%{percent(max(ours, key=abs)):>13}"
            f"{statistics.mean(map(abs, rule)) * 100:>11.1f}%{percent(max(rule, key=abs)):>13}"
        )
    print("mean error: mean of |estimate - real| / real; worst: the largest, with its sign")


def print_output_limit(kinds: dict[str, list[str]], count: Counter) -> None:
    """What the tools' output cap holds in tokens, for each kind of text."""
    print(f"\nwhat a tool result of OUTPUT_LIMIT = {OUTPUT_LIMIT:,} bytes holds, in tokens:")
    print(f"{'kind of text':20}{'characters':>12}{'estimate':>10}{'real':>8}")
    for kind, samples in kinds.items():
        text = first_bytes(samples, OUTPUT_LIMIT)
        print(f"{kind:20}{len(text):>12,}{estimate_text(text):>10,}{count(text):>8,}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.token_check", description=__doc__)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--tokenizer-json", metavar="PATH", type=Path)
    args = parser.parse_args(argv)
    name, count = json_tokenizer(args.tokenizer_json) if args.tokenizer_json else qwen_tokenizer()

    kinds = corpus()
    print(f"llm/tokens.py against {name}")
    print(f"{sum(map(len, kinds.values()))} samples of the course's own docs, code and cassettes\n")
    print_errors(kinds, count)
    print_output_limit(kinds, count)
    return 0


if __name__ == "__main__":
    sys.exit(main())
