"""Helpers to read the column tables NOS CLIs print: ``tabulate``-style tables with a dashed rule under the header
(SONiC, NVUE), whitespace tables (EOS, NX-OS), numbers with thousands separators, and ``N/A``-style cells."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from fabricd.readers.common import Direction

V = TypeVar("V")

_RULE = re.compile(r"^\s*-{2,}(?:\s+-{2,})*\s*$")
_PROMPT = re.compile(r"^\s*(?:\S+@[^\s:]+:\S*\s*[#$]|\S+[#>]\s*(?:show|nv|sudo|config|pfcwd)\b)")
_NUMBER = re.compile(r"^[+-]?\d[\d,]*$")

NOT_AVAILABLE = frozenset({"N/A", "n/a", "NA", "--", "-", ""})

NETSTAT_COLUMNS: dict[str, tuple[Direction, str, str | None]] = {
    "RX_OK": ("rx", "packets", None),
    "RX_ERR": ("rx", "errors", None),
    "RX_DRP": ("rx", "discards", None),
    "RX_OVR": ("rx", "discards", "overrun"),
    "TX_OK": ("tx", "packets", None),
    "TX_ERR": ("tx", "errors", None),
    "TX_DRP": ("tx", "discards", None),
    "TX_OVR": ("tx", "discards", "overrun"),
}
"""The ``netstat -i``-style per-port columns SONiC's portstat (``show interfaces counters``) and Cumulus's
``cl-netstat`` print -> (direction, counter, reason)."""


def to_int(cell: str | None) -> int | None:
    """``'15,437'`` -> 15437; ``N/A``, ``n/a``, ``--`` or anything non-numeric -> None."""
    if cell is None:
        return None
    cell = cell.strip()
    if cell in NOT_AVAILABLE or not _NUMBER.match(cell):
        return None
    return int(cell.replace(",", ""))


def is_prompt(line: str) -> bool:
    """True for a shell/CLI prompt line such as ``admin@sonic:~$ show pfc counters`` or ``5K-A# show ...``."""
    return bool(_PROMPT.match(line)) and not _RULE.match(line)


@dataclass(frozen=True, slots=True)
class Table:
    """One dashed-rule table: column names (in order) and rows as ``{column: cell}``."""

    columns: tuple[str, ...]
    rows: tuple[dict[str, str], ...]


def _spans(rule: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"-+", rule)]


def _cut(line: str, spans: list[tuple[int, int]]) -> list[str]:
    """Cells of a line by the rule's column spans, widening each cell to the gap before the next column."""
    cells = []
    for i in range(len(spans)):
        stop = spans[i + 1][0] if i + 1 < len(spans) else len(line)
        begin = 0 if i == 0 else spans[i - 1][1]
        cells.append(line[begin:stop].strip())
    return cells


def dashed_tables(text: str) -> Iterator[Table]:
    """Every table in ``text`` whose header line is followed by a rule of dashes (``-----  ----``).

    A table ends at a blank line, a prompt line, a line of ``=``, or the next header. Cells are cut at the rule's
    column boundaries, so multi-word headers (``STORM DETECTED/RESTORED``) and empty cells are kept.
    """
    lines = text.splitlines()
    i = 0
    while i < len(lines) - 1:
        if not _RULE.match(lines[i + 1]) or not lines[i].strip() or _RULE.match(lines[i]):
            i += 1
            continue
        spans = _spans(lines[i + 1])
        header = _cut(lines[i], spans)
        rows: list[dict[str, str]] = []
        j = i + 2
        while j < len(lines):
            line = lines[j]
            if not line.strip() or is_prompt(line) or line.lstrip().startswith("="):
                break
            if j + 1 < len(lines) and _RULE.match(lines[j + 1]):
                break
            rows.append(dict(zip(header, _cut(line, spans), strict=False)))
            j += 1
        yield Table(tuple(header), tuple(rows))
        i = j


_LABEL_SPLIT = re.compile(r"[^0-9a-z]+")


def label_key(label: str) -> str:
    """The comparable form of a counter label as a NOS prints it: lower case, punctuation and spacing folded to one
    space, a plural ``s`` dropped (``CRC/FCS`` -> ``crc fcs``, ``Rx-pause`` and ``Rx pause`` -> ``rx pause``,
    ``output errors`` and ``output error`` -> ``output error``, ``WRED/AFD & Tail Drop`` -> ``wred afd tail
    drop``). Label maps are keyed by it (:func:`label_map`), so one release's spelling does not hide a counter that
    another release spells with a slash, a hyphen, parentheses or a plural."""
    words = (w for w in _LABEL_SPLIT.split(label.lower()) if w)
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words)


def label_map(labels: dict[str, V]) -> dict[str, V]:
    """``labels`` keyed by :func:`label_key`; two labels of one key must mean the same (else ValueError)."""
    out: dict[str, V] = {}
    for label, meaning in labels.items():
        key = label_key(label)
        if key in out and out[key] != meaning:
            raise ValueError(f"labels {label!r} and another fold to {key!r} with different meanings")
        out[key] = meaning
    return out


def keyed_rows(tables: Iterable[Table], key: str, *also: str) -> tuple[list[tuple[str, dict[str, str]]], bool]:
    """The rows of every table with a ``key`` column (and the ``also`` columns) whose ``key`` cell is not empty, as
    (that cell, row); and whether any such table was there (a table with no row is an answer, no table is not)."""
    rows: list[tuple[str, dict[str, str]]] = []
    found = False
    for table in tables:
        if key not in table.columns or any(col not in table.columns for col in also):
            continue
        found = True
        rows.extend((row[key], row) for row in table.rows if row.get(key))
    return rows, found
