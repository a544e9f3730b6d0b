"""Exercise 4.5's check refuses the wrong answers a learner could hand in: each is the worked
solution of `docs/en/solutions.md` with one thing wrong, applied to a copy of the course,
and the check, run there as the learner runs it, says "not done" and why.

The check makes a new case at every run; a wrong answer that a lucky case could let
through (a ranking that gets a tie right by chance) is tried on a case numbered here, on
which it fails, as `python -m lab exercise 4.5 N` lets a learner try a case again.  The
diffs are made for the course as it ships, so the module is marked `docs`."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab.memory_searchers import fts5_missing
from tests.solutions import (
    apply_diff,
    builds_on_the_solutions,
    copy_course,
    read_solutions,
    run_check,
)

pytestmark = [
    pytest.mark.docs,  # the course as it ships: doing the exercise changes it
    builds_on_the_solutions(),
    pytest.mark.skipif(fts5_missing() is not None, reason="this sqlite has no FTS5"),
]
SOLUTIONS = read_solutions()  # none in a class fork
DIFFS = [b.text for b in SOLUTIONS["4.5"].blocks if b.kind == "diff"] if SOLUTIONS else []
SOLUTION = DIFFS[0] if DIFFS else ""  # nothing to build on in a class fork
END = "+\n+\n class NaiveTfidf:\n"  # where the solution's class ends
ADD_COMMITTED = (
    "+        with self.db:  # committed when the block ends, or rolled back if it fails\n"
    "+            return super().add(text)"
)
FORGET_COMMITTED = '+        with self.db:\n+            self.db.execute("DELETE'


def changed(old: str, new: str) -> str:
    assert not SOLUTIONS or old in SOLUTION, f"the worked solution 4.5 no longer has {old!r}"
    return SOLUTION.replace(old, new)


def with_method(*lines: str) -> str:
    """The solution with these lines added at the end of its class."""
    added = "".join(f"+    {line}\n" if line else "+\n" for line in ("", *lines))
    return changed(END, added + END)


def check(diff: str, tmp_path: Path, case: str = "") -> str:
    """The check's output on a copy of the course with `diff` applied."""
    course, home = copy_course(tmp_path / "course"), tmp_path / "home"
    home.mkdir()
    apply_diff(course, diff)
    done = run_check(f"python -m lab exercise 4.5 {case}".strip(), course, home)
    return done.stdout + done.stderr + f"(exit code {done.returncode})"


TRIGRAM = '''--- a/lab/memory_searchers.py
+++ b/lab/memory_searchers.py
@@ def trigram_terms(
+class Fts5Store(Fts5Trigram):
+    """The trigram searcher in a file: the raw text, not the store's terms."""
+
+    def __init__(self, path: str | Path) -> None:
+        self.db = sqlite3.connect(path)
+        with self.db:
+            self.db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {self.TABLE}")
+
+    def add(self, text: str) -> str:
+        with self.db:
+            return super().add(text)
+
+    def forget(self, memory_id: str) -> None:
+        with self.db:
+            self.db.execute("DELETE FROM memories WHERE rowid = ?", (int(memory_id),))
+
+
 def trigram_terms(query: str) -> tuple[list[str], list[str]]:
'''
NOT_FTS5 = '''--- a/lab/memory_searchers.py
+++ b/lab/memory_searchers.py
@@ class NaiveTfidf:
+class Fts5Store:
+    """The chapter's own store in a folder beside `path`: it persists, but it is not FTS5."""
+
+    def __init__(self, path: str | Path) -> None:
+        self.store = MemoryStore(Path(path).parent / "store")
+
+    def add(self, text: str) -> str:
+        return self.store.add(text)
+
+    def ids(self, query: str, k: int) -> list[str]:
+        return [hit.id for hit in self.store.search(query, k)]
+
+    def forget(self, memory_id: str) -> None:
+        self.store.forget(memory_id)
+
+
 class NaiveTfidf:
'''

DECOY = NOT_FTS5.replace(
    '+        self.store = MemoryStore(Path(path).parent / "store")\n',
    '+        self.store = MemoryStore(Path(path).parent / "store")\n'
    "+        with sqlite3.connect(path) as db:  # a table to be seen, never used\n"
    '+            db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS memories USING fts5(text)")\n',
)
AT_EXIT = '+        __import__("atexit").register(self.db.commit)  # at the end, if it ends well\n'

WRONG = {
    "the same id for every query": (  # a case where memory 1 is kept (if forgotten, it
        # "came back": refused too, for another reason)
        with_method("def ids(self, query: str, k: int) -> list[str]:", '    return ["1"]'),
        "4242",
        "comes first",
    ),
    "a table in memory, not in the file": (
        changed("sqlite3.connect(path)", 'sqlite3.connect(":memory:")'),
        "",
        "holds no FTS5 table",
    ),
    "no commit: the changes die with the process": (
        changed(ADD_COMMITTED, "+        return super().add(text)").replace(
            FORGET_COMMITTED, '+        self.db.execute("DELETE'
        ),
        "",
        "the second process found nothing",
    ),
    "a commit only when forgetting": (
        changed(ADD_COMMITTED, "+        return super().add(text)"),
        "",
        "commit each change",
    ),
    "a forget that forgets nothing": (
        changed(
            'self.db.execute("DELETE FROM memories WHERE rowid = ?", (int(memory_id),))', "..."
        ),
        "",
        "came back",
    ),
    "the raw text under FTS5's default tokenizer": (
        with_method(
            'TABLE = "memories USING fts5(text UNINDEXED, terms)"',
            "",
            "def add(self, text: str) -> str:",
            "    with self.db:",
            '        row = self.db.execute("INSERT INTO memories VALUES (?, ?)", (text, text))',
            "    return str(row.lastrowid)",
        ),
        "",
        "comes first",
    ),
    "matches in the order they were added, not ranked": (
        with_method(
            "def ids(self, query: str, k: int) -> list[str]:",
            '    match = " OR ".join(f\'"{term}"\' for term in dict.fromkeys(tokenize(query)))',
            '    sql = "SELECT rowid FROM memories WHERE memories MATCH ? ORDER BY rowid LIMIT ?"',
            "    return [str(rowid) for (rowid,) in self.db.execute(sql, (match, k))]",
        ),
        "1",
        "comes first",
    ),
    "every word of the query, not any": (
        with_method(
            "def ids(self, query: str, k: int) -> list[str]:",
            '    match = " ".join(f\'"{term}"\' for term in dict.fromkeys(tokenize(query)))',
            '    sql = "SELECT rowid FROM memories WHERE memories MATCH ? ORDER BY rank LIMIT ?"',
            "    return [str(rowid) for (rowid,) in self.db.execute(sql, (match, k))]",
        ),
        "",
        "comes first",
    ),
    "every match, not k of them": (
        with_method(
            "def ids(self, query: str, k: int) -> list[str]:",
            '    match = " OR ".join(f\'"{term}"\' for term in dict.fromkeys(tokenize(query)))',
            '    sql = "SELECT rowid FROM memories WHERE memories MATCH ? ORDER BY rank"',
            "    return [str(rowid) for (rowid,) in self.db.execute(sql, (match,))]",
        ),
        "",
        "asked for 2 memories",
    ),
    "the trigram tokenizer on the raw text": (TRIGRAM, "1", "comes first"),
    "the chapter's store, not FTS5": (NOT_FTS5, "", "holds no FTS5 table"),
    "the chapter's store beside an empty FTS5 table": (DECOY, "", "FTS5 tables hold rows"),
    "a commit left to the end of the process": (
        changed(ADD_COMMITTED, AT_EXIT + "+        return super().add(text)").replace(
            FORGET_COMMITTED, AT_EXIT + '+        self.db.execute("DELETE'
        ),
        "",
        "the second process found nothing",
    ),
}


@pytest.mark.parametrize("name", WRONG)
def test_a_wrong_fts5_store_is_not_done(name: str, tmp_path: Path) -> None:
    diff, case, said = WRONG[name]
    output = check(diff, tmp_path, case)
    assert "not done yet" in output and "(exit code 1)" in output, output
    assert said in output, output
    assert "hint: " in output, output


def test_the_check_names_its_case_and_tries_it_again(tmp_path: Path) -> None:
    """A "not done" is reproducible: the case number it prints is the word that repeats it."""
    diff = WRONG["the same id for every query"][0]
    first = check(diff, tmp_path / "a", "4242")
    again = check(diff, tmp_path / "b", "4242")
    assert "case 4242:" in first
    assert first == again
