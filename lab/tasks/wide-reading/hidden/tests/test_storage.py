import os
import tempfile
import unittest

from invoicing.customers import customer
from invoicing.invoice import Invoice
from invoicing.storage import load, save


class StorageTest(unittest.TestCase):
    def test_an_invoice_comes_back_as_it_was_saved(self):
        invoice = Invoice(customer("crane")).add("notebook", 3).add("pen", 10)
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "invoice.json")
            save(invoice, path)
            loaded = load(path)
        self.assertEqual(loaded.number, invoice.number)
        self.assertEqual(loaded.customer, invoice.customer)
        lines = [(line.code, line.quantity) for line in loaded.lines]
        self.assertEqual(lines, [("notebook", 3), ("pen", 10)])
        self.assertEqual(loaded.total, invoice.total)


if __name__ == "__main__":
    unittest.main()
