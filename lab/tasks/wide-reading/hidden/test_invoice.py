from lab.tasks.checks import AgentTest


class InvoiceTest(AgentTest):
    setup = """
from invoicing.customers import customer
from invoicing.invoice import Invoice
from invoicing.render import render
"""

    def totals(self, code):
        return self.value(f"invoice = {code}\n(invoice.subtotal, invoice.vat, invoice.total)")

    def test_small_order_has_no_discount(self):
        totals = self.totals("Invoice(customer('acme')).add('stapler', 2)")
        self.assertEqual(totals, (2400, 456, 2856))

    def test_quantity_discount_is_applied_once(self):
        totals = self.totals("Invoice(customer('bolt')).add('pen', 120)")  # 144.00, 10 % off
        self.assertEqual(totals, (12960, 2592, 15552))

    def test_rendered_lines_add_up_to_the_subtotal(self):
        text = self.value("render(Invoice(customer('crane')).add('pen', 60).add('paper', 4))")
        self.assertIn("Subtotal                                  91.40 EUR", text)
        self.assertIn("Total                                    110.59 EUR", text)
