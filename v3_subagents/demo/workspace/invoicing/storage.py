"""Save invoices as JSON and read them back."""

import json

from .customers import Customer
from .invoice import Invoice
from .lines import Line


def to_dict(invoice):
    return {
        "number": invoice.number,
        "customer": {"name": invoice.customer.name, "country": invoice.customer.country},
        "lines": [{"code": line.code, "quantity": line.quantity} for line in invoice.lines],
    }


def from_dict(data):
    customer = Customer(**data["customer"])
    lines = [Line(**line) for line in data["lines"]]
    return Invoice(customer, lines)


def save(invoice, path):
    with open(path, "w", encoding="utf-8") as file:
        json.dump(to_dict(invoice), file, indent=2)


def load(path):
    with open(path, encoding="utf-8") as file:
        return from_dict(json.load(file))
