"""Discovery: which ports a watched host has, and which of each port's counters the watchdog reads.

:class:`Discovery` lists the ports to watch (the given ones, or every one the host has statistics for) and each
one's driver. :func:`plan_counters` decides, from one full parse of a port's statistics, which raw ``ethtool -S``
names matter: per priority and direction the pause duration (or the pause frames where there is no duration) and
the drain counter (packets moving the other way), the drop counters, and the link-flap counter where sysfs has no
``carrier_changes``. The driver's name map (``readers.ethtool_maps``) classifies the names. Reading them on every
poll is :mod:`fabricd.watchdog.reading`'s job.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fabricd.readers import ethtool_maps as kinds
from fabricd.readers.common import read_bytes
from fabricd.readers.ethtool import CounterKey, driver_of, list_ethtool_interfaces, name_map, stats_or_nothing

from .files import HostTree
from .types import ChannelKey, Direction, DropKey, Scope

LINK_FLAP_COUNTERS: tuple[str, ...] = ("link_down_events_phy",)
"""ethtool names that count link-down events, used when sysfs ``carrier_changes`` is absent (mlx5 counters.rst)."""

DROP_REASONS: dict[tuple[str, str | None], str] = {
    (kinds.DISCARDS, "rx_port_buffer"): "buffer_discard",
    (kinds.DISCARDS, "rx_out_of_buffer"): "out_of_buffer",
}
"""Port-level NIC discards that mean a loss on the lossless path, and the event reason they get."""

_PAUSE = (kinds.PAUSE_FRAMES, kinds.PAUSE_DURATION_US)


class Discovery:
    """The ports of one host to watch, and their drivers.

    ``interfaces`` limits the ports (the host's NIC netdevs in the inventory); None watches every interface the
    tree has statistics for (every ``sys/class/net`` entry with a live provider), plus any watched before (a port
    that vanished is still visited, which reports it). The list is taken again every ``every`` polls."""

    def __init__(self, tree: HostTree, interfaces: Iterable[str] | None, *, every: int) -> None:
        self.tree = tree
        self.interfaces = list(interfaces) if interfaces is not None else None
        self.every = max(1, every)
        self._cache: list[str] | None = None

    def ports(self, polls: int, known: Iterable[str]) -> list[str]:
        """The watched ports at poll number ``polls``; ``known``: the ports read before."""
        if self._cache is None or polls % self.every == 1:
            self._cache = self._list(known)
        return self._cache

    def _list(self, known: Iterable[str]) -> list[str]:
        if self.interfaces is not None:
            return self.interfaces
        tree = self.tree
        if tree.replay:
            found = list_ethtool_interfaces(tree.root)
        else:
            try:
                found = os.listdir(tree.net)
            except OSError:
                found = []
        return sorted(set(found) | set(known))

    def driver(self, iface: str) -> str | None:
        """The port's driver: the ``device/driver`` link of a live host, a replay root's ``ethtool -i`` text."""
        tree = self.tree
        if not tree.replay:
            try:
                link = os.readlink(os.path.join(tree.link_dir(iface), "device", "driver"))
            except OSError:
                return None
            return os.path.basename(link)
        try:
            text = read_bytes(os.path.join(tree.eth, iface + ".info")).decode("utf-8", "replace")
        except OSError:
            return None
        return driver_of(text)


@dataclass(frozen=True, slots=True)
class ChannelNames:
    """The raw names of one pause channel's counters (None: the port has none). With a duration counter the
    frames are not read (duration mode)."""

    key: ChannelKey
    duration: bytes | None
    frames: bytes | None
    progress: bytes | None


@dataclass(frozen=True, slots=True)
class PortDrop:
    """A drop counter of a port and its raw name."""

    key: DropKey
    name: bytes


@dataclass(frozen=True, slots=True)
class CounterPlan:
    """Which counters of one port the watchdog reads: its pause channels, its drops, the link-flap counter's name
    (``epoch``, only when sysfs has no ``carrier_changes``) and the path of ``carrier_changes`` (None: absent)."""

    channels: tuple[ChannelNames, ...]
    drops: tuple[PortDrop, ...]
    epoch: bytes | None
    carrier: str | None

    def names(self) -> tuple[bytes, ...]:
        """Every name looked up on each read, sorted: the channels' and the link-flap counter's."""
        wanted = {n for ch in self.channels for n in (ch.duration, ch.frames, ch.progress) if n is not None}
        if self.epoch is not None:
            wanted.add(self.epoch)
        return tuple(sorted(wanted))


def plan_counters(
    discovery: Discovery, iface: str, raw: bytes | Mapping[str, int], *, device: str, priorities: frozenset[int] | None
) -> CounterPlan:
    """The plan of port ``iface`` of host ``device`` from a full read of its statistics (``raw``: ``ethtool -S``
    text, or a live {name: value} mapping); ``priorities`` limits the watched priorities (None: every one with
    pause counters)."""
    values = stats_or_nothing(raw.decode("utf-8", "replace")) if isinstance(raw, bytes) else dict(raw)
    by_key = _classified(values, discovery.driver(iface))
    prios = _pause_priorities(by_key, priorities)
    channels = tuple(ch for prio in prios for ch in _channels(by_key, device, iface, prio))
    drops = (*_priority_drops(by_key, prios, device, iface), *_port_drops(by_key, device, iface))
    carrier: str | None = os.path.join(discovery.tree.link_dir(iface), "carrier_changes")
    if not os.path.exists(carrier):  # type: ignore[arg-type]
        carrier = None
    epoch = None if carrier is not None else next((n.encode() for n in LINK_FLAP_COUNTERS if n in values), None)
    return CounterPlan(channels, drops, epoch, carrier)


def _classified(values: Iterable[str], driver: str | None) -> dict[CounterKey, str]:
    """Each counter the driver's name map knows, with the first raw name that counts it."""
    classify = name_map(driver).classify
    by_key: dict[CounterKey, str] = {}
    for name in values:
        key = classify(name)
        if key is not None and key not in by_key:
            by_key[key] = name
    return by_key


def _pause_priorities(by_key: Mapping[CounterKey, str], wanted: frozenset[int] | None) -> list[int]:
    """The priorities with a pause counter, limited to ``wanted``."""
    prios = sorted({k.priority for k in by_key if k.counter in _PAUSE and k.priority is not None})
    return prios if wanted is None else [p for p in prios if p in wanted]


def _channels(by_key: Mapping[CounterKey, str], device: str, iface: str, prio: int) -> list[ChannelNames]:
    """The pause channels of one priority (rx, then tx) that have a duration or a frames counter."""

    def enc(counter: str, direction: str) -> bytes | None:
        name = by_key.get(CounterKey(counter, direction, prio))  # type: ignore[arg-type]
        return name.encode() if name is not None else None

    out: list[ChannelNames] = []
    for d in (Direction.RX, Direction.TX):
        dur = enc(kinds.PAUSE_DURATION_US, d.value)
        frm = enc(kinds.PAUSE_FRAMES, d.value)
        if dur is None and frm is None:
            continue
        prog = enc(kinds.PRIORITY_PACKETS, "tx" if d is Direction.RX else "rx")
        # with a duration counter the frames are not read (duration mode)
        out.append(ChannelNames(ChannelKey(Scope.NIC, device, iface, prio, d), dur, None if dur else frm, prog))
    return out


def _priority_drops(by_key: Mapping[CounterKey, str], prios: Iterable[int], device: str, iface: str) -> list[PortDrop]:
    """The per-priority discards of the watched priorities."""
    return [
        PortDrop(DropKey(Scope.NIC, device, iface, prio, f"{key.qualifier}_discard"), name.encode())
        for prio in prios
        for key, name in by_key.items()
        if key.counter == kinds.PRIORITY_DISCARDS and key.priority == prio
    ]


def _port_drops(by_key: Mapping[CounterKey, str], device: str, iface: str) -> list[PortDrop]:
    """The port-level discards of :data:`DROP_REASONS`."""
    out: list[PortDrop] = []
    for key, name in by_key.items():
        reason = DROP_REASONS.get((key.counter, key.qualifier))
        if reason is not None and key.priority is None:
            out.append(PortDrop(DropKey(Scope.NIC, device, iface, None, reason), name.encode()))
    return out
