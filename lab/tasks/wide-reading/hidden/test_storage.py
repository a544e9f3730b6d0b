from lab.tasks.checks import AgentTest


class StorageTest(AgentTest):
    setup = """
import os, tempfile
from invoicing.customers import customer
from invoicing.invoice import Invoice
from invoicing.storage import load, save
"""

    def test_an_invoice_comes_back_as_it_was_saved(self):
        before, after = self.value(
            """
invoice = Invoice(customer("crane")).add("notebook", 3).add("pen", 10)
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "invoice.json")
    save(invoice, path)
    loaded = load(path)
def seen(i):
    return (i.number, repr(i.customer), [(l.code, l.quantity) for l in i.lines], i.total)
(seen(invoice), seen(loaded))
"""
        )
        self.assertEqual(after, before)
        self.assertEqual(after[2], [("notebook", 3), ("pen", 10)])
