"""Which parser reads each capture under tests/golden/readers, and what is known about the capture, both found without
a table in a shared test module (issue 24 part 6: a new pack adds files in its own places only).

- **The parser** comes from the parser-role registry (fabricd/nos/roles.py walking each pack's ``roles.py``): every
  role linked to the capture (``<role>--<source>.txt`` in the role's folder, or a glob in the role's ``captures``),
  plus, for the lab simulator's ``lab-<role>.txt`` (tests/golden/readers/switch/capture_lab.py names them so), the
  role of that name in the folder's pack. A capture linked to two parsers (one output holding two commands) is read
  by both; a capture no role links has no parser, and the tests that use this module fail on it.
- **The facts** sit beside the capture in ``<capture stem>.facts.json`` (only where there is one to state):
  ``interface``, the port the output was taken on (passed to a per-port parser, ``parse(text, interface)``);
  ``version``, the NOS version read by eye (every switch_version capture has one); ``checks``, values read by eye,
  each a selection of the parsed rows and what it must equal (:func:`check_rows`).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from fabricd.nos.roles import Role, all_roles, captures_of

GOLDEN = Path(__file__).parent
READERS = GOLDEN / "readers"
LAB_PREFIX = "lab-"
FACT_KEYS = frozenset({"interface", "version", "checks"})
CHECK_KEYS = frozenset(
    {"note", "bare", "rows", "at", "where", "nonzero", "fields", "count", "equal", "unordered", "first", "contains"}
)


def capture_text(path: Path) -> str:
    """The capture without its first ``# source:`` line."""
    first, _, rest = path.read_text().partition("\n")
    assert first.startswith("# source:"), f"{path} must start with a '# source:' line"
    return rest


def facts_path(capture: Path) -> Path:
    return capture.with_name(capture.stem + ".facts.json")


def facts(capture: Path) -> dict[str, Any]:
    """The capture's facts file, ``{}`` when it has none; an unknown key fails (a misspelt key checks nothing)."""
    path = facts_path(capture)
    if not path.exists():
        return {}
    data: dict[str, Any] = json.loads(path.read_text())
    unknown = set(data) - FACT_KEYS
    assert not unknown, f"{path}: unknown keys {sorted(unknown)}; known: {sorted(FACT_KEYS)}"
    return data


def orphan_facts() -> list[str]:
    """Facts files whose capture is gone."""
    return sorted(
        str(p.relative_to(GOLDEN))
        for p in READERS.rglob("*.facts.json")
        if not p.with_name(p.name.removesuffix(".facts.json") + ".txt").exists()
    )


@cache
def _links() -> dict[Path, tuple[Role, ...]]:
    roles = all_roles()
    linked: dict[Path, list[Role]] = {}
    for role in roles:
        for path in captures_of(role, GOLDEN):
            linked.setdefault(path, []).append(role)
    for role in roles:  # the lab simulator's lab-<role>.txt, in the role's folder
        lab = GOLDEN / role.folder / f"{LAB_PREFIX}{role.name}.txt"
        if lab.is_file() and role not in linked.get(lab, []):
            linked.setdefault(lab, []).append(role)
    return {path: tuple(found) for path, found in linked.items()}


def roles_of(capture: Path) -> tuple[Role, ...]:
    """Every role linked to the capture (none: the capture has no parser)."""
    return _links().get(capture, ())


def resolve(dotted: str) -> Callable[..., Any]:
    module, _, attr = dotted.rpartition(".")
    fn = getattr(importlib.import_module(module), attr)
    assert callable(fn), f"{dotted} is not a function"
    return fn  # type: ignore[no-any-return]


def parsers_of(capture: Path) -> list[Callable[..., Any]]:
    """The distinct parser functions of the capture's roles, in registry order."""
    out: list[Callable[..., Any]] = []
    for role in roles_of(capture):
        fn = resolve(role.parser)
        if fn not in out:
            out.append(fn)
    return out


def bound(capture: Path, fn: Callable[..., Any]) -> Callable[[str], Any]:
    """``fn`` called the way the capture needs: with its ``interface`` when its facts name one."""
    interface = facts(capture).get("interface")
    if interface is None:
        return fn
    return lambda text: fn(text, interface)


def unlinked(captures: Sequence[Path]) -> list[str]:
    return [str(p.relative_to(GOLDEN)) for p in captures if not roles_of(p)]


NO_PARSER = (
    "no parser role links these captures: {}; name each <role>--<source>.txt in its role's folder (lab output "
    "lab-<role>.txt) or add a glob to the role's captures in fabricd/nos/<id>/roles.py (host readers: "
    "fabricd/nos/roles.py)"
)


# -- facts read by eye ---------------------------------------------------------------------------------------------


def _select(rows: list[dict[str, Any]], check: dict[str, Any]) -> list[dict[str, Any]]:
    if "at" in check:
        rows = [rows[check["at"]]]
    where = check.get("where", {})
    rows = [r for r in rows if all(r.get(k) == v for k, v in where.items())]
    if "nonzero" in check:
        rows = [r for r in rows if r.get(check["nonzero"])]
    return rows


def _key(row: list[Any]) -> str:
    return json.dumps(row, sort_keys=True)


def check_rows(tables: dict[str, Any] | list[dict[str, Any]], check: dict[str, Any], where: str) -> None:
    """One check read by eye. ``rows``: which table of the parse (a switch snapshot's ``pfc``, ``queues``...; omitted
    for a list of neighbours); ``at`` (an index), ``where`` (field: value) and ``nonzero`` (a field) select rows;
    then ``count`` is their number, and the selected rows projected on ``fields`` are ``equal`` (in order),
    ``unordered`` (the same rows, any order), start with ``first``, or ``contains`` each row given."""
    unknown = set(check) - CHECK_KEYS
    assert not unknown, f"{where}: unknown check keys {sorted(unknown)}; known: {sorted(CHECK_KEYS)}"
    rows = tables if isinstance(tables, list) else tables.get(check["rows"], [])
    selected = _select(list(rows), check)
    if "count" in check:
        assert len(selected) == check["count"], f"{where}: {len(selected)} rows, expected {check['count']}: {check}"
    fields = check.get("fields", [])
    got = [[r.get(f) for f in fields] for r in selected]
    if "equal" in check:
        assert got == check["equal"], f"{where}: {got} != {check['equal']}"
    if "unordered" in check:
        assert sorted(got, key=_key) == sorted(check["unordered"], key=_key), f"{where}: {got} != {check['unordered']}"
    if "first" in check:
        assert got and got[0] == check["first"], f"{where}: first of {got} != {check['first']}"
    for row in check.get("contains", []):
        assert row in got, f"{where}: {row} not among {got}"
