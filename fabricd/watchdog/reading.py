"""Reading: one port's files read on every poll, with only the names its plan needs looked up.

A :class:`PortFiles` holds the port's statistics file (a replay file read through :class:`~.files.PolledFile`;
with a live provider the caller passes the provider's mapping instead), its ``operstate`` and ``carrier_changes``
files, and the names of its :class:`~fabricd.watchdog.discovery.CounterPlan`. After the first full parse, a read
only looks those names up in the file's bytes (:class:`~.files.StatNames`), and reads only a window of the file
(up to the last needed line plus a margin), which keeps a 64-port host at 20 polls/s within a few % of one core
(bench/watchdog.py). Files are re-read on every poll (a replay tree may be rewritten at any time); nothing caches
values across a change.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping

from .discovery import CounterPlan
from .files import HostTree, PolledFile, Stamp, StatNames

_WINDOW_MARGIN = 1024
"""Bytes read past the last needed line of an ``ethtool -S`` text (lines move by a few bytes as values grow)."""

Raw = bytes | Mapping[str, int]
"""A port's statistics as read: ``ethtool -S`` text, or a live provider's {name: value}."""

Values = list[int | None]


class PortFiles:
    """How one port is read. ``names`` are looked up on every read (pause duration, or pause frames where there is
    no duration; the drain counter; the link-flap counter when sysfs has no ``carrier_changes``); ``drop_names``
    only when the caller reads drops. Paths are joined once."""

    __slots__ = ("carrier", "drop_names", "epoch", "names", "operstate", "stats", "where", "window")

    def __init__(self, tree: HostTree, iface: str, plan: CounterPlan) -> None:
        names = plan.names()
        self.where = {n: i for i, n in enumerate(names)}
        self.names = StatNames(names)
        self.drop_names = StatNames([dr.name for dr in plan.drops])
        self.epoch = self.index(plan.epoch)
        """Index in ``names`` of the link-flap counter, -1 when sysfs ``carrier_changes`` is used."""
        replay = tree.replay
        eth = tree.eth_dir if replay else None
        net = tree.net_dir if replay else None
        self.stats = PolledFile(tree.stats_path(iface), replay=replay, base=eth)
        self.operstate = PolledFile(os.path.join(tree.link_dir(iface), "operstate"), replay=replay, base=net)
        self.carrier = PolledFile(plan.carrier, replay=replay, base=net) if plan.carrier is not None else None
        self.window: int | None = None
        """Bytes of the statistics file to read: up to the last needed line plus a margin (None: all of it)."""

    def index(self, name: bytes | None) -> int:
        """Where ``name`` is in the values :meth:`values` returns (-1: None)."""
        return self.where[name] if name is not None else -1

    def read(self, stamp: Stamp | None, *, known: bool | None) -> bytes | None:
        """The replay statistics file's bytes in the read window (see :meth:`PolledFile.read`)."""
        return self.stats.read(self.window, stamp, known=known)

    def values(self, raw: Raw) -> tuple[Raw, Values]:
        """The plan's values in ``raw``, and ``raw`` itself (the whole file when the window missed a name)."""
        vals = self.names.values(raw)
        if isinstance(raw, bytes) and (None in vals or self.window is None):
            raw, vals = self._complete(raw, self.names, vals)
        return raw, vals

    def drop_values(self, raw: Raw) -> Values:
        """The drop counters' values in ``raw``, in the plan's order."""
        dvals = self.drop_names.values(raw)
        if isinstance(raw, bytes) and None in dvals:
            raw, dvals = self._complete(raw, self.drop_names, dvals)
        return dvals

    def _complete(self, raw: bytes, names: StatNames, vals: Values) -> tuple[bytes, Values]:
        """``vals`` of ``names`` looked up in ``raw``, completed: when ``raw`` is a prefix of the file
        (:attr:`PolledFile.partial`) and a name is not in it, the whole file is read and looked up again. After a
        whole file, the read window is set to cover every name found (plus a margin)."""
        stats = self.stats
        if stats.partial and None in vals:
            full = stats.read()
            if full is not None:
                raw = full
                vals = names.values(raw)
        if not stats.partial and None not in vals:
            last = max(self.names.last(), self.drop_names.last())
            self.window = last + _WINDOW_MARGIN if last >= 0 and last + _WINDOW_MARGIN < len(raw) else None
        return raw, vals

    def link(self) -> tuple[bool | None, int | None]:
        """The port's operational state (up: ``up`` or ``unknown``) and ``carrier_changes``; None: unknown."""
        up: bool | None = None
        epoch: int | None = None
        state = self.operstate.read()
        if state:
            state = state.strip()
            up = state in (b"up", b"unknown") if state else None
        if self.carrier is not None:
            text = self.carrier.read()
            if text:
                with contextlib.suppress(ValueError):
                    epoch = int(text)
        return up, epoch

    def close(self) -> None:
        for f in (self.stats, self.operstate, self.carrier):
            if f is not None:
                f.close()
