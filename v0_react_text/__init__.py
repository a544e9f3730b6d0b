"""Chapter 0: a coding agent for a model that can only write text.

The model writes `Thought / Action / Action Input`; `parser.py` reads it with
string rules, the tool runs, and the result goes back as an `Observation:` line.
Chapter 1 (`v1_tool_loop`) replaces the text protocol with structured tool calls.
"""
