import random

import original_report

from lab.tasks.checks import AgentTest

WORDS = ["pen", "ink", "paper", "north", "south", "damaged", "late", "a", "zz", "Ink"]


def rows_for(name, rng):
    rows = []
    for _ in range(rng.randint(0, 12)):
        key = rng.choice(WORDS)
        if name == "sales_summary":
            quantity, price = rng.randint(0, 9), rng.randint(0, 5000)
            rows.append({"product": key, "quantity": quantity, "unit_price": price})
        elif name == "refund_summary":
            rows.append({"reason": key, "amount": rng.randint(0, 20000)})
        else:
            rows.append({"warehouse": key, "change": rng.randint(-50, 50)})
    return rows


class SameBehaviourTest(AgentTest):
    setup = "import report"

    def test_every_summary_prints_what_it_printed_before(self):
        rng = random.Random()  # inputs made fresh at every check
        for name in ("sales_summary", "refund_summary", "stock_summary"):
            inputs = [rows_for(name, rng) for _ in range(1000)]
            outputs = self.value(f"[report.{name}(rows) for rows in {inputs!r}]")
            self.assertEqual(len(outputs), len(inputs))
            for rows, now in zip(inputs, outputs, strict=True):
                before = getattr(original_report, name)(rows)
                self.assertEqual(now, before, f"{name}({rows!r})")
