"""Chapter 0: the agent loop when the model can only write text (ReAct).

The whole agent is this loop:

    ask the model ─► it writes Thought / Action / Action Input, cut at "Observation:"
         ▲                         │
         │                  cut off at max_tokens? ──► stopped: neither action nor answer
         │                         │
         │                  parse the text ──► Final Answer? ──► done
         │                         │
         │                         ├──► format error? ──► "Observation: what was wrong" ──┐
         │                         │                                                      │
         ├──── "Observation: result" ◄── run the tool                                     │
         └────────────────────────────────────────────────────────────────────────────────┘

The model never touches the machine, and it has no way to call a tool except by
writing its name in a reply.  This code reads the reply with the string rules of
parser.py, runs the tool, and writes the result back as text.  When the text cannot
be read, the model is told why and tries again.  Everything else in the folder
(prompt, terminal output, flags, the demo) is plumbing around `run`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from llm import Console, Message, Model, ModelError, RunResult
from llm.console import counted
from llm.result import INTERRUPTED, close_open_turn, text_of
from llm.types import EMPTY_REPLY
from v1_tool_loop.tools import run_tool

from .parser import Action, FinalAnswer, FormatError, Step, parse, split_off_observation
from .prompt import FORMAT, SYSTEM

# Generation halts where the tool's output would begin, so the model cannot
# write it.  "Observation:" alone catches every case for a server that compares
# strings; the newline variant also cuts the line break before it.
STOP = ["\nObservation:", "Observation:"]
MAX_FORMAT_ERRORS = 3  # in a row: by then the error messages are not helping, turns only cost

INVENTED_NOTE = (
    "Note: your last reply went on past the Action Input and contained an Observation "
    "you wrote yourself. It was discarded; only the result above is real. End each "
    "reply after Action Input."
)


@dataclass
class ReactRunResult(RunResult):
    """A RunResult plus the two failures that only a text protocol has."""

    format_errors: int = 0  # replies the parser could not read
    hallucinated_observations: int = 0  # replies that went on to invent a tool's output

    def ended(self, stop: str, error: str = "") -> ReactRunResult:
        """Record why the loop stopped, and hand the result back to return it."""
        self.stop, self.error = stop, error
        return self

    def counts(self) -> dict[str, int]:
        return {
            "format errors": self.format_errors,
            "invented observations": self.hallucinated_observations,
        }

    def highlights(self) -> list[str]:
        """How often the text protocol broke in this run: the chapter's lesson, in a line."""
        if not (self.format_errors or self.hallucinated_observations):
            return []
        return [
            f"text protocol: {self.format_errors} format error(s) answered, "
            f"{self.hallucinated_observations} invented observation(s) discarded"
        ]

    @property
    def answer(self) -> str:
        """The text after `Final Answer:`, without the Thought before it."""
        step = step_of(self.messages[-1]) if self.stop == "done" else None
        return step.answer if isinstance(step, FinalAnswer) else ""

    @property
    def tool_calls(self) -> int:
        """Actions asked for: replies that parse as an Action (chapter 1 counts tool_use blocks)."""
        steps = [step_of(m) for m in self.messages if m["role"] == "assistant"]
        return sum(1 for step in steps if isinstance(step, Action))


def step_of(message: Message) -> Step | None:
    """What an assistant message asked for, or None if it could not be read."""
    try:
        return parse(text_of(message["content"]))
    except FormatError:
        return None


def glimpse(text: str) -> str:
    """The first line of a long text and how many lines follow, for a one-line warning."""
    lines = text.splitlines() or [""]
    more = f" … (+{counted(len(lines) - 1, 'line')})" if len(lines) > 1 else ""
    return f"{lines[0][:80]!r}{more}"


def observation(content: str, is_error: bool = False, notes: list[str] | None = None) -> Message:
    """A result sent back as the user's turn, in the words the prompt promised."""
    text = f"Observation: {'Error: ' if is_error else ''}{content}"
    return {"role": "user", "content": "\n\n".join([text, *(notes or [])])}


def format_error_observation(error: FormatError, notes: list[str]) -> Message:
    """Say what was wrong, that nothing ran, and show the format again."""
    content = f"Format error: {error}. Nothing was run. Reply in this format:\n\n{FORMAT}"
    return observation(content, notes=notes)


def run(
    task: str,
    *,
    model: Model,
    workdir: str | Path,
    max_turns: int = 30,
    history: list[Message] | None = None,
    console: Console | None = None,
) -> ReactRunResult:
    """Work on `task` until the model writes a Final Answer, or `max_turns` model calls."""
    console = console or Console(quiet=True)
    messages: list[Message] = [*(history or []), {"role": "user", "content": task}]
    usage = []
    result = ReactRunResult("running", messages, usage)
    errors_in_a_row = 0
    try:
        for _ in range(max_turns):
            with console.thinking():
                reply = model.complete(SYSTEM, messages, stop=STOP)
            usage.append(reply.usage)
            text, invented = split_off_observation(text_of(reply.content))
            # Only what the model may say goes into the conversation: an invented
            # Observation kept here would read, next turn, like a real tool result.
            messages.append({"role": "assistant", "content": text or EMPTY_REPLY})
            notes = [INVENTED_NOTE] if invented else []
            if invented:
                result.hallucinated_observations += 1
                console.warn(f"the model invented an Observation; discarded {glimpse(invented)}")
            if reply.stop_reason == "max_tokens":  # cut off: what it began to write never ran
                return result.ended("max_tokens")

            try:
                step = parse(text)
            except FormatError as error:
                result.format_errors += 1
                errors_in_a_row += 1
                console.warn(f"format error ({errors_in_a_row} in a row): {error}")
                messages.append(format_error_observation(error, notes))
                if errors_in_a_row == MAX_FORMAT_ERRORS:
                    close_open_turn(messages, f"stopped after {MAX_FORMAT_ERRORS} format errors")
                    return result.ended("format_errors")
                continue
            if errors_in_a_row:
                console.note(f"recovered after {errors_in_a_row} format error(s): this one parses")
            errors_in_a_row = 0
            console.say(step.thought)

            if isinstance(step, FinalAnswer):
                console.say(step.answer)
                return result.ended("done")

            console.tool_call(step.tool, step.args)
            outcome = run_tool(step.tool, step.args, workdir)  # an unknown name is answered here
            console.tool_result(outcome.content, outcome.is_error)
            messages.append(observation(outcome.content, outcome.is_error, notes))
    except KeyboardInterrupt:
        close_open_turn(messages, INTERRUPTED)
        return result.ended("interrupted")
    except ModelError as error:
        close_open_turn(messages, f"model error: {error}")
        return result.ended("error", str(error))

    close_open_turn(messages, f"stopped after {counted(max_turns, 'turn')}")
    return result.ended("max_turns")
