"""Checks before an invoice is issued."""

from .catalog import PRODUCTS
from .tax import VAT_PERCENT


def problems(invoice):
    """Everything wrong with an invoice, one line each; empty when it can be issued."""
    found = []
    if not invoice.lines:
        found.append("the invoice has no lines")
    for number, line in enumerate(invoice.lines, 1):
        if line.code not in PRODUCTS:
            found.append(f"line {number}: unknown product {line.code!r}")
        if line.quantity < 1:
            found.append(f"line {number}: quantity must be at least 1")
    if invoice.customer.country not in VAT_PERCENT:
        found.append(f"no VAT rate for country {invoice.customer.country!r}")
    return found
