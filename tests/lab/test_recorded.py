"""The runs of real local models kept in lab/recorded/ replay offline, as the docs say.

Each folder was recorded by `python -m lab compare --model SPEC --record-dir DIR`; its
replay (`--replay-dir DIR`) must end every run on its own stop, never on a cassette that
runs out or was made for another prompt, and keep the figures the server reported.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab import compare
from tests import REPO

RECORDED = REPO / "lab" / "recorded"
FOLDERS = sorted(path for path in RECORDED.iterdir() if any(path.glob("*/*/*.jsonl")))


def first_usage(cassette: Path) -> tuple[str, int]:
    """The model the header names, and the input tokens of the first reply."""
    header, first = (json.loads(line) for line in cassette.read_text().splitlines()[:2])
    return header["model"], first["reply"]["usage"]["input_tokens"]


def recorded_usage(cassette: Path) -> tuple[int, int]:
    """The tokens in and out of every reply the cassette holds, children's included."""
    replies = [json.loads(line)["reply"] for line in cassette.read_text().splitlines()[1:]]
    return (
        sum(reply["usage"]["input_tokens"] for reply in replies),
        sum(reply["usage"]["output_tokens"] for reply in replies),
    )


def test_the_recordings_of_every_chapter_are_there() -> None:
    qwen = RECORDED / "qwen2.5-coder-1.5b-own-template" / "one-bug"
    assert sorted(path.name for path in qwen.iterdir())[:2] == ["v0_react_text", "v1_tool_loop"]


@pytest.mark.parametrize("folder", FOLDERS, ids=[path.name for path in FOLDERS])
def test_a_recorded_folder_replays_offline_with_its_own_figures(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records_file = tmp_path / "records.json"
    assert compare.main(["--replay-dir", str(folder), "--json", str(records_file)]) == 0
    assert f"replaying the runs recorded in {folder}" in " ".join(capsys.readouterr().out.split())
    records = json.loads(records_file.read_text())["records"]
    cassettes = sorted(folder.glob("*/*/*.jsonl"))
    assert len(records) == len(cassettes)
    for record in records:
        cassette = folder / record["task"] / record["chapter"] / f"{record['run']}.jsonl"
        model, first_input = first_usage(cassette)
        assert record["stop"] != "error", record["error"]
        assert (record["provenance"], record["model"], record["estimated"]) == (
            "recorded", model, False
        )  # fmt: skip
        assert record["context_per_turn"][0] == first_input  # the server's count, kept
        # Every reply replayed, a child's too: the run costs what it cost live.
        assert (record["input_tokens"], record["output_tokens"]) == recorded_usage(cassette)
