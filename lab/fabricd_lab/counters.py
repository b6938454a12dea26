"""The fabric counter model behind every simulated switch's show commands.

Per port it holds, for each of the 8 priorities, PFC pause frames received and sent and the pause time they caused
(µs), and for each of the 8 egress queues the packets/bytes sent, dropped and ECN-marked. Per port and lossless
priority it runs a PFC watchdog with SONiC's semantics (sonic-swss ``pfc_detect_*.lua``, ``pfc_restore.lua``): a
queue is *stormed* once pause has been received continuously for ``detection_ms`` while the queue does not drain;
it is *restored* ``restoration_ms`` after the pause stops. With action ``drop``, traffic for a stormed queue is
dropped and counted in the watchdog's TX drop counter.

The model is driven by tests, benchmarks and users (``fabricd lab drive``): :meth:`DeviceCounters.traffic`,
:meth:`pause`, :meth:`drop`, :meth:`ecn_mark`, :meth:`storm_start`/:meth:`storm_stop`. Storms advance with the
injected clock (seconds, monotonic), so a test can step time instead of sleeping. Values only grow, as hardware
counters do, until :meth:`clear`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

PRIORITIES = tuple(range(8))
QUANTA_BITS = 512
"""One 802.1Qbb pause quantum is the time to send 512 bits at the port's speed."""


@dataclass(slots=True)
class PfcCounters:
    """PFC counters of one priority on one port. Pause times are in microseconds."""

    rx_frames: int = 0
    tx_frames: int = 0
    rx_pause_us: int = 0
    tx_pause_us: int = 0
    rx_transitions: int = 0


@dataclass(slots=True)
class QueueCounters:
    """Egress queue counters (unicast queue N carries traffic class N)."""

    tx_packets: int = 0
    tx_bytes: int = 0
    dropped_packets: int = 0
    dropped_bytes: int = 0
    ecn_marked_packets: int = 0
    ecn_marked_bytes: int = 0
    wred_dropped_packets: int = 0
    wred_dropped_bytes: int = 0


@dataclass(slots=True)
class WatchdogQueue:
    """PFC watchdog state of one lossless queue (SONiC COUNTERS_DB ``PFC_WD_QUEUE_STATS_*``)."""

    detected: int = 0
    restored: int = 0
    stormed: bool = False
    tx_ok: int = 0
    tx_drop: int = 0
    rx_ok: int = 0
    rx_drop: int = 0
    last_tx_ok: int = 0
    last_tx_drop: int = 0
    last_rx_ok: int = 0
    last_rx_drop: int = 0


@dataclass(slots=True)
class Storm:
    """A pause storm in progress (or ending) on one port and priority. Times are clock seconds."""

    direction: str
    started_s: float
    accounted_s: float
    frames_per_s: float
    stopped_s: float | None = None
    fraction: float = 0.0


@dataclass(slots=True)
class PortCounters:
    """Counters of one port. The 8 PFC and 8 queue records are created on first use, so an idle simulated switch
    costs little memory (200 switches x 32 ports in one process)."""

    name: str
    speed_bps: int
    _pfc: list[PfcCounters] | None = None
    _queues: list[QueueCounters] | None = None
    watchdog: dict[int, WatchdogQueue] = field(default_factory=dict)
    rx_packets: int = 0
    tx_packets: int = 0
    rx_bytes: int = 0
    tx_bytes: int = 0
    rx_drops: int = 0
    tx_drops: int = 0
    _watermarks: dict[str, list[int]] | None = None

    @property
    def watermarks(self) -> dict[str, list[int]]:
        """Peak buffer occupancy in bytes since the last clear, per kind: ``pg_shared`` and ``pg_headroom`` (ingress
        priority group N = priority N), ``queue`` (egress unicast queue N)."""
        if self._watermarks is None:
            self._watermarks = {k: [0] * len(PRIORITIES) for k in ("pg_shared", "pg_headroom", "queue")}
        return self._watermarks

    @property
    def pfc(self) -> list[PfcCounters]:
        if self._pfc is None:
            self._pfc = [PfcCounters() for _ in PRIORITIES]
        return self._pfc

    @property
    def queues(self) -> list[QueueCounters]:
        if self._queues is None:
            self._queues = [QueueCounters() for _ in PRIORITIES]
        return self._queues


@dataclass(frozen=True)
class WatchdogSettings:
    """What the switch's running config enables: watched priorities, timers in ms and the action."""

    priorities: frozenset[int]
    detection_ms: int = 200
    restoration_ms: int = 200
    action: str = "drop"
    ports: frozenset[str] | None = None  # None: every port

    def watches(self, port: str, priority: int) -> bool:
        return priority in self.priorities and (self.ports is None or port in self.ports)


class UnknownPortError(KeyError):
    """The named port does not exist on this switch."""


class DeviceCounters:
    """All counters of one simulated switch. ``clock`` returns seconds (default ``time.monotonic``)."""

    def __init__(self, ports: Iterable[tuple[str, int]], *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.ports: dict[str, PortCounters] = {name: PortCounters(name, speed) for name, speed in ports}
        self.watchdog: WatchdogSettings | None = None
        self._storms: dict[tuple[str, int], Storm] = {}

    # -- driving -------------------------------------------------------------------------------------------------

    def port(self, name: str) -> PortCounters:
        try:
            return self.ports[name]
        except KeyError:
            raise UnknownPortError(name) from None

    def set_watchdog(self, settings: WatchdogSettings | None) -> None:
        """Called by the simulator whenever its running config changes the PFC watchdog."""
        self.advance()
        self.watchdog = settings
        for port in self.ports.values():
            for prio in PRIORITIES:
                if settings is not None and settings.watches(port.name, prio):
                    port.watchdog.setdefault(prio, WatchdogQueue())

    def traffic(self, port: str, priority: int, packets: int, packet_bytes: int = 1024) -> None:
        """Send ``packets`` out of ``port`` on the queue of ``priority``; a stormed queue with action drop drops
        them instead (counted as watchdog TX drops)."""
        self.advance()
        p = self.port(port)
        q = p.queues[priority]
        wd = p.watchdog.get(priority)
        if wd is not None and wd.stormed and self.watchdog is not None and self.watchdog.action == "drop":
            wd.tx_drop += packets
            wd.last_tx_drop += packets
            q.dropped_packets += packets
            q.dropped_bytes += packets * packet_bytes
            p.tx_drops += packets
            return
        q.tx_packets += packets
        q.tx_bytes += packets * packet_bytes
        p.tx_packets += packets
        p.tx_bytes += packets * packet_bytes
        p.rx_packets += packets
        p.rx_bytes += packets * packet_bytes
        if wd is not None:
            wd.tx_ok += packets

    def pause(self, port: str, priority: int, frames: int, *, direction: str = "rx", quanta: int = 0xFFFF) -> None:
        """Count ``frames`` PFC frames on ``priority``; each pauses for ``quanta`` × 512 bit times."""
        self.advance()
        p = self.port(port)
        pause_us = int(frames * quanta * QUANTA_BITS * 1_000_000 / p.speed_bps)
        c = p.pfc[priority]
        if direction == "rx":
            c.rx_frames += frames
            c.rx_pause_us += pause_us
            c.rx_transitions += 1 if frames else 0
        else:
            c.tx_frames += frames
            c.tx_pause_us += pause_us

    def drop(self, port: str, queue: int, packets: int, packet_bytes: int = 1024) -> None:
        """Tail drops on an egress queue (buffer exhausted)."""
        self.advance()
        p = self.port(port)
        p.queues[queue].dropped_packets += packets
        p.queues[queue].dropped_bytes += packets * packet_bytes
        p.tx_drops += packets

    def buffer(self, port: str, priority: int, *, shared: int = 0, headroom: int = 0, queue: int = 0) -> None:
        """Buffer occupancy seen on ``port`` for ``priority`` (bytes): the ingress PG's shared-pool and headroom use
        and the egress queue's; each watermark keeps its peak until :meth:`clear`."""
        self.advance()
        wm = self.port(port).watermarks
        for kind, value in (("pg_shared", shared), ("pg_headroom", headroom), ("queue", queue)):
            wm[kind][priority] = max(wm[kind][priority], value)

    def ecn_mark(self, port: str, queue: int, packets: int, packet_bytes: int = 1024) -> None:
        """Packets ECN-marked (CE) by WRED on an egress queue; they are also sent."""
        self.advance()
        p = self.port(port)
        p.queues[queue].ecn_marked_packets += packets
        p.queues[queue].ecn_marked_bytes += packets * packet_bytes

    def storm_start(self, port: str, priority: int, *, direction: str = "rx", fraction: float = 1.0) -> None:
        """Start a pause storm: the port keeps receiving (``rx``) or sending (``tx``) pause on ``priority``.

        ``fraction`` (0-1] is the share of time paused; 1.0 is a full storm. Frames are refreshed every half pause
        time, as NICs do, so a full storm at 400G is ~23,800 frames/s of 65535-quanta pauses.
        """
        self.advance()
        p = self.port(port)
        pause_s = 0xFFFF * QUANTA_BITS / p.speed_bps
        now = self._clock()
        self._storms[(port, priority)] = Storm(direction, now, now, 2.0 / pause_s * fraction, fraction=fraction)

    def storm_stop(self, port: str, priority: int) -> None:
        self.advance()
        storm = self._storms.get((port, priority))
        if storm is not None and storm.stopped_s is None:
            storm.stopped_s = self._clock()

    def clear(self) -> None:
        """Reset every counter to 0 (``sonic-clear``/``clear counters``); storms in progress continue."""
        self.advance()
        for name, port in list(self.ports.items()):
            fresh = PortCounters(name, port.speed_bps)
            fresh.watchdog = {prio: WatchdogQueue(stormed=wd.stormed) for prio, wd in port.watchdog.items()}
            self.ports[name] = fresh

    # -- time ----------------------------------------------------------------------------------------------------

    def advance(self) -> None:
        """Account storms up to now and run the watchdog state machine. Called before every read and write."""
        now = self._clock()
        for (port_name, prio), storm in list(self._storms.items()):
            port = self.ports[port_name]
            end = now if storm.stopped_s is None else min(now, storm.stopped_s)
            elapsed = max(0.0, end - storm.accounted_s)
            if elapsed > 0:
                frames = int(elapsed * storm.frames_per_s)
                pause_us = int(elapsed * 1_000_000 * storm.fraction)
                c = port.pfc[prio]
                if storm.direction == "rx":
                    c.rx_frames += frames
                    c.rx_pause_us += pause_us
                else:
                    c.tx_frames += frames
                    c.tx_pause_us += pause_us
                storm.accounted_s = end
            self._watchdog_step(port, prio, storm, now)
            if storm.stopped_s is not None:
                wd = port.watchdog.get(prio)
                if wd is None or not wd.stormed:
                    del self._storms[(port_name, prio)]

    def _watchdog_step(self, port: PortCounters, prio: int, storm: Storm, now: float) -> None:
        settings = self.watchdog
        wd = port.watchdog.get(prio)
        if settings is None or wd is None or storm.direction != "rx" or not settings.watches(port.name, prio):
            return
        if storm.fraction < 0.99:
            return  # bursty pause lets the queue drain: not a storm
        storm_end = storm.stopped_s if storm.stopped_s is not None else now
        if not wd.stormed and storm_end - storm.started_s >= settings.detection_ms / 1000.0:
            wd.stormed = True
            wd.detected += 1
            wd.last_tx_ok = wd.last_tx_drop = wd.last_rx_ok = wd.last_rx_drop = 0
        if wd.stormed and storm.stopped_s is not None and now - storm.stopped_s >= settings.restoration_ms / 1000.0:
            wd.stormed = False
            wd.restored += 1

    def read(self) -> dict[str, PortCounters]:
        """Current counters of every port (advanced to now). The objects are live; do not modify them."""
        self.advance()
        return self.ports
