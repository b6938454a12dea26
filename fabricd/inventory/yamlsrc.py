"""YAML with source locations: every mapping key and sequence item remembers its file and line.

Uses libyaml (CSafeLoader) when available: composing nodes keeps marks and is ~10x faster than pure Python. Two
hot spots of PyYAML are bypassed because they dominate on large inventories (bench/validate.py, 17,000 devices):

* the implicit-tag resolver (pure Python, called by libyaml for every scalar) gets a fast path: a plain scalar
  whose first character starts no implicit YAML type (a letter other than y/n/t/f/o, for example) is a string;
* composing a node tree: data is built straight from libyaml's event stream, ~3x faster. Strings and plain
  decimal integers are built directly; every other scalar tag goes through PyYAML's SafeConstructor, so YAML 1.1
  semantics (``010`` is octal 8, ``yes`` is true, ...) are unchanged. Anchors and aliases work; merge keys
  (``<<``) and collection tags (``!!set``, ``!!omap``) are reported as problems (use defaults/groups instead).

Lines are stored as plain ints keyed by the node path; a :class:`~fabricd.errors.Location` is built only when a
problem is reported.

Hostile input is bounded (docs/inventory.md, "Limits"): an alias is never copied (it shares the anchored object),
but every node counts with aliases expanded, so an alias bomb stops at :attr:`Limits.max_nodes` with the alias and
its line named, before anything downstream (a message, the model) could expand it; an alias inside the node its
anchor names (a cycle) and a complex (non-scalar) mapping key are located problems, and nothing aliased is ever
turned into text. A file larger than :attr:`Limits.max_bytes` is not read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fabricd import settings
from fabricd.errors import Location, Problem

try:
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - libyaml missing
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

Loc = tuple[str | int, ...]

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_SCALAR = yaml.ScalarNode
_MAPPING = yaml.MappingNode
_SEQUENCE = yaml.SequenceNode
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
_SCALAR_EV = yaml.ScalarEvent
_ALIAS_EV = yaml.AliasEvent
_SEQ_START = yaml.SequenceStartEvent
_SEQ_END = yaml.SequenceEndEvent
_MAP_END = yaml.MappingEndEvent
_STREAM_END = yaml.StreamEndEvent
_START_EVENTS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_END_EVENTS = (yaml.SequenceEndEvent, yaml.MappingEndEvent)

MAX_BYTES = settings.INVENTORY_MAX_BYTES
MAX_NODES = settings.INVENTORY_MAX_NODES


@dataclass(frozen=True)
class Limits:
    """How large an inventory may be (``FABRICD_INVENTORY_MAX_BYTES``, ``FABRICD_INVENTORY_MAX_NODES``)."""

    max_bytes: int = MAX_BYTES
    """Bytes of YAML, all files of the inventory together."""
    max_nodes: int = MAX_NODES
    """YAML nodes (each scalar, list and mapping, keys included), aliases counted as what they repeat, all files
    together. The 17,000-device benchmark fabric (bench/validate.py) has about 360,000 (and 2.9 MB)."""


@dataclass
class Budget:
    """What the files read so far used of :class:`Limits` (one budget for all files of an inventory)."""

    limits: Limits
    bytes: int = 0
    nodes: int = 0


def _limit_hint(var: str, value: int) -> str:
    return (
        f"if the inventory really is this large, raise the limit: {var}={value * 2} (the default is "
        f"{MAX_BYTES if var.endswith('BYTES') else MAX_NODES}); otherwise look for an alias repeated many times"
    )


class TooLargeError(Exception):
    """The inventory passed :attr:`Limits.max_nodes` while being read (raised out of the builder, then reported)."""

    def __init__(self, line: int, what: str) -> None:
        super().__init__(what)
        self.line = line
        self.what = what


class _Loader(_BaseLoader):
    """SafeLoader semantics with a fast, memoised implicit resolver (see the module docstring)."""

    # First characters that may start an implicitly typed scalar (bool, int, float, null, timestamp, merge, ...).
    _TYPED_FIRST = frozenset(k for k in _BaseLoader.yaml_implicit_resolvers if k)
    _CAN_SHORTCUT = None not in _BaseLoader.yaml_implicit_resolvers and not _BaseLoader.yaml_path_resolvers
    _CACHE_LIMIT = 4096

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._tags: dict[str, str] = {}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is _SCALAR and self._CAN_SHORTCUT:
            if not implicit[0] or (value and value[0] not in self._TYPED_FIRST):
                return _STR
            tag = self._tags.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]
                if len(self._tags) < self._CACHE_LIMIT:
                    self._tags[value] = tag
            return tag
        return super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]


class Located:
    """For every node path (a tuple of keys/indexes, starting ``("@", file_index)``), the line it was written at."""

    def __init__(self) -> None:
        self.lines: dict[Loc, int] = {}
        self.files: list[str] = []

    def add_file(self, path: Path | str) -> int:
        """Register a source file; its documents use the prefix ``("@", index)``."""
        self.files.append(str(path))
        return len(self.files) - 1

    def file_of(self, loc: Loc) -> str | None:
        if len(loc) >= 2 and loc[0] == "@" and isinstance(loc[1], int) and 0 <= loc[1] < len(self.files):
            return self.files[loc[1]]
        return None

    def get(self, loc: Loc) -> Location | None:
        """The location of exactly ``loc``, or None when it was not written."""
        line = self.lines.get(loc)
        if line is None:
            return None
        file = self.file_of(loc)
        return Location(file, line) if file is not None else None

    def where(self, loc: Loc) -> Location | None:
        """The location of ``loc`` or of its nearest written ancestor (for a missing key: its parent)."""
        probe = tuple(loc)
        while probe:
            hit = self.get(probe)
            if hit is not None:
                return hit
            probe = probe[:-1]
        return None


def _dotted(loc: Loc) -> str:
    out = ""
    for part in loc[2:] if loc[:1] == ("@",) else loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


class _Builder:
    """Builds plain data straight from libyaml's event stream (no node tree), recording the line of every
    mapping key and sequence item, and reporting duplicate keys, merge keys and collection tags as problems."""

    def __init__(
        self,
        file: str,
        out: Located,
        loader: Any,
        problems: list[Problem],
        *,
        nodes: int = 0,
        max_nodes: int = MAX_NODES,
    ) -> None:
        self.file = file
        self.lines = out.lines
        self.loader = loader
        self.next = loader.get_event
        self.problems = problems
        self.anchors: dict[str, Any] = {}
        self.nodes = nodes
        """Nodes read so far, aliases counted as the size of what they repeat (with the files before this one)."""
        self.max_nodes = max_nodes
        self.sizes: dict[str, int] = {}
        """Expanded size of each finished anchor."""
        self.open: dict[str, int] = {}
        """Anchors of collections being built -> their line (an alias to one of them is a cycle)."""

    def _count(self, n: int, event: Any) -> None:
        self.nodes += n
        if self.nodes > self.max_nodes:
            line = event.start_mark.line + 1
            if type(event) is _ALIAS_EV and event.anchor is not None:
                size = self.sizes.get(event.anchor, 0)
                raise TooLargeError(
                    line,
                    f"the alias *{event.anchor} repeats {size:,} nodes (anchor "
                    f"&{event.anchor}), which takes the inventory past",
                )
            raise TooLargeError(line, "the inventory passes")

    def document(self, prefix: Loc) -> Any:
        """The single document of the stream, or None for an empty stream."""
        nxt = self.next
        nxt()  # StreamStart
        event = nxt()
        if type(event) is _STREAM_END:
            return None
        event = nxt()  # the root node, after DocumentStart
        self.lines[prefix] = event.start_mark.line + 1
        value = self.value(event, prefix)
        nxt()  # DocumentEnd
        event = nxt()
        if type(event) is not _STREAM_END:
            raise yaml.composer.ComposerError(
                None,
                None,
                "expected a single document in the stream, but found another document (---)",
                event.start_mark,
            )
        return value

    def scalar(self, event: Any) -> Any:
        tag = event.tag
        value = event.value
        if tag is None or tag == "!":
            tag = self.loader.resolve(_SCALAR, value, event.implicit)
        if tag == _STR:
            return value
        if tag == _INT and value.isdigit() and (value[0] != "0" or value == "0"):  # YAML 1.1: '010' is octal
            return int(value)
        node = yaml.ScalarNode(tag, value, event.start_mark, event.end_mark, event.style)
        try:
            return self.loader.construct_object(node, deep=True)
        except (KeyError, AttributeError, IndexError, ValueError, TypeError) as exc:
            # PyYAML's constructors fail this way on an explicitly tagged bad value (!!bool 'x', !!timestamp x)
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"{value!r} is not a valid {tag.rsplit(':', 1)[-1]} ({type(exc).__name__})",
                event.start_mark,
            ) from None

    def _anchor(self, event: Any, value: Any) -> Any:
        if event.anchor is not None:
            self.anchors[event.anchor] = value
        return value

    def _check_tag(self, event: Any, default: str, loc: Loc) -> None:
        if event.tag is not None and event.tag not in ("!", default):
            self.problems.append(
                Problem(
                    f"YAML tag {event.tag} is not supported",
                    path=_dotted(loc),
                    location=Location(self.file, event.start_mark.line + 1),
                    expected="a plain mapping, list or scalar",
                    got=str(event.tag),
                    hint="remove the tag",
                    code="INV006",
                )
            )

    def _skip(self, event: Any) -> Any:
        """Consume (and build, without recording lines) a value that is not kept in the result."""
        lines = self.lines
        self.lines = {}
        try:
            return self.value(event, ())
        finally:
            self.lines = lines

    def value(self, event: Any, loc: Loc) -> Any:
        cls = type(event)
        if cls is _SCALAR_EV:
            self._count(1, event)
            if event.anchor is not None:
                self.sizes[event.anchor] = 1
            return self._anchor(event, self.scalar(event))
        if cls is _ALIAS_EV:
            name = event.anchor
            if name in self.open:
                self.problems.append(
                    Problem(
                        f"the alias *{name} is inside the node its anchor &{name} (line {self.open[name]}) names: a "
                        "cycle",
                        path=_dotted(loc),
                        location=Location(self.file, event.start_mark.line + 1),
                        expected="an alias to a finished node",
                        got=f"*{name} within &{name}",
                        hint=f"write the value out, or move &{name} to a node that does not contain *{name}",
                        code="INV022",
                    )
                )
                return None
            if name not in self.anchors:
                raise yaml.composer.ComposerError(None, None, f"found undefined alias {name!r}", event.start_mark)
            self._count(self.sizes.get(name, 1), event)
            return self.anchors[name]
        anchor = event.anchor
        if anchor is None:
            return self._collection(event, loc)
        start = self.nodes
        self.open[anchor] = event.start_mark.line + 1
        try:
            return self._collection(event, loc)
        finally:
            del self.open[anchor]
            self.sizes[anchor] = self.nodes - start

    def _discard(self, event: Any) -> None:
        """Consume the events of one node without building it (a complex key: refused, never looked into)."""
        depth = 1 if isinstance(event, _START_EVENTS) else 0
        while depth:
            ev = self.next()
            if isinstance(ev, _START_EVENTS):
                depth += 1
            elif isinstance(ev, _END_EVENTS):
                depth -= 1

    def _collection(self, event: Any, loc: Loc) -> Any:
        self._count(1, event)
        if type(event) is _SEQ_START:
            return self._sequence(event, loc)
        return self._mapping(event, loc)

    def _sequence(self, event: Any, loc: Loc) -> list[Any]:
        self._check_tag(event, _SEQ_TAG, loc)
        lines = self.lines
        nxt = self.next
        items: list[Any] = self._anchor(event, [])
        i = 0
        while True:
            item = nxt()
            if type(item) is _SEQ_END:
                return items
            child = (*loc, i)
            lines[child] = item.start_mark.line + 1
            items.append(self.value(item, child))
            i += 1

    def _mapping(self, event: Any, loc: Loc) -> dict[Any, Any]:
        self._check_tag(event, _MAP_TAG, loc)
        lines = self.lines
        nxt = self.next
        result: dict[Any, Any] = self._anchor(event, {})
        typed_first = _Loader._TYPED_FIRST
        while True:
            key_event = nxt()
            if type(key_event) is _MAP_END:
                return result
            key_line = key_event.start_mark.line + 1
            if type(key_event) is not _SCALAR_EV:
                self._complex_key(key_event, loc, key_line)
                continue
            value_event = nxt()
            self.nodes += 1  # inlined _count: the hot path of a large inventory
            if self.nodes > self.max_nodes:
                self._count(0, key_event)
            key = key_event.value
            # fast path: an untagged plain scalar that cannot be a bool/int/float/null/merge key is a string
            if key_event.tag is not None or not key or key[0] in typed_first:
                if key == "<<" and key_event.tag is None and key_event.implicit[0]:
                    self._merge_key(value_event, loc, key_line)
                    continue
                key = self.scalar(key_event)
            child = (*loc, key)
            if key in result:
                self._duplicate_key(value_event, child, key, key_line)
                continue
            lines[child] = key_line
            if type(value_event) is _SCALAR_EV:
                self.nodes += 1
                if self.nodes > self.max_nodes:
                    self._count(0, value_event)
                text = value_event.value
                if value_event.tag is None and text and (text[0] not in typed_first or not value_event.implicit[0]):
                    result[key] = text
                else:
                    result[key] = self.scalar(value_event)
                if value_event.anchor is not None:
                    self.anchors[value_event.anchor] = result[key]
                    self.sizes[value_event.anchor] = 1
            else:
                result[key] = self.value(value_event, child)
                lines[child] = key_line

    def _merge_key(self, value_event: Any, loc: Loc, key_line: int) -> None:
        self.problems.append(
            Problem(
                "YAML merge keys (<<) are not supported",
                path=_dotted(loc),
                location=Location(self.file, key_line),
                expected="plain keys",
                got="<<",
                hint="use defaults: or groups: for inheritance",
                code="INV001",
            )
        )
        self._skip(value_event)

    def _complex_key(self, key_event: Any, loc: Loc, key_line: int) -> None:
        """A complex key ("? [a, b]", or an alias): refused unread, never turned into text."""
        kind = (
            f"the alias *{key_event.anchor}"
            if type(key_event) is _ALIAS_EV
            else ("a list" if type(key_event) is _SEQ_START else "a mapping")
        )
        self.problems.append(
            Problem(
                "a mapping key must be a plain scalar",
                path=_dotted(loc),
                location=Location(self.file, key_line),
                expected="a name, number or quoted string as the key",
                got=kind,
                hint="write the key as text (a complex '? ' key or an alias as a key has no meaning here)",
                code="INV008",
            )
        )
        self._discard(key_event)
        self._skip(self.next())

    def _duplicate_key(self, value_event: Any, child: Loc, key: Any, key_line: int) -> None:
        first = self.lines.get(child, 0)
        self.problems.append(
            Problem(
                f"duplicate key {key!r}",
                path=_dotted(child),
                location=Location(self.file, key_line),
                expected="each key once per mapping",
                got=f"{key!r} again (first at line {first})",
                hint="remove or merge the repeated key",
                code="INV002",
            )
        )
        self._skip(value_event)


def _read_text(path: Path, problems: list[Problem], budget: Budget) -> str | None:
    """The file's text, counted against ``budget``; None (with a problem) when it is not a regular file, would take
    the inventory past its byte limit, is not UTF-8 or cannot be read."""
    file = str(path)
    if path.exists() and not path.is_file():  # a FIFO would block the read forever, a device never end
        problems.append(
            Problem(
                "not a regular file",
                location=Location(file),
                code="INV004",
                expected="a YAML file",
                got="a FIFO, device or other special file",
                hint="give the inventory file or directory itself",
            )
        )
        return None
    try:
        size = path.stat().st_size
    except OSError:
        size = 0  # the read below reports it
    max_bytes = budget.limits.max_bytes
    if budget.bytes + size > max_bytes:
        problems.append(
            Problem(
                "the inventory is too large to read",
                location=Location(file),
                code="INV009",
                expected=f"at most {max_bytes:,} bytes of YAML in all files together",
                got=f"{budget.bytes + size:,} bytes with this file ({size:,}); not read",
                hint=_limit_hint("FABRICD_INVENTORY_MAX_BYTES", max_bytes),
            )
        )
        return None
    budget.bytes += size
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        problems.append(
            Problem(
                "file is not UTF-8 text",
                location=Location(file),
                expected="UTF-8 text",
                got=str(exc.reason),
                code="INV003",
                hint="save the inventory as UTF-8",
            )
        )
    except OSError as exc:
        problems.append(
            Problem(
                f"cannot read file: {exc.strerror}",
                location=Location(file),
                code="INV004",
                expected="a readable file",
                got=str(exc.strerror),
                hint="check the path and its permissions",
            )
        )
    return None


def load_located(
    path: Path, out: Located, problems: list[Problem], prefix: Loc = (), budget: Budget | None = None
) -> Any:
    """Parse one YAML file into plain data, recording lines under ``prefix``. Syntax errors become problems, and so
    does a file that would take ``budget`` past its limits (it is then not read, or not read further)."""
    file = str(path)
    budget = budget if budget is not None else Budget(Limits())
    text = _read_text(path, problems, budget)
    if text is None:
        return None
    loader = _Loader(text)
    builder = _Builder(file, out, loader, problems, nodes=budget.nodes, max_nodes=budget.limits.max_nodes)
    try:
        return builder.document(prefix)
    except TooLargeError as exc:
        problems.append(
            Problem(
                f"{exc.what} its limit of {budget.limits.max_nodes:,} YAML nodes; the rest of the file is not read",
                location=Location(file, exc.line),
                code="INV009",
                expected=f"at most {budget.limits.max_nodes:,} nodes (scalars, lists and mappings, aliases counted as "
                "what they repeat) in all files together",
                got=f"more, by line {exc.line}",
                hint=_limit_hint("FABRICD_INVENTORY_MAX_NODES", budget.limits.max_nodes),
            )
        )
        return None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        col = f", column {mark.column + 1}" if mark is not None else ""
        what = exc.problem or exc.context or "invalid YAML"
        problems.append(
            Problem(
                f"YAML syntax error{col}: {what}",
                location=Location(file, line),
                code="INV005",
                hint="fix the YAML syntax (indentation, a missing ':' or an unclosed quote or bracket)",
            )
        )
        return None
    except yaml.YAMLError as exc:
        problems.append(
            Problem(
                f"YAML error: {' '.join(str(exc).split())}",
                location=Location(file),
                code="INV005",
                hint="fix the YAML syntax",
            )
        )
        return None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        problems.append(
            Problem(
                f"unreadable YAML value: {' '.join(str(exc).split())}",
                location=Location(file),
                code="INV005",
                hint="fix the YAML value",
            )
        )
        return None
    finally:
        budget.nodes = builder.nodes
        loader.dispose()
