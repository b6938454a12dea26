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
    """Which raw ethtool names one interface needs, decided from a full parse of its statistics."""

    driver: str | None
    channels: list[_Channel]
    drops: list[_Drop]
    epoch_name: bytes | None
    names: tuple[bytes, ...]


def _value(data: bytes, name: bytes) -> int | None:
    """The integer after ``name:`` on a line of ``ethtool -S`` text, or None. ``name`` must start the line's
    text (after indentation), so ``rx_prio3_pause`` never matches ``rx_prio3_pause_duration`` or ``xrx_...``."""
    needle = name + b":"
    start = 0
    while True:
        i = data.find(needle, start)
        if i < 0:
            return None
        if i == 0 or data[i - 1] in b" \t\n":
            j = i + len(needle)
            end = data.find(b"\n", j)
            text = data[j:end] if end >= 0 else data[j:]
            try:
                return int(text)
            except ValueError:
                return None
        start = i + 1


def _lookup(raw: bytes | Mapping[str, int], names: Iterable[bytes]) -> dict[bytes, int | None]:
    if isinstance(raw, bytes):
        return {n: _value(raw, n) for n in names}
    return {n: raw.get(n.decode()) for n in names}


class HostSource:
    """Samples one host's NIC ports for the watchdog.

    ``device`` names the host in events (the inventory host name, or this machine's hostname). ``priorities``
    limits the watched priorities (the intent's lossless ones); None watches every priority with pause counters.
    ``interfaces`` limits the ports (the host's NIC netdevs in the inventory); None watches every interface the
    root has statistics for. ``raw_stats`` replaces the replay root's ``ethtool/<if>.stats`` files with a live
    provider. ``drop_every`` reads RDMA ``out_of_buffer`` every N polls (it changes slowly and costs a file each).
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
        replan_every: int = 200,
    ) -> None:
        self.root = os.fspath(root)
        self.device = device
        self.name = f"host:{device}"
        self.priorities = frozenset(priorities) if priorities is not None else None
        self.interfaces = list(interfaces) if interfaces is not None else None
        self.raw_stats = raw_stats
        self.drop_every = max(1, drop_every)
        self.replan_every = max(1, replan_every)
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

    def _raw(self, iface: str) -> bytes | Mapping[str, int] | None:
        if self.raw_stats is not None:
            return self.raw_stats(iface)
        try:
            return read_bytes(os.path.join(self._eth, iface + ".stats"))
        except OSError:
            return None

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
        epoch = next((n.encode() for n in LINK_FLAP_COUNTERS if n in values), None)
        names = {c for ch in channels for c in (ch.duration, ch.frames, ch.progress) if c is not None}
        names.update(dr.name for dr in drops)
        if epoch is not None:
            names.add(epoch)
        return _Plan(driver, channels, drops, epoch, tuple(sorted(names)))

    # -- polling ------------------------------------------------------------------------------------------------

    def _link(self, iface: str) -> tuple[bool | None, int | None]:
        base = os.path.join(self._net, iface)
        up: bool | None = None
        epoch: int | None = None
        try:
            state = read_bytes(os.path.join(base, "operstate")).strip()
            up = state in (b"up", b"unknown") if state else None
        except OSError:
            pass
        with contextlib.suppress(OSError, ValueError):
            epoch = int(read_bytes(os.path.join(base, "carrier_changes")))
        return up, epoch

    def poll(self, t: float) -> Batch:
        """Read every watched port once; ``t`` is the monotonic time of the poll (seconds)."""
        batch = Batch()
        self._polls += 1
        replan = self._polls % self.replan_every == 0
        read_drops = self._polls % self.drop_every == 1 or self.drop_every == 1
        for iface in self._ports():
            raw = self._raw(iface)
            if raw is None:
                if iface in self._plans:
                    batch.problems.append(f"{self.device}:{iface}: statistics vanished")
                continue
            plan = self._plans.get(iface)
            if plan is None or replan:
                plan = self._plans[iface] = self._plan(iface, raw)
            vals = _lookup(raw, plan.names)
            up, epoch = self._link(iface)
            if epoch is None and plan.epoch_name is not None:
                epoch = vals.get(plan.epoch_name)
            for ch in plan.channels:
                dur = vals.get(ch.duration) if ch.duration is not None else None
                frm = vals.get(ch.frames) if ch.frames is not None else None
                if (ch.duration is not None and dur is None) or (ch.duration is None and frm is None):
                    continue  # a torn or partial read: skip this poll for the channel, never guess
                prog = vals.get(ch.progress) if ch.progress is not None else None
                batch.pause.append(PauseSample(
                    ch.key, t, pause_s=dur / 1e6 if dur is not None else None, frames=frm, progress=prog,
                    link_up=up, link_epoch=epoch,
                ))
            if read_drops:
                for dr in plan.drops:
                    batch.drops.append(DropSample(dr.key, t, vals.get(dr.name)))
        if read_drops:
            batch.drops.extend(self._rdma_drops(t))
        return batch

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
