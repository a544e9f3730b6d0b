"""Show a total in another currency, for customers who ask (the invoice stays in EUR)."""

# cents of the other currency per 100 euro cents, fixed for the demo
RATES = {"EUR": 100, "USD": 108, "GBP": 85, "CHF": 96}


def convert(amount, currency):
    if currency not in RATES:
        raise KeyError(f"no rate for {currency!r}; known: {', '.join(sorted(RATES))}")
    return (amount * RATES[currency] + 50) // 100
