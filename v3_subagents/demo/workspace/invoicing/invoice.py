"""An invoice: a customer, lines, and the totals."""

from dataclasses import dataclass, field

from .discounts import discount_percent
from .lines import Line
from .money import percent_of
from .numbering import next_number
from .tax import vat_percent


@dataclass
class Invoice:
    customer: object
    lines: list = field(default_factory=list)
    number: str = field(default_factory=next_number)

    def add(self, code, quantity):
        self.lines.append(Line(code, quantity))
        return self

    @property
    def subtotal(self):
        """Sum of the lines after their quantity discounts, VAT excluded."""
        total = 0
        for line in self.lines:
            total += line.total - percent_of(line.total, discount_percent(line.quantity))
        return total

    @property
    def vat(self):
        return percent_of(self.subtotal, vat_percent(self.customer.country))

    @property
    def total(self):
        return self.subtotal + self.vat
