import unittest

from stats import mean, median, spread


class StatsTest(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(mean([1, 2, 3, 4]), 2.5)

    def test_median_odd_count(self):
        self.assertEqual(median([5, 1, 3]), 3)

    def test_median_even_count(self):
        self.assertEqual(median([4, 1, 3, 2]), 2.5)

    def test_median_of_two(self):
        self.assertEqual(median([10, 20]), 15)

    def test_median_of_six_unsorted(self):
        self.assertEqual(median([9, 2, 7, 4, 1, 8]), 5.5)

    def test_median_of_one(self):
        self.assertEqual(median([7]), 7)

    def test_median_of_empty_list_raises(self):
        with self.assertRaises(ValueError):
            median([])

    def test_spread(self):
        self.assertEqual(spread([3, 9, 4]), 6)


if __name__ == "__main__":
    unittest.main()
