"""VAT rates by country, in percent."""

VAT_PERCENT = {"DE": 19, "FR": 20, "NL": 21}


def vat_percent(country):
    """The standard VAT rate of `country`, in percent (19 means 19 %)."""
    if country not in VAT_PERCENT:
        raise KeyError(f"no VAT rate for {country!r}")
    return VAT_PERCENT[country]
