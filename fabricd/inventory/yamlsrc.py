"""YAML with source locations: every mapping key and sequence item remembers its file and line.

Uses libyaml (CSafeLoader) when available: composing nodes keeps marks and is ~10x faster than pure Python.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from fabricd.errors import Location, Problem

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - libyaml missing
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

Loc = tuple[str | int, ...]


class Located:
    """A loaded document and, for every node path (a tuple of keys/indexes), where it was written."""

    def __init__(self) -> None:
        self.lines: dict[Loc, Location] = {}

    def where(self, loc: Loc) -> Location | None:
        """The location of ``loc`` or of its nearest written ancestor (for a missing key: its parent)."""
        probe = tuple(loc)
        while True:
            hit = self.lines.get(probe)
            if hit is not None:
                return hit
            if not probe:
                return None
            probe = probe[:-1]


def _scalar(node: yaml.ScalarNode, loader: Any) -> Any:
    return loader.construct_object(node, deep=True)


def _build(node: yaml.Node, loc: Loc, file: str, out: Located, loader: Any, problems: list[Problem]) -> Any:
    out.lines[loc] = Location(file, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                problems.append(
                    Problem(
                        "YAML merge keys (<<) are not supported",
                        path=_dotted(loc),
                        location=Location(file, key_node.start_mark.line + 1),
                        hint="use defaults: or groups: for inheritance",
                        code="INV001",
                    )
                )
                continue
            key = _scalar(key_node, loader) if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
            if isinstance(key, list | dict):
                key = str(key)
            if key in result:
                problems.append(
                    Problem(
                        f"duplicate key {key!r}",
                        path=_dotted((*loc, key)),
                        location=Location(file, key_node.start_mark.line + 1),
                        expected="each key once per mapping",
                        got=f"{key!r} again (first at line {out.lines[(*loc, key)].line})",
                        hint="remove or merge the repeated key",
                        code="INV002",
                    )
                )
                continue
            out.lines[(*loc, key)] = Location(file, key_node.start_mark.line + 1)
            result[key] = _build(value_node, (*loc, key), file, out, loader, problems)
            out.lines[(*loc, key)] = Location(file, key_node.start_mark.line + 1)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, (*loc, i), file, out, loader, problems) for i, item in enumerate(node.value)]
    return _scalar(node, loader)  # type: ignore[arg-type]


def load_located(path: Path, out: Located, problems: list[Problem], prefix: Loc = ()) -> Any:
    """Parse one YAML file into plain data, recording locations under ``prefix``. Syntax errors become problems."""
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        problems.append(
            Problem("file is not UTF-8 text", location=Location(file), got=str(exc.reason), code="INV003",
                    hint="save the inventory as UTF-8")
        )
        return None
    except OSError as exc:
        problems.append(
            Problem(f"cannot read file: {exc.strerror}", location=Location(file), code="INV004",
                    hint="check the path and its permissions")
        )
        return None
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        return _build(node, prefix, file, out, loader, problems)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        col = f", column {mark.column + 1}" if mark is not None else ""
        what = exc.problem or exc.context or "invalid YAML"
        problems.append(
            Problem(f"YAML syntax error{col}: {what}", location=Location(file, line), code="INV005",
                    hint="fix the YAML syntax (indentation, a missing ':' or an unclosed quote or bracket)")
        )
        return None
    except yaml.YAMLError as exc:
        problems.append(Problem(f"YAML error: {exc}", location=Location(file), code="INV005",
                                hint="fix the YAML syntax"))
        return None
    except (ValueError, TypeError, RecursionError) as exc:
        problems.append(Problem(f"unreadable YAML value: {exc}", location=Location(file), code="INV005",
                                hint="fix the YAML value"))
        return None
    finally:
        loader.dispose()


def _dotted(loc: Loc) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out
