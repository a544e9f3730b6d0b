"""The one error the machine boundary raises for a request it refuses."""

from __future__ import annotations


class ToolError(Exception):
    """The call could not be done; the message is written for the model to act on."""
