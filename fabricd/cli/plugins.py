"""Commands that other distributions add to ``fabricd`` through the entry point group ``fabricd.commands``.

An entry point names a table, ``{command name: (module path, one-line help)}``, in a module that is cheap to import;
the command's module defines ``register(app)`` like fabricd's own and is imported only when the command runs.
fabricd-lab adds ``lab``, ``demo`` and ``report`` this way (fabricd never imports the lab). A table that fails to
load is reported on stderr once and left out; fabricd's own commands always win a name clash.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib.metadata import entry_points

from fabricd import settings

from .common import stderr

GROUP = "fabricd.commands"

ELSEWHERE: dict[str, str] = {"lab": "fabricd-lab", "demo": "fabricd-lab", "report": "fabricd-lab"}
"""Commands that ship in another distribution of this project: name -> the distribution to install."""


def missing_plugin_message(name: str) -> str:
    dist = ELSEWHERE[name]
    hint = settings.LAB_INSTALL_HINT if dist == "fabricd-lab" else f"install {dist} (same version as fabricd)"
    return f"'fabricd {name}' comes with the {dist} distribution, which is not installed; {hint}"


def _valid(table: object) -> Mapping[str, tuple[str, str]] | None:
    if not isinstance(table, Mapping):
        return None
    for name, row in table.items():
        ok = isinstance(row, tuple) and len(row) == 2 and all(isinstance(x, str) for x in row)
        if not isinstance(name, str) or not ok:
            return None
    return table


@cache
def plugin_commands() -> dict[str, tuple[str, str]]:
    """Every installed plugin command: name -> (module path, one-line help)."""
    found: dict[str, tuple[str, str]] = {}
    for ep in entry_points(group=GROUP):
        try:
            table = _valid(ep.load())
        except Exception as exc:  # a broken plugin must not break fabricd: say which and go on
            stderr().print(
                f"[yellow]warning:[/] fabricd command plugin {ep.name} ({ep.value}) failed to load: "
                f"{exc}; its commands are left out",
                highlight=False,
            )
            continue
        if table is None:
            stderr().print(
                f"[yellow]warning:[/] fabricd command plugin {ep.name} ({ep.value}) is not a table of "
                "name -> (module, help); its commands are left out",
                highlight=False,
            )
            continue
        for name, row in table.items():
            found.setdefault(name, row)
    return found
