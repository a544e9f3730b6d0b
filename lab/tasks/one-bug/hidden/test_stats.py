from lab.tasks.checks import AgentTest


class StatsTest(AgentTest):
    setup = "from stats import mean, median, spread"

    def test_mean(self):
        self.assertEqual(self.value("mean([1, 2, 3, 4])"), 2.5)

    def test_median_odd_count(self):
        self.assertEqual(self.value("median([5, 1, 3])"), 3)

    def test_median_even_count(self):
        self.assertEqual(self.value("median([4, 1, 3, 2])"), 2.5)

    def test_median_of_two(self):
        self.assertEqual(self.value("median([10, 20])"), 15)

    def test_median_of_six_unsorted(self):
        self.assertEqual(self.value("median([9, 2, 7, 4, 1, 8])"), 5.5)

    def test_median_of_one(self):
        self.assertEqual(self.value("median([7])"), 7)

    def test_median_of_empty_list_raises(self):
        self.assertRaisesInAgent(ValueError, "median([])")

    def test_spread(self):
        self.assertEqual(self.value("spread([3, 9, 4])"), 6)
