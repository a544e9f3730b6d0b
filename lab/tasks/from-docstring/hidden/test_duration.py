from lab.tasks.checks import AgentTest


class ParseDurationTest(AgentTest):
    setup = "from duration import parse_duration"

    def duration(self, text):
        return self.value(f"parse_duration({text!r})")

    def test_hours_and_minutes(self):
        self.assertEqual(self.duration("1h30m"), 5400)

    def test_seconds(self):
        self.assertEqual(self.duration("90s"), 90)

    def test_every_unit(self):
        self.assertEqual(self.duration("1d2h3m4s"), 93784)

    def test_days_and_hours_with_a_space(self):
        self.assertEqual(self.duration("2d 4h"), 187200)

    def test_upper_case_units(self):
        self.assertEqual(self.duration("1H5M"), 3900)

    def test_spaces_around(self):
        self.assertEqual(self.duration("  45m "), 2700)

    def test_zero_is_a_number(self):
        self.assertEqual(self.duration("0s"), 0)

    def test_large_numbers(self):
        self.assertEqual(self.duration("120m"), 7200)

    def test_refused(self):
        for text in ["90", "", "   ", "1x", "h", "1.5h", "-1h", "30m1h", "1h1h", "1h 30", "abc"]:
            with self.subTest(text=text):
                self.assertRaisesInAgent(ValueError, f"parse_duration({text!r})")
