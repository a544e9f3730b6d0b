"""Amounts of money, as integers in cents."""


def cents(euros):
    """Cents from an amount in euros given as a string, e.g. "12.50" -> 1250."""
    whole, _, fraction = euros.partition(".")
    return int(whole) * 100 + int((fraction + "00")[:2])


def format_money(amount):
    """1250 -> "12.50 EUR"."""
    sign = "-" if amount < 0 else ""
    amount = abs(amount)
    return f"{sign}{amount // 100}.{amount % 100:02d} EUR"


def percent_of(amount, percent):
    """`percent` percent of `amount`, rounded half up to a whole cent."""
    return (amount * percent + 50) // 100
