"""A `.env` beside the command line: what it may set (the course's settings alone), what it
names and never shows, what wins over it, what it never reaches (the agent's commands), and the
warnings a learner on a shared machine needs (a file others can read, a key sent elsewhere)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import machine.commands
from llm.cli import load_env_file, main
from llm.spec import ENV_FILE_SETTINGS, FROM_ENV_FILE
from tests import REPO
from tests.llm.test_cli import DEMO_CASSETTE, KEYS, SCRIPTED, agent, call_bash, say, write_rows
from v1_tool_loop.__main__ import CHAPTER


def test_env_file_chooses_the_model(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(f"AGENT_MODEL=replay:{DEMO_CASSETTE}\n")
    done = agent("anything", "--quiet", "--workdir", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Fixed.")  # the demo cassette's answer: it was replayed


def test_a_dotenv_in_a_parent_folder_is_not_read(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(f"AGENT_MODEL=replay:{DEMO_CASSETTE}\n")
    below = tmp_path / "project"
    below.mkdir()
    done = agent("anything", "--quiet", cwd=below)
    assert done.returncode == 2 and "no model configured" in done.stderr


def test_dotenv_loading_names_what_it_set_and_never_shows_a_value(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        "# settings for this project\n"
        f"export AGENT_MODEL='replay:{DEMO_CASSETTE}'\n"
        'OPENAI_API_KEY="hunter2"  # a comment\n'
        "NOT A SETTING\n"
        "EMPTY=\n"
    )
    done = agent("--demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "loaded ./.env: 2 settings (AGENT_MODEL, OPENAI_API_KEY)" in done.stdout
    assert "./.env:4: skipped" in done.stderr
    assert "hunter2" not in done.stdout + done.stderr


# Variables that would route the provider's requests, or run a script of the .env's
# writer inside every command of the agent's, if a .env could set them.
FOREIGN = {
    "HTTPS_PROXY": "http://proxy.example:3128",
    "ALL_PROXY": "socks5://proxy.example:1080",
    "SSL_CERT_FILE": "./their-ca.pem",
    "SSL_CERT_DIR": "./certs",
    "REQUESTS_CA_BUNDLE": "./their-ca.pem",
    "BASH_ENV": "./planted.sh",
    "LD_PRELOAD": "./planted.so",
    "PYTHONSTARTUP": "./planted.py",
    "GIT_SSH_COMMAND": "sh ./planted.sh",
    "PROMPT_COMMAND": "sh ./planted.sh",
}


def test_a_dotenv_sets_only_the_courses_settings(here: Path) -> None:
    """Each other variable is one warning naming the file and the variable, and is left out."""
    (here / ".env").write_text(
        "".join(f"{name}={value}\n" for name, value in FOREIGN.items()) + "NO_COLOR=1\n"
    )
    for name in FOREIGN:
        os.environ.pop(name, None)
    note = load_env_file()
    assert note == "loaded ./.env: 1 setting (NO_COLOR)"
    assert not FOREIGN.keys() & os.environ.keys()


def test_what_a_dotenv_added_never_reaches_a_command(tmp_path: Path) -> None:
    """A command runs in the environment the learner started with: not even the course's
    own settings from a .env reach it, and BASH_ENV, had it been let in, would have run
    the repository's script before the command."""
    (tmp_path / "planted.sh").write_text("touch ran-the-planted-script\n")
    (tmp_path / ".env").write_text("BASH_ENV=./planted.sh\nAGENT_TIMEOUT=45\nNO_COLOR=1\n")
    cassette = write_rows(tmp_path / "env.jsonl", SCRIPTED, call_bash("env > seen"), say("Done."))
    done = agent("--model", f"replay:{cassette}", "look around", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "warning: ./.env sets BASH_ENV, which is not a setting of the course" in done.stderr
    assert "loaded ./.env: 2 settings (AGENT_TIMEOUT, NO_COLOR)" in done.stdout
    assert not (tmp_path / "ran-the-planted-script").exists()
    seen = dict(
        line.split("=", 1) for line in (tmp_path / "seen").read_text().splitlines() if "=" in line
    )
    assert "PATH" in seen and not {"AGENT_TIMEOUT", "NO_COLOR", "BASH_ENV"} & seen.keys()


def test_the_environment_wins_over_dotenv(tmp_path: Path) -> None:
    chat = write_rows(tmp_path / "chat.jsonl", SCRIPTED, say("From the environment."))
    (tmp_path / ".env").write_text(f"AGENT_MODEL=replay:{DEMO_CASSETTE}\n")
    done = agent("hi", "--quiet", cwd=tmp_path, AGENT_MODEL=f"replay:{chat}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("From the environment.")


@pytest.mark.parametrize(
    ("url_variable", "key_variable"),
    [("OPENAI_BASE_URL", "OPENAI_API_KEY"), ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")],
)
def test_dotenv_redirecting_an_exported_key_is_a_warning(
    tmp_path: Path, url_variable: str, key_variable: str
) -> None:
    (tmp_path / ".env").write_text(f"{url_variable}=http://collector.example/v1\n")
    done = agent("--demo", cwd=tmp_path, **{key_variable: "sk-mine"})
    assert done.returncode == 0, done.stderr
    assert (
        f"warning: your {key_variable} from the environment will be sent to "
        "http://collector.example/v1 set by ./.env"
    ) in done.stderr
    assert "sk-mine" not in done.stdout + done.stderr
    # A key that comes from the same .env is that file's own business.
    (tmp_path / ".env").write_text(f"{url_variable}=http://x.example\n{key_variable}=sk-theirs\n")
    (tmp_path / ".env").chmod(0o600)  # as a file with a key in it should be
    assert "warning" not in agent("--demo", cwd=tmp_path).stderr


def test_a_dotenv_that_is_not_utf8_is_one_line(
    tmp_path: Path, here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".env").write_bytes(b"AGENT_MODEL=caf\xe9\n")
    done = agent("--demo", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ./.env is not UTF-8 text")
    assert done.stderr.count("\n") == 1
    assert main(CHAPTER, ["--demo"]) == 2
    assert "./.env is not UTF-8 text" in capsys.readouterr().err


def test_no_color_from_dotenv_is_obeyed(tmp_path: Path) -> None:
    # Colours are only used on a terminal, so the run gets one: a pseudo-terminal.
    import pty

    (tmp_path / ".env").write_text("NO_COLOR=1\n")
    leader, follower = pty.openpty()
    environment = {k: v for k, v in os.environ.items() if k not in KEYS | {"NO_COLOR"}}
    process = subprocess.Popen(
        [sys.executable, "-m", "v1_tool_loop", "--demo"],
        cwd=tmp_path,
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env=environment | {"TMPDIR": str(tmp_path)},
    )
    os.close(follower)
    shown = b""
    while chunk := _read_terminal(leader):
        shown += chunk
    process.wait(timeout=600)
    os.close(leader)
    assert b"loaded ./.env: 1 setting (NO_COLOR)" in shown
    assert b"\x1b[" not in shown


def _read_terminal(fd: int) -> bytes:
    try:
        return os.read(fd, 4096)
    except OSError:  # the terminal closes with the process
        return b""


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX's")
def test_a_dotenv_others_can_read_gets_one_warning_that_says_how_to_fix_it(
    tmp_path: Path,
) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(f"AGENT_MODEL=replay:{DEMO_CASSETTE}\n")
    for readable in (0o644, 0o640, 0o604):
        env_file.chmod(readable)
        done = agent("fix it", "--quiet", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        warnings = [line for line in done.stderr.splitlines() if "chmod 600 .env" in line]
        assert warnings == [
            "warning: ./.env can be read by other users of this machine, and it may hold "
            "an API key: run `chmod 600 .env`"
        ], oct(readable)
    env_file.chmod(0o600)
    assert "chmod" not in agent("fix it", "--quiet", cwd=tmp_path).stderr


def test_the_settings_a_dotenv_may_hold_are_those_dotenv_example_lists() -> None:
    example = (REPO / ".env.example").read_text(encoding="utf-8")
    listed = set(re.findall(r"^# ([A-Z_]+)=", example, re.MULTILINE))
    assert listed == ENV_FILE_SETTINGS
    assert FROM_ENV_FILE == machine.commands.FROM_ENV_FILE  # the two boundaries agree
