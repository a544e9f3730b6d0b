import unittest

from invoicing.money import cents, format_money, percent_of


class MoneyTest(unittest.TestCase):
    def test_cents(self):
        self.assertEqual(cents("12.5"), 1250)
        self.assertEqual(cents("3"), 300)

    def test_format(self):
        self.assertEqual(format_money(1250), "12.50 EUR")
        self.assertEqual(format_money(-5), "-0.05 EUR")

    def test_percent_rounds_half_up(self):
        self.assertEqual(percent_of(250, 19), 48)  # 47.5 -> 48


if __name__ == "__main__":
    unittest.main()
