"""The crash-safe JSON-lines file of `machine` that chapter 4's sessions and memory logs share."""

from __future__ import annotations

from pathlib import Path

import pytest

from machine import ToolError, jsonl


def test_records_come_back_in_order(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    for number in range(3):
        jsonl.append(path, {"n": number, "text": "中文 ok"})
    loaded = jsonl.load(path)
    assert loaded.records == [{"n": n, "text": "中文 ok"} for n in range(3)]
    assert loaded.problems == []
    assert path.read_bytes().count(b"\n") == 3


def test_a_torn_last_line_is_dropped_and_the_next_append_starts_fresh(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    jsonl.append(path, {"n": 1})
    with path.open("ab") as file:
        file.write(jsonl.encode({"n": 2, "text": "cut here"})[:9])  # a write killed halfway
    loaded = jsonl.load(path)
    assert loaded.records == [{"n": 1}]
    assert loaded.problems == ["log.jsonl:2: torn last line dropped (9 bytes)"]

    jsonl.append(path, {"n": 3})
    loaded = jsonl.load(path)
    assert loaded.records == [{"n": 1}, {"n": 3}]
    assert loaded.problems == ["log.jsonl:2: undecodable line skipped (9 bytes)"]


def test_a_bad_line_in_the_middle_is_skipped_and_the_rest_kept(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"n": 1}\n\xff\xfe garbage\n[1, 2]\n{"n": 2}\n')
    loaded = jsonl.load(path)
    assert loaded.records == [{"n": 1}, {"n": 2}]
    assert loaded.problems == [
        "log.jsonl:2: undecodable line skipped (10 bytes)",
        "log.jsonl:3: not a JSON object, skipped",
    ]


def test_append_without_sync_writes_the_same_bytes(tmp_path: Path) -> None:
    synced, unsynced = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    jsonl.append(synced, {"k": [1, 2]})
    jsonl.append(unsynced, {"k": [1, 2]}, sync=False)
    assert synced.read_bytes() == unsynced.read_bytes() == b'{"k":[1,2]}\n'


def test_reading_goes_line_by_line_and_notes_each_problem_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"n": 1}\n\n7\n{"n": 2}\n{"n": 3, "te')
    problems: list[str] = []
    records = jsonl.read(path, problems)
    assert next(records) == {"n": 1} and problems == [], "no line past the first is decoded yet"
    assert list(records) == [{"n": 2}]
    assert problems == [
        "log.jsonl:3: not a JSON object, skipped",
        "log.jsonl:5: torn last line dropped (12 bytes)",
    ]


def test_a_file_over_the_limit_is_refused_before_its_first_line(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    for number in range(3):
        jsonl.append(path, {"n": number})
    assert list(jsonl.lines(path, limit=path.stat().st_size)) == path.read_bytes().splitlines(True)
    with pytest.raises(ToolError, match="larger than"):
        next(jsonl.lines(path, limit=path.stat().st_size - 1))
    assert jsonl.load(path).size == path.stat().st_size
