"""Invoice numbers: INV-0001, INV-0002, … within one run of the program."""

from itertools import count

_counter = count(1)


def next_number():
    return f"INV-{next(_counter):04d}"
