import unittest

from duration import parse_duration


class ParseDurationTest(unittest.TestCase):
    def test_hours_and_minutes(self):
        self.assertEqual(parse_duration("1h30m"), 5400)

    def test_seconds(self):
        self.assertEqual(parse_duration("90s"), 90)

    def test_a_bare_number_is_refused(self):
        with self.assertRaises(ValueError):
            parse_duration("90")


if __name__ == "__main__":
    unittest.main()
