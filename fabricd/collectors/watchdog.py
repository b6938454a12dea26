"""Watchdog collector: the in-process PFC storm watchdog's state (``fabricd serve``).

Families (built fresh on every scrape from the watchdog's current state):

- ``fabricd_pfc_storm_active{scope,device,interface,priority,direction}``: 1 while the watchdog holds a storm on
  that channel, else 0 (every watched channel is listed, so a storm's end is a 0, not a missing series);
- ``fabricd_pfc_storms_detected_total{...}`` / ``fabricd_pfc_storms_restored_total{...}``: storms declared and
  cleared since the watchdog started;
- ``fabricd_pfc_storm_origin_info{scope,device,interface,priority,kind}``: 1 for each current root of a pause tree
  (the most likely origin port); ``fabricd_pfc_storm_origin_affected_ports`` the active storms leading to it;
- ``fabricd_watchdog_poll_overruns_total``: polls that ended after the next poll was due;
- ``fabricd_watchdog_{detection,restoration,poll}_seconds``: the timers in force;
- ``fabricd_policy_priority{priority,role}``: the intent's lossless, RoCE and CNP priorities, which the shipped
  alert rules join on (``fabricd:lossless_priority``, ``fabricd:roce_priority``).

This module does not import :mod:`fabricd.watchdog` (import-linter keeps L2 siblings independent): it reads any
object with the :class:`WatchdogView` shape, which ``fabricd.watchdog.runner.Watchdog`` has.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .core import MetricSpec, Scrape

SRC = "fabricd watchdog (in-process detector, fabricd serve / fabricd watch)"
CHANNEL = ("scope", "device", "interface", "priority", "direction")

STORM_ACTIVE = MetricSpec(
    "fabricd_pfc_storm_active",
    "gauge",
    "1 while the fabricd watchdog holds a PFC storm on this port, priority and direction (rx: the port is paused; "
    "tx: the port sends pause because its receiver does not drain), else 0.",
    CHANNEL,
    SRC,
)
STORMS_DETECTED = MetricSpec(
    "fabricd_pfc_storms_detected_total",
    "counter",
    "PFC storms the watchdog declared (continuous pause for the detection time) since it started.",
    CHANNEL,
    SRC,
)
STORMS_RESTORED = MetricSpec(
    "fabricd_pfc_storms_restored_total",
    "counter",
    "PFC storms the watchdog cleared (no pause for the restoration time) since it started.",
    CHANNEL,
    SRC,
)
STORM_ORIGIN = MetricSpec(
    "fabricd_pfc_storm_origin_info",
    "gauge",
    "1 for each current root of a PFC pause tree: the port named as the storms' most likely origin; kind "
    "stalled_receiver (a NIC sending pause), switch_congestion or inferred_peer (an unwatched link peer).",
    ("scope", "device", "interface", "priority", "kind"),
    SRC,
)
STORM_ORIGIN_AFFECTED = MetricSpec(
    "fabricd_pfc_storm_origin_affected_ports",
    "gauge",
    "Active storm channels whose pause leads back to this origin port.",
    ("device", "interface", "priority"),
    SRC,
)
POLL_OVERRUNS = MetricSpec(
    "fabricd_watchdog_poll_overruns_total",
    "counter",
    "Watchdog polls that ended after the next poll was due (detection may then exceed detection + poll).",
    (),
    SRC,
)
DETECTION = MetricSpec(
    "fabricd_watchdog_detection_seconds", "gauge", "Continuous pause needed to declare a storm, in seconds.", (), SRC
)
RESTORATION = MetricSpec(
    "fabricd_watchdog_restoration_seconds", "gauge", "Pause-free time needed to clear a storm, in seconds.", (), SRC
)
POLL = MetricSpec("fabricd_watchdog_poll_seconds", "gauge", "Watchdog sampling period, in seconds.", (), SRC)
POLICY_PRIORITY = MetricSpec(
    "fabricd_policy_priority",
    "gauge",
    "1 for each priority the intent gives a role: lossless (policy.pfc.priorities), roce (policy.qos.roce), "
    "cnp (policy.qos.cnp). The shipped alert rules join on it.",
    ("priority", "role"),
    "inventory policy",
)

METRICS: tuple[MetricSpec, ...] = (
    STORM_ACTIVE,
    STORMS_DETECTED,
    STORMS_RESTORED,
    STORM_ORIGIN,
    STORM_ORIGIN_AFFECTED,
    POLL_OVERRUNS,
    DETECTION,
    RESTORATION,
    POLL,
    POLICY_PRIORITY,
)


class PortPriorityView(Protocol):
    """Where a channel or an origin is: scope (nic | switch), device, interface and priority."""

    @property
    def scope(self) -> str: ...
    @property
    def device(self) -> str: ...
    @property
    def interface(self) -> str: ...
    @property
    def priority(self) -> int: ...


class ChannelView(PortPriorityView, Protocol):
    @property
    def direction(self) -> str: ...
    @property
    def active(self) -> bool: ...
    @property
    def detected(self) -> int: ...
    @property
    def restored(self) -> int: ...


class OriginView(PortPriorityView, Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def affected(self) -> int: ...


class ParamsView(Protocol):
    @property
    def detection_s(self) -> float: ...
    @property
    def restoration_s(self) -> float: ...
    @property
    def poll_s(self) -> float: ...


class WatchdogView(Protocol):
    """What the collector reads."""

    @property
    def params(self) -> ParamsView: ...
    @property
    def poll_overruns(self) -> int: ...
    @property
    def policy_priorities(self) -> tuple[tuple[int, str], ...]: ...
    def channel_stats(self) -> Sequence[ChannelView]: ...
    def origin_stats(self) -> Sequence[OriginView]: ...


class WatchdogCollector:
    """Exposes a running watchdog. Register it in the exporter's :class:`~fabricd.collectors.core.Registry`."""

    name = "watchdog"
    metrics = METRICS

    def __init__(self, watchdog: WatchdogView) -> None:
        self.watchdog = watchdog

    def collect(self, scrape: Scrape) -> None:
        wd = self.watchdog
        active = scrape.family(STORM_ACTIVE)
        detected = scrape.family(STORMS_DETECTED)
        restored = scrape.family(STORMS_RESTORED)
        channels = sorted(wd.channel_stats(), key=lambda c: (c.scope, c.device, c.interface, c.priority, c.direction))
        for ch in channels:
            labels = (str(ch.scope), ch.device, ch.interface, str(ch.priority), str(ch.direction))
            active.add(labels, 1 if ch.active else 0)
            detected.add(labels, ch.detected)
            restored.add(labels, ch.restored)
        origin = scrape.family(STORM_ORIGIN)
        affected = scrape.family(STORM_ORIGIN_AFFECTED)
        for o in wd.origin_stats():
            origin.add((str(o.scope), o.device, o.interface, str(o.priority), str(o.kind)), 1)
            affected.add((o.device, o.interface, str(o.priority)), o.affected)
        scrape.family(POLL_OVERRUNS).add((), wd.poll_overruns)
        p = wd.params
        scrape.family(DETECTION).add((), p.detection_s)
        scrape.family(RESTORATION).add((), p.restoration_s)
        scrape.family(POLL).add((), p.poll_s)
        policy = scrape.family(POLICY_PRIORITY)
        for prio, role in sorted(set(wd.policy_priorities)):
            policy.add((str(prio), role), 1)
