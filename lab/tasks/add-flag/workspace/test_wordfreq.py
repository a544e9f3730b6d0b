import unittest

from wordfreq import count_words


class CountWordsTest(unittest.TestCase):
    def test_counts_ignore_case(self):
        self.assertEqual(count_words("The cat and the hat")["the"], 2)

    def test_apostrophes_stay_in_words(self):
        self.assertEqual(count_words("it's")["it's"], 1)


if __name__ == "__main__":
    unittest.main()
