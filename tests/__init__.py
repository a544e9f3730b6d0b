"""The course's tests, grouped as the code is: a folder per chapter, `llm`, `machine` and
`lab`, then the exercises (their checks, worked solutions and the class fork) and the docs
(the course as it ships: its text, figures and notebooks).  Helpers the folders share sit
here: `conftest.py` (fixtures), `scripted.py` (scripted replies), `fake_provider.py` (a
provider on 127.0.0.1), `posixless.py`, `solutions.py`, `markdown.py`; `data/` holds the
corpora the tests and the lab read."""

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent  # the course's folder, above tests/
