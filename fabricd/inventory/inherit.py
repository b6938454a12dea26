"""Inheritance: ``defaults`` -> ``groups`` (in the order a device lists them) -> the device, merged deeply into every
switch and host, with ``defaults.port|nic`` and a group's ``port:``/``nic:`` applied to the device's ports and NICs.
What devices inherit counts against the inventory's node limit."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from fabricd.errors import Problem

from .origins import Origins, dotted_path, first_line, short
from .yamlsrc import Limits, Loc, Located

DEFAULT_KINDS = ("switch", "host", "port", "nic")


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


def _check_defaults_and_groups(
    data: dict[str, Any], origins: Origins, located: Located, problems: list[Problem]
) -> None:
    """``defaults`` holds one mapping per device kind, ``groups`` one mapping per group."""
    defaults_roots = origins.roots.get(("defaults",), [])
    groups_roots = origins.roots.get(("groups",), [])
    for kind, body in data.get("defaults", {}).items():
        if kind not in DEFAULT_KINDS:
            problems.append(
                Problem(
                    f"unknown defaults kind {kind!r}",
                    path=f"defaults.{kind}",
                    location=first_line(located, defaults_roots, (kind,)),
                    expected="one of " + ", ".join(DEFAULT_KINDS),
                    got=repr(kind),
                    code="INV018",
                    hint="defaults holds switch:, host:, port: and nic: sections",
                )
            )
        elif body is not None and not isinstance(body, dict):
            problems.append(
                Problem(
                    f"defaults.{kind} must be a mapping",
                    path=f"defaults.{kind}",
                    location=first_line(located, defaults_roots, (kind,)),
                    expected=f"a mapping of {kind} fields",
                    got=short(body),
                    code="INV018",
                    hint=f"write defaults.{kind} as indented 'key: value' lines",
                )
            )
    for name, body in data.get("groups", {}).items():
        if not isinstance(body, dict):
            problems.append(
                Problem(
                    "a group must be a mapping of device fields",
                    path=f"groups.{name}",
                    location=first_line(located, groups_roots, (name,)),
                    expected="a mapping",
                    got=short(body),
                    code="INV019",
                    hint="write the group's shared fields as 'key: value' lines",
                )
            )


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


class Inheritance:
    """Merge defaults and groups into every device. What the devices inherit counts against ``max_nodes`` too (a
    group holding a large structure, listed by every device, would otherwise multiply it past any file limit)."""

    def __init__(
        self,
        data: dict[str, Any],
        origins: Origins,
        located: Located,
        problems: list[Problem],
        max_nodes: int = Limits.max_nodes,
    ) -> None:
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
            self.problems[:] = fold_unknown_groups(self.problems)
        return out

    def _kind_defaults(self, k: _Kind) -> _KindDefaults:
        self.origins.child_defaults[k.child] = (
            [(*r, k.child_kind) for r in self.defaults_roots] if k.child_kind in self.defaults else []
        )
        self.origins.child_kinds[k.child] = k.child_kind
        device = self.defaults.get(k.kind)
        device = device if isinstance(device, dict) else None
        child = self.defaults.get(k.child_kind)
        child = child if isinstance(child, dict) else None
        return _KindDefaults(
            device=device,
            device_roots=[(*r, k.kind) for r in self.defaults_roots] if device is not None else [],
            child=child,
            device_size=_size(device, self.max_nodes) if device is not None else 0,
            child_size=_size(child, self.max_nodes) if child is not None else 0,
        )

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
        where = first_line(self.located, own_roots, ("groups", g_index))
        if not isinstance(g, str):  # never str() it: an aliased structure would expand in the message
            self.problems.append(
                Problem(
                    "a group name must be text",
                    path=dotted_path(self.data, (k.section, i)) + f".groups[{g_index}]",
                    location=where,
                    expected="a name under groups:",
                    got=short(g),
                    code="INV020",
                    hint="list group names, e.g. groups: [leaf]",
                )
            )
            return False
        if g not in self.groups:
            close = difflib.get_close_matches(str(g), [str(n) for n in self.groups], n=1)
            self.problems.append(
                Problem(
                    f"unknown group {g!r}",
                    path=dotted_path(self.data, (k.section, i, "groups", g_index)),
                    location=where,
                    expected="a name under groups:",
                    got=repr(g),
                    code="INV020",
                    hint=f"did you mean {close[0]!r}?" if close else "define it under groups:",
                )
            )
            return False
        return True

    def _group_child_defaults(self, g: str, child_kind: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The group's device fields, and its ``port:``/``nic:`` mapping for its members' children (if any)."""
        body: dict[str, Any] = self.groups[g]
        if child_kind not in body:
            return body, None
        own = body[child_kind]
        if own is not None and not isinstance(own, dict):
            self.problems.append(
                Problem(
                    f"groups.{g}.{child_kind} must be a mapping",
                    path=f"groups.{g}.{child_kind}",
                    location=first_line(self.located, self.groups_roots, (g, child_kind)),
                    expected=f"a mapping of {child_kind} fields",
                    got=short(own),
                    code="INV018",
                    hint="write it as indented 'key: value' lines",
                )
            )
            own = None
        return {key: v for key, v in body.items() if key != child_kind}, own

    def _group_list_ignored(self, k: _Kind, device: Any, group_list: str) -> None:
        child, kind, child_kind = k.child, k.kind, k.child_kind
        self.problems.append(
            Problem(
                f"group {group_list!r} sets {child}: and {kind} {device!r} its own {child}: the "
                f"{kind}'s list replaces the group's, so the group's {child} would be ignored",
                path=f"groups.{group_list}.{child}",
                location=first_line(self.located, self.groups_roots, (group_list, child)),
                expected=f"{child_kind} defaults in groups.{group_list}.{child_kind} (a mapping applied to every "
                f"{child_kind} of the group's members)",
                got=f"a {child} list",
                code="INV021",
                hint=f"move the shared fields to groups.{group_list}.{child_kind}: (e.g. {child_kind}: "
                f"{{driver: ice}}), or drop the group's {child}: list",
            )
        )

    def _over_limit(self, k: _Kind, i: int, own_roots: list[Loc]) -> None:
        max_nodes = self.max_nodes
        self.problems.append(
            Problem(
                f"with what its devices inherit from defaults and groups, the inventory passes its limit of "
                f"{max_nodes:,} YAML nodes here",
                path=dotted_path(self.data, (k.section, i)),
                location=first_line(self.located, own_roots, ()),
                code="INV009",
                expected=f"at most {max_nodes:,} inherited nodes (each device counts the groups it lists)",
                got=f"more by {k.section}[{i}]",
                hint="keep large structures out of groups listed by many devices; if the inventory really is "
                f"this large, raise the limit: FABRICD_INVENTORY_MAX_NODES={max_nodes * 2}",
            )
        )


def fold_unknown_groups(problems: list[Problem]) -> list[Problem]:
    """With no ``groups`` defined at all, one problem for every device that lists a group (a missing groups.yml
    would otherwise give one 'unknown group' error per device), at the first of them."""
    unknown = [p for p in problems if p.code == "INV020"]
    if not unknown:
        return problems
    names = list(dict.fromkeys(p.got or "" for p in unknown))
    devices = list(dict.fromkeys(p.path.split(".groups[")[0] for p in unknown))
    shown = ", ".join(devices[:3]) + (f" and {len(devices) - 3} more" if len(devices) > 3 else "")
    one = Problem(
        f"no groups defined, but {len(devices)} devices list groups ({shown})",
        path="groups",
        location=unknown[0].location,
        expected="a groups: mapping defining " + ", ".join(names),
        got="no groups: section",
        code="INV020",
        hint="is groups.yml missing? add it (or a groups: section) defining those groups",
    )
    rest = [p for p in problems if p.code != "INV020"]
    return [one, *rest]
