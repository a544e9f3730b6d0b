import unittest

from invoicing.customers import customer
from invoicing.invoice import Invoice
from invoicing.render import render


class InvoiceTest(unittest.TestCase):
    def test_small_order_has_no_discount(self):
        invoice = Invoice(customer("acme")).add("stapler", 2)
        self.assertEqual(invoice.subtotal, 2400)
        self.assertEqual(invoice.vat, 456)
        self.assertEqual(invoice.total, 2856)

    def test_quantity_discount_is_applied_once(self):
        invoice = Invoice(customer("bolt")).add("pen", 120)  # 144.00, 10 % off
        self.assertEqual(invoice.subtotal, 12960)
        self.assertEqual(invoice.vat, 2592)
        self.assertEqual(invoice.total, 15552)

    def test_rendered_lines_add_up_to_the_subtotal(self):
        invoice = Invoice(customer("crane")).add("pen", 60).add("paper", 4)
        text = render(invoice)
        self.assertIn("Subtotal                                  91.40 EUR", text)
        self.assertIn("Total                                    110.59 EUR", text)


if __name__ == "__main__":
    unittest.main()
