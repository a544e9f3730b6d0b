"""Chapter 4's figures of what the prompt carries: its layers step by step, what a prefix
cache can keep of it, what skills cost listed or loaded, and how recall scores a memory.

The measures behind them (`shared_prefix_tokens`, `listing_vs_loading`) live here, not in
the chapter: the agent never needs them, only the docs that show what its design saves.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass

from lab.bench.memory_example import EXAMPLE_MEMORIES, EXAMPLE_QUERIES
from lab.chapters import chapter
from lab.words import word
from llm import Message
from llm.openai_model import to_chat_messages, to_chat_tools
from llm.tokens import estimate_text, estimate_tool
from v1_tool_loop.tools import TOOLS
from v4_memory.memory import MemoryStore, bm25_term, idf, tokenize
from v4_memory.prompt import assemble
from v4_memory.skills import LOAD_SKILL_TOOL, Skill, find_skills, index_line, skills_index

from .chapter4 import session_steps, step_word
from .markdown import number, stamp, table


def shared_prefix_tokens(before: str, after: str) -> int:
    """Tokens at the start of two prompts that are identical: what a prefix cache can reuse.

    An upper bound: providers cache in steps (OpenAI in blocks of 128 tokens,
    Anthropic up to a marked breakpoint), so the part they reuse ends a little earlier.
    """
    return estimate_text(os.path.commonprefix([before, after]))


def prompt_layers(name: str, lang: str = "en") -> str:
    """The system prompt's layers in each step of the demo, in estimated tokens, then the
    runtime note that ends each request (not in the system prompt, not in the total).

    The last row is how many tokens at the start of the step's prompt are the same as
    at the start of the step before's: what a provider's prefix cache could reuse.
    """
    steps = session_steps(name)
    headers = [word("layer", lang)]
    headers += [step_word(step, n, lang) for n, step in enumerate(steps, start=1)]
    rows = []
    for index, layer in enumerate(steps[0].layers):
        cells = [step.layers[index].tokens for step in steps]
        rows.append([f"{index + 1} · `{layer.name}`", *(number(c) if c else "—" for c in cells)])
    rows.append([word("total", lang), *(number(sum(x.tokens for x in s.layers)) for s in steps)])
    after = ("，" if lang == "zh" else ", ") + word("after the conversation", lang)
    rows.append([f"8 · `runtime`{after}", *(number(step.runtime.tokens) for step in steps)])
    prompts = [assemble(step.layers) for step in steps]
    shared = ["—"] + [number(shared_prefix_tokens(a, b)) for a, b in itertools.pairwise(prompts)]
    rows.append([word("same start as the step before", lang), *shared])
    return stamp() + "\n" + table(headers, rows)


def chat_text(system: str, messages: list[Message]) -> str:
    """A request as a chat template lays it out for a local model: the tool schemas
    first, then each Chat Completions message under its role.  What a prefix cache
    compares, near enough."""
    parts = [json.dumps(to_chat_tools(TOOLS), ensure_ascii=False)]
    for message in to_chat_messages(system, messages):
        calls = json.dumps(message.get("tool_calls", []), ensure_ascii=False)
        parts.append(f"<|{message['role']}|>\n{message.get('content') or ''}{calls}")
    return "\n".join(parts)


def clock_in_prompt(system: str, messages: list[Message], minute: int) -> str:
    """The same request laid out as it was before the runtime note left the system prompt:
    the runtime facts at the end of the system prompt, the clock `minute` minutes on."""
    *before, last = messages
    note = last["content"][-1]["text"]  # with_runtime put it there
    kept = [*before, {**last, "content": last["content"][:-1]}]
    facts = note.splitlines()[1:-1]  # without the <runtime> tags
    clock = re.sub(r"\d\d:\d\d", f"{9 + minute // 60:02}:{minute % 60:02}", facts[0], count=1)
    runtime = "\n".join(["# Runtime", "", clock, *facts[1:]])
    return chat_text(f"{system}\n\n{runtime}", kept)


def prefix_cache(name: str, lang: str = "en") -> str:
    """What a prefix cache can reuse in each step of chapter 4's demo, with the runtime facts
    at the end of the system prompt or in the note that ends the request.

    Each call's request is laid out as a chat template would (`chat_text`), and compared
    with the call before: the identical start (`shared_prefix_tokens`) is what a provider
    or a local server can take from its cache.  The clock moves on one minute per call,
    as on a local model on a laptop's CPU; with a fast hosted model most calls fall in
    the same minute and both rows come closer.  Compaction rewrites the history now and
    then, which no layout can keep cached.
    """
    steps = session_steps(name)
    headers = [word("step", lang), word("model calls", lang), word("tokens sent", lang)]
    headers += [word("cached: clock in the system prompt", lang)]
    headers += [word("cached: runtime note last", lang)]
    rows = []
    for number_, step in enumerate(steps, start=1):
        calls = list(zip(step.systems, step.sent, strict=True))
        new = [chat_text(system, sent) for system, sent in calls]
        old = [clock_in_prompt(system, sent, minute) for minute, (system, sent) in enumerate(calls)]
        sent_tokens = sum(estimate_text(text) for text in new)
        cells = []
        for texts in (old, new):
            reused = sum(shared_prefix_tokens(a, b) for a, b in itertools.pairwise(texts))
            cells.append(f"≈{number(reused)} ({round(100 * reused / sent_tokens)} %)")
        rows.append([step_word(step, number_, lang), str(len(calls)), f"≈{number(sent_tokens)}"])
        rows[-1] += cells
    return stamp() + "\n" + table(headers, rows)


@dataclass(frozen=True)
class SkillCosts:
    """Tokens that skills cost on every model call, listed against loaded whole.

    `per_skill` holds (name, tokens of its index line, tokens of its body).
    `listing` is what every call carries with two layers: the index and the
    load_skill schema.  `everything` is what every call would carry if every body
    sat in the prompt instead.  A loaded body is paid once more, in the turn that
    needs it, and stays in the history from then on.
    """

    per_skill: list[tuple[str, int, int]]
    listing: int
    everything: int


def listing_vs_loading(skills: Mapping[str, Skill]) -> SkillCosts:
    """The figures behind the two layers, measured with the shared token estimate."""
    per_skill = [
        (skill.name, estimate_text(index_line(skill)), estimate_text(skill.body))
        for skill in skills.values()
    ]
    listing = estimate_text(skills_index(skills)) + estimate_tool(LOAD_SKILL_TOOL)
    everything = estimate_text("\n\n".join(skill.body for skill in skills.values()))
    return SkillCosts(per_skill, listing, everything)


def skill_costs(name: str, lang: str = "en") -> str:
    """What skills cost on every call: the index and `load_skill`, or every body in the prompt.

    Measured on the skills the demo's agent finds: the chapter's own and the demo
    workspace's, with the shared token estimate (`listing_vs_loading`).
    """
    skills, _ = find_skills(chapter(name).demo_workspace)
    costs = listing_vs_loading(skills)
    headers = ["skill", "its line in the index (tokens)", "its instructions (tokens)"]
    rows = [[f"`{skill}`", number(line), number(body)] for skill, line, body in costs.per_skill]
    listed_ = word("listed: the index and `load_skill`, every call", lang)
    loaded = word("loaded: every skill's instructions, every call", lang)
    rows += [[listed_, number(costs.listing), ""], [loaded, "", number(costs.everything)]]
    return table([word(h, lang) for h in headers], rows)


def bm25_example(lang: str = "en") -> str:
    """The worked example of `python -m lab.bench.memory --example`, as tables: the memories
    and their terms, then for each query every term's share of every memory's score.

    A share is `bm25_term(idf, count, length, average)`; the totals are checked against
    what `MemoryStore.search` returns, so the tables are the store's own arithmetic.
    """
    with tempfile.TemporaryDirectory() as root:
        store = MemoryStore(root, sync=False)
        ids = {store.add(text): name for name, text in EXAMPLE_MEMORIES.items()}
        count, all_lengths = store.index.totals()
        average = all_lengths / count
        rows = [
            [name, text, " ".join(f"`{t}`" for t in tokenize(text)), str(len(tokenize(text)))]
            for name, text in EXAMPLE_MEMORIES.items()
        ]
        rows.append([word("average length", lang), "", "", f"{average:.2f}"])
        parts = [table([word(h, lang) for h in ["memory", "text", "its terms", "length"]], rows)]
        parts += [query_shares(store, ids, query, lang) for query in EXAMPLE_QUERIES]
    return "\n\n".join(parts)


def query_shares(store: MemoryStore, ids: dict[str, str], query: str, lang: str) -> str:
    """One query's table: every term's share of every memory's score, then the scores, which
    must be those the store's own search returns.  `ids` names the memories: A, B, C."""
    index = store.index
    total, all_lengths = index.totals()
    average = all_lengths / total
    scores = dict.fromkeys(ids, 0.0)
    rows = []
    for term in dict.fromkeys(tokenize(query)):
        postings = {memory_id: (n, length) for memory_id, n, length in index.postings(term)}
        weight = idf(len(postings), total)
        row = [f"`{term}`", str(len(postings)), f"{weight:.3f}" if postings else "—"]
        for memory_id in ids:
            if memory_id in postings:
                share = bm25_term(weight, *postings[memory_id], average)
                scores[memory_id] += share
                row.append(f"{share:.3f}")
            else:
                row.append("—")
        rows.append(row)
    found = {hit.id: hit.score for hit in store.search(query, k=total)}
    if found != {i: s for i, s in scores.items() if s}:
        raise RuntimeError(f"the shares of {query!r} do not add up to the store's scores")
    rows.append(
        [word("score", lang), "", "", *(f"**{s:.3f}**" if s else "—" for s in scores.values())]
    )
    colon = "：" if lang == "zh" else ": "
    heading = f"{word('query', lang)}{colon}`{query}`"
    headers = [word("term", lang), "n", "idf", *ids.values()]
    return heading + "\n\n" + table(headers, rows)
