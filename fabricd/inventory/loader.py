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

from .yamlsrc import Budget, Limits, Loc, Located, load_located

TOP_LEVEL_KEYS = ("name", "description", "policy", "defaults", "groups", "switches", "hosts", "links")
LIST_SECTIONS = ("switches", "hosts", "links")
MAP_SECTIONS = ("policy", "defaults", "groups")
DEFAULT_KINDS = ("switch", "host", "port", "nic")
YAML_SUFFIXES = (".yml", ".yaml")


class Origins:
    """Where each part of the merged data came from: a list of source roots per data path, most specific last.

    A root is a path into the located source documents (``("@", file_index, ...)``). List items get their own
    roots; a device's roots chain defaults -> groups -> the device. Roots of a device's ports and NICs are derived
    on demand (``defaults.port|nic`` then the port in each of the device's roots), so loading stores nothing per
    port.
    """

    def __init__(self) -> None:
        self.roots: dict[Loc, list[Loc]] = {}
        self.child_defaults: dict[str, list[Loc]] = {}
        self.child_kinds: dict[str, str] = {}

    def get(self, prefix: Loc) -> list[Loc] | None:
        hit = self.roots.get(prefix)
        if hit is not None:
            return hit
        if len(prefix) == 4 and isinstance(prefix[2], str) and prefix[2] in self.child_defaults:
            parent = self.roots.get(prefix[:2])
            if parent is not None:
                child, index = prefix[2], prefix[3]
                kind = self.child_kinds.get(child)
                group_defaults = [(*r, kind) for r in parent] if kind else []  # a group's port:/nic: block
                return self.child_defaults[child] + group_defaults + [(*r, child, index) for r in parent]
        return None


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
        return _locate(self.located, self.origins, loc) or Location(self.path)

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
        p for p in root.rglob("*")
        if p.suffix in YAML_SUFFIXES and p.is_file()
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
        raise InventoryError([
            Problem("inventory not found", location=Location(root), expected="a YAML file or a directory",
                    got="nothing at that path",
                    hint="pass an existing inventory file or directory; `fabricd init DIR` writes a starting one",
                    code="INV010")
        ])
    if root.is_dir():
        files = _yaml_files(root)
        escaping = _outside_links(root, files)
        if escaping:
            raise InventoryError([
                Problem("a symbolic link in the inventory leads outside its directory", location=Location(f),
                        expected=f"a file inside {root}", got="a link to a file elsewhere (not read)",
                        hint="copy the file into the inventory, or pass the file itself as the inventory",
                        code="INV007")
                for f in escaping
            ])
        if not files:
            raise InventoryError([
                Problem("no YAML files in the inventory directory", location=Location(root),
                        expected="one or more *.yml or *.yaml files", got="none",
                        hint="add fabric.yml, or write a starting inventory with `fabricd init DIR`", code="INV011")
            ])
    else:
        files = [root]

    docs: list[tuple[Loc, dict[str, Any]]] = []
    for file in files:
        prefix: Loc = ("@", located.add_file(file))
        before = len(problems)
        doc = load_located(file, located, problems, prefix, budget)
        if doc is None:
            if len(problems) == before:
                problems.append(Problem("file is empty", location=Location(file), code="INV012",
                                        expected="a mapping of inventory sections", got="nothing",
                                        hint=f"add sections such as {', '.join(TOP_LEVEL_KEYS[2:])}"))
            continue
        if not isinstance(doc, dict):
            problems.append(Problem("the top level must be a mapping",
                                    location=located.where(prefix) or Location(file),
                                    expected="keys such as policy:, switches:, hosts:",
                                    got=_short(doc), code="INV013",
                                    hint="start the file with section keys, not a list or a scalar"))
            continue
        docs.append((prefix, doc))

    origins = Origins()
    data = _combine(docs, located, origins, problems)
    if problems:
        raise InventoryError(problems)
    merged = _Inheritance(data, origins, located, problems, limits.max_nodes).apply()
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
                problems.append(Problem(f"unknown top-level key {key!r}", path=str(key), location=where,
                                        expected="one of " + ", ".join(TOP_LEVEL_KEYS), got=repr(key),
                                        hint=f"did you mean {close[0]!r}?" if close else "remove it",
                                        code="INV014"))
                continue
            if key in LIST_SECTIONS:
                if value is None:
                    continue
                if not isinstance(value, list):
                    problems.append(Problem(f"{key} must be a list", path=key, location=where,
                                            expected="a YAML list (- name: ...)", got=_short(value),
                                            code="INV015", hint=f"write each entry of {key} as '- ...'"))
                    continue
                items = data.setdefault(key, [])
                roots.setdefault((key,), []).append((*prefix, key))
                base = len(items)
                for j in range(len(value)):
                    roots[(key, base + j)] = [(*prefix, key, j)]
                items.extend(value)
            elif key in MAP_SECTIONS:
                if value is None:
                    continue
                if not isinstance(value, dict):
                    problems.append(Problem(f"{key} must be a mapping", path=key, location=where,
                                            expected="a YAML mapping (key: value)", got=_short(value),
                                            code="INV016", hint=f"write {key} as indented 'key: value' lines"))
                    continue
                _merge_section(data.setdefault(key, {}), value, (key,), (*prefix, key), located=located,
                               problems=problems)
                roots.setdefault((key,), []).append((*prefix, key))
            else:
                if key in data:
                    first = roots[(key,)][0]
                    problems.append(Problem(f"{key!r} is set in more than one file", path=key, location=where,
                                            expected="one value",
                                            got=f"a second one (first in {located.file_of(first)})",
                                            code="INV017", hint="keep it in one file"))
                    continue
                data[key] = value
                roots[(key,)] = [(*prefix, key)]
    return data


def _merge_section(
    into: dict[str, Any], new: dict[str, Any], loc: Loc, src: Loc, *, located: Located, problems: list[Problem]
) -> None:
    for key, value in new.items():
        if key in into:
            if isinstance(into[key], dict) and isinstance(value, dict):
                _merge_section(into[key], value, (*loc, key), (*src, key), located=located, problems=problems)
                continue
            problems.append(Problem(f"{dotted_path({}, (*loc, key))} is defined in more than one file",
                                    path=dotted_path({}, (*loc, key)), location=located.get((*src, key)),
                                    expected="one definition", got="a second one", code="INV017",
                                    hint="keep one definition, or split the section by different keys"))
            continue
        into[key] = value


# --- inheritance -----------------------------------------------------------------------------------------------


def _deep_merge(base: Any, over: Any) -> Any:
    """``over`` on top of ``base``: mappings merge recursively, anything else replaces. Inputs are not modified;
    unmodified sub-trees are shared (nothing downstream mutates the merged data)."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = {**base, **over}
        for key, value in over.items():
            if type(value) is dict and type(base.get(key)) is dict:
                out[key] = _deep_merge(base[key], value)
        return out
    return over


def _size(value: Any, cap: int) -> int:
    """Nodes in ``value`` with shared parts counted each time they appear (what validating it walks), stopping
    past ``cap``."""
    n = 0
    stack = [value]
    while stack and n <= cap:
        item = stack.pop()
        n += 1
        if isinstance(item, dict):
            n += len(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return n


def _check_defaults_and_groups(data: dict[str, Any], origins: Origins, located: Located,
                               problems: list[Problem]) -> None:
    """``defaults`` holds one mapping per device kind, ``groups`` one mapping per group."""
    defaults_roots = origins.roots.get(("defaults",), [])
    groups_roots = origins.roots.get(("groups",), [])
    for kind, body in data.get("defaults", {}).items():
        if kind not in DEFAULT_KINDS:
            problems.append(Problem(f"unknown defaults kind {kind!r}", path=f"defaults.{kind}",
                                    location=_first_line(located, defaults_roots, (kind,)),
                                    expected="one of " + ", ".join(DEFAULT_KINDS), got=repr(kind), code="INV018",
                                    hint="defaults holds switch:, host:, port: and nic: sections"))
        elif body is not None and not isinstance(body, dict):
            problems.append(Problem(f"defaults.{kind} must be a mapping", path=f"defaults.{kind}",
                                    location=_first_line(located, defaults_roots, (kind,)),
                                    expected=f"a mapping of {kind} fields", got=_short(body), code="INV018",
                                    hint=f"write defaults.{kind} as indented 'key: value' lines"))
    for name, body in data.get("groups", {}).items():
        if not isinstance(body, dict):
            problems.append(Problem("a group must be a mapping of device fields", path=f"groups.{name}",
                                    location=_first_line(located, groups_roots, (name,)),
                                    expected="a mapping", got=_short(body), code="INV019",
                                    hint="write the group's shared fields as 'key: value' lines"))


@dataclass(frozen=True)
class _Kind:
    """A device list and its children: ``switches`` of ``switch`` with ``ports`` of ``port``."""

    section: str
    kind: str
    child: str
    child_kind: str


DEVICE_KINDS = (_Kind("switches", "switch", "ports", "port"), _Kind("hosts", "host", "nics", "nic"))


@dataclass(frozen=True)
class _KindDefaults:
    """``defaults.<kind>`` and ``defaults.<child_kind>`` of one device list (None when absent or not a mapping)."""

    device: dict[str, Any] | None
    device_roots: list[Loc]
    child: dict[str, Any] | None
    device_size: int
    child_size: int


class _Inheritance:
    """Merge defaults and groups into every device. What the devices inherit counts against ``max_nodes`` too (a
    group holding a large structure, listed by every device, would otherwise multiply it past any file limit)."""

    def __init__(self, data: dict[str, Any], origins: Origins, located: Located, problems: list[Problem],
                 max_nodes: int = Limits.max_nodes) -> None:
        self.data = data
        self.defaults: dict[str, Any] = data.get("defaults", {})
        self.groups: dict[str, Any] = data.get("groups", {})
        self.origins = origins
        self.located = located
        self.problems = problems
        self.max_nodes = max_nodes
        self.defaults_roots = origins.roots.get(("defaults",), [])
        self.groups_roots = origins.roots.get(("groups",), [])
        self.sizes: dict[str, int] = {}
        self.inherited = 0

    def apply(self) -> dict[str, Any]:
        _check_defaults_and_groups(self.data, self.origins, self.located, self.problems)
        if self.problems:
            return self.data
        out = {k: v for k, v in self.data.items() if k not in ("defaults", "groups")}
        for k in DEVICE_KINDS:
            items = self._section(k)
            if items is None:  # past the node limit: the problem is recorded
                return out
            if k.section in self.data:
                out[k.section] = items
        if not self.groups:
            self.problems[:] = _fold_unknown_groups(self.problems)
        return out

    def _kind_defaults(self, k: _Kind) -> _KindDefaults:
        self.origins.child_defaults[k.child] = (
            [(*r, k.child_kind) for r in self.defaults_roots] if k.child_kind in self.defaults else [])
        self.origins.child_kinds[k.child] = k.child_kind
        device = self.defaults.get(k.kind)
        device = device if isinstance(device, dict) else None
        child = self.defaults.get(k.child_kind)
        child = child if isinstance(child, dict) else None
        return _KindDefaults(
            device=device, device_roots=[(*r, k.kind) for r in self.defaults_roots] if device is not None else [],
            child=child, device_size=_size(device, self.max_nodes) if device is not None else 0,
            child_size=_size(child, self.max_nodes) if child is not None else 0)

    def _section(self, k: _Kind) -> list[Any] | None:
        kd = self._kind_defaults(k)
        merged_items = []
        for i, item in enumerate(self.data.get(k.section, [])):
            if not isinstance(item, dict):
                merged_items.append(item)  # pydantic reports the type error at this location
                continue
            merged = self._device(k, kd, i, item)
            if merged is None:
                return None
            merged_items.append(merged)
        return merged_items

    def _device(self, k: _Kind, kd: _KindDefaults, i: int, item: dict[str, Any]) -> dict[str, Any] | None:
        """One device: defaults, then its groups in order, then itself; its children get the child defaults."""
        own_roots = self.origins.roots[(k.section, i)]
        merged: Any = kd.device if kd.device is not None else {}
        layer_roots = list(kd.device_roots)
        child_defaults = kd.child
        group_list: str | None = None
        names = item.get("groups", [])
        for g_index, g in enumerate(names if isinstance(names, list) else []):
            if not self._known_group(k, i, own_roots, g_index, g):
                continue
            body, own = self._group_child_defaults(g, k.child_kind)
            if own is not None:
                child_defaults = _deep_merge(child_defaults or {}, own)
            if k.child in body:
                group_list = g
            if g not in self.sizes:
                self.sizes[g] = _size(self.groups[g], self.max_nodes)
            self.inherited += self.sizes[g]
            merged = _deep_merge(merged, body)
            layer_roots.extend((*r, g) for r in self.groups_roots)
        if group_list is not None and k.child in item:
            self._group_list_ignored(k, item.get("name", i), group_list)
        merged = _deep_merge(merged, item)
        if layer_roots:
            self.origins.roots[(k.section, i)] = layer_roots + own_roots
        children = merged.get(k.child)
        self.inherited += kd.device_size + (kd.child_size * len(children) if isinstance(children, list) else 0)
        if self.inherited > self.max_nodes:
            self._over_limit(k, i, own_roots)
            return None
        if isinstance(children, list) and child_defaults is not None:
            merged[k.child] = [_deep_merge(child_defaults, c) if isinstance(c, dict) else c for c in children]
        return merged  # type: ignore[no-any-return]

    def _known_group(self, k: _Kind, i: int, own_roots: list[Loc], g_index: int, g: Any) -> bool:
        """A group a device lists is a name under ``groups:``; a problem otherwise."""
        where = _first_line(self.located, own_roots, ("groups", g_index))
        if not isinstance(g, str):  # never str() it: an aliased structure would expand in the message
            self.problems.append(Problem("a group name must be text", path=dotted_path(self.data, (k.section, i)) +
                                         f".groups[{g_index}]", location=where,
                                         expected="a name under groups:", got=_short(g), code="INV020",
                                         hint="list group names, e.g. groups: [leaf]"))
            return False
        if g not in self.groups:
            close = difflib.get_close_matches(str(g), [str(n) for n in self.groups], n=1)
            self.problems.append(Problem(f"unknown group {g!r}", path=dotted_path(self.data, (k.section, i, "groups",
                                                                                              g_index)),
                                         location=where, expected="a name under groups:", got=repr(g),
                                         code="INV020",
                                         hint=f"did you mean {close[0]!r}?" if close else "define it under groups:"))
            return False
        return True

    def _group_child_defaults(self, g: str, child_kind: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The group's device fields, and its ``port:``/``nic:`` mapping for its members' children (if any)."""
        body: dict[str, Any] = self.groups[g]
        if child_kind not in body:
            return body, None
        own = body[child_kind]
        if own is not None and not isinstance(own, dict):
            self.problems.append(Problem(f"groups.{g}.{child_kind} must be a mapping", path=f"groups.{g}.{child_kind}",
                                         location=_first_line(self.located, self.groups_roots, (g, child_kind)),
                                         expected=f"a mapping of {child_kind} fields", got=_short(own),
                                         code="INV018", hint="write it as indented 'key: value' lines"))
            own = None
        return {key: v for key, v in body.items() if key != child_kind}, own

    def _group_list_ignored(self, k: _Kind, device: Any, group_list: str) -> None:
        child, kind, child_kind = k.child, k.kind, k.child_kind
        self.problems.append(Problem(
            f"group {group_list!r} sets {child}: and {kind} {device!r} its own {child}: the "
            f"{kind}'s list replaces the group's, so the group's {child} would be ignored",
            path=f"groups.{group_list}.{child}",
            location=_first_line(self.located, self.groups_roots, (group_list, child)),
            expected=f"{child_kind} defaults in groups.{group_list}.{child_kind} (a mapping applied to every "
            f"{child_kind} of the group's members)", got=f"a {child} list", code="INV021",
            hint=f"move the shared fields to groups.{group_list}.{child_kind}: (e.g. {child_kind}: "
            f"{{driver: ice}}), or drop the group's {child}: list"))

    def _over_limit(self, k: _Kind, i: int, own_roots: list[Loc]) -> None:
        max_nodes = self.max_nodes
        self.problems.append(Problem(
            f"with what its devices inherit from defaults and groups, the inventory passes its limit of "
            f"{max_nodes:,} YAML nodes here", path=dotted_path(self.data, (k.section, i)),
            location=_first_line(self.located, own_roots, ()), code="INV009",
            expected=f"at most {max_nodes:,} inherited nodes (each device counts the groups it lists)",
            got=f"more by {k.section}[{i}]",
            hint="keep large structures out of groups listed by many devices; if the inventory really is "
            f"this large, raise the limit: FABRICD_INVENTORY_MAX_NODES={max_nodes * 2}"))


def _fold_unknown_groups(problems: list[Problem]) -> list[Problem]:
    """With no ``groups`` defined at all, one problem for every device that lists a group (a missing groups.yml
    would otherwise give one 'unknown group' error per device), at the first of them."""
    unknown = [p for p in problems if p.code == "INV020"]
    if not unknown:
        return problems
    names = list(dict.fromkeys(p.got or "" for p in unknown))
    devices = list(dict.fromkeys(p.path.split(".groups[")[0] for p in unknown))
    shown = ", ".join(devices[:3]) + (f" and {len(devices) - 3} more" if len(devices) > 3 else "")
    one = Problem(f"no groups defined, but {len(devices)} devices list groups ({shown})", path="groups",
                  location=unknown[0].location, expected="a groups: mapping defining " + ", ".join(names),
                  got="no groups: section", code="INV020",
                  hint="is groups.yml missing? add it (or a groups: section) defining those groups")
    rest = [p for p in problems if p.code != "INV020"]
    return [one, *rest]


def _first_line(located: Located, roots: list[Loc], rest: Loc) -> Location | None:
    for root in reversed(roots):
        hit = located.get((*root, *rest))
        if hit is not None:
            return hit
    return None


def _locate(located: Located, origins: Origins, loc: Loc) -> Location | None:
    for n in range(len(loc), 0, -1):
        roots = origins.get(tuple(loc[:n]))
        if roots is None:
            continue
        rest = tuple(loc[n:])
        for cut in range(len(rest), -1, -1):
            hit = _first_line(located, roots, rest[:cut])
            if hit is not None:
                return hit
        break
    return None


# --- paths and pydantic errors ----------------------------------------------------------------------------------

_NAME_KEYS = ("name", "netdev")


def dotted_path(data: Any, loc: Loc) -> str:
    """``('switches', 2, 'ports', 0, 'mtu')`` -> ``switches[leaf1].ports[Ethernet0].mtu`` (names where known)."""
    out = ""
    node = data
    for part in loc:
        if isinstance(part, int):
            label = str(part)
            if isinstance(node, list) and 0 <= part < len(node) and isinstance(node[part], dict):
                for key in _NAME_KEYS:
                    value = node[part].get(key)
                    if isinstance(value, str | int) and not isinstance(value, bool):
                        label = str(value)
                        break
            out += f"[{label}]"
            node = node[part] if isinstance(node, list) and 0 <= part < len(node) else None
        else:
            out += ("." if out else "") + str(part)
            node = node.get(part) if isinstance(node, dict) else None
    return out


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


def _short(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


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
        got: str | None = None if etype == "missing" else _short(err.get("input"))
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
                hint = (f"{key} defaults go in defaults.{key} or a group's {key}: mapping; this device's own "
                        f"{key}s are its {key}s: list")
        elif etype == "missing":
            message = f"missing required key {loc[-1]!r}"
            expected = f"a value for {loc[-1]!r}"
            got = "nothing"
            hint = f"add {loc[-1]}: ... (see `fabricd schema`)"
        elif etype in ("less_than_equal", "greater_than_equal", "less_than", "greater_than"):
            bound = {"less_than_equal": "<= {le}", "greater_than_equal": ">= {ge}", "less_than": "< {lt}",
                     "greater_than": "> {gt}"}[etype].format(**ctx)
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
        where = _locate(located, origins, loc) or Location(root)
        problems.append(Problem(message, path=dotted_path(data, loc), location=where,
                                expected=expected, got=got, hint=hint, code="INV100"))
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
