"""Where each value of an inventory came from, and how a problem names it: the source roots of every data path
(:class:`Origins`), the first line a path was written at (:func:`first_line`, :func:`locate`), a path as the user
reads it (:func:`dotted_path`) and a value shortened for a message (:func:`short`)."""

from __future__ import annotations

from typing import Any

from fabricd.errors import Location

from .yamlsrc import Loc, Located


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


def first_line(located: Located, roots: list[Loc], rest: Loc) -> Location | None:
    for root in reversed(roots):
        hit = located.get((*root, *rest))
        if hit is not None:
            return hit
    return None


def locate(located: Located, origins: Origins, loc: Loc) -> Location | None:
    for n in range(len(loc), 0, -1):
        roots = origins.get(tuple(loc[:n]))
        if roots is None:
            continue
        rest = tuple(loc[n:])
        for cut in range(len(rest), -1, -1):
            hit = first_line(located, roots, rest[:cut])
            if hit is not None:
                return hit
        break
    return None


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


def short(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
