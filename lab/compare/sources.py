"""Where a run's model comes from: a *source* gives each job its model.

`Scripted` replays the task's scripted cassette, `Replayed` a run recorded earlier
(`--replay-dir`), `Live` asks a provider, and records it when told to (`--record-dir`).
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Protocol

from llm import Model
from llm.cassette import ReplayModel
from llm.errors import CassetteError
from llm.recording import RecordingModel
from llm.spec import load_model

from ..tasks import Task, shown
from .record import Job, Limits


class Source(Protocol):
    """Gives each job its model, and says where that model's replies come from."""

    def open(self, job: Job) -> tuple[Model, str]:
        """The model for one run, and its provenance: scripted, recorded or live."""
        ...

    def seed(self, job: Job) -> int | None:
        """For a task that makes its inputs fresh, the seed of this run's: None keeps the
        workspace as it is in the repository, which scripted cassettes were written for."""
        ...


class Scripted:
    """The task's scripted cassette for the job's chapter."""

    def seed(self, job: Job) -> int | None:
        return None

    def open(self, job: Job) -> tuple[Model, str]:
        cassette = job.task.cassette(job.chapter)
        if cassette is None:
            raise CassetteError(f"no scripted cassette of {job.chapter} for {job.task.name}")
        return replay(cassette, job.task)


class Replayed:
    """Runs kept by `--record-dir`: DIR/<task>/<chapter>/<number>.jsonl."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def seed(self, job: Job) -> int | None:
        """The seed the recorded run's inputs were made from, kept beside its cassette."""
        try:
            return int(seed_path(cassette_path(self.folder, job)).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def open(self, job: Job) -> tuple[Model, str]:
        return replay(cassette_path(self.folder, job), job.task)


def replay(cassette: Path, task: Task) -> tuple[Model, str]:
    """A replay of `cassette`, refused if it was made for another prompt than the task's."""
    model = ReplayModel(cassette)
    if model.header.get("task") != task.prompt:
        raise CassetteError(
            f"{shown(cassette)} holds a run of another prompt than the one in "
            f"{shown(task.folder / 'task.json')}: record or write it again for this prompt"
        )
    return model, model.header.get("provenance", "scripted")


class Live:
    """A live model, a fresh client for every run; recorded when `record_to` is given, with
    the `limits` the runs are given (a replay of the recording is given them again)."""

    def __init__(
        self, spec: str, record_to: Path | None = None, limits: Limits | None = None
    ) -> None:
        self.spec = spec
        self.record_to = record_to
        self.limits = limits or Limits()

    def seed(self, job: Job) -> int | None:
        """A seed of its own for every live run, known only to this process until the run
        is checked: no file the agent can reach holds its inputs' answer."""
        return secrets.randbits(62)

    def open(self, job: Job) -> tuple[Model, str]:
        model = load_model(self.spec)
        if self.record_to is None:
            return model, "live"
        path = cassette_path(self.record_to, job)
        # Live, and kept: its replays say "recorded", the run itself was live.
        recording = RecordingModel(
            model, path, chapter=job.chapter, task=job.task.prompt, bounds=self.limits.kept()
        )
        return recording, "live"


def cassette_path(folder: Path, job: Job) -> Path:
    return folder / job.task.name / job.chapter / f"{job.number}.jsonl"


def seed_path(cassette: Path) -> Path:
    """Where a recorded run keeps the seed of its inputs, written once the run has ended."""
    return cassette.with_suffix(".seed")
