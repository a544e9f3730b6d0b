"""Fixtures of the command line's tests (test_cli.py, test_dotenv.py)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Run the command line in-process from tmp_path; what ./.env sets is undone afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where --demo copies its workspace
    saved = os.environ.copy()
    yield tmp_path
    os.environ.clear()
    os.environ.update(saved)
