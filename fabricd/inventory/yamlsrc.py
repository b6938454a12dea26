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
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

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

    def __init__(self, file: str, out: Located, loader: Any, problems: list[Problem]) -> None:
        self.file = file
        self.lines = out.lines
        self.loader = loader
        self.next = loader.get_event
        self.problems = problems
        self.anchors: dict[str, Any] = {}

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
                None, None, "expected a single document in the stream, but found another document (---)",
                event.start_mark)
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
                None, None, f"{value!r} is not a valid {tag.rsplit(':', 1)[-1]} ({type(exc).__name__})",
                event.start_mark) from None

    def _anchor(self, event: Any, value: Any) -> Any:
        if event.anchor is not None:
            self.anchors[event.anchor] = value
        return value

    def _check_tag(self, event: Any, default: str, loc: Loc) -> None:
        if event.tag is not None and event.tag not in ("!", default):
            self.problems.append(Problem(
                f"YAML tag {event.tag} is not supported", path=_dotted(loc),
                location=Location(self.file, event.start_mark.line + 1), expected="a plain mapping, list or scalar",
                got=str(event.tag), hint="remove the tag", code="INV006"))

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
            return self._anchor(event, self.scalar(event))
        if cls is _ALIAS_EV:
            if event.anchor not in self.anchors:
                raise yaml.composer.ComposerError(
                    None, None, f"found undefined alias {event.anchor!r}", event.start_mark)
            return self.anchors[event.anchor]
        lines = self.lines
        nxt = self.next
        if cls is _SEQ_START:
            self._check_tag(event, _SEQ_TAG, loc)
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
        self._check_tag(event, _MAP_TAG, loc)
        result: dict[Any, Any] = self._anchor(event, {})
        typed_first = _Loader._TYPED_FIRST
        while True:
            key_event = nxt()
            if type(key_event) is _MAP_END:
                return result
            key_line = key_event.start_mark.line + 1
            if type(key_event) is _SCALAR_EV:
                value_event = nxt()
                key = key_event.value
                # fast path: an untagged plain scalar that cannot be a bool/int/float/null/merge key is a string
                if key_event.tag is not None or not key or key[0] in typed_first:
                    if key == "<<" and key_event.tag is None and key_event.implicit[0]:
                        self.problems.append(Problem(
                            "YAML merge keys (<<) are not supported", path=_dotted(loc),
                            location=Location(self.file, key_line), expected="plain keys", got="<<",
                            hint="use defaults: or groups: for inheritance", code="INV001"))
                        self._skip(value_event)
                        continue
                    key = self.scalar(key_event)
            else:  # a complex key ("? [a, b]"): its own events come before the value's
                key = self._skip(key_event)
                key = str(key) if isinstance(key, list | dict) else key
                value_event = nxt()
            child = (*loc, key)
            if key in result:
                first = lines.get(child, 0)
                self.problems.append(Problem(
                    f"duplicate key {key!r}", path=_dotted(child), location=Location(self.file, key_line),
                    expected="each key once per mapping", got=f"{key!r} again (first at line {first})",
                    hint="remove or merge the repeated key", code="INV002"))
                self._skip(value_event)
                continue
            lines[child] = key_line
            if type(value_event) is _SCALAR_EV:
                text = value_event.value
                if value_event.tag is None and text and (text[0] not in typed_first or not value_event.implicit[0]):
                    result[key] = text
                else:
                    result[key] = self.scalar(value_event)
                if value_event.anchor is not None:
                    self.anchors[value_event.anchor] = result[key]
            else:
                result[key] = self.value(value_event, child)
                lines[child] = key_line


def load_located(path: Path, out: Located, problems: list[Problem], prefix: Loc = ()) -> Any:
    """Parse one YAML file into plain data, recording lines under ``prefix``. Syntax errors become problems."""
    file = str(path)
    if path.exists() and not path.is_file():  # a FIFO would block the read forever, a device never end
        problems.append(Problem("not a regular file", location=Location(file), code="INV004",
                                expected="a YAML file", got="a FIFO, device or other special file",
                                hint="give the inventory file or directory itself"))
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        problems.append(Problem("file is not UTF-8 text", location=Location(file), expected="UTF-8 text",
                                got=str(exc.reason), code="INV003", hint="save the inventory as UTF-8"))
        return None
    except OSError as exc:
        problems.append(Problem(f"cannot read file: {exc.strerror}", location=Location(file), code="INV004",
                                expected="a readable file", got=str(exc.strerror),
                                hint="check the path and its permissions"))
        return None
    loader = _Loader(text)
    try:
        return _Builder(file, out, loader, problems).document(prefix)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 0
        col = f", column {mark.column + 1}" if mark is not None else ""
        what = exc.problem or exc.context or "invalid YAML"
        problems.append(Problem(
            f"YAML syntax error{col}: {what}", location=Location(file, line), code="INV005",
            hint="fix the YAML syntax (indentation, a missing ':' or an unclosed quote or bracket)"))
        return None
    except yaml.YAMLError as exc:
        problems.append(Problem(f"YAML error: {' '.join(str(exc).split())}", location=Location(file),
                                code="INV005", hint="fix the YAML syntax"))
        return None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        problems.append(Problem(f"unreadable YAML value: {' '.join(str(exc).split())}", location=Location(file),
                                code="INV005", hint="fix the YAML value"))
        return None
    finally:
        loader.dispose()
