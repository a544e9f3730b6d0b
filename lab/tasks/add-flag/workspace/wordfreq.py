"""Print the most frequent words of a text file, most frequent first."""

import argparse
import re
from collections import Counter


def count_words(text):
    """How often each word occurs, lower-cased; a word is a run of letters and apostrophes."""
    return Counter(re.findall(r"[a-z']+", text.lower()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file", help="the text file to read")
    parser.add_argument("--top", type=int, default=10, help="how many words to print")
    args = parser.parse_args(argv)
    with open(args.file, encoding="utf-8") as file:
        counts = count_words(file.read())
    for word, count in counts.most_common(args.top):
        print(f"{count:5} {word}")


if __name__ == "__main__":
    main()
