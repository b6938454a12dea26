"""Where the watchdog's samples come from: a host (live or a replay root) and switches (show commands).

Both turn the readers' normalised counters into detector samples (:mod:`fabricd.watchdog.types`):

- :class:`HostSource` reads ``<root>/ethtool/<if>.stats`` (or a live ``ethtool -S`` provider handed in by the CLI,
  since the ETHTOOL_GSTATS ioctl lives in an L2 sibling), ``<root>/sys/class/net/<if>/{operstate,carrier_changes}``
  and, at a slower cadence, RDMA ``hw_counters/out_of_buffer``. The driver's name map (``readers.ethtool_maps``) says
  which raw names matter; after the first full parse, each poll only looks those names up in the file's bytes,
  which keeps a 64-port host at 20 polls/s within a few % of one core (bench/watchdog.py).
- :class:`SwitchSource` turns a switch's parsed show outputs (``readers.switch``, read by the service over a
  kept-open driver session) into samples: PFC frames (and pause duration where the platform has it), egress queue
  packets and drops, and the switch's own PFC watchdog counters.

Files are re-read on every poll (a replay tree may be rewritten at any time); nothing caches values.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from fabricd.readers import ethtool_maps as kinds
from fabricd.readers.common import read_bytes
from fabricd.readers.ethtool import (
    CounterKey,
    list_ethtool_interfaces,
    name_map,
    parse_ethtool_info,
    parse_ethtool_stats,
)
from fabricd.readers.rdma import list_rdma_devices
from fabricd.readers.switch.model import SwitchCounters

from .types import (
    ChannelKey,
    Direction,
    DropKey,
    DropSample,
    PauseSample,
    Scope,
    WdKey,
    WdSample,
)

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


@dataclass
class Batch:
    """What one poll of one source produced."""

    pause: list[PauseSample] = field(default_factory=list)
    drops: list[DropSample] = field(default_factory=list)
    wd: list[WdSample] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Channel:
    key: ChannelKey
    duration: bytes | None
    frames: bytes | None
    progress: bytes | None


@dataclass(frozen=True, slots=True)
class _Drop:
    key: DropKey
    name: bytes


@dataclass
class _Plan:
    """Which raw ethtool names one interface needs, decided from a full parse of its statistics.

    ``names`` are looked up on every poll (pause duration, or pause frames where there is no duration; the drain
    counter; the link-flap counter when sysfs has no ``carrier_changes``); drop counters only every ``drop_every``
    polls. Paths are joined once.
    """

    driver: str | None
    channels: list[_Channel]
    drops: list[_Drop]
    epoch_name: bytes | None
    names: tuple[bytes, ...]
    stats: _File
    operstate: _File
    carrier: _File | None
    hints: dict[bytes, int] = field(default_factory=dict)
    vals: dict[bytes, int | None] | None = None
    args: list[tuple[ChannelKey, float | None, int | None, int | None]] | None = None
    link: tuple[bool | None, int | None] | None = None

    def close(self) -> None:
        for f in (self.stats, self.operstate, self.carrier):
            if f is not None:
                f.close()


_SEPARATORS = frozenset(b" \t\n")


def _value(data: bytes, name: bytes) -> int | None:
    """The integer after ``name:`` on a line of ``ethtool -S`` text, or None. ``name`` must start the line's
    text (after indentation), so ``rx_prio3_pause`` never matches ``rx_prio3_pause_duration`` or ``xrx_...``."""
    return _lookup(data, (name,))[name]


def _lookup(
    raw: bytes | Mapping[str, int], names: Iterable[bytes], hints: dict[bytes, int] | None = None
) -> dict[bytes, int | None]:
    """Values of ``names`` in ``ethtool -S`` text (bytes) or in a live {name: value} mapping.

    On text this is one ``find`` per name plus one ``int`` (the watchdog's hot path: no full parse). ``hints``
    remembers where each name was found: the next poll checks there first (the lines move by a few bytes at most
    when values grow), which avoids scanning the kilobytes before the per-priority block.
    """
    out: dict[bytes, int | None] = {}
    if not isinstance(raw, bytes):
        for n in names:
            out[n] = raw.get(n.decode())
        return out
    find = raw.find
    startswith = raw.startswith
    seps = _SEPARATORS
    for n in names:
        needle = n + b":"
        i = -1
        if hints is not None:
            h = hints.get(n, -1)
            if h > 0 and startswith(needle, h) and raw[h - 1] in seps:
                i = h
            elif h > 0:
                k = find(needle, max(0, h - 512), h + 512 + len(needle))
                if k > 0 and raw[k - 1] in seps:
                    i = k
        if i < 0:
            i = find(needle)
            while i > 0 and raw[i - 1] not in seps:
                i = find(needle, i + 1)
        if i < 0:
            out[n] = None
            continue
        if hints is not None:
            hints[n] = i
        j = i + len(needle)
        try:
            out[n] = int(raw[j:j + 24].split(b"\n", 1)[0])
        except ValueError:
            out[n] = None
    return out


class _File:
    """One file read on every poll through a kept-open descriptor (``pread`` at offset 0: two syscalls instead of
    open/read/close and a path walk). sysfs attributes regenerate their text on every read at offset 0.

    On a replay root (``replay=True``) a writer replaces files by rename, or rewrites them; ``fstat`` tells both
    apart from "unchanged": a renamed-over file shows its old inode unlinked (``st_nlink == 0``) and is reopened,
    a rewritten one a new mtime/ctime/size. An unchanged file is not read again: :attr:`changed` is False and the
    previous bytes are returned (they are the file's content). A same-size in-place rewrite within one kernel clock
    tick of the previous write (a few ms) is seen at the next write; writers should rename.
    """

    __slots__ = ("changed", "data", "fd", "path", "replay", "stamp")

    def __init__(self, path: str, *, replay: bool) -> None:
        self.path = path
        self.fd: int | None = None
        self.replay = replay
        self.stamp: tuple[int, int, int] | None = None
        self.data: bytes | None = None
        self.changed = True

    def read(self) -> bytes | None:
        fd = self.fd
        stamp: tuple[int, int, int] | None = None
        if fd is not None and self.replay:
            try:
                st = os.fstat(fd)
            except OSError:
                st = None
            if st is None or st.st_nlink == 0:
                self.close()
                fd = None
            else:
                stamp = (st.st_mtime_ns, st.st_ctime_ns, st.st_size)
                if stamp == self.stamp and self.data is not None:
                    self.changed = False
                    return self.data
        if fd is None:
            try:
                fd = self.fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return None
            if self.replay:
                try:
                    st = os.fstat(fd)
                    stamp = (st.st_mtime_ns, st.st_ctime_ns, st.st_size)
                except OSError:
                    stamp = None
        try:
            data = os.pread(fd, _CHUNK, 0)
            if len(data) == _CHUNK:
                parts = [data]
                while chunk := os.pread(fd, _CHUNK, _CHUNK * len(parts)):
                    parts.append(chunk)
                data = b"".join(parts)
        except OSError:
            self.close()
            return None
        self.changed = True
        if self.replay:
            self.stamp = stamp
            self.data = data
        return data

    def close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None
        self.stamp = None
        self.data = None


_CHUNK = 65536


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
        return parse_ethtool_info(text).driver

    def _plan(self, iface: str, raw: bytes | Mapping[str, int]) -> _Plan:
        driver = self._driver(iface)
        values = parse_ethtool_stats(raw.decode("utf-8", "replace")) if isinstance(raw, bytes) else dict(raw)
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

        channels: list[_Channel] = []
        drops: list[_Drop] = []
        for prio in prios:
            for d in (Direction.RX, Direction.TX):
                other = "tx" if d is Direction.RX else "rx"
                dur = enc(CounterKey(kinds.PAUSE_DURATION_US, d.value, prio))  # type: ignore[arg-type]
                frm = enc(CounterKey(kinds.PAUSE_FRAMES, d.value, prio))  # type: ignore[arg-type]
                if dur is None and frm is None:
                    continue
                prog = enc(CounterKey(kinds.PRIORITY_PACKETS, other, prio))  # type: ignore[arg-type]
                channels.append(_Channel(ChannelKey(Scope.NIC, self.device, iface, prio, d), dur, frm, prog))
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
        names: set[bytes] = set()
        for ch in channels:
            names.add(ch.duration if ch.duration is not None else ch.frames)  # type: ignore[arg-type]
            if ch.progress is not None:
                names.add(ch.progress)
        if epoch is not None:
            names.add(epoch)
        replay = self.raw_stats is None
        old = self._plans.get(iface)
        if old is not None:
            old.close()
        return _Plan(driver, channels, drops, epoch, tuple(sorted(names)),
                     _File(os.path.join(self._eth, iface + ".stats"), replay=replay),
                     _File(os.path.join(base, "operstate"), replay=replay),
                     _File(carrier, replay=replay) if carrier is not None else None)

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

    def _ports_now(self) -> list[str]:
        if self._port_cache is None or self._polls % self.discover_every == 1:
            self._port_cache = self._ports()
        return self._port_cache

    def poll(self, t: float) -> Batch:
        """One regular poll: every port due by its schedule; ``t`` is the monotonic time of the poll (seconds)."""
        self._polls += 1
        return self._read(t, self._ports_now(), regular=True)

    def poll_ports(self, t: float, ports: Iterable[str]) -> Batch:
        """A deadline read: only ``ports``, now (see :meth:`tune`)."""
        return self._read(t, list(ports), regular=False)

    def _read(self, t: float, ports: list[str], *, regular: bool) -> Batch:
        batch = Batch()
        polls = self._polls
        replan = regular and polls % self.replan_every == 0
        read_drops = regular and (self.drop_every == 1 or polls % self.drop_every == 1)
        append = batch.pause.append
        plans = self._plans
        clock = self.clock
        for iface in ports:
            plan = plans.get(iface)
            if self.raw_stats is None:
                if plan is not None:
                    raw: bytes | Mapping[str, int] | None = plan.stats.read()
                else:
                    try:
                        raw = read_bytes(os.path.join(self._eth, iface + ".stats"))
                    except OSError:
                        raw = None
            else:
                raw = self.raw_stats(iface)
            if raw is None:
                if plan is not None:
                    batch.problems.append(f"{self.device}:{iface}: statistics vanished")
                continue
            if plan is None or replan:
                plan = plans[iface] = self._plan(iface, raw)
            vals = plan.vals
            unchanged = vals is not None and self.raw_stats is None and not plan.stats.changed
            if vals is None or not unchanged:  # else: the file is unchanged since the last read, same values
                vals = plan.vals = _lookup(raw, plan.names, plan.hints)
            if clock is not None:
                t = clock()  # the time this port was read: its values are no newer than this
            if unchanged and plan.link is not None and plan.args is not None:
                # Same counters as the last read (a replay file that did not change): no pause moved, so the link
                # state cannot change any verdict; it is read again with the next change (a flap that moves pause
                # counters changes the file, and mlx5 counts flaps in link_down_events_phy inside it).
                up, epoch = plan.link
                for key, pause_s, frames, progress in plan.args:
                    append(PauseSample(key, t, pause_s, frames, progress, up, epoch))
                continue
            up, epoch = self._link(plan)
            if plan.epoch_name is not None:
                epoch = vals.get(plan.epoch_name)
            plan.link = (up, epoch)
            args: list[tuple[ChannelKey, float | None, int | None, int | None]] = []
            for ch in plan.channels:
                if ch.duration is not None:
                    dur = vals.get(ch.duration)
                    if dur is None:
                        continue  # a torn or partial read: skip this poll for the channel, never guess
                    args.append((ch.key, dur / 1e6, None, vals.get(ch.progress) if ch.progress is not None else None))
                else:
                    frm = vals.get(ch.frames) if ch.frames is not None else None
                    if frm is None:
                        continue
                    args.append((ch.key, None, frm, vals.get(ch.progress) if ch.progress is not None else None))
            plan.args = args
            for key, pause_s, frames, progress in args:
                append(PauseSample(key, t, pause_s, frames, progress, up, epoch))
            if read_drops and plan.drops:
                dvals = _lookup(raw, [dr.name for dr in plan.drops])
                for dr in plan.drops:
                    batch.drops.append(DropSample(dr.key, t, dvals.get(dr.name)))
        if read_drops:
            batch.drops.extend(self._rdma_drops(t))
        return batch

    def tune(self, detection_s: float, restoration_s: float, poll_s: float) -> None:
        """Adapt to the watchdog's timers: drop counters are read once a second (every poll is read for pause).

        Every port is read on every poll: a long gap between two reads of a port could hold the end of one burst
        and the start of the next, and the detector would have to credit both to one run. Cost is kept down by
        not re-reading an unchanged replay file (:class:`_File`) and by the runner's *deadline reads*
        (:meth:`poll_ports`): once a read shows pause, the duration counter says how long it has lasted, and the
        port is read again exactly when the run would reach ``detection`` (or the quiet time ``restoration``), so
        a storm is declared at ``detection`` plus the read's own delay rather than at the next poll after it.
        The statistic set is re-planned once a minute.
        """
        self.drop_every = max(1, round(1.0 / poll_s))
        self.replan_every = max(1, round(60.0 / poll_s))

    def close(self) -> None:
        """Close the kept-open files."""
        for plan in self._plans.values():
            plan.close()

    def _rdma_drops(self, t: float) -> list[DropSample]:
        """RDMA ``hw_counters/out_of_buffer`` per device and port (receive WQE missing: an RDMA drop)."""
        out: list[DropSample] = []
        base = os.path.join(self.root, "sys", "class", "infiniband")
        for dev in list_rdma_devices(self.root):
            try:
                ports = os.listdir(os.path.join(base, dev, "ports"))
            except OSError:
                continue
            for port in ports:
                path = os.path.join(base, dev, "ports", port, "hw_counters", "out_of_buffer")
                try:
                    value: int | None = int(read_bytes(path))
                except (OSError, ValueError):
                    continue
                key = DropKey(Scope.NIC, self.device, f"{dev}/{port}", None, "rdma_out_of_buffer")
                out.append(DropSample(key, t, value))
        return out


# -- switches ------------------------------------------------------------------------------------------------------


class SwitchSource:
    """Turns one switch's parsed counters (``readers.switch`` :class:`SwitchCounters`) into detector samples.

    ``read`` returns a fresh snapshot (the service runs the platform's show commands over a kept-open driver session
    and parses them). ``priorities``: the lossless priorities to watch (None: every priority the switch reports).
    The drain of a paused port is its egress unicast queue with the same number as the priority (standard recipe:
    priority 3 -> queue 3); drops on that queue are ``lossless_drop`` events.
    """

    def __init__(
        self,
        device: str,
        read: Callable[[], SwitchCounters] | None = None,
        *,
        priorities: Iterable[int] | None = None,
    ) -> None:
        self.device = device
        self.name = f"switch:{device}"
        self.read = read
        self.priorities = frozenset(priorities) if priorities is not None else None

    def poll(self, t: float) -> Batch:
        if self.read is None:
            raise ValueError(f"switch source {self.device} has no reader")
        return self.to_batch(self.read(), t)

    def to_batch(self, counters: SwitchCounters, t: float) -> Batch:
        """Detector samples from one parsed snapshot read at monotonic time ``t``."""
        batch = Batch(problems=list(counters.problems))
        drain: dict[tuple[str, int], int | None] = {}
        for q in counters.queues:
            if q.kind in ("unicast", "all"):
                drain.setdefault((q.interface, q.index), q.packets)
                if self._watched(q.index) and q.dropped_packets is not None:
                    key = DropKey(Scope.SWITCH, self.device, q.interface, q.index, "queue_drop")
                    batch.drops.append(DropSample(key, t, q.dropped_packets))
        for c in counters.pfc:
            if c.priority is None or not self._watched(c.priority):
                continue
            if c.frames is None and c.duration_us is None:
                continue
            d = Direction(c.direction)
            progress = drain.get((c.interface, c.priority)) if d is Direction.RX else None
            batch.pause.append(PauseSample(
                ChannelKey(Scope.SWITCH, self.device, c.interface, c.priority, d), t,
                pause_s=c.duration_us / 1e6 if c.duration_us is not None else None,
                frames=c.frames, progress=progress,
            ))
        for w in counters.pfcwd:
            if self._watched(w.queue):
                batch.wd.append(WdSample(WdKey(self.device, w.interface, w.queue), t, w.detected, w.restored))
        return batch

    def _watched(self, prio: int) -> bool:
        return self.priorities is None or prio in self.priorities
