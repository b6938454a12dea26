"""Load a YAML inventory (one file or a directory) into a :class:`~fabricd.model.Fabric`.

Inheritance, as nornir and AVD users expect: ``defaults`` -> ``groups`` (in the order a device lists them) ->
the device itself. Mappings merge deeply; lists and scalars replace; an explicit ``null`` replaces too, so
``cc: null`` clears the knobs a NIC inherits. ``defaults.port`` and ``defaults.nic`` apply to every switch port and
host NIC, a group's ``port:`` and ``nic:`` to the ports and NICs of its members (on top of the defaults, below the
port or NIC itself). A group's ``ports:``/``nics:`` list that a member's own list replaces is an error (INV021):
it would be accepted and ignored.

Every problem is collected and raised at once as an :class:`~fabricd.errors.InventoryError`, each located at
``file:line`` with a dotted path. Locations are resolved lazily, so loading a large fabric pays nothing for them.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError

from fabricd import settings
from fabricd.errors import InventoryError, Location, Problem
from fabricd.model import Fabric

from .inherit import Inheritance
from .origins import Origins, dotted_path, locate, short
from .yamlsrc import Budget, Limits, Loc, Located, load_located

TOP_LEVEL_KEYS = ("name", "description", "policy", "defaults", "groups", "switches", "hosts", "links")
LIST_SECTIONS = ("switches", "hosts", "links")
MAP_SECTIONS = ("policy", "defaults", "groups")
YAML_SUFFIXES = (".yml", ".yaml")


@dataclass
class Inventory:
    """A loaded fabric plus what is needed to locate any value in the files it came from."""

    fabric: Fabric
    path: Path
    data: dict[str, Any]
    located: Located = field(repr=False)
    origins: Origins = field(repr=False)
    files: list[Path] = field(default_factory=list)

    def locate(self, loc: Loc) -> Location | None:
        """``file:line`` that wrote the value at ``loc`` (or its nearest written ancestor); the inventory path
        when the value is a model default that no file mentions."""
        return locate(self.located, self.origins, loc) or Location(self.path)

    def dotted(self, loc: Loc) -> str:
        return dotted_path(self.data, loc)

    def problem(
        self,
        loc: Loc,
        message: str,
        *,
        expected: str | None = None,
        got: str | None = None,
        hint: str | None = None,
        code: str = "INV000",
        severity: str = "error",
    ) -> Problem:
        """A problem at ``loc`` (a path in the merged data), located in the file that wrote it."""
        return Problem(
            message,
            path=self.dotted(loc),
            location=self.locate(loc),
            expected=expected,
            got=got,
            hint=hint,
            code=code,
            severity=severity,
        )


INVENTORY_MARKERS = ("fabric.yml", "fabric.yaml")


def inventory_marker(directory: Path) -> Path | None:
    """The file that makes ``directory`` an inventory when none is named: ``fabric.yml`` (or ``.yaml``) at its top
    level, as ``fabricd init`` writes it; else None. Only that name counts: any YAML file would make a folder of
    unrelated YAML (``/tmp``, a home directory, a repository with CI files) an inventory, and a directory inventory
    is every YAML file below it."""
    for name in INVENTORY_MARKERS:
        if (directory / name).is_file():
            return directory / name
    return None


def _yaml_files(root: Path) -> list[Path]:
    """The YAML files of a directory inventory, sorted, skipping hidden files and directories."""
    return sorted(
        p
        for p in root.rglob("*")
        if p.suffix in YAML_SUFFIXES
        and p.is_file()
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def _outside_links(root: Path, files: list[Path]) -> list[Path]:
    """The files of a directory inventory that resolve outside it (a symbolic link to ``/etc/shadow`` or to a
    password file would otherwise be parsed, and its first line quoted in a problem). Not read, refused."""
    base = root.resolve()
    return [f for f in files if base not in f.resolve().parents]


def load_inventory(path: Path | str, limits: Limits | None = None) -> Inventory:
    """Load and validate the inventory at ``path``. Raises InventoryError with every problem found. ``limits``
    bound its size (default: :func:`fabricd.settings.inventory_limits`, from the environment)."""
    root = Path(path)
    if limits is None:
        max_bytes, max_nodes = settings.inventory_limits()
        limits = Limits(max_bytes=max_bytes, max_nodes=max_nodes)
    budget = Budget(limits)
    problems: list[Problem] = []
    located = Located()
    if not root.exists():
        raise InventoryError(
            [
                Problem(
                    "inventory not found",
                    location=Location(root),
                    expected="a YAML file or a directory",
                    got="nothing at that path",
                    hint="pass an existing inventory file or directory; `fabricd init DIR` writes a starting one",
                    code="INV010",
                )
            ]
        )
    if root.is_dir():
        files = _yaml_files(root)
        escaping = _outside_links(root, files)
        if escaping:
            raise InventoryError(
                [
                    Problem(
                        "a symbolic link in the inventory leads outside its directory",
                        location=Location(f),
                        expected=f"a file inside {root}",
                        got="a link to a file elsewhere (not read)",
                        hint="copy the file into the inventory, or pass the file itself as the inventory",
                        code="INV007",
                    )
                    for f in escaping
                ]
            )
        if not files:
            raise InventoryError(
                [
                    Problem(
                        "no YAML files in the inventory directory",
                        location=Location(root),
                        expected="one or more *.yml or *.yaml files",
                        got="none",
                        hint="add fabric.yml, or write a starting inventory with `fabricd init DIR`",
                        code="INV011",
                    )
                ]
            )
    else:
        files = [root]

    docs: list[tuple[Loc, dict[str, Any]]] = []
    for file in files:
        prefix: Loc = ("@", located.add_file(file))
        before = len(problems)
        doc = load_located(file, located, problems, prefix, budget)
        if doc is None:
            if len(problems) == before:
                problems.append(
                    Problem(
                        "file is empty",
                        location=Location(file),
                        code="INV012",
                        expected="a mapping of inventory sections",
                        got="nothing",
                        hint=f"add sections such as {', '.join(TOP_LEVEL_KEYS[2:])}",
                    )
                )
            continue
        if not isinstance(doc, dict):
            problems.append(
                Problem(
                    "the top level must be a mapping",
                    location=located.where(prefix) or Location(file),
                    expected="keys such as policy:, switches:, hosts:",
                    got=short(doc),
                    code="INV013",
                    hint="start the file with section keys, not a list or a scalar",
                )
            )
            continue
        docs.append((prefix, doc))

    origins = Origins()
    data = _combine(docs, located, origins, problems)
    if problems:
        raise InventoryError(problems)
    merged = Inheritance(data, origins, located, problems, limits.max_nodes).apply()
    if problems:
        raise InventoryError(problems)
    try:
        fabric = Fabric.model_validate(merged)
    except ValidationError as exc:
        raise InventoryError(_validation_problems(exc, merged, located, origins, root)) from None
    return Inventory(fabric=fabric, path=root, data=merged, located=located, origins=origins, files=files)


# --- combining files -------------------------------------------------------------------------------------------


def _combine(
    docs: list[tuple[Loc, dict[str, Any]]], located: Located, origins: Origins, problems: list[Problem]
) -> dict[str, Any]:
    data: dict[str, Any] = {}
    roots = origins.roots
    for prefix, doc in docs:
        for key, value in doc.items():
            where = located.get((*prefix, key))
            if key not in TOP_LEVEL_KEYS:
                close = difflib.get_close_matches(str(key), TOP_LEVEL_KEYS, n=1)
                problems.append(
                    Problem(
                        f"unknown top-level key {key!r}",
                        path=str(key),
                        location=where,
                        expected="one of " + ", ".join(TOP_LEVEL_KEYS),
                        got=repr(key),
                        hint=f"did you mean {close[0]!r}?" if close else "remove it",
                        code="INV014",
                    )
                )
                continue
            if key in LIST_SECTIONS or key in MAP_SECTIONS:
                if value is None:
                    continue
                if (wrong := _wrong_shape(key, value, where)) is not None:
                    problems.append(wrong)
                    continue
            if key in LIST_SECTIONS:
                items = data.setdefault(key, [])
                roots.setdefault((key,), []).append((*prefix, key))
                base = len(items)
                for j in range(len(value)):
                    roots[(key, base + j)] = [(*prefix, key, j)]
                items.extend(value)
            elif key in MAP_SECTIONS:
                _merge_section(
                    data.setdefault(key, {}), value, (key,), (*prefix, key), located=located, problems=problems
                )
                roots.setdefault((key,), []).append((*prefix, key))
            else:
                if key in data:
                    first = roots[(key,)][0]
                    problems.append(
                        Problem(
                            f"{key!r} is set in more than one file",
                            path=key,
                            location=where,
                            expected="one value",
                            got=f"a second one (first in {located.file_of(first)})",
                            code="INV017",
                            hint="keep it in one file",
                        )
                    )
                    continue
                data[key] = value
                roots[(key,)] = [(*prefix, key)]
    return data


_SHAPES: dict[str, tuple[type, str, str, str, str]] = {
    **dict.fromkeys(
        LIST_SECTIONS, (list, "a list", "a YAML list (- name: ...)", "INV015", "write each entry of {key} as '- ...'")
    ),
    **dict.fromkeys(
        MAP_SECTIONS,
        (dict, "a mapping", "a YAML mapping (key: value)", "INV016", "write {key} as indented 'key: value' lines"),
    ),
}
"""Section -> (the YAML type it must be, its name, expected, problem code, hint)."""


def _wrong_shape(key: str, value: Any, where: Location | None) -> Problem | None:
    """The problem when a list or mapping section holds another kind of value, else None."""
    shape, what, expected, code, hint = _SHAPES[key]
    if isinstance(value, shape):
        return None
    return Problem(
        f"{key} must be {what}",
        path=key,
        location=where,
        expected=expected,
        got=short(value),
        code=code,
        hint=hint.format(key=key),
    )


def _merge_section(
    into: dict[str, Any], new: dict[str, Any], loc: Loc, src: Loc, *, located: Located, problems: list[Problem]
) -> None:
    for key, value in new.items():
        if key in into:
            if isinstance(into[key], dict) and isinstance(value, dict):
                _merge_section(into[key], value, (*loc, key), (*src, key), located=located, problems=problems)
                continue
            problems.append(
                Problem(
                    f"{dotted_path({}, (*loc, key))} is defined in more than one file",
                    path=dotted_path({}, (*loc, key)),
                    location=located.get((*src, key)),
                    expected="one definition",
                    got="a second one",
                    code="INV017",
                    hint="keep one definition, or split the section by different keys",
                )
            )
            continue
        into[key] = value


# --- paths and pydantic errors ----------------------------------------------------------------------------------


def _model_at(loc: Loc) -> type[BaseModel] | None:
    """The pydantic model class that owns the mapping at ``loc`` (for 'did you mean' hints)."""
    model: Any = Fabric
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(model, type) and issubclass(model, BaseModel)) or part not in model.model_fields:
            return None
        model = _unwrap(model.model_fields[part].annotation)
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _unwrap(annotation: Any) -> Any:
    while get_origin(annotation) is not None:
        args = [a for a in get_args(annotation) if a is not type(None)]
        if not args:
            return None
        annotation = args[-1] if get_origin(annotation) is dict else args[0]
    return annotation


def _validation_problems(
    exc: ValidationError, data: dict[str, Any], located: Located, origins: Origins, root: Path
) -> list[Problem]:
    problems = []
    for err in exc.errors(include_url=False):
        loc = tuple(p for p in err["loc"] if p != "[key]")
        # pydantic adds tagged-union or enum tags to loc for some types; keep only parts that exist in the data
        etype = err["type"]
        ctx = err.get("ctx") or {}
        expected: str | None = None
        got: str | None = None if etype == "missing" else short(err.get("input"))
        hint: str | None = None
        message = err["msg"]
        if etype == "extra_forbidden":
            key = loc[-1] if loc else "?"
            model = _model_at(loc[:-1])
            allowed = sorted(model.model_fields) if model else []
            close = difflib.get_close_matches(str(key), allowed, n=1)
            message = f"unknown key {key!r}"
            expected = "one of " + ", ".join(allowed) if allowed else "a known key"
            got = repr(key)
            hint = f"did you mean {close[0]!r}?" if close else "remove it (see `fabricd schema`)"
            if key in ("nic", "port") and model is not None and f"{key}s" in model.model_fields:
                # the plural is a list of this device's own NICs/ports: defaults for them go elsewhere
                hint = (
                    f"{key} defaults go in defaults.{key} or a group's {key}: mapping; this device's own "
                    f"{key}s are its {key}s: list"
                )
        elif etype == "missing":
            message = f"missing required key {loc[-1]!r}"
            expected = f"a value for {loc[-1]!r}"
            got = "nothing"
            hint = f"add {loc[-1]}: ... (see `fabricd schema`)"
        elif etype in ("less_than_equal", "greater_than_equal", "less_than", "greater_than"):
            bound = {
                "less_than_equal": "<= {le}",
                "greater_than_equal": ">= {ge}",
                "less_than": "< {lt}",
                "greater_than": "> {gt}",
            }[etype].format(**ctx)
            message = "value out of range"
            expected = bound
            hint = "use a value in the documented range (see `fabricd schema`)"
        elif etype == "enum":
            message = "not one of the allowed values"
            expected = str(ctx.get("expected", "")).replace("'", "")
            hint = "pick one of the listed values"
        elif etype == "fabricd_rule":
            expected, hint = str(ctx["expected"]), str(ctx["hint"])
        elif etype in ("too_short", "too_long"):
            message = message[0].lower() + message[1:]
            expected = f"{ctx.get('min_length', 0)}..{ctx.get('max_length', 'n')} items"
            hint = "adjust the number of entries"
        else:
            message = message[0].lower() + message[1:] if message else "invalid value"
            expected = _expected_for(etype, ctx)
            hint = "fix the value (see `fabricd schema` for the field's type and range)"
        where = locate(located, origins, loc) or Location(root)
        problems.append(
            Problem(
                message,
                path=dotted_path(data, loc),
                location=where,
                expected=expected,
                got=got,
                hint=hint,
                code="INV100",
            )
        )
    problems.sort(key=lambda p: (str(p.location.file) if p.location else "", p.location.line if p.location else 0))
    return problems


_EXPECTED = {
    "int_parsing": "an integer",
    "int_type": "an integer",
    "int_from_float": "an integer",
    "bool_parsing": "true or false",
    "bool_type": "true or false",
    "string_type": "a string",
    "float_parsing": "a number",
    "float_type": "a number",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "ip_v4_interface": "an IPv4 address with prefix, e.g. 10.0.0.1/24",
    "ip_v4_network": "an IPv4 network, e.g. 10.0.0.0/24",
    "string_pattern_mismatch": "a string matching the field's pattern",
    "value_error": "a valid value",
}


def _expected_for(etype: str, ctx: dict[str, Any]) -> str:
    if etype == "string_pattern_mismatch" and "pattern" in ctx:
        return f"a string matching {ctx['pattern']}"
    return _EXPECTED.get(etype, "a valid value")
