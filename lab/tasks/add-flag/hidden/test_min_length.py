import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

TEXT = "a an the cat, the hat: a cat in a hat. Tremendous!"


def wordfreq(*options):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "text.txt"
        path.write_text(TEXT, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "wordfreq.py", str(path), *options],
            capture_output=True,
            text=True,
            timeout=30,
        )
    if done.returncode != 0:
        raise AssertionError(f"wordfreq.py {' '.join(options)} failed: {done.stderr.strip()}")
    return [line.split() for line in done.stdout.splitlines()]


class MinLengthTest(unittest.TestCase):
    def test_without_the_option_nothing_changes(self):
        self.assertEqual(wordfreq("--top", "3"), [["3", "a"], ["2", "the"], ["2", "cat"]])

    def test_short_words_are_left_out(self):
        self.assertEqual(
            wordfreq("--min-length", "3", "--top", "3"),
            [["2", "the"], ["2", "cat"], ["2", "hat"]],
        )

    def test_a_long_minimum(self):
        self.assertEqual(wordfreq("--min-length", "5"), [["1", "tremendous"]])

    def test_one_keeps_every_word(self):
        self.assertEqual(wordfreq("--min-length", "1"), wordfreq())

    def test_help_names_the_option(self):
        done = subprocess.run(
            [sys.executable, "wordfreq.py", "--help"], capture_output=True, text=True, timeout=30
        )
        self.assertIn("--min-length", done.stdout)


if __name__ == "__main__":
    unittest.main()
