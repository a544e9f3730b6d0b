"""Customers, and the country that decides their VAT rate."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Customer:
    name: str
    country: str  # ISO code, e.g. "DE"


CUSTOMERS = {
    "acme": Customer("ACME GmbH", "DE"),
    "bolt": Customer("Bolt SARL", "FR"),
    "crane": Customer("Crane BV", "NL"),
}


def customer(key):
    return CUSTOMERS[key]
