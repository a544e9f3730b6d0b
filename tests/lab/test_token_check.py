"""`python -m lab.token_check`: its corpus, its message when the tokenizer is missing, its table.

The table itself needs Qwen's tokenizer (tiktoken, and the vocabulary file inside
dashscope), which the course does not install; that test is skipped without it.
"""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from lab import token_check


def test_the_corpus_holds_the_four_kinds_of_the_courses_own_texts() -> None:
    kinds = token_check.corpus()
    assert list(kinds) == ["English prose", "Chinese prose", "Python code", "JSON tool traffic"]
    assert all(len(samples) >= 20 for samples in kinds.values())
    chinese_share = {
        kind: [len(token_check.CJK_CHAR.findall(text)) / len(text) for text in kinds[kind]]
        for kind in ("English prose", "Chinese prose")
    }
    assert min(chinese_share["Chinese prose"]) >= 0.2 > max(chinese_share["English prose"])
    assert any(text.startswith("def ") for text in kinds["Python code"])
    assert all(isinstance(json.loads(text), dict) for text in kinds["JSON tool traffic"])


def test_without_the_tokenizer_it_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # as if it were not installed
    monkeypatch.setitem(sys.modules, "tiktoken.load", None)
    with pytest.raises(SystemExit, match="pip install tiktoken && pip install --no-deps dashscope"):
        token_check.main([])


@pytest.mark.skipif(
    not (importlib.util.find_spec("tiktoken") and importlib.util.find_spec("dashscope")),
    reason="needs tiktoken and dashscope, which the course does not install",
)
def test_the_table_has_a_row_per_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert token_check.main([]) == 0
    out = capsys.readouterr().out
    assert "Qwen's tokenizer" in out
    for kind in token_check.corpus():
        row = next(line for line in out.splitlines() if line.startswith(kind))
        assert row.count("%") == 4
