from lab.tasks.checks import AgentTest

SETUP = """
import os, tempfile
from invoicing.customers import customer
from invoicing.invoice import Invoice
from invoicing.lines import Line
from invoicing.storage import load, save
"""


class DiscountTest(AgentTest):
    setup = SETUP

    def test_a_line_total_includes_its_discount(self):
        self.assertEqual(self.value("Line('pen', 120).total"), 12960)

    def test_the_lower_tier_is_applied_once(self):
        invoice = "Invoice(customer('acme')).add('notebook', 50)"  # 175.00, 5 % off
        self.assertEqual(self.value(f"{invoice}.subtotal"), 16625)

    def test_no_discount_below_the_tiers(self):
        invoice = "Invoice(customer('acme')).add('notebook', 49)"
        self.assertEqual(self.value(f"{invoice}.subtotal"), 17150)


class StorageTest(AgentTest):
    setup = SETUP

    def test_the_number_survives_two_round_trips(self):
        number, total, again_number, again_total = self.value(
            """
invoice = Invoice(customer("bolt")).add("paper", 2)
with tempfile.TemporaryDirectory() as folder:
    first = os.path.join(folder, "first.json")
    second = os.path.join(folder, "second.json")
    save(invoice, first)
    save(load(first), second)
    again = load(second)
(invoice.number, invoice.total, again.number, again.total)
"""
        )
        self.assertEqual(again_number, number)
        self.assertEqual(again_total, total)
