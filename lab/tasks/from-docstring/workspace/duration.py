"""Durations written the way people write them in config files."""

UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}


def parse_duration(text):
    """The number of seconds in a duration such as "1h30m", "90s" or "2d 4h".

    A duration is one or more parts, each a whole number followed by a unit: d
    (days), h (hours), m (minutes) or s (seconds).  Units may be upper or lower
    case, and spaces may separate the parts or surround the whole.  Each unit may
    appear at most once, and units must come from the largest to the smallest:
    "1h30m" is fine, "30m1h" is not.  A bare number, an unknown unit, an empty
    text or anything else raises ValueError.

    >>> parse_duration("1h30m")
    5400
    """
    raise NotImplementedError
