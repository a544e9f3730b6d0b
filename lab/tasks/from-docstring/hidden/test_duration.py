import unittest

from duration import parse_duration


class ParseDurationTest(unittest.TestCase):
    def test_hours_and_minutes(self):
        self.assertEqual(parse_duration("1h30m"), 5400)

    def test_seconds(self):
        self.assertEqual(parse_duration("90s"), 90)

    def test_every_unit(self):
        self.assertEqual(parse_duration("1d2h3m4s"), 93784)

    def test_days_and_hours_with_a_space(self):
        self.assertEqual(parse_duration("2d 4h"), 187200)

    def test_upper_case_units(self):
        self.assertEqual(parse_duration("1H5M"), 3900)

    def test_spaces_around(self):
        self.assertEqual(parse_duration("  45m "), 2700)

    def test_zero_is_a_number(self):
        self.assertEqual(parse_duration("0s"), 0)

    def test_large_numbers(self):
        self.assertEqual(parse_duration("120m"), 7200)

    def test_refused(self):
        for text in ["90", "", "   ", "1x", "h", "1.5h", "-1h", "30m1h", "1h1h", "1h 30", "abc"]:
            with self.subTest(text=text), self.assertRaises(ValueError):
                parse_duration(text)


if __name__ == "__main__":
    unittest.main()
