"""Send the report to the team's shared site (here: a line in published.txt)."""

import argparse
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--channel", default="sales")
channel = parser.parse_args().channel
with Path("published.txt").open("a", encoding="utf-8") as log:
    log.write(f"{channel}\n")
print(f"published to {channel}")
