"""Shared code does not know which platform packs exist (issue 24, part 6): what differs per NOS is in the pack
(``fabricd/nos/<id>/``: its spec's fields, its ``rules.py``, its ``checks.py``) and shared code reads it from the
spec. An AST scan of every module of fabricd/ outside the pack folders refuses:

- a string that is a platform id or a built-in NOS's short name (``"cumulus_nvue"``, ``"eos"``): a branch on it;
- a name (variable, attribute, function, class, argument, import) that spells one (``Platform.ARISTA_EOS``,
  ``_NVUE_OP``, ``EosSwitchIntent``): a platform-specific constant or type;
- an import of a pack's module (``fabricd.nos.<id>...``).

Prose is data and is not scanned: docstrings (and the string statements that document an attribute), and any
string that is not exactly an id (a check's ``why`` naming NX-OS's limits, a help text's example device
``leaf2-eos``). The short names are the parts of the built-in ids (``arista``, ``eos``, ...), the words code names
these NOSes by; a pack installed from elsewhere is caught by its exact id. :data:`ALLOWED` is the short list of
places where naming the built-in packs is the point, each with its reason.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from fabricd.model import Platform
from fabricd.model.platform import known_platforms

REPO = Path(__file__).resolve().parents[2]
FABRICD = REPO / "fabricd"
NOS = FABRICD / "nos"

IDS = frozenset(known_platforms())
WORDS = frozenset(part for p in Platform.BUILTIN for part in p.value.split("_")) | {p.value for p in Platform.BUILTIN}

_BUILTIN_CONSTANTS = {p.value.upper() for p in Platform.BUILTIN}
ALLOWED: dict[str, tuple[frozenset[str], str]] = {
    "fabricd/model/platform.py": (
        frozenset(_BUILTIN_CONSTANTS | {p.value for p in Platform.BUILTIN}),
        "the built-in ids (Platform.SONIC, ..., Platform.BUILTIN): L0 checks an inventory's platform against them "
        "before any pack is imported",
    ),
    "fabricd/nos/registry.py": (
        frozenset(
            _BUILTIN_CONSTANTS
            | {f"fabricd.nos.{p.value}.{m}" for p in Platform.BUILTIN for m in ("spec", "intent")}
            | {"EosSwitchIntent", "NxosSwitchIntent", "NvueSwitchIntent", "SonicSwitchIntent"}
        ),
        "the registry's built-in list: it imports each shipped pack's spec, and its intent class for the "
        "AnySwitchIntent type union",
    ),
}
"""Shared module (repo-relative) -> (the names it may spell, why)."""


def _words(identifier: str) -> set[str]:
    """The lower-case words of an identifier: ``_NVUE_OP`` -> nvue, op; ``EosSwitchIntent`` -> eos, switch, intent."""
    parts = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", identifier)
    return {p.lower() for p in parts} | {identifier.lower()}


def _names_a_pack(identifier: str) -> bool:
    return bool(_words(identifier) & (WORDS | IDS)) or any(pid in identifier.lower() for pid in IDS)


def _is_pack_module(module: str) -> bool:
    parts = module.split(".")
    return any(p in IDS for p in parts)


def _prose(tree: ast.AST) -> set[int]:
    """ids of the string constants that are statements (docstrings, attribute docstrings)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }


_NAME_FIELD: dict[type[ast.AST], str] = {
    ast.Name: "id",
    ast.Attribute: "attr",
    ast.FunctionDef: "name",
    ast.AsyncFunctionDef: "name",
    ast.ClassDef: "name",
    ast.arg: "arg",
    ast.keyword: "arg",
    ast.alias: "name",
}


def _spelled(node: ast.AST) -> Iterator[str]:
    """The identifiers a node spells (an import alias: the imported name and its ``as`` name)."""
    field = _NAME_FIELD.get(type(node))
    for name in (getattr(node, field, None) if field else None, getattr(node, "asname", None)):
        if isinstance(name, str):
            yield name


def platform_names(source: str) -> Iterator[tuple[int, str]]:
    """(line, what) of every platform id, NOS short name or pack import that ``source`` spells in code."""
    tree = ast.parse(source)
    prose = _prose(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose:
            if node.value.lower() in WORDS | IDS:
                yield node.lineno, node.value
        elif isinstance(node, ast.ImportFrom) and node.module and _is_pack_module(node.module):
            yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names if _is_pack_module(a.name))
        for name in _spelled(node):
            if _names_a_pack(name):
                yield getattr(node, "lineno", 0), name


def shared_modules() -> Iterator[Path]:
    """Every module of fabricd/ outside the pack folders (a pack folder holds a ``spec.py``)."""
    packs = {p for p in NOS.iterdir() if p.is_dir() and (p / "spec.py").is_file()}
    for path in sorted(FABRICD.rglob("*.py")):
        if not any(pack in path.parents for pack in packs):
            yield path


def offences() -> list[str]:
    out = []
    for path in shared_modules():
        rel = path.relative_to(REPO).as_posix()
        allowed = ALLOWED.get(rel, (frozenset(), ""))[0]
        for line, what in platform_names(path.read_text()):
            if what not in allowed:
                out.append(f"{rel}:{line}: {what}")
    return out


def test_shared_code_names_no_platform() -> None:
    """Move the branch into the pack: a spec field the shared code reads, a DeviceRules field, or a pack check."""
    found = offences()
    assert not found, "shared code names a platform pack:\n" + "\n".join(found)


def test_the_allow_list_is_still_needed() -> None:
    """Every allowed name is still spelled where it is allowed (an allow-list entry nothing uses is removed)."""
    for rel, (names, _why) in ALLOWED.items():
        spelled = {what for _line, what in platform_names((REPO / rel).read_text())}
        assert names <= spelled, f"{rel}: {sorted(names - spelled)} no longer spelled there"


def test_the_scan_sees_a_branch_a_constant_and_an_import() -> None:
    """What the scan refuses, and the prose it leaves alone."""
    code = '''
"""Module doc naming cumulus_nvue and EOS."""
from fabricd.nos.cumulus_nvue.grammar import X
import fabricd.nos.sonic.show
_NVUE_OP = 1
def f(platform, spec):
    """Doc: sonic."""
    if platform == "arista_eos" or spec.suffix == "nvue":
        return Platform.CISCO_NXOS
    return check(why="NX-OS takes kbytes", example="leaf2-eos")
'''
    got = sorted(set(platform_names(code)))
    assert got == [
        (3, "fabricd.nos.cumulus_nvue.grammar"),
        (4, "fabricd.nos.sonic.show"),
        (5, "_NVUE_OP"),
        (8, "arista_eos"),
        (8, "nvue"),
        (9, "CISCO_NXOS"),
    ]
