"""`python -m lab.figures`: print one figure, or bring every figure in docs/ up to date."""

from .updater import main

if __name__ == "__main__":
    raise SystemExit(main())
