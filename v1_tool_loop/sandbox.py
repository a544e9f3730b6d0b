"""How chapter 1's tools keep to the work directory: `safe_path`.

`tools.py` holds the four tools and the door to them; this module holds the rule the
file tools apply before touching the machine: a path is resolved, `..` and symlinks
followed, and refused unless it ends up inside the work directory.

The commands of the `bash` tool get a guard instead (`machine.refusal_reason`), which
refuses a few plainly destructive commands.  That, and the care a real machine needs
(opening only regular files, streaming reads, safe writes, stopping what a command
leaves behind, the differences between Linux, macOS and Windows), is not a lesson of
this chapter: it lives in the `machine` package.  Neither is a security boundary: a
command can still read and write whatever the user can.  Chapter 1's section on
limits lists what remains possible.
"""

from __future__ import annotations

from pathlib import Path

from machine import ToolError

__all__ = ["ToolError", "safe_path"]


def safe_path(workdir: Path, path: str) -> Path:
    """Resolve `path` inside `workdir`, following symlinks, or refuse."""
    if "\0" in path:
        raise ToolError("the path contains a NUL byte; give a plain file path")
    if path.startswith("~"):
        raise ToolError(f"'{path}': '~' is not expanded; give a path inside the work directory")
    root = workdir.resolve()
    try:
        target = (root / path).resolve()
    except RuntimeError:  # Python before 3.13 reports a symlink loop this way
        raise ToolError(f"'{path}' is a symlink loop; give a path to a real file") from None
    if target != root and root not in target.parents:
        raise ToolError(f"'{path}' is outside the work directory {root}; use a path inside it")
    return target
