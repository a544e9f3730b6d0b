"""The products on sale and their unit prices."""

from .money import cents

PRODUCTS = {
    "pen": ("Ballpoint pen", cents("1.20")),
    "notebook": ("A5 notebook", cents("3.50")),
    "stapler": ("Stapler", cents("12.00")),
    "paper": ("Printer paper, 500 sheets", cents("5.75")),
}


def product(code):
    """(name, unit price in cents) of a product code."""
    if code not in PRODUCTS:
        raise KeyError(f"unknown product {code!r}; known: {', '.join(sorted(PRODUCTS))}")
    return PRODUCTS[code]
