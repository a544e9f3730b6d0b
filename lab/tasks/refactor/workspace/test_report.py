import unittest

from report import refund_summary, sales_summary, stock_summary


class ReportTest(unittest.TestCase):
    def test_sales(self):
        rows = [
            {"product": "pen", "quantity": 3, "unit_price": 120},
            {"product": "ink", "quantity": 1, "unit_price": 900},
            {"product": "pen", "quantity": 1, "unit_price": 120},
        ]
        self.assertEqual(
            sales_summary(rows).splitlines(),
            [
                "Sales by product",
                "  ink                        9.00",
                "  pen                        4.80",
                "  total                     13.80",
            ],
        )

    def test_refunds_of_nothing(self):
        self.assertEqual(refund_summary([]), "Refunds by reason\n  total                      0.00")

    def test_stock_counts_both_ways(self):
        rows = [{"warehouse": "north", "change": -4}, {"warehouse": "north", "change": 6}]
        self.assertIn("  north                     10.00", stock_summary(rows))


if __name__ == "__main__":
    unittest.main()
