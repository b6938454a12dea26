"""Where the watchdog's samples come from: a host (live or a replay root) and switches (show commands).

Both turn the readers' normalised counters into detector samples (:mod:`fabricd.watchdog.types`):

- :class:`HostSource` reads ``<root>/ethtool/<if>.stats`` (or a live ``ethtool -S`` provider handed in by the
  service: :mod:`fabricd.sources.ethtool_live`'s ETHTOOL_GSTATS ioctl, injected so that replay roots and tests never
  import pyroute2), ``<root>/sys/class/net/<if>/{operstate,carrier_changes}``
  and, at a slower cadence, RDMA ``hw_counters/out_of_buffer``. The driver's name map (``readers.ethtool_maps``) says
  which raw names matter; after the first full parse, each poll only looks those names up in the file's bytes,
  which keeps a 64-port host at 20 polls/s within a few % of one core (bench/watchdog.py).
- :class:`SwitchSource` (in :mod:`fabricd.watchdog.switch_source`, re-exported here) turns a switch's parsed show
  outputs (``readers.switch``, read by the service over a kept-open driver session) into samples: PFC frames (and
  pause duration where the platform has it), egress queue packets and drops, and the switch's own PFC watchdog
  counters. :class:`Batch` (what one poll produced) is in :mod:`fabricd.watchdog.types`.

Files are re-read on every poll (a replay tree may be rewritten at any time); nothing caches values. The fast file
reads and name lookups are in :mod:`fabricd.watchdog.files`.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from functools import partial
from itertools import compress
from operator import ne

from fabricd.readers import ethtool_maps as kinds
from fabricd.readers.common import read_bytes
from fabricd.readers.ethtool import (
    CounterKey,
    driver_of,
    list_ethtool_interfaces,
    name_map,
    stats_or_nothing,
)
from fabricd.readers.rdma import class_dir
from fabricd.sources.kept import LayoutBuilder, Layouts
from fabricd.sources.notify import DIR_CHANGES, FILE_CHANGES, Watch, notifies

from .files import (
    _STAMP,
    Stamp,
    _Dir,
    _File,
    _Names,
    _value,  # noqa: F401  (re-exported: tests/unit/test_watchdog_sources.py imports it from here)
)
from .switch_source import SwitchSource as SwitchSource  # noqa: PLC0414  (explicit re-export: it lived here)
from .types import Batch as Batch  # noqa: PLC0414  (explicit re-export: it lived here)
from .types import ChannelKey, Direction, DropKey, DropSample, PauseSample, Scope

log = logging.getLogger(__name__)

LINK_FLAP_COUNTERS: tuple[str, ...] = ("link_down_events_phy",)
"""ethtool names that count link-down events, used when sysfs ``carrier_changes`` is absent (mlx5 counters.rst)."""

DROP_REASONS: dict[tuple[str, str | None], str] = {
    (kinds.DISCARDS, "rx_port_buffer"): "buffer_discard",
    (kinds.DISCARDS, "rx_out_of_buffer"): "out_of_buffer",
}
"""Port-level NIC discards that mean a loss on the lossless path, and the event reason they get."""

RawStats = Callable[[str], Mapping[str, int] | None]
"""A live ``ethtool -S`` provider: interface -> {name: value}, or None when the interface is gone."""


Settled = Callable[[ChannelKey, "float | None", "int | None"], bool]
"""The detector's :meth:`~fabricd.watchdog.detector.Detector.settled`: would a sample of this channel with these
pause counters (``pause_s``, ``frames``) only move its time?"""


@dataclass(slots=True, eq=False)
class _Channel:
    """One pause channel of a port: where its counters are in the plan's ``names`` (-1: none), and its latest
    observation (read at the port's last observation time, with the port's link state) for the detector."""

    key: ChannelKey
    duration: int
    frames: int
    progress: int
    pause_s: float | None = None
    count: int | None = None
    drain: int | None = None
    ok: bool = False
    """The port's latest read had this channel's counter (a torn or partial read skips the channel)."""
    pending: bool = False
    """The latest observation was not handed to the detector: the detector was settled on it (see ``settled``)."""


@dataclass(frozen=True, slots=True)
class _Drop:
    key: DropKey
    name: bytes


@dataclass(slots=True, eq=False)
class _Plan:
    """Which raw ethtool names one interface needs, decided from a full parse of its statistics, and the port's
    latest observation.

    ``names`` are looked up on every read (pause duration, or pause frames where there is no duration; the drain
    counter; the link-flap counter when sysfs has no ``carrier_changes``); drop counters only every ``drop_every``
    polls. Paths are joined once.
    """

    driver: str | None
    channels: list[_Channel]
    drops: list[_Drop]
    epoch: int
    """Index in ``names`` of the link-flap counter, -1 when sysfs ``carrier_changes`` is used."""
    names: _Names
    drop_names: _Names
    stats: _File
    operstate: _File
    carrier: _File | None
    window: int | None = None
    """Bytes of the statistics file to read: up to the last needed line plus a margin (None: all of it)."""
    vals: list[int | None] | None = None
    seen_t: float = 0.0
    """Monotonic time of the port's latest read (a later regular poll that found the file unchanged also counts:
    see ``HostSource._swept_t``)."""
    up: bool | None = None
    link_epoch: int | None = None
    link_dirty: bool = True
    """The link files may have changed since they were last read (always, without a directory :class:`Watch`)."""
    quiet: bool = False
    """Every channel's latest observation is pending (settled in the detector): while the file does not change,
    the port needs nothing."""

    def close(self) -> None:
        for f in (self.stats, self.operstate, self.carrier):
            if f is not None:
                f.close()


_WINDOW_MARGIN = 1024
"""Bytes read past the last needed line of an ``ethtool -S`` text (lines move by a few bytes as values grow)."""
_RDMA_RETRY_NS = 10_000_000_000
"""After a kept layout of the RDMA drop files could not be built, wait this long (10 s) before the next try."""


class HostSource:
    """Samples one host's NIC ports for the watchdog.

    ``device`` names the host in events (the inventory host name, or this machine's hostname). ``priorities``
    limits the watched priorities (the intent's lossless ones); None watches every priority with pause counters.
    ``interfaces`` limits the ports (the host's NIC netdevs in the inventory); None watches every interface the
    root has statistics for. ``raw_stats`` replaces the replay root's ``ethtool/<if>.stats`` files with a live
    provider. ``drop_every`` reads drop counters every N polls (they change slowly and RDMA's cost a file each);
    ``discover_every`` looks for new interfaces every N polls; ``replan_every`` re-reads the whole statistic set
    (a driver adds per-priority counters when PFC is enabled on a priority).
    ``clock`` (monotonic seconds) stamps each port with the time it was read; without it every sample gets the
    poll's ``t``. With a clock, a poll that is descheduled half-way cannot label a later read with an earlier time
    (which would let a restoration look longer than it was).
    """

    settles = True
    """:meth:`poll` and :meth:`poll_ports` take the detector's ``settled`` (the runner passes it)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        device: str,
        *,
        priorities: Iterable[int] | None = None,
        interfaces: Iterable[str] | None = None,
        raw_stats: RawStats | None = None,
        drop_every: int = 10,
        replan_every: int = 1200,
        discover_every: int = 20,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.root = os.fspath(root)
        self.device = device
        self.name = f"host:{device}"
        self.priorities = frozenset(priorities) if priorities is not None else None
        self.interfaces = list(interfaces) if interfaces is not None else None
        self.raw_stats = raw_stats
        self.drop_every = max(1, drop_every)
        self.replan_every = max(1, replan_every)
        self.discover_every = max(1, discover_every)
        self._port_cache: list[str] | None = None
        self.deadline_margin_s = 0.002 if raw_stats is not None else 0.010
        """How long after a deadline to read: a replay root's writer may be one tick (5-10 ms) behind."""
        self.clock = clock
        self._plans: dict[str, _Plan] = {}
        self._polls = 0
        self._net = os.path.join(self.root, "sys", "class", "net")
        self._eth = os.path.join(self.root, "ethtool")
        # kept-open directories of a replay root, and the stat sweep of its statistics files (see _sweep)
        self._eth_dir = _Dir(self._eth)
        self._net_dir = _Dir(self._net)
        self._swept: list[str] = []
        self._swept_set: frozenset[str] = frozenset()
        self._swept_names: list[str] = []
        self._stamps: Sequence[Stamp | None] = []
        self._loud: set[str] = set()
        """Ports that a sweep must visit even when their file is unchanged: some channel is not settled."""
        self._swept_t = float("-inf")
        """Monotonic time of the last sweep (or read of the file watch): every port whose file it found unchanged
        (and that is not dirty) was observed then."""
        self._polled: frozenset[str] = frozenset()
        """The ports of the last regular poll that swept or read the file watch (``_swept_t`` is its time)."""
        self._swept_names_of: list[str] = []
        self._dirty: dict[str, float] = {}
        """Ports whose file watch reported a change not read yet, each with the last time it was known clean."""
        self._rdma: Layouts[str, list[DropKey]] = Layouts()
        self._links: Watch | None = None
        """inotify on the ``sys/class/net/<if>`` directories (see :meth:`_link_changes`)."""
        self._files: Watch | None = None
        """inotify on the statistics files (see :meth:`_notified`)."""
        self._notify_tried = False
        self._rdma_retry_ns = 0

    # -- discovery ----------------------------------------------------------------------------------------------

    def _ports(self) -> list[str]:
        """The watched ports: the given ones, or every one with statistics plus any that vanished since."""
        if self.interfaces is not None:
            return self.interfaces
        if self.raw_stats is None:
            found = list_ethtool_interfaces(self.root)
        else:
            try:
                found = os.listdir(self._net)
            except OSError:
                found = []
        return sorted(set(found) | set(self._plans))

    def _driver(self, iface: str) -> str | None:
        if self.raw_stats is not None:
            try:
                link = os.readlink(os.path.join(self._net, iface, "device", "driver"))
            except OSError:
                return None
            return os.path.basename(link)
        try:
            text = read_bytes(os.path.join(self._eth, iface + ".info")).decode("utf-8", "replace")
        except OSError:
            return None
        return driver_of(text)

    def _plan(self, iface: str, raw: bytes | Mapping[str, int]) -> _Plan:
        driver = self._driver(iface)
        values = stats_or_nothing(raw.decode("utf-8", "replace")) if isinstance(raw, bytes) else dict(raw)
        classify = name_map(driver).classify
        by_key: dict[CounterKey, str] = {}
        for name in values:
            key = classify(name)
            if key is not None and key not in by_key:
                by_key[key] = name
        prios = sorted({
            k.priority for k in by_key
            if k.counter in (kinds.PAUSE_FRAMES, kinds.PAUSE_DURATION_US) and k.priority is not None
        })
        if self.priorities is not None:
            prios = [p for p in prios if p in self.priorities]

        def enc(key: CounterKey) -> bytes | None:
            name = by_key.get(key)
            return name.encode() if name is not None else None

        found: list[tuple[ChannelKey, bytes | None, bytes | None, bytes | None]] = []
        drops: list[_Drop] = []
        for prio in prios:
            for d in (Direction.RX, Direction.TX):
                other = "tx" if d is Direction.RX else "rx"
                dur = enc(CounterKey(kinds.PAUSE_DURATION_US, d.value, prio))  # type: ignore[arg-type]
                frm = enc(CounterKey(kinds.PAUSE_FRAMES, d.value, prio))  # type: ignore[arg-type]
                if dur is None and frm is None:
                    continue
                prog = enc(CounterKey(kinds.PRIORITY_PACKETS, other, prio))  # type: ignore[arg-type]
                # with a duration counter the frames are not read (duration mode)
                found.append((ChannelKey(Scope.NIC, self.device, iface, prio, d), dur, None if dur else frm, prog))
            for key, name in by_key.items():
                if key.counter == kinds.PRIORITY_DISCARDS and key.priority == prio:
                    drops.append(_Drop(DropKey(Scope.NIC, self.device, iface, prio, f"{key.qualifier}_discard"),
                                       name.encode()))
        for key, name in by_key.items():
            reason = DROP_REASONS.get((key.counter, key.qualifier))
            if reason is not None and key.priority is None:
                drops.append(_Drop(DropKey(Scope.NIC, self.device, iface, None, reason), name.encode()))
        base = os.path.join(self._net, iface)
        carrier: str | None = os.path.join(base, "carrier_changes")
        if not os.path.exists(carrier):  # type: ignore[arg-type]
            carrier = None
        epoch = None if carrier is not None else next(
            (n.encode() for n in LINK_FLAP_COUNTERS if n in values), None)
        wanted: set[bytes] = {n for _, dur, frm, prog in found for n in (dur, frm, prog) if n is not None}
        if epoch is not None:
            wanted.add(epoch)
        names = tuple(sorted(wanted))
        where = {n: i for i, n in enumerate(names)}

        def at(name: bytes | None) -> int:
            return where[name] if name is not None else -1

        channels = [_Channel(key, at(dur), at(frm), at(prog)) for key, dur, frm, prog in found]
        replay = self.raw_stats is None
        old = self._plans.get(iface)
        if old is not None:
            old.close()
        eth = self._eth_dir if replay else None
        net = self._net_dir if replay else None
        return _Plan(driver, channels, drops, at(epoch), _Names(names), _Names([dr.name for dr in drops]),
                     _File(os.path.join(self._eth, iface + ".stats"), replay=replay, base=eth),
                     _File(os.path.join(base, "operstate"), replay=replay, base=net),
                     _File(carrier, replay=replay, base=net) if carrier is not None else None)

    # -- polling ------------------------------------------------------------------------------------------------

    @staticmethod
    def _link(plan: _Plan) -> tuple[bool | None, int | None]:
        up: bool | None = None
        epoch: int | None = None
        state = plan.operstate.read()
        if state:
            state = state.strip()
            up = state in (b"up", b"unknown") if state else None
        if plan.carrier is not None:
            text = plan.carrier.read()
            if text:
                with contextlib.suppress(ValueError):
                    epoch = int(text)
        return up, epoch

    def _net_of(self, iface: str) -> str:
        return os.path.join(self._net, iface)

    def _ports_now(self) -> list[str]:
        if self._port_cache is None or self._polls % self.discover_every == 1:
            self._port_cache = self._ports()
        return self._port_cache

    def poll(self, t: float, settled: Settled | None = None) -> Batch:
        """One regular poll of every port; ``t`` is the monotonic time of the poll (seconds).

        ``settled`` (the detector's :meth:`~fabricd.watchdog.detector.Detector.settled`) lets the source leave out
        a channel's sample when the detector would only move that channel's time with it (no run or storm open,
        same pause counters as its last sample). The left-out observation is kept and handed over, with its own
        time, right before the channel's next sample that the detector does need, so the detector goes through the
        same states as when it is fed every sample. On a replay root a poll then starts with one ``stat`` per
        statistics file (:meth:`_sweep`) and visits only the ports whose file changed or whose channels are not
        all settled. Without ``settled`` every channel of every port gives a sample on every poll.
        The caller must be the only one feeding this source's channels to the detector.
        """
        self._polls += 1
        return self._read(t, self._ports_now(), regular=True, settled=settled)

    def poll_ports(self, t: float, ports: Iterable[str], settled: Settled | None = None) -> Batch:
        """A deadline read: only ``ports``, now (see :meth:`tune`; ``settled`` as in :meth:`poll`)."""
        return self._read(t, list(ports), regular=False, settled=settled)

    def _read(self, t: float, ports: list[str], *, regular: bool, settled: Settled | None) -> Batch:
        batch = Batch()
        replay = self.raw_stats is None
        if settled is not None and replay:
            self._link_changes()
        polls = self._polls
        replan = regular and polls % self.replan_every == 0
        read_drops = regular and (self.drop_every == 1 or polls % self.drop_every == 1)
        if replay and regular:
            self._eth_dir.check()
            self._net_dir.check()
        files = self._files if settled is not None and replay else None
        todo: list[tuple[str, Stamp | None, bool | None, float]] | None = None
        checked: float | None = None  # when this poll found every other port's file unchanged
        if files is not None:
            checked = self.clock() if self.clock is not None else t
            clean = self._drain(files)
            files = self._files  # a new watch after an overflow, or none
            if files is not None:
                todo = self._notified(files, ports, every=not regular or replan or not clean)
        elif settled is not None and replay and regular and not replan:
            checked = self.clock() if self.clock is not None else t
            todo = self._sweep(ports)
        if todo is None:  # every port, each with its own stat (or a live read)
            checked = None
            todo = [(p, None, None, self._floor(p)) for p in ports]
        for iface, stamp, known, seen in todo:
            self._port(iface, stamp, t, batch, settled, replan=replan, drops=read_drops, known=known, seen=seen)
        if regular and checked is not None:
            self._swept_t, self._polled = checked, self._port_set(ports)
        if read_drops:
            batch.drops.extend(self._rdma_drops(t))
        return batch

    def _floor(self, port: str) -> float:
        """The last regular poll's time if that poll found ``port``'s file unchanged or read it (it held then what
        it holds in the port's last observation), else -inf. A port that was not dirty then was one of those."""
        dirty = self._dirty.get(port)
        if dirty is not None:
            return dirty
        return self._swept_t if port in self._polled else float("-inf")

    def _port_set(self, ports: list[str]) -> frozenset[str]:
        if ports != self._swept:
            self._swept = list(ports)
            self._swept_set = frozenset(ports)
        return self._swept_set

    def _drain(self, files: Watch) -> bool:
        """Read the statistics-file watch: each port with an event is *dirty* (read at its next visit) and keeps
        the floor it had before (:meth:`_floor`): the last regular poll, where it was still clean. False after an
        event queue overflow: then every port is dirty and watched again at its next read."""
        changed = files.changed()
        dirty = self._dirty
        if changed is None:
            changed = set(self._plans)
            self._forget_watches(files)
        for p in changed:
            if p not in dirty:
                dirty[p] = self._floor(p)
        return files is self._files

    def _forget_watches(self, files: Watch) -> None:
        """After an overflow nothing the watch said can be trusted: watch every file again at its next read."""
        files.close()
        try:
            self._files = Watch(files.mask)
        except OSError as exc:
            log.info("%s is checked with stat on every poll: %s", self._eth, exc)
            self._files = None

    def _notified(self, files: Watch, ports: list[str], *,
                  every: bool) -> list[tuple[str, Stamp | None, bool | None, float]]:
        """The ports to visit, with the file watch: on a regular poll those that are dirty, not watched yet (new,
        or replaced and not watched again) or have a channel that is not settled; with ``every`` (a deadline read,
        a re-plan, after an overflow) all of ``ports``. Each with whether its file is known to have changed (True:
        watch it again, then read it; False: its last bytes still hold) and the floor of its last observation's
        time (:meth:`_floor`)."""
        if every:
            unwatched: Set[str] = {p for p in ports if not files.watching(p)}
        else:
            unwatched = self._port_set(ports) - files.keys()
            if not self._dirty and not unwatched and not self._loud:
                return []
        dirty = self._dirty
        out: list[tuple[str, Stamp | None, bool | None, float]] = []
        for p in ports:
            if p in dirty or p in unwatched:
                out.append((p, None, True, self._floor(p)))
            elif every or p in self._loud:
                out.append((p, None, False, self._floor(p)))
        return out

    def _sweep(self, ports: list[str]) -> list[tuple[str, Stamp | None, bool | None, float]] | None:
        """Stamp every port's statistics file (one ``stat`` each, relative to the kept-open ``ethtool``
        directory) and return the ports to visit: those whose file changed since the last sweep and those with a
        channel that is not settled, with their stamps and their last observation floor (the previous sweep). The
        time of this sweep (taken before the first ``stat``: a file found unchanged held its last values then)
        becomes the floor once the visits are done. None when a file or the directory is missing: the caller
        then visits every port, which reports what vanished."""
        if ports != self._swept_names_of:
            self._swept_names_of = list(ports)
            self._swept_names = [p + ".stats" for p in ports]
            self._stamps = [None] * len(ports)
        dfd = self._eth_dir.fd
        if dfd is None:
            return None
        try:
            stamps = list(map(_STAMP, map(partial(os.stat, dir_fd=dfd), self._swept_names)))
        except OSError:
            self._stamps = [None] * len(ports)
            return None
        visit = set(compress(range(len(ports)), map(ne, stamps, self._stamps)))
        self._stamps = stamps
        if self._loud:
            index = {p: i for i, p in enumerate(ports)} if len(self._loud) > 4 else None
            for p in self._loud:
                i = index.get(p, -1) if index is not None else (ports.index(p) if p in ports else -1)
                if i >= 0:
                    visit.add(i)
        return [(ports[i], stamps[i], None, self._floor(ports[i])) for i in sorted(visit)]

    def _notify_setup(self) -> None:
        """Set up inotify on first use, where the file system reports every change (:func:`notifies`)."""
        self._notify_tried = True
        for attr, path, mask in (("_files", self._eth, FILE_CHANGES), ("_links", self._net, DIR_CHANGES)):
            if not notifies(path):
                continue
            try:
                setattr(self, attr, Watch(mask))
            except OSError as exc:
                log.info("%s is checked with stat on every poll: %s", path, exc)
        for plan in self._plans.values():
            plan.link_dirty = True

    def _link_changes(self) -> None:
        """Mark the ports whose link files changed since the last call (the ``sys/class/net/<if>`` directory
        watch)."""
        if not self._notify_tried:
            self._notify_setup()
        links = self._links
        if links is None:
            return
        dirty = links.changed()
        plans = self._plans
        if dirty is None:  # the event queue overflowed: anything may have changed
            dirty = set(plans)
        for iface in dirty:
            known = plans.get(iface)
            if known is not None:
                known.link_dirty = True

    def _port(self, iface: str, stamp: Stamp | None, t: float, batch: Batch, settled: Settled | None, *,
              replan: bool, drops: bool, known: bool | None = None, seen: float = float("-inf")) -> None:
        """Read one port and add its samples to ``batch``. ``stamp``: its statistics file's, just taken;
        ``known``: the file watch says it changed (or is not watched yet: watch it, then read) or not. ``seen``:
        a time at which the port's file was known to still hold what it held at its last read (a sweep or a
        watch that found it unchanged); the port's last observation is the later of that and its last read."""
        self._dirty.pop(iface, None)
        plan = self._plans.get(iface)
        clock = self.clock
        live = self.raw_stats
        out = batch.pause
        raw: bytes | Mapping[str, int] | None
        if live is not None:
            raw = live(iface)
        elif plan is not None:
            files = self._files
            if known and files is not None and not files.add(iface, plan.stats.path):
                known = None  # cannot be watched (gone?): stat it, as without a watch
            raw = plan.stats.read(plan.window, stamp, known=known)
        else:
            try:
                raw = read_bytes(os.path.join(self._eth, iface + ".stats"))
            except OSError:
                raw = None
        # the port's previous observation: its last read, or a later sweep or watch that found its file unchanged
        if plan is not None and plan.seen_t > seen:
            seen = plan.seen_t
        if raw is None:
            if plan is not None:
                batch.problems.append(f"{self.device}:{iface}: statistics vanished")
                self._hand_over(plan, out, seen)
                self._loud.add(iface)
            return
        if plan is None or replan:
            if plan is not None:
                self._hand_over(plan, out, seen)  # a new plan starts without observations: give them now
            plan = self._plans[iface] = self._plan(iface, raw)
        vals = plan.vals
        changed = vals is None or live is not None or plan.stats.changed
        if changed:  # else: the file is unchanged since the last read, same values and link state
            vals = plan.names.values(raw)
            if isinstance(raw, bytes) and (None in vals or plan.window is None):
                raw, vals = self._complete(plan, raw, plan.names, vals)
            plan.vals = vals
            links = self._links
            if plan.link_dirty or links is None or not links.watching(iface):
                # watch the directory first, then read: a change after the read is reported at the next call
                watched = links is not None and (links.watching(iface) or links.add(iface, self._net_of(iface)))
                up, epoch = self._link(plan)
                plan.link_dirty = not watched
            else:  # unchanged since the last read (the directory watch says so)
                up, epoch = plan.up, plan.link_epoch
            if plan.epoch >= 0:
                epoch = vals[plan.epoch]
        else:
            up, epoch = plan.up, plan.link_epoch
        assert vals is not None
        # the time this port was read: its values are no newer than this
        now = clock() if clock is not None else t
        old_up, old_epoch = plan.up, plan.link_epoch
        quiet = settled is not None
        for ch in plan.channels:
            if changed:
                if ch.duration >= 0:
                    dur = vals[ch.duration]
                    pause_s: float | None = dur / 1e6 if dur is not None else None
                    frames: int | None = None
                    missing = dur is None
                else:
                    pause_s = None
                    frames = vals[ch.frames]
                    missing = frames is None
                drain = vals[ch.progress] if ch.progress >= 0 else None
                if missing:  # a torn or partial read: skip this poll for the channel, never guess
                    if ch.pending:
                        out.append(PauseSample(ch.key, seen, ch.pause_s, ch.count, ch.drain, old_up, old_epoch))
                    ch.ok = ch.pending = False
                    continue
            elif not ch.ok:
                continue  # missing in the unchanged file's last read
            else:
                pause_s, frames, drain = ch.pause_s, ch.count, ch.drain
            if settled is not None and ch.ok and settled(ch.key, pause_s, frames):
                ch.drain = drain
                ch.pending = True
                continue
            if ch.pending:  # the observation the detector was settled on, then this one
                out.append(PauseSample(ch.key, seen, ch.pause_s, ch.count, ch.drain, old_up, old_epoch))
            out.append(PauseSample(ch.key, now, pause_s, frames, drain, up, epoch))
            ch.pause_s, ch.count, ch.drain, ch.ok, ch.pending = pause_s, frames, drain, True, False
            quiet = False
        plan.seen_t, plan.up, plan.link_epoch, plan.quiet = now, up, epoch, quiet
        if quiet:
            self._loud.discard(iface)
        else:
            self._loud.add(iface)
        if changed and drops and plan.drops:
            dvals = plan.drop_names.values(raw)
            if isinstance(raw, bytes) and None in dvals:
                raw, dvals = self._complete(plan, raw, plan.drop_names, dvals)
            for dr, value in zip(plan.drops, dvals, strict=True):
                batch.drops.append(DropSample(dr.key, now, value))

    @staticmethod
    def _complete(plan: _Plan, raw: bytes, names: _Names, vals: list[int | None]) -> tuple[bytes, list[int | None]]:
        """``vals`` of ``names`` looked up in ``raw``, completed: when ``raw`` is a prefix of the file
        (:attr:`_File.partial`) and a name is not in it, the whole file is read and looked up again. After a whole
        file, the plan's read window is set to cover every name found (plus a margin)."""
        if plan.stats.partial and None in vals:
            full = plan.stats.read()
            if full is not None:
                raw = full
                vals = names.values(raw)
        if not plan.stats.partial and None not in vals:
            last = max(plan.names.last(), plan.drop_names.last())
            plan.window = last + _WINDOW_MARGIN if last >= 0 and last + _WINDOW_MARGIN < len(raw) else None
        return raw, vals

    @staticmethod
    def _hand_over(plan: _Plan, out: list[PauseSample], seen: float) -> None:
        """The pending observations of ``plan``'s channels (made at ``seen``), as samples."""
        for ch in plan.channels:
            if ch.pending:
                out.append(PauseSample(ch.key, seen, ch.pause_s, ch.count, ch.drain, plan.up, plan.link_epoch))
                ch.pending = False
        plan.quiet = False

    def tune(self, detection_s: float, restoration_s: float, poll_s: float) -> None:
        """Adapt to the watchdog's timers: drop counters are read once a second (every poll is read for pause).

        Every port is checked on every poll: a long gap between two reads of a port could hold the end of one burst
        and the start of the next, and the detector would have to credit both to one run. Cost is kept down by
        not re-reading an unchanged replay file (:class:`_File`, :meth:`_sweep`) and by the runner's *deadline
        reads* (:meth:`poll_ports`): once a read shows pause, the duration counter says how long it has lasted, and
        the port is read again exactly when the run would reach ``detection`` (or the quiet time ``restoration``),
        so a storm is declared at ``detection`` plus the read's own delay rather than at the next poll after it.
        The statistic set is re-planned once a minute.
        """
        self.drop_every = max(1, round(1.0 / poll_s))
        self.replan_every = max(1, round(60.0 / poll_s))

    def close(self) -> None:
        """Close the kept-open files."""
        for plan in self._plans.values():
            plan.close()
        self._eth_dir.close()
        self._net_dir.close()
        self._rdma.drop("rdma")
        for watch in (self._links, self._files):
            if watch is not None:
                watch.close()
        self._links = self._files = None

    def _rdma_drops(self, t: float) -> list[DropSample]:
        """RDMA ``hw_counters/out_of_buffer`` per device and port (receive WQE missing: an RDMA drop).

        The files are found once and read through kept-open descriptors (:mod:`fabricd.sources.kept`) while the
        directories they were listed from are unchanged; every value is read again on every call. While a
        directory is too recently changed to be trusted, the files are listed and read the plain way."""
        keys: list[DropKey] = []
        texts: list[bytes] | None = None
        entry = self._rdma.get("rdma", self._rdma.clock())
        if entry is not None:
            kept, keys = entry
            texts = kept.read()
            if texts is None:
                self._rdma.drop("rdma")
        if texts is None:
            builder: LayoutBuilder | None = None
            now_ns = self._rdma.clock()
            if now_ns >= self._rdma_retry_ns:
                builder = self._rdma.builder()
                keys, paths = self._rdma_files(builder)
                built = builder.build() if builder.ok else None
                if built is not None:
                    self._rdma.put("rdma", built, keys)
                    texts = built.read()
                else:  # racy or changing directories: list them the plain way for a while
                    self._rdma_retry_ns = now_ns + _RDMA_RETRY_NS
            if texts is None:
                if builder is None or not builder.ok:
                    keys, paths = self._rdma_files(None)
                texts = []
                for path in paths:
                    try:
                        texts.append(read_bytes(path))
                    except OSError:
                        texts.append(b"")
        out: list[DropSample] = []
        for key, text in zip(keys, texts, strict=True):
            try:
                value = int(text)
            except ValueError:
                continue
            out.append(DropSample(key, t, value))
        return out

    def _rdma_files(self, builder: LayoutBuilder | None) -> tuple[list[DropKey], list[str]]:
        """Every ``out_of_buffer`` file of the root's RDMA ports and its drop key, listed through ``builder`` (which
        stamps the directories) or, without one, with plain ``listdir``."""
        def listdir(path: str) -> list[str]:
            if builder is not None:
                return builder.listdir(path) or []
            try:
                return sorted(os.listdir(path))
            except OSError:
                return []

        keys: list[DropKey] = []
        paths: list[str] = []
        base = class_dir(self.root)
        for dev in listdir(base):
            for port in listdir(os.path.join(base, dev, "ports")):
                hw = os.path.join(base, dev, "ports", port, "hw_counters")
                path = os.path.join(hw, "out_of_buffer")
                if (builder is None or builder.watch(hw)) and os.path.exists(path):
                    if builder is not None:
                        builder.add(path)
                    paths.append(path)
                    keys.append(DropKey(Scope.NIC, self.device, f"{dev}/{port}", None, "rdma_out_of_buffer"))
        return keys, paths
