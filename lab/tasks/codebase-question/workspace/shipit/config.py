"""Settings: the config file over the defaults, then SHIPIT_* variables over both."""

import os
from pathlib import Path

from .defaults import DEFAULTS

SEARCHED = [Path("shipit.toml"), Path.home() / ".config" / "shipit.toml"]


def find_config():
    """The first config file that exists, or None."""
    return next((path for path in SEARCHED if path.is_file()), None)


def read_file(path):
    """`name = value` lines; values that look like whole numbers become ints."""
    settings = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        name, sep, value = line.partition("=")
        if sep and not line.lstrip().startswith("#"):
            value = value.strip().strip('"')
            settings[name.strip()] = int(value) if value.isdigit() else value
    return settings


def from_environment(environ):
    """SHIPIT_RETRIES=5 -> {"retries": 5}."""
    found = {}
    for name, value in environ.items():
        if name.startswith("SHIPIT_"):
            found[name[len("SHIPIT_") :].lower()] = int(value) if value.isdigit() else value
    return found


def load(path=None, environ=os.environ):
    settings = {}
    if path is not None:
        settings = dict(DEFAULTS)
        settings.update(read_file(path))
    settings.update(from_environment(environ))
    return settings
