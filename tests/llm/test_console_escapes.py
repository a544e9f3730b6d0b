"""What a tool prints cannot act on the terminal: control characters are shown escaped."""

from __future__ import annotations

import io

from llm import Console


def test_control_characters_are_shown_escaped_and_tabs_and_newlines_kept() -> None:
    out = io.StringIO()
    console = Console(out=out, err=io.StringIO())
    console.tool_result("\x1b[2J\x1b[31mred\x1b[0m\tcell\r\nfake\rreal\x07\fpage\u202eevil", False)
    console.say("done\x1b]0;new title\x07")
    assert out.getvalue() == (
        "  │ \\x1b[2J\\x1b[31mred\\x1b[0m\tcell\n"
        "  │ fake\\rreal\\x07\\x0cpage\\u202eevil\n"
        "● done\\x1b]0;new title\\x07\n"
    )
