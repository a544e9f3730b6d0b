"""An invoice as plain text, the way it is printed and e-mailed."""

from .money import format_money
from .tax import vat_percent


def render(invoice):
    rows = [f"Invoice {invoice.number} for {invoice.customer.name}", ""]
    for line in invoice.lines:
        rows.append(f"{line.quantity:>5} x {line.name:<28} {format_money(line.total):>14}")
    rate = vat_percent(invoice.customer.country)
    rows += [
        "",
        f"{'Subtotal':<36} {format_money(invoice.subtotal):>14}",
        f"{f'VAT {rate} %':<36} {format_money(invoice.vat):>14}",
        f"{'Total':<36} {format_money(invoice.total):>14}",
    ]
    return "\n".join(rows)
