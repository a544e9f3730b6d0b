"""Describe a text: its words, the most frequent ones, and its reading time."""

from collections import Counter


def words(text):
    """The words of `text`, lower-cased, without surrounding punctuation."""
    found = []
    for word in text.split(" "):
        word = word.strip(".,;:!?\"'()").lower()
        found.append(word)
    return found


def word_count(text):
    """How many words `text` has."""
    return len(words(text))


def top_words(text, n=3):
    """The `n` most frequent words, most frequent first; ties in alphabetical order."""
    counts = Counter(words(text))
    ranked = sorted(counts.items(), key=lambda pair: (pair[1], pair[0]))
    return [word for word, _ in ranked[:n]]
