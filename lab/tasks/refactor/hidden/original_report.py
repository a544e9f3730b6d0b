"""Monthly summaries for the shop's back office: sales, refunds and stock movements.

Each row is a dict; each summary is a text table, one line per group, largest first.
"""


def sales_summary(rows):
    """Revenue per product."""
    totals = {}
    for row in rows:
        key = row["product"]
        totals[key] = totals.get(key, 0) + row["quantity"] * row["unit_price"]
    ordered = sorted(totals.items(), key=lambda item: (-item[1], item[0]))
    lines = ["Sales by product"]
    for key, total in ordered:
        lines.append(f"  {key:<20} {total / 100:>10.2f}")
    lines.append(f"  {'total':<20} {sum(totals.values()) / 100:>10.2f}")
    return "\n".join(lines)


def refund_summary(rows):
    """Refunded amounts per reason."""
    totals = {}
    for row in rows:
        key = row["reason"]
        totals[key] = totals.get(key, 0) + row["amount"]
    ordered = sorted(totals.items(), key=lambda item: (-item[1], item[0]))
    lines = ["Refunds by reason"]
    for key, total in ordered:
        lines.append(f"  {key:<20} {total / 100:>10.2f}")
    lines.append(f"  {'total':<20} {sum(totals.values()) / 100:>10.2f}")
    return "\n".join(lines)


def stock_summary(rows):
    """Units moved per warehouse (in and out both count)."""
    totals = {}
    for row in rows:
        key = row["warehouse"]
        totals[key] = totals.get(key, 0) + abs(row["change"]) * 100
    ordered = sorted(totals.items(), key=lambda item: (-item[1], item[0]))
    lines = ["Stock moved by warehouse"]
    for key, total in ordered:
        lines.append(f"  {key:<20} {total / 100:>10.2f}")
    lines.append(f"  {'total':<20} {sum(totals.values()) / 100:>10.2f}")
    return "\n".join(lines)
