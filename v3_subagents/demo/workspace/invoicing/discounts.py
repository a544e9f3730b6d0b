"""Quantity discounts: the more of one product, the lower its price."""

# (minimum quantity, percent off), highest threshold first
TIERS = [(100, 10), (50, 5)]


def discount_percent(quantity):
    """Percent off the unit price for buying `quantity` of one product."""
    for minimum, percent in TIERS:
        if quantity >= minimum:
            return percent
    return 0
