"""python -m invoicing.cli demo: print a sample invoice."""

import sys

from .customers import customer
from .invoice import Invoice
from .render import render


def demo():
    invoice = Invoice(customer("acme")).add("pen", 120).add("stapler", 2).add("paper", 10)
    print(render(invoice))


if __name__ == "__main__":
    if sys.argv[1:] != ["demo"]:
        sys.exit("usage: python -m invoicing.cli demo")
    demo()
