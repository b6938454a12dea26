"""Where fabricd finds its shipped data and keeps its state. No side effects at import time.

Every global option has a ``FABRICD_*`` environment variable (docs/contracts.md); the CLI reads them through Typer's
``envvar=`` and hands the values down, so nothing below the CLI reads the environment except through here.
"""

from __future__ import annotations

import os
import re
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


LAB_INSTALL_HINT = (
    "install fabricd-lab beside fabricd, from the same source (same version; it is on no package index): "
    "`pip install ./lab` in a fabricd checkout, `pip install fabricd_lab-<version>-py3-none-any.whl` from wheels "
    'you built, or `pip install "fabricd-lab @ git+URL#subdirectory=lab"` with fabricd\'s URL '
    "(`fabricd docs install`)"
)
"""How to get fabricd-lab, said wherever a lab command or runner is missing (docs/install.md)."""


def lab_inventory() -> Path:
    """The embedded lab fabric (``inventory/lab``): what the demo and the lab run, and what a read-only command
    falls back to, saying so on stderr, when it is given no inventory and ``./`` holds none (docs/contracts.md)."""
    return data_dir("inventory/lab")


def default_inventory() -> Path:
    """The lab fabric under its older name (tests and library callers use it); the CLI resolves a missing INVENTORY
    in ``fabricd.cli.common.inventory_path``, which also looks at ``./``."""
    return lab_inventory()


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


_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


class UnsetVariableError(ValueError):
    """A path names an environment variable that is not set."""

    def __init__(self, name: str, path: str) -> None:
        super().__init__(f"{path} names ${{{name}}}, which is not set")
        self.name, self.path = name, path
        self.hint = f"export {name}=..., or write the path in full in the inventory"


def expand_path(path: Path | str) -> Path:
    """A file path as the inventory writes it, made real: ``~`` and ``$VAR`` / ``${VAR}`` from the environment.

    ``${FABRICD_STATE_DIR}`` is always defined: it is :func:`state_dir` when the variable is unset, so an inventory
    can name files that ``fabricd lab up`` (or another tool) keeps in fabricd's state directory. Any other variable
    that is not set raises :class:`UnsetVariableError` (a path is never silently cut short).
    """
    text = str(path)

    def value(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        got = os.environ.get(name)
        if got is None and name == "FABRICD_STATE_DIR":
            return str(state_dir())
        if got is None:
            raise UnsetVariableError(name, text)
        return got

    return Path(_VAR.sub(value, text)).expanduser()


INVENTORY_MAX_BYTES = 64 * 1024 * 1024
INVENTORY_MAX_NODES = 1_000_000


def inventory_limits() -> tuple[int, int]:
    """How large an inventory may be: (bytes of YAML, YAML nodes with aliases expanded), all files together, from
    ``FABRICD_INVENTORY_MAX_BYTES`` and ``FABRICD_INVENTORY_MAX_NODES`` (docs/inventory.md, "Limits"). A value that
    is not a positive integer is refused."""
    from fabricd.errors import UsageError

    def positive(name: str, default: int) -> int:
        raw = os.environ.get(name, "").strip()
        if not raw:
            return default
        if not raw.replace("_", "").isdigit() or int(raw.replace("_", "")) == 0:
            raise UsageError(
                f"{name}={raw!r}: expected a positive integer",
                hint=f"e.g. {name}={default * 2}, or unset it for the default ({default})",
            )
        return int(raw.replace("_", ""))

    return (
        positive("FABRICD_INVENTORY_MAX_BYTES", INVENTORY_MAX_BYTES),
        positive("FABRICD_INVENTORY_MAX_NODES", INVENTORY_MAX_NODES),
    )
