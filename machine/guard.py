"""The guard against plainly destructive commands: `refusal_reason`.

Chapter 1's `bash` tool asks it about every command before running it.  It reads the
command as words, the way the shell will (`shlex`), split at `;`, `&&`, `|` and
newlines, looking inside `$(…)`, backticks and `bash -c '…'`, whatever the quoting,
and refuses a few plainly destructive commands: deleting or changing the permissions
of all of `/` or the home folder, formatting or overwriting a disk, a fork bomb,
`kill -1`, stopping the machine, asking for root rights.

It is a guard rail, not a sandbox: a command can still read and write whatever the
user can.  Reading a shell language well enough to refuse what it must and pass the
rest is machinery, not the chapter's lesson, so it lives here.
"""

from __future__ import annotations

import os
import re
import shlex
from itertools import pairwise

__all__ = ["refusal_reason", "simple_commands"]

SUBSTITUTION = re.compile(r"\$\(([^()]*)\)|`([^`]*)`|[<>]\(([^()]*)\)")  # $(…), `…`, <(…)
OPERATOR_CHARACTERS = set("();|&\n")
PREFIXES = {"env", "command", "builtin", "exec", "nohup", "nice", "time", "xargs"}
KEYWORDS = {"if", "then", "else", "elif", "while", "until", "do", "!", "{", "}"}
ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=.*")
SHELLS = {"sh", "bash", "dash", "zsh", "ksh"}
DISK = re.compile(r"/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-|mapper/)")
NESTING = 5  # levels of `bash -c '…'` or `$(…)` looked into


def refusal_reason(command: str) -> str | None:
    """Why a command is plainly destructive, or None.  A guard rail, not a sandbox."""
    if _is_fork_bomb(command):
        return "is a fork bomb"
    for words in simple_commands(command):
        reason = _refusal_for(words)
        if reason:
            return reason
    return None


def simple_commands(command: str, depth: int = 0) -> list[list[str]]:
    """The simple commands in `command`, each as its unquoted words from the command name on.

    `a; b && c | d`, newlines, `$(…)`, backticks and `bash -c '…'` are taken apart,
    as far as a guard can without being a shell: `"$HOME"` becomes `$HOME`, and
    `${HOME}` stays as written.
    """
    found: list[list[str]] = []
    for _ in range(NESTING if depth < NESTING else 0):  # `$(a $(b))` takes two rounds
        command, inner = _take_substitutions(command)
        for script in inner:
            found += simple_commands(script, depth + 1)
        if not inner:
            break
    current: list[str] = []
    for word in [*_shell_words(command), ";"]:
        if word and set(word) <= OPERATOR_CHARACTERS:
            words = _from_command_name(current)
            if words:
                found.append(words)
                for script in _nested_scripts(words) if depth < NESTING else []:
                    found += simple_commands(script, depth + 1)
            current = []
        else:
            current.append(word)
    return found


def _take_substitutions(command: str) -> tuple[str, list[str]]:
    """`command` with each innermost `$(…)`, `…` or `<(…)` replaced by `;`, and what they held."""
    inner: list[str] = []

    def take(match: re.Match[str]) -> str:
        inner.append("".join(filter(None, match.groups())))
        return " ; "

    return SUBSTITUTION.sub(take, command), inner


def _is_fork_bomb(command: str) -> bool:
    """A function that pipes into itself, such as `:(){ :|:& };:`, under any name."""
    words = _shell_words(command)
    defined = {name for name, parentheses in pairwise(words) if parentheses == "()"}
    piped = {words[i] for i in range(len(words) - 2) if words[i + 1 : i + 3] == ["|", words[i]]}
    return bool(defined & piped)


def _shell_words(command: str) -> list[str]:
    """The command's words and operators (`;`, `&&`, `|` …), quotes removed, as shlex reads them."""
    lexer = shlex.shlex(command.replace("\\\n", ""), posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"  # a newline separates commands, as `;` does
    lexer.whitespace_split = True
    lexer.commenters = ""  # bash starts a comment only at a word's start; keep every word
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: judge the words without them
        return _shell_words(re.sub(r"[\"'\\]", " ", command))


def _from_command_name(words: list[str]) -> list[str]:
    """Skip what precedes the command name: `VAR=value`, `if`, `env -i`, `nohup`, `time -p` …"""
    while words and (words[0] in KEYWORDS or ASSIGNMENT.fullmatch(words[0])):
        words = words[1:]
    if words and os.path.basename(words[0]) in PREFIXES:
        options = 1
        while options < len(words) and words[options].startswith("-"):
            options += 1
        return _from_command_name(words[options:])
    return words


def _nested_scripts(words: list[str]) -> list[str]:
    """The script a command runs as shell code: `bash -c SCRIPT`, `eval WORDS`."""
    name = os.path.basename(words[0])
    if name == "eval":
        return [" ".join(words[1:])]
    if name in SHELLS:
        for option, script in pairwise(words[1:]):
            if _is_option(option, "c"):
                return [script]
    return []


def _refusal_for(words: list[str]) -> str | None:
    """Why one simple command is plainly destructive, or None."""
    name, args = os.path.basename(words[0]), words[1:]
    everything = any(_names_everything(arg) for arg in args)
    if name == "rm" and (everything or "--no-preserve-root" in args):
        return "deletes all of / or of your home folder"
    if name == "find" and everything and ("-delete" in args or "rm" in args):
        return "deletes all of / or of your home folder"
    recursive = "--recursive" in args or any(_is_option(arg, "R") for arg in args)
    if name in {"chmod", "chown", "chgrp"} and everything and recursive:
        return "changes the permissions of the whole file system or your home folder"
    if name == "kill" and "-1" in args[1:]:
        return "signals every process you may signal"
    if name.startswith("mkfs") or name in {"mke2fs", "mkswap", "wipefs"}:
        return "formats a file system"
    if name == "dd" and any(arg.startswith("of=") and DISK.match(arg[3:]) for arg in args):
        return "writes raw data to a disk device"
    if any(">" in word and DISK.match(target) for word, target in pairwise(words)):
        return "overwrites a disk device"
    if name in {"shutdown", "reboot", "halt", "poweroff"} or (
        name == "systemctl" and {"poweroff", "reboot", "halt"} & set(args)
    ):
        return "stops the machine"
    if name in {"sudo", "su", "doas"}:
        return "asks for root rights"
    return None


def _names_everything(word: str) -> bool:
    """True for `/`, `~` or `$HOME` in any spelling: `/*`, `//`, `~/`, `${HOME}/.` …"""
    word = word.replace("${HOME}", "$HOME")
    tail = word[len(word.rstrip("/*.")) :]  # the '/', '*' and '.' it ends with
    stem = word[: len(word) - len(tail) + tail.find("/")] if "/" in tail else word
    return bool(word) and stem in {"", "~", "$HOME"}


def _is_option(word: str, letter: str) -> bool:
    """`-c`, or `-c` among other one-letter options, as in `-ec`."""
    return word.startswith("-") and not word.startswith("--") and letter in word
