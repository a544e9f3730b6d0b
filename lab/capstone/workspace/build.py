"""Build the sales report: one line per region, the total of its sales."""

import argparse
import csv
from collections import Counter
from pathlib import Path

from src.fmt import money


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="build/report.txt")
    out = Path(parser.parse_args().out)
    totals: Counter[str] = Counter()
    for path in sorted(Path("data").glob("*.csv")):
        with path.open(encoding="utf-8") as rows:
            for row in csv.DictReader(rows):
                totals[row["region"]] += float(row["amount"])
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"{region}: {money(total)}" for region, total in sorted(totals.items())]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
