import random
import unittest

import original_report
import report

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


class SameBehaviourTest(unittest.TestCase):
    def test_every_summary_prints_what_it_printed_before(self):
        rng = random.Random(7)
        for name in ("sales_summary", "refund_summary", "stock_summary"):
            for _ in range(1000):
                rows = rows_for(name, rng)
                now, before = getattr(report, name)(rows), getattr(original_report, name)(rows)
                self.assertEqual(now, before, f"{name}({rows!r})")


if __name__ == "__main__":
    unittest.main()
