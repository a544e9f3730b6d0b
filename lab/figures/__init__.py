"""The figures the docs show, printed by the code that produces them: never typed in.

`python -m lab.figures --update` prints every figure into its marked block in docs/, and
`--check` lists the blocks that are out of date (`updater.py` says how a block is marked).
The package imports the lab and the chapters to measure them; nothing imports it back.

    updater.py          the marked blocks in docs/: finding them, render, --update, --check
    demos.py            running a demo in the private scratch folder, watching every turn
    markdown.py         the tables, numbers and version stamp every figure is printed with
    every_chapter.py    what every chapter shows alike: its demo turn by turn, the summary
    chapter1.py         the tools' output cap, one request on the wire
    chapter2.py         the plan, read back from the demo's messages
    chapter3.py         the children, and the context they spare the parent
    chapter4.py         a session across three processes, and what the window sent
    chapter4_prompt.py  the prompt's layers, the prefix cache, skills, recall's scores
    chapter4_memory.py  the memory against SQLite FTS5, as the benchmark recorded it
    local_models.py     a local model's server, as measured, and its recorded runs, replayed
"""

from .chapter2 import plan_tokens
from .chapter4 import masked, session_steps
from .demos import (
    MEASURING,
    SCRATCH,
    SCRATCH_LOCK,
    DemoRun,
    demo_stdout,
    lab_records,
    run_demo,
    scratch_folder,
)
from .updater import FIGURES, Block, all_blocks, blocks, language_of, main, render, updated

__all__ = [
    "FIGURES",
    "MEASURING",
    "SCRATCH",
    "SCRATCH_LOCK",
    "Block",
    "DemoRun",
    "all_blocks",
    "blocks",
    "demo_stdout",
    "lab_records",
    "language_of",
    "main",
    "masked",
    "plan_tokens",
    "render",
    "run_demo",
    "scratch_folder",
    "session_steps",
    "updated",
]
