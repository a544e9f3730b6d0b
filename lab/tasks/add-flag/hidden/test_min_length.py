import tempfile
from pathlib import Path

from lab.tasks.checks import AgentTest

TEXT = "a an the cat, the hat: a cat in a hat. Tremendous!"


class MinLengthTest(AgentTest):
    def wordfreq(self, *options):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "text.txt"
            path.write_text(TEXT, encoding="utf-8")
            done = self.program("wordfreq.py", str(path), *options)
        if done.exit_code != 0:
            self.fail(f"wordfreq.py {' '.join(options)} failed: {done.errors.strip()[-200:]}")
        return [line.split() for line in done.output.splitlines()]

    def test_without_the_option_nothing_changes(self):
        self.assertEqual(self.wordfreq("--top", "3"), [["3", "a"], ["2", "the"], ["2", "cat"]])

    def test_short_words_are_left_out(self):
        self.assertEqual(
            self.wordfreq("--min-length", "3", "--top", "3"),
            [["2", "the"], ["2", "cat"], ["2", "hat"]],
        )

    def test_a_long_minimum(self):
        self.assertEqual(self.wordfreq("--min-length", "5"), [["1", "tremendous"]])

    def test_one_keeps_every_word(self):
        self.assertEqual(self.wordfreq("--min-length", "1"), self.wordfreq())

    def test_help_names_the_option(self):
        self.assertIn("--min-length", self.program("wordfreq.py", "--help").output)
