"""One line of an invoice: a product, a quantity, and its total after discount."""

from dataclasses import dataclass

from .catalog import product
from .discounts import discount_percent
from .money import percent_of


@dataclass
class Line:
    code: str
    quantity: int

    @property
    def name(self):
        return product(self.code)[0]

    @property
    def unit_price(self):
        return product(self.code)[1]

    @property
    def gross(self):
        """Before any discount."""
        return self.unit_price * self.quantity

    @property
    def discount(self):
        return percent_of(self.gross, discount_percent(self.quantity))

    @property
    def total(self):
        """What the customer pays for this line, discount included, VAT excluded."""
        return self.gross - self.discount
