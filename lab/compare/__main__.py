"""`python -m lab.compare`: the same as `python -m lab compare`."""

from .command import main

if __name__ == "__main__":
    raise SystemExit(main())
