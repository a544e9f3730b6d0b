import os
import tempfile
import unittest

from invoicing.customers import customer
from invoicing.invoice import Invoice
from invoicing.lines import Line
from invoicing.storage import load, save


class DiscountTest(unittest.TestCase):
    def test_a_line_total_includes_its_discount(self):
        self.assertEqual(Line("pen", 120).total, 12960)

    def test_the_lower_tier_is_applied_once(self):
        invoice = Invoice(customer("acme")).add("notebook", 50)  # 175.00, 5 % off
        self.assertEqual(invoice.subtotal, 16625)

    def test_no_discount_below_the_tiers(self):
        invoice = Invoice(customer("acme")).add("notebook", 49)
        self.assertEqual(invoice.subtotal, 17150)


class StorageTest(unittest.TestCase):
    def test_the_number_survives_two_round_trips(self):
        invoice = Invoice(customer("bolt")).add("paper", 2)
        with tempfile.TemporaryDirectory() as folder:
            first = os.path.join(folder, "first.json")
            second = os.path.join(folder, "second.json")
            save(invoice, first)
            save(load(first), second)
            again = load(second)
        self.assertEqual(again.number, invoice.number)
        self.assertEqual(again.total, invoice.total)


if __name__ == "__main__":
    unittest.main()
