from lab.tasks.checks import AgentTest


class MoneyTest(AgentTest):
    setup = "from invoicing.money import cents, format_money, percent_of"

    def test_cents(self):
        self.assertEqual(self.value("cents('12.5')"), 1250)
        self.assertEqual(self.value("cents('3')"), 300)

    def test_format(self):
        self.assertEqual(self.value("format_money(1250)"), "12.50 EUR")
        self.assertEqual(self.value("format_money(-5)"), "-0.05 EUR")

    def test_percent_rounds_half_up(self):
        self.assertEqual(self.value("percent_of(250, 19)"), 48)  # 47.5 -> 48
