"""Client-side handling of indented, Cisco-style configs (EOS, NX-OS): parse, compare with intent, plan commands.

fabricd owns part of a switch's config, never all of it. A platform's ``patterns.py`` says which part:

- ``owned``: top-level lines fabricd manages entirely (``qos profile ...``, ``policy-map type ...``). Such a block
  must equal the intent, and an owned block the intent does not have is removed;
- ``owned_child``: lines fabricd manages inside shared blocks (``mtu``, ``service-profile`` inside ``interface``);
- ``single_valued``: lines where a new value replaces the old one (``mtu 9216`` replaces ``mtu 1500``), so no
  ``no`` is needed before changing them.

Everything else in the running config is left alone. :func:`walk` compares running and intended trees and yields
:class:`Change` records; :func:`commands` turns them into the CLI lines to send; :func:`diff_text` into a readable
diff. Comparison ignores the order of sibling lines (devices print in their own canonical order).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from fabricd.readers.switch.config_model import COMMENT, indented_tree

from .base import ConfigDelta


@dataclass
class Block:
    """One config line and the lines indented under it."""

    line: str
    children: list[Block] = field(default_factory=list)

    def child(self, line: str) -> Block | None:
        return next((c for c in self.children if c.line == line), None)

    def same(self, other: Block) -> bool:
        if self.line != other.line or len(self.children) != len(other.children):
            return False
        return all((o := other.child(c.line)) is not None and c.same(o) for c in self.children)

    def lines(self, indent: str, depth: int = 0) -> list[str]:
        out = [indent * depth + self.line]
        for c in self.children:
            out.extend(c.lines(indent, depth + 1))
        return out


@dataclass(frozen=True)
class Ownership:
    """What fabricd owns in a platform's config (regular expressions matched against stripped lines)."""

    owned: tuple[re.Pattern[str], ...]
    owned_child: tuple[re.Pattern[str], ...]
    single_valued: tuple[re.Pattern[str], ...]
    comment: re.Pattern[str] = COMMENT

    def is_owned(self, line: str) -> bool:
        return any(p.search(line) for p in self.owned)

    def is_owned_child(self, line: str) -> bool:
        return any(p.search(line) for p in self.owned_child)

    def key(self, line: str) -> str:
        """The setting a line sets: the matched prefix for single-valued lines, else the whole line."""
        for p in self.single_valued:
            m = p.search(line)
            if m:
                return m.group(0)
        return line


def parse(text: str, ownership: Ownership) -> list[Block]:
    """Parse an indented config into top-level blocks. Comment lines (``!``), ``end`` and blank lines are skipped;
    a line's parent is the nearest earlier line with less indentation."""
    return indented_tree(text, ownership.comment, Block)


@dataclass(frozen=True)
class Change:
    """One difference: ``add`` or ``remove`` of ``line`` (with its block) under the header chain ``path``."""

    kind: str
    path: tuple[str, ...]
    line: str
    block: Block | None = None


def _find(blocks: list[Block], line: str) -> Block | None:
    return next((b for b in blocks if b.line == line), None)


def _walk_children(
    run: Block, cand: Block, path: tuple[str, ...], owned: bool, ownership: Ownership
) -> Iterator[Change]:
    here = (*path, cand.line)
    cand_keys = {ownership.key(c.line) for c in cand.children}
    for r in run.children:
        if cand.child(r.line) is not None:
            continue
        if not (owned or ownership.is_owned_child(r.line)):
            continue
        if not r.children and ownership.key(r.line) in cand_keys and ownership.key(r.line) != r.line:
            continue  # replaced by the intended value of the same setting
        yield Change("remove", here, r.line, r)
    for c in cand.children:
        match = run.child(c.line)
        if match is None:
            yield Change("add", here, c.line, c)
        elif c.children or (owned and match.children):
            yield from _walk_children(match, c, here, owned, ownership)


def walk(running: list[Block], candidate: list[Block], ownership: Ownership) -> Iterator[Change]:
    """Yield the changes that make ``running`` match ``candidate`` on what fabricd owns."""
    cand_keys = {ownership.key(c.line) for c in candidate if not c.children}
    for r in running:
        if _find(candidate, r.line) is not None or not ownership.is_owned(r.line):
            continue
        if not r.children and ownership.key(r.line) in cand_keys and ownership.key(r.line) != r.line:
            continue
        yield Change("remove", (), r.line, r)
    for c in candidate:
        match = _find(running, c.line)
        if match is None:
            yield Change("add", (), c.line, c)
        elif c.children or match.children:
            yield from _walk_children(match, c, (), ownership.is_owned(c.line), ownership)


def commands(changes: list[Change]) -> list[str]:
    """CLI lines applying ``changes``: each group is entered by its header chain, removals (``no X``) first, then
    additions with their sub-blocks, with ``exit`` after every entered block."""
    out: list[str] = []
    groups: dict[tuple[str, ...], list[Change]] = {}
    for ch in changes:
        groups.setdefault(ch.path, []).append(ch)
    for path, group in groups.items():
        body: list[str] = []
        for ch in group:
            if ch.kind == "remove":
                body.append("no " + ch.line)
        for ch in group:
            if ch.kind == "add" and ch.block is not None:
                body.extend(_enter(ch.block))
        out.extend(path)
        out.extend(body)
        out.extend(["exit"] * len(path))
    return out


def _enter(block: Block) -> list[str]:
    out = [block.line]
    for c in block.children:
        out.extend(_enter(c))
    if block.children:
        out.append("exit")
    return out


def diff_text(changes: list[Change], indent: str = "   ") -> str:
    """A readable diff: header chains as context, ``-``/``+`` for removed/added lines and blocks."""
    out: list[str] = []
    shown: set[tuple[str, ...]] = set()
    for ch in changes:
        for depth in range(len(ch.path)):
            prefix = ch.path[: depth + 1]
            if prefix not in shown:
                out.append(" " + indent * depth + ch.path[depth])
                shown.add(prefix)
        sign = "+" if ch.kind == "add" else "-"
        block = ch.block or Block(ch.line)
        out.extend(sign + ln for ln in block.lines(indent, len(ch.path)))
    return "\n".join(out)


def describe(changes: Iterable[Change]) -> list[str]:
    """One line per change: ``missing under interface Ethernet1: mtu 9214`` / ``unexpected under top level: ...``."""
    return [
        f"{'missing' if ch.kind == 'add' else 'unexpected'} under {' > '.join(ch.path) or 'top level'}: {ch.line}"
        for ch in changes
    ]


def verify(running: list[Block], candidate: list[Block], ownership: Ownership) -> list[str]:
    """Problems left after a commit, one line each (empty when the device matches the intent)."""
    return describe(walk(running, candidate, ownership))


def changes_between(running: str, candidate: str, ownership: Ownership) -> list[Change]:
    """The changes that make the ``running`` config text match the ``candidate`` text on what fabricd owns."""
    return list(walk(parse(running, ownership), parse(candidate, ownership), ownership))


def delta(changes: list[Change], indent: str = "   ") -> ConfigDelta:
    """The driver's :class:`ConfigDelta` of ``changes``: one line per change and the readable diff."""
    return ConfigDelta(tuple(describe(changes)), diff_text(changes, indent))
