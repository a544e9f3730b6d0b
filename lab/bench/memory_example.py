"""The worked BM25 example of chapter 4: three memories, two queries, and every term's
share of every score, checked against what `MemoryStore.search` returns.

    python -m lab.bench.memory --example
"""

from __future__ import annotations

import tempfile
import unicodedata

from v4_memory.memory import K1, B, MemoryStore, bm25_term, idf, tokenize

EXAMPLE_MEMORIES = {
    "A": "Run the tests with pytest before each commit.",
    "B": "用户喜欢喝咖啡，不加糖。",
    "C": "Integration tests 很慢，用户喜欢边等边喝茶。",
}
EXAMPLE_QUERIES = ["pytest tests", "爱喝咖啡吗"]


def print_example() -> None:
    """Three memories, two queries, and every term's share of every score."""
    with tempfile.TemporaryDirectory() as root:
        store = MemoryStore(root, sync=False)
        labels = {store.add(text): label for label, text in EXAMPLE_MEMORIES.items()}
        count, all_lengths = store.index.totals()
        average = all_lengths / count
        print("share of a term = idf x tf x (k1 + 1) / (tf + k1 x (1 - b + b x length / average))")
        print(f"with k1 = {K1}, b = {B}; idf = ln(1 + (N - n + 0.5) / (n + 0.5)), N = 3")
        for label, text in EXAMPLE_MEMORIES.items():
            tokens = tokenize(text)
            print(f"  {label}  {text}\n     {len(tokens)} tokens: {' '.join(tokens)}")
        print(f"  average length {all_lengths} / 3 = {average:.2f} tokens")
        for query in EXAMPLE_QUERIES:
            explain(store, query, labels, average)


def explain(store: MemoryStore, query: str, labels: dict[str, str], average: float) -> None:
    """Print one row per query term (n = memories holding it) and check the totals."""
    index = store.index
    terms = list(dict.fromkeys(tokenize(query)))
    print(f'\nquery "{query}"  ->  terms: {" ".join(terms)}')
    print(
        f"  {'term':<8} {'n':>2} {'idf':>6}" + "".join(f"{label:>8}" for label in labels.values())
    )
    sums = dict.fromkeys(labels, 0.0)
    for term in terms:
        postings = {memory_id: (n, length) for memory_id, n, length in index.postings(term)}
        weight = idf(len(postings), index.totals()[0])
        row = f"  {term:<{8 - wide(term)}} {len(postings):>2} "
        row += f"{weight:6.3f}" if postings else f"{'-':>6}"
        for memory_id in labels:
            if memory_id not in postings:
                row += f"{'-':>8}"
                continue
            share = bm25_term(weight, *postings[memory_id], average)
            sums[memory_id] += share
            row += f"{share:8.3f}"
        print(row)
    hits = store.search(query, k=len(labels))
    for hit in hits:
        assert hit.score == sums[hit.id], "the example must add up to what search returns"
    ranking = ", ".join(f"{labels[hit.id]} {hit.score:.3f}" for hit in hits)
    print(f"  total: {ranking}  (the scores store.search returns)")


def wide(text: str) -> int:
    """How many extra columns a term takes in a terminal: Chinese characters are two wide."""
    return sum(unicodedata.east_asian_width(char) in "WF" for char in text)
