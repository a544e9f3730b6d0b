"""The benchmarks: what the course claims about speed and size, measured and printed.

    python -m lab bench [--quick]        every one of them, each with its targets
    python -m lab.bench.basics           start-up, the loop's own cost, the estimate, a read
    python -m lab.bench.sessions         chapter 4's session file: appends, loads, repairs
    python -m lab.bench.context          chapter 4's context window at any length
    python -m lab.bench.memory           chapter 4's memory against SQLite FTS5, same terms
    python -m lab.bench.view             the run viewer's page of a long run

Each prints its figures beside their targets (ok or OVER TARGET) and measures the
course's own code on inputs it makes itself; a figure the docs show is one of these
printed (or saved with --json), never typed in.  They import the chapters and the lab
they measure; nothing imports them but `python -m lab bench` and their tests.
"""
