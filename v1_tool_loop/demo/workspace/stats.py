"""Small statistics helpers for the weekly report."""


def mean(values):
    """Arithmetic mean; raises ValueError for an empty list."""
    if not values:
        raise ValueError("mean of an empty list")
    return sum(values) / len(values)


def median(values):
    """Middle value of the sorted list; the mean of the two middle values for an even count."""
    if not values:
        raise ValueError("median of an empty list")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2 == 0:
        return (ordered[middle] + ordered[middle + 1]) / 2
    return ordered[middle]


def spread(values):
    """Largest value minus smallest."""
    return max(values) - min(values)
