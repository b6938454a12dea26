"""NIC collector: per-priority PFC, per-priority traffic, discards and pause-storm events from ethtool statistics,
normalised across drivers by :mod:`fabricd.readers.ethtool_maps` (labels, not names, carry priority and direction).

Sources: a replay root's ``DIR/ethtool/<if>.stats`` (:class:`ReplayEthtoolSource`) or the live ETHTOOL_GSTATS ioctl
(:class:`fabricd.sources.ethtool_live.LiveEthtoolSource`). Pause durations are microseconds in every driver map
and are exported in seconds.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from fabricd.readers import ethtool_maps as k
from fabricd.readers.ethtool import (
    CounterKey,
    EthtoolStats,
    NamesLayout,
    StatsLayout,
    list_ethtool_interfaces,
    read_ethtool,
)
from fabricd.sources.kept import Clock, Layouts
from fabricd.sources.kept_files import EthtoolFiles

from .core import MetricSpec, Scrape

SRC = "ethtool -S (ETHTOOL_GSTATS), normalised per driver"

NIC_INFO = MetricSpec(
    "fabricd_nic_info",
    "gauge",
    "NIC identity from ethtool -i: driver, driver version and firmware; value 1.",
    ("interface", "driver", "firmware", "version"),
    "ethtool -i (ETHTOOL_GDRVINFO)",
)
PFC_PAUSE_FRAMES = MetricSpec(
    "fabricd_nic_pfc_pause_frames_total",
    "counter",
    "PFC pause (XOFF) frames per priority; direction rx = received from the peer (this NIC was paused), "
    "tx = sent (this NIC asked its peer to stop).",
    ("interface", "priority", "direction"),
    SRC,
)
PFC_PAUSE_DURATION = MetricSpec(
    "fabricd_nic_pfc_pause_duration_seconds_total",
    "counter",
    "Time the priority spent paused, in seconds (driver microseconds / 1e6); rx = this NIC was paused, "
    "tx = this NIC paused its peer. The storm signal: its rate is the fraction of time paused.",
    ("interface", "priority", "direction"),
    SRC,
)
PFC_PAUSE_TRANSITIONS = MetricSpec(
    "fabricd_nic_pfc_pause_transitions_total",
    "counter",
    "Times the priority went from not paused to paused.",
    ("interface", "priority", "direction"),
    SRC,
)
PFC_RESUME_FRAMES = MetricSpec(
    "fabricd_nic_pfc_resume_frames_total",
    "counter",
    "PFC XON frames (pause with zero quanta) per priority (Intel drivers).",
    ("interface", "priority", "direction"),
    SRC,
)
PRIORITY_BYTES = MetricSpec(
    "fabricd_nic_priority_bytes_total",
    "counter",
    "Bytes per 802.1p priority, in bytes.",
    ("interface", "priority", "direction"),
    SRC,
)
PRIORITY_PACKETS = MetricSpec(
    "fabricd_nic_priority_packets_total",
    "counter",
    "Packets per 802.1p priority.",
    ("interface", "priority", "direction"),
    SRC,
)
PRIORITY_DISCARDS = MetricSpec(
    "fabricd_nic_priority_discards_total",
    "counter",
    "Packets discarded per priority; reason port_buffer (the NIC's port buffer was full), host_buffer, "
    "host_congestion.",
    ("interface", "priority", "direction", "reason"),
    SRC,
)
PRIORITY_ECN_MARKED = MetricSpec(
    "fabricd_nic_priority_ecn_marked_packets_total",
    "counter",
    "Packets the NIC marked with ECN CE per priority (mlx5 rx_prioN_marked).",
    ("interface", "priority", "direction"),
    SRC,
)
LINK_PAUSE_FRAMES = MetricSpec(
    "fabricd_nic_link_pause_frames_total",
    "counter",
    "IEEE 802.3x global pause frames (not PFC). Non-zero on a RoCE port usually means PFC is not configured.",
    ("interface", "direction"),
    SRC,
)
LINK_RESUME_FRAMES = MetricSpec(
    "fabricd_nic_link_resume_frames_total", "counter", "IEEE 802.3x XON frames.", ("interface", "direction"), SRC
)
LINK_PAUSE_DURATION = MetricSpec(
    "fabricd_nic_link_pause_duration_seconds_total",
    "counter",
    "Time paused by 802.3x global pause, in seconds.",
    ("interface", "direction"),
    SRC,
)
LINK_PAUSE_TRANSITIONS = MetricSpec(
    "fabricd_nic_link_pause_transitions_total",
    "counter",
    "Times the port went from not paused to paused (global).",
    ("interface", "direction"),
    SRC,
)
DISCARDS = MetricSpec(
    "fabricd_nic_discards_total",
    "counter",
    "Packets the NIC discarded; reason rx_port_buffer (port buffer full: lossless traffic should never see it), "
    "rx_out_of_buffer (no receive descriptor/WQE: the host did not keep up), rx_port, tx_port, tx_link_down.",
    ("interface", "reason"),
    SRC,
)
PAUSE_STORM_EVENTS = MetricSpec(
    "fabricd_nic_pause_storm_events_total",
    "counter",
    "The NIC's own pause-storm protection events; level warning/error (mlx5), detected/resumed (bnxt).",
    ("interface", "level"),
    SRC,
)

_PER_PRIORITY = {
    k.PAUSE_FRAMES: PFC_PAUSE_FRAMES,
    k.PAUSE_TRANSITIONS: PFC_PAUSE_TRANSITIONS,
    k.RESUME_FRAMES: PFC_RESUME_FRAMES,
    k.PRIORITY_BYTES: PRIORITY_BYTES,
    k.PRIORITY_PACKETS: PRIORITY_PACKETS,
    k.PRIORITY_ECN_MARKED: PRIORITY_ECN_MARKED,
}
_PER_LINK = {
    k.LINK_PAUSE_FRAMES: LINK_PAUSE_FRAMES,
    k.LINK_RESUME_FRAMES: LINK_RESUME_FRAMES,
    k.LINK_PAUSE_TRANSITIONS: LINK_PAUSE_TRANSITIONS,
}
_PRIO = tuple(str(p) for p in range(8))

_ORDER: tuple[MetricSpec, ...] = (
    NIC_INFO,
    *_PER_PRIORITY.values(),
    *_PER_LINK.values(),
    PFC_PAUSE_DURATION,
    LINK_PAUSE_DURATION,
    PRIORITY_DISCARDS,
    DISCARDS,
    PAUSE_STORM_EVENTS,
)
"""Families in the order a scrape creates them (the exposition's order)."""
_SLOT = {spec.name: i for i, spec in enumerate(_ORDER)}

Route = tuple[int, tuple[str, ...], float | None]
"""Where one normalised counter goes: family slot in ``_ORDER``, labels, divisor (µs -> s) or None."""


def route(key: CounterKey, interface: str) -> Route | None:
    """The family, labels and unit conversion of one normalised counter of ``interface`` (None: not exported)."""
    if key.priority is not None:
        return _priority_route(key, interface, _PRIO[key.priority])
    return _link_route(key, interface)


def _priority_route(key: CounterKey, interface: str, prio: str) -> Route | None:
    """A per-priority counter: PFC frames and the like, pause time (µs -> s), discards by reason."""
    kind, d = key.counter, key.direction or ""
    spec = _PER_PRIORITY.get(kind)
    if spec is not None:
        return _SLOT[spec.name], (interface, prio, d), None
    if kind == k.PAUSE_DURATION_US:
        return _SLOT[PFC_PAUSE_DURATION.name], (interface, prio, d), 1e6
    if kind == k.PRIORITY_DISCARDS:
        return _SLOT[PRIORITY_DISCARDS.name], (interface, prio, d, key.qualifier or ""), None
    return None


_BY_QUALIFIER = {k.DISCARDS: DISCARDS, k.PAUSE_STORM_EVENTS: PAUSE_STORM_EVENTS}
"""Link counters labelled by their qualifier (the reason) instead of a direction."""


def _link_route(key: CounterKey, interface: str) -> Route | None:
    """A per-link counter: link pause frames and the like, pause time (µs -> s), discards and storm events."""
    kind = key.counter
    spec = _PER_LINK.get(kind)
    if spec is not None:
        return _SLOT[spec.name], (interface, key.direction or ""), None
    if kind == k.LINK_PAUSE_DURATION_US:
        return _SLOT[LINK_PAUSE_DURATION.name], (interface, key.direction or ""), 1e6
    spec = _BY_QUALIFIER.get(kind)
    if spec is not None:
        return _SLOT[spec.name], (interface, key.qualifier or ""), None
    return None


class EthtoolSource(Protocol):
    """Where ethtool statistics come from: interface discovery and one snapshot per interface."""

    def interfaces(self) -> list[str]: ...

    def read(self, interface: str) -> EthtoolStats: ...


@runtime_checkable
class CountersSource(Protocol):
    """A source that can also give only the counters :meth:`EthtoolSource.read` would normalise, through a layout
    cached while the statistic names stay the same (the replay text's, or the live ioctl's)."""

    def counters(self, interface: str) -> tuple[StatsLayout | NamesLayout, list[int]] | None:
        """``(layout, values)`` with ``values[i]`` the value of ``layout.selection[i]``; None: use ``read``."""
        ...

    def forget_others(self, interfaces: set[str]) -> None: ...


class ReplayEthtoolSource:
    """``DIR/ethtool/<if>.stats`` and ``.info`` of a replay root, re-read on every call. By default only the
    statistics with a normalised meaning are converted (``full=True`` keeps every raw value).

    :attr:`files` reads the same files through kept-open descriptors with each text's layout cached
    (:class:`fabricd.sources.kept_files.EthtoolFiles`); ``kept_files=False`` turns that off.
    """

    def __init__(
        self, root: str | os.PathLike[str], *, full: bool = False, kept_files: bool = True, clock: Clock = time.time_ns
    ) -> None:
        self.root = os.fspath(root)
        self.full = full
        self.files = EthtoolFiles(self.root, Layouts(clock=clock, enabled=kept_files and not full))

    def interfaces(self) -> list[str]:
        return list_ethtool_interfaces(self.root)

    def read(self, interface: str) -> EthtoolStats:
        return read_ethtool(self.root, interface, full=self.full)

    def counters(self, interface: str) -> tuple[StatsLayout, list[int]] | None:
        return self.files.counters(interface)

    def forget_others(self, interfaces: set[str]) -> None:
        self.files.forget_others(interfaces)


class NicCollector:
    """``nic``: normalised ethtool counters of every interface the source lists (optionally filtered by a regex).

    With a :class:`CountersSource` (the replay text's :class:`ReplayEthtoolSource`, the live ioctl's
    ``LiveEthtoolSource``) and no ``on_snapshot``, interfaces are read through ``counters``: the same samples from
    a layout cached while the statistic names are unchanged, without building a snapshot of every statistic; the
    snapshot path (``read``) remains for everything else and is the only source of problems.
    """

    name = "nic"
    metrics: tuple[MetricSpec, ...] = (
        NIC_INFO,
        PFC_PAUSE_FRAMES,
        PFC_PAUSE_DURATION,
        PFC_PAUSE_TRANSITIONS,
        PFC_RESUME_FRAMES,
        PRIORITY_BYTES,
        PRIORITY_PACKETS,
        PRIORITY_DISCARDS,
        PRIORITY_ECN_MARKED,
        LINK_PAUSE_FRAMES,
        LINK_RESUME_FRAMES,
        LINK_PAUSE_DURATION,
        LINK_PAUSE_TRANSITIONS,
        DISCARDS,
        PAUSE_STORM_EVENTS,
    )

    def __init__(
        self,
        source: EthtoolSource,
        *,
        include: re.Pattern[str] | None = None,
        on_snapshot: Callable[[EthtoolStats], None] | None = None,
    ) -> None:
        self.source = source
        self.include = include
        self.on_snapshot = on_snapshot
        self._fast = source if isinstance(source, CountersSource) and on_snapshot is None else None
        self._routes: dict[str, tuple[StatsLayout | NamesLayout, list[tuple[int, Route]]]] = {}

    def _compiled(self, interface: str, layout: StatsLayout | NamesLayout) -> list[tuple[int, Route]]:
        cached = self._routes.get(interface)
        if cached is None or cached[0] is not layout:
            routes = [(i, r) for i, (key, _) in enumerate(layout.selection) if (r := route(key, interface))]
            cached = self._routes[interface] = (layout, routes)
        return cached[1]

    def collect(self, scrape: Scrape) -> None:
        lists = [scrape.family(spec).samples for spec in _ORDER]
        info = lists[0]
        seen: set[str] = set()
        for ifname in self.source.interfaces():
            if self.include is not None and not self.include.search(ifname):
                continue
            seen.add(ifname)
            fast = self._fast.counters(ifname) if self._fast is not None else None
            if fast is not None:
                layout, values = fast
                i = layout.info
                info.append(((ifname, i.driver or "", i.firmware or "", i.version or ""), 1))
                for index, (slot, labels, divisor) in self._compiled(ifname, layout):
                    value = values[index]
                    lists[slot].append((labels, value if divisor is None else value / divisor))
                continue
            try:
                stats = self.source.read(ifname)
            except OSError as exc:
                scrape.problem(f"{ifname}: {exc}")
                continue
            for problem in stats.problems:
                scrape.problem(str(problem))
            if self.on_snapshot is not None:
                self.on_snapshot(stats)
            if not stats.raw and stats.problems:
                continue
            i = stats.info
            info.append(((ifname, i.driver or stats.driver or "", i.firmware or "", i.version or ""), 1))
            for c in stats.counters:
                r = route(c.key, ifname)
                if r is not None:
                    slot, labels, divisor = r
                    lists[slot].append((labels, c.value if divisor is None else c.value / divisor))
        if self._fast is not None:
            self._fast.forget_others(seen)
            for gone in [n for n in self._routes if n not in seen]:
                del self._routes[gone]
