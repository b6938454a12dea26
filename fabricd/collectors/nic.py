"""NIC collector: per-priority PFC, per-priority traffic, discards and pause-storm events from ethtool statistics,
normalised across drivers by :mod:`fabricd.readers.ethtool_maps` (labels, not names, carry priority and direction).

Sources: a replay root's ``DIR/ethtool/<if>.stats`` (:class:`ReplayEthtoolSource`) or the live ETHTOOL_GSTATS ioctl
(:class:`fabricd.collectors.ethtool_live.LiveEthtoolSource`). Pause durations are microseconds in every driver map
and are exported in seconds.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Protocol

from fabricd.readers import ethtool_maps as k
from fabricd.readers.ethtool import EthtoolStats, list_ethtool_interfaces, read_ethtool

from .core import MetricSpec, Scrape

SRC = "ethtool -S (ETHTOOL_GSTATS), normalised per driver"

NIC_INFO = MetricSpec(
    "fabricd_nic_info", "gauge", "NIC identity from ethtool -i: driver, driver version and firmware; value 1.",
    ("interface", "driver", "firmware", "version"), "ethtool -i (ETHTOOL_GDRVINFO)")
PFC_PAUSE_FRAMES = MetricSpec(
    "fabricd_nic_pfc_pause_frames_total", "counter",
    "PFC pause (XOFF) frames per priority; direction rx = received from the peer (this NIC was paused), "
    "tx = sent (this NIC asked its peer to stop).",
    ("interface", "priority", "direction"), SRC)
PFC_PAUSE_DURATION = MetricSpec(
    "fabricd_nic_pfc_pause_duration_seconds_total", "counter",
    "Time the priority spent paused, in seconds (driver microseconds / 1e6); rx = this NIC was paused, "
    "tx = this NIC paused its peer. The storm signal: its rate is the fraction of time paused.",
    ("interface", "priority", "direction"), SRC)
PFC_PAUSE_TRANSITIONS = MetricSpec(
    "fabricd_nic_pfc_pause_transitions_total", "counter",
    "Times the priority went from not paused to paused.", ("interface", "priority", "direction"), SRC)
PFC_RESUME_FRAMES = MetricSpec(
    "fabricd_nic_pfc_resume_frames_total", "counter",
    "PFC XON frames (pause with zero quanta) per priority (Intel drivers).", ("interface", "priority", "direction"),
    SRC)
PRIORITY_BYTES = MetricSpec(
    "fabricd_nic_priority_bytes_total", "counter", "Bytes per 802.1p priority, in bytes.",
    ("interface", "priority", "direction"), SRC)
PRIORITY_PACKETS = MetricSpec(
    "fabricd_nic_priority_packets_total", "counter", "Packets per 802.1p priority.",
    ("interface", "priority", "direction"), SRC)
PRIORITY_DISCARDS = MetricSpec(
    "fabricd_nic_priority_discards_total", "counter",
    "Packets discarded per priority; reason port_buffer (the NIC's port buffer was full), host_buffer, "
    "host_congestion.", ("interface", "priority", "direction", "reason"), SRC)
PRIORITY_ECN_MARKED = MetricSpec(
    "fabricd_nic_priority_ecn_marked_packets_total", "counter",
    "Packets the NIC marked with ECN CE per priority (mlx5 rx_prioN_marked).", ("interface", "priority", "direction"),
    SRC)
LINK_PAUSE_FRAMES = MetricSpec(
    "fabricd_nic_link_pause_frames_total", "counter",
    "IEEE 802.3x global pause frames (not PFC). Non-zero on a RoCE port usually means PFC is not configured.",
    ("interface", "direction"), SRC)
LINK_RESUME_FRAMES = MetricSpec(
    "fabricd_nic_link_resume_frames_total", "counter", "IEEE 802.3x XON frames.", ("interface", "direction"), SRC)
LINK_PAUSE_DURATION = MetricSpec(
    "fabricd_nic_link_pause_duration_seconds_total", "counter", "Time paused by 802.3x global pause, in seconds.",
    ("interface", "direction"), SRC)
LINK_PAUSE_TRANSITIONS = MetricSpec(
    "fabricd_nic_link_pause_transitions_total", "counter", "Times the port went from not paused to paused (global).",
    ("interface", "direction"), SRC)
DISCARDS = MetricSpec(
    "fabricd_nic_discards_total", "counter",
    "Packets the NIC discarded; reason rx_port_buffer (port buffer full: lossless traffic should never see it), "
    "rx_out_of_buffer (no receive descriptor/WQE: the host did not keep up), rx_port, tx_port, tx_link_down.",
    ("interface", "reason"), SRC)
PAUSE_STORM_EVENTS = MetricSpec(
    "fabricd_nic_pause_storm_events_total", "counter",
    "The NIC's own pause-storm protection events; level warning/error (mlx5), detected/resumed (bnxt).",
    ("interface", "level"), SRC)

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


class EthtoolSource(Protocol):
    """Where ethtool statistics come from: interface discovery and one snapshot per interface."""

    def interfaces(self) -> list[str]: ...

    def read(self, interface: str) -> EthtoolStats: ...


class ReplayEthtoolSource:
    """``DIR/ethtool/<if>.stats`` and ``.info`` of a replay root, re-read on every call. By default only the
    statistics with a normalised meaning are converted (``full=True`` keeps every raw value)."""

    def __init__(self, root: str | os.PathLike[str], *, full: bool = False) -> None:
        self.root = os.fspath(root)
        self.full = full

    def interfaces(self) -> list[str]:
        return list_ethtool_interfaces(self.root)

    def read(self, interface: str) -> EthtoolStats:
        return read_ethtool(self.root, interface, full=self.full)


class NicCollector:
    """``nic``: normalised ethtool counters of every interface the source lists (optionally filtered by a regex)."""

    name = "nic"
    metrics: tuple[MetricSpec, ...] = (
        NIC_INFO, PFC_PAUSE_FRAMES, PFC_PAUSE_DURATION, PFC_PAUSE_TRANSITIONS, PFC_RESUME_FRAMES, PRIORITY_BYTES,
        PRIORITY_PACKETS, PRIORITY_DISCARDS, PRIORITY_ECN_MARKED, LINK_PAUSE_FRAMES, LINK_RESUME_FRAMES,
        LINK_PAUSE_DURATION, LINK_PAUSE_TRANSITIONS, DISCARDS, PAUSE_STORM_EVENTS,
    )

    def __init__(self, source: EthtoolSource, *, include: re.Pattern[str] | None = None,
                 on_snapshot: Callable[[EthtoolStats], None] | None = None) -> None:
        self.source = source
        self.include = include
        self.on_snapshot = on_snapshot

    def collect(self, scrape: Scrape) -> None:
        fam = scrape.family
        info = fam(NIC_INFO)
        per_prio = {kind: fam(spec) for kind, spec in _PER_PRIORITY.items()}
        per_link = {kind: fam(spec) for kind, spec in _PER_LINK.items()}
        duration = fam(PFC_PAUSE_DURATION)
        link_duration = fam(LINK_PAUSE_DURATION)
        prio_discards = fam(PRIORITY_DISCARDS)
        discards = fam(DISCARDS)
        storms = fam(PAUSE_STORM_EVENTS)
        for ifname in self.source.interfaces():
            if self.include is not None and not self.include.search(ifname):
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
            info.add((ifname, i.driver or stats.driver or "", i.firmware or "", i.version or ""), 1)
            for c in stats.counters:
                key = c.key
                kind = key.counter
                d = key.direction or ""
                p = key.priority
                if p is not None:
                    ps = _PRIO[p]
                    target = per_prio.get(kind)
                    if target is not None:
                        target.samples.append(((ifname, ps, d), c.value))
                    elif kind == k.PAUSE_DURATION_US:
                        duration.samples.append(((ifname, ps, d), c.value / 1e6))
                    elif kind == k.PRIORITY_DISCARDS:
                        prio_discards.samples.append(((ifname, ps, d, key.qualifier or ""), c.value))
                    continue
                target = per_link.get(kind)
                if target is not None:
                    target.samples.append(((ifname, d), c.value))
                elif kind == k.LINK_PAUSE_DURATION_US:
                    link_duration.samples.append(((ifname, d), c.value / 1e6))
                elif kind == k.DISCARDS:
                    discards.samples.append(((ifname, key.qualifier or ""), c.value))
                elif kind == k.PAUSE_STORM_EVENTS:
                    storms.samples.append(((ifname, key.qualifier or ""), c.value))
