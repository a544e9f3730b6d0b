from lab.tasks.checks import AgentTest


class WordsTest(AgentTest):
    setup = "import textstats"

    def test_simple_sentence(self):
        self.assertEqual(self.value("textstats.word_count('The cat sat.')"), 3)

    def test_line_breaks_and_double_spaces(self):
        self.assertEqual(self.value("textstats.word_count('one  two\\nthree\\n')"), 3)

    def test_tabs(self):
        self.assertEqual(self.value("textstats.word_count('one\\ttwo \\t three')"), 3)

    def test_empty_text(self):
        self.assertEqual(self.value("textstats.word_count('')"), 0)

    def test_punctuation_and_case(self):
        self.assertEqual(self.value("textstats.words('Hello, WORLD!')"), ["hello", "world"])


class TopWordsTest(AgentTest):
    setup = "import textstats"

    def test_most_frequent_first(self):
        self.assertEqual(self.value("textstats.top_words('b a b c b a', 2)"), ["b", "a"])

    def test_ties_in_alphabetical_order(self):
        self.assertEqual(
            self.value("textstats.top_words('pear apple fig', 3)"), ["apple", "fig", "pear"]
        )

    def test_ties_among_the_most_frequent(self):
        self.assertEqual(self.value("textstats.top_words('z y z y x', 2)"), ["y", "z"])

    def test_default_is_three(self):
        self.assertEqual(self.value("textstats.top_words('d c c b b b a a a a')"), ["a", "b", "c"])


class ReadingTimeTest(AgentTest):
    setup = "import textstats"

    def test_rounds_up_to_whole_minutes(self):
        self.assertEqual(self.value("textstats.reading_time('word ' * 201)"), 2)

    def test_custom_speed(self):
        self.assertEqual(
            self.value("textstats.reading_time('word ' * 100, words_per_minute=100)"), 1
        )

    def test_custom_speed_rounds_up(self):
        self.assertEqual(
            self.value("textstats.reading_time('word ' * 250, words_per_minute=100)"), 3
        )

    def test_a_few_words_take_a_minute(self):
        self.assertEqual(self.value("textstats.reading_time('just three words')"), 1)

    def test_empty_text_takes_no_time(self):
        self.assertEqual(self.value("textstats.reading_time('')"), 0)
