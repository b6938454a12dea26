"""Where fabricd finds its shipped data and keeps its state. No side effects at import time.

Every global option has a ``FABRICD_*`` environment variable (docs/contracts.md); the CLI reads them through Typer's
``envvar=`` and hands the values down, so nothing below the CLI reads the environment except through here.
"""

from __future__ import annotations

import os
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent
_REPO_ROOT = _PACKAGE_DIR.parent


def data_dir(name: str) -> Path:
    """Return a shipped data folder: ``templates``, ``exporters``, ``inventory/lab``, ``inventory/examples``, ``docs``.

    In a wheel they live in ``fabricd/_data/<name>``; in a source checkout (editable install) at the repo root.
    """
    packaged = _PACKAGE_DIR / "_data" / name
    if packaged.is_dir():
        return packaged
    return _REPO_ROOT / name


def default_inventory() -> Path:
    """The embedded default fabric (``inventory/lab``), or ``FABRICD_INVENTORY`` when set."""
    env = os.environ.get("FABRICD_INVENTORY")
    return Path(env) if env else data_dir("inventory/lab")


def starter_inventories() -> dict[str, Path]:
    """The inventories ``fabricd init`` can write, by name: ``lab`` (the embedded fabric) and each shipped example
    (``inventory/examples/<name>.yml`` or ``<name>/``)."""
    found = {"lab": data_dir("inventory/lab")}
    examples = data_dir("inventory/examples")
    if examples.is_dir():
        for entry in sorted(examples.iterdir()):
            if entry.is_dir() or entry.suffix in (".yml", ".yaml"):
                found.setdefault(entry.stem if entry.is_file() else entry.name, entry)
    return found


def state_dir() -> Path:
    """Where the lab and service keep their state: ``FABRICD_STATE_DIR``, else ``$XDG_STATE_HOME/fabricd``."""
    env = os.environ.get("FABRICD_STATE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "state"
    return base / "fabricd"
