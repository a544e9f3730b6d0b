"""A token estimate for texts, messages, requests and replies, without a tokenizer.

Providers count tokens with their own tokenizer and report the count after the
call.  An agent needs a figure before the call (will this request still fit?) and
for replies that no provider counted (a scripted replay).  This module gives one,
fair to Chinese as to English, from a few counts over the text:

    tokens ≈ 1.0  per CJK character (Han, kana, hangul, full-width punctuation)
           + 0.8  per Latin word + 0.08 per letter   (a long word splits into pieces)
           + 0.3  per run of digits or punctuation + 0.4 per such character
           + 0.25 per newline + 0.5 per indented line

English prose comes out at about four characters per token, Python and JSON
denser, because their punctuation, digits and indentation cost more than letters.
Messages, blocks and tool schemas add a small fixed overhead, as the APIs do for
their role markers and separators.  What a provider adds on its own (Anthropic,
for one, puts a few hundred tokens of instructions in front of every request that
carries tools) is not counted.

How close it is: `python -m lab.token_check` compares it with Qwen's tokenizer
(`qwen.tiktoken`, shipped inside the `dashscope` package) over the course's own
docs, code and cassettes, next to the rule of thumb of a quarter of the length:

    kind of text         samples  chars/token  mean error  worst error  len/4 mean  len/4 worst
    English prose            182         3.82        4.3%       -34.3%        8.8%       -40.2%
    Chinese prose             81         1.88       24.6%       +61.8%       52.3%       -63.6%
    Python code              313         3.94        7.7%       +40.3%        7.7%       -39.3%
    JSON tool traffic         79         3.39        4.9%       +28.1%       15.2%       -35.8%

Chinese comes out too high for Qwen, whose vocabulary holds many whole Chinese
words; tokenizers trained mostly on English need a token or more per character.
One per character sits between the two and errs on the side of a fuller context,
which is the safe side for an agent.  The worst cases are short texts full of one
kind of symbol: a ruler of `-----` is overestimated, a line of CAPITALS
underestimated.  The weights were chosen on these same texts, so expect somewhat
larger errors on yours.

Speed: each text costs two compiled regex passes and a few string counts
(`python -m lab.bench.basics` times them).  `estimate_message` is a pure function of the
message, so a caller that never edits a message once counted can cache its figure
and keep a running sum:

    estimate_request(system, messages, tools)
        == estimate_request(system, [], tools) + sum(estimate_message(m) for m in messages)
"""

from __future__ import annotations

import json
import re
from typing import Any

from .types import Block, Message, Reply, Usage

# Hangul Jamo, CJK punctuation, kana, compatibility Jamo, CJK Extension A, the
# unified Han block, Hangul syllables, compatibility ideographs, full-width forms.
CJK = "\u1100-\u11ff\u3000-\u303f\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff" + (
    "\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
)
WORD = re.compile(r"[A-Za-z]+")
# Everything that is neither a space, an ASCII letter nor CJK: digits, punctuation,
# symbols, and letters of other scripts (é, ж), which tokenizers split finely too.
SYMBOLS = re.compile(f"[^\\sA-Za-z{CJK}]+")

PER_CJK_CHAR = 1.0
PER_WORD = 0.8
PER_LETTER = 0.08
PER_SYMBOL_RUN = 0.3
PER_SYMBOL = 0.4
PER_NEWLINE = 0.25
PER_INDENTED_LINE = 0.5

MESSAGE_OVERHEAD = 4  # role markers and separators around each message
BLOCK_OVERHEAD = 3  # the framing of a tool call or tool result, its id
TOOL_OVERHEAD = 10  # the wrapping of each tool schema in the prompt
REQUEST_OVERHEAD = 3  # the start of the assistant's turn, which the model reads too


def estimate_text(text: str) -> int:
    """Tokens in a text, estimated from its words, symbols, CJK characters and lines."""
    # Words are replaced by a space, not removed, so "f(x)" keeps "(" and ")" apart.
    without_words, words = WORD.subn(" ", text)
    letters = len(text) - len(without_words) + words
    rest, symbol_runs = SYMBOLS.subn("", without_words)
    symbols = len(without_words) - len(rest)
    # What is left is spaces and CJK characters; ASCII text has none of the latter.
    cjk_chars = 0 if text.isascii() else len("".join(rest.split()))
    indented_lines = text.count("\n ") + text.count("\n\t")
    tokens = (
        PER_CJK_CHAR * cjk_chars
        + PER_WORD * words
        + PER_LETTER * letters
        + PER_SYMBOL_RUN * symbol_runs
        + PER_SYMBOL * symbols
        + PER_NEWLINE * text.count("\n")
        + PER_INDENTED_LINE * indented_lines
    )
    return round(tokens)


CHARS_PER_TOKEN_BOUND = 16  # estimate_text counts a token per 16 characters at least


def cut_to_tokens(text: str, budget: int) -> str:
    """The longest start of `text` within `budget` tokens, ending at a line end if one is near
    (a binary search: `estimate_text` never falls as a text grows)."""
    low, high = 0, min(len(text), max(budget, 0) * CHARS_PER_TOKEN_BOUND)
    while low < high:
        middle = (low + high + 1) // 2
        if estimate_text(text[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    line_end = text.rfind("\n", 0, low + 1)
    if line_end > low * 3 // 4:  # a whole last line, unless that loses a quarter
        low = line_end
    return text[:low].rstrip()


def capped(text: str, cap: int, label: str) -> tuple[str, bool]:
    """`text` and False if it fits in `cap` tokens; else its start and a note that says what
    was cut, within the cap together, and True (a prompt's file, the skills index)."""
    tokens = estimate_text(text)
    if tokens <= cap:
        return text, False
    shown = cut_to_tokens(text, cap - estimate_text(cut_note(label, tokens, cap)))  # and the note
    return f"{shown}\n{cut_note(label, tokens, estimate_text(shown))}", True


def cut_note(label: str, tokens: int, shown: int) -> str:
    return f"[… cut: {label} is {tokens:,} tokens, the first {shown:,} are shown]"


def estimate_block(block: Block) -> int:
    """Tokens in one content block: its text, a call's name and JSON arguments, a result."""
    kind = block.get("type")
    if kind == "text":
        return estimate_text(block.get("text", ""))
    if kind == "tool_use":
        arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
        return BLOCK_OVERHEAD + estimate_text(block.get("name", "")) + estimate_text(arguments)
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, str):
            return BLOCK_OVERHEAD + estimate_text(content)
        if isinstance(content, list):
            return BLOCK_OVERHEAD + sum(estimate_block(part) for part in content)
    # A block this course never sends (an image, say): its JSON stands in, roughly.
    return BLOCK_OVERHEAD + estimate_text(json.dumps(block, ensure_ascii=False))


def estimate_message(message: Message) -> int:
    """Tokens in one message.  Pure: the same message always gives the same figure."""
    content = message["content"]
    if isinstance(content, str):
        return MESSAGE_OVERHEAD + estimate_text(content)
    return MESSAGE_OVERHEAD + sum(estimate_block(block) for block in content)


def estimate_tool(schema: dict[str, Any]) -> int:
    """Tokens in one tool schema (name, description, input_schema), sent with every request."""
    return TOOL_OVERHEAD + estimate_text(json.dumps(schema, ensure_ascii=False))


def estimate_request(
    system: str, messages: list[Message], tools: list[dict[str, Any]] | None = None
) -> int:
    """Tokens the model reads for one call: system prompt, tool schemas and every message."""
    fixed = REQUEST_OVERHEAD + estimate_text(system) + sum(map(estimate_tool, tools or []))
    return fixed + sum(map(estimate_message, messages))


def estimate_reply(reply: Reply) -> int:
    """Tokens the model wrote: the blocks of its reply."""
    return sum(map(estimate_block, reply.content))


def estimate_usage(
    system: str, messages: list[Message], tools: list[dict[str, Any]] | None, reply: Reply
) -> Usage:
    """The usage a provider would have reported for this call, estimated and marked so."""
    return Usage(estimate_request(system, messages, tools), estimate_reply(reply), estimated=True)
