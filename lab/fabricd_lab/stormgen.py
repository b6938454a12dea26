"""Live pause traffic in a replay root: storms, bursts, link flaps and counter resets with real time passing.

:class:`StormGen` drives a :class:`~fabricd_lab.replay.ReplayHost` from a schedule of episodes and rewrites the
changed files every ``tick_s`` (atomically, so readers never see half a file). It is what the watchdog's
timer-accuracy tests, ``bench/watchdog.py`` and ``fabricd demo`` use to play a storm on a host that a separate
``fabricd watch --root`` or ``fabricd serve`` process reads.

Counter model per NIC port and priority (mlx5 names, ``Documentation/networking/device_drivers/ethernet/mellanox/
mlx5/counters.rst``):

- while a ``pause`` episode is active in direction ``rx`` (the NIC is paused by its peer) or ``tx`` (the NIC sends
  pause: its receive pipeline is stalled), ``<dir>_prioN_pause_duration`` grows by the paused time in µs and
  ``<dir>_prioN_pause`` by one frame per :data:`PAUSE_REFRESH_US` (a pause refresh; the exact refresh period
  depends on quanta and link speed and does not matter to duration-based detection);
- traffic flows at ``traffic_pps`` on the priority in both directions while nothing pauses it: an ``rx`` pause holds
  the NIC's transmit (``tx_prioN_packets`` stops), a ``tx`` pause stops what it receives (``rx_prioN_packets``);
- a ``link_down`` episode writes ``operstate`` down, counts ``carrier_changes`` (+1 down, +1 up) and
  ``link_down_events_phy``, and stops traffic. With ``pause_while_down`` the duration counter keeps growing while the
  link is down, as the firmware behind sonic-swss #1586's false storms did;
- :meth:`StormGen.reset` zeroes every counter of the NIC at a given time (driver reload).

Times are epoch seconds (``time.time()``), so a watcher in another process can compare its events' ``ts``.
"""

from __future__ import annotations

import bisect
import heapq
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .replay import ReplayHost, add_sysfs_files

log = logging.getLogger(__name__)

PAUSE_REFRESH_US = 50
"""One pause frame per 50 µs paused (illustrative refresh period)."""


@dataclass
class Episode:
    """A pause storm/burst (``kind='pause'``) or a link outage (``kind='link_down'``) on one port, in epoch seconds.
    ``end`` None means until stopped."""

    interface: str
    kind: str
    start: float
    end: float | None = None
    priority: int = 3
    direction: str = "rx"
    pause_while_down: bool = False

    def overlap(self, a: float, b: float) -> float:
        """Seconds of this episode within (a, b]."""
        end = self.end if self.end is not None else b
        return max(0.0, min(b, end) - max(a, self.start))

    def active(self, t: float) -> bool:
        return self.start <= t and (self.end is None or t < self.end)


@dataclass
class _Port:
    interface: str
    traffic_pps: float
    priorities: tuple[int, ...]
    last_t: float
    carry_us: dict[tuple[int, str], float] = field(default_factory=dict)
    carry_pkts: dict[tuple[int, str], float] = field(default_factory=dict)
    link_up: bool = True
    carrier_changes: int = 0
    resets: list[float] = field(default_factory=list)


class StormGen:
    """Plays episodes into ``host`` (already built) in real time. Thread-safe scheduling; one writer thread."""

    def __init__(
        self,
        host: ReplayHost,
        *,
        tick_s: float = 0.005,
        traffic_pps: float = 0.0,
        clock: Callable[[], float] = time.time,
        realtime: bool = False,
        grid: bool = False,
        rdma_every_s: float = 0.0,
        record: bool = False,
    ) -> None:
        self.host = host
        self.tick_s = tick_s
        self.realtime = realtime
        self.grid = grid
        """Write only on a fixed grid of ``tick_s`` (a source that refreshes its counters every ``tick_s``), not
        also at an episode's start or end."""
        self.rdma_every_s = rdma_every_s
        """Write the RDMA port counter files at most this often (0: every tick). The watchdog reads only the ethtool
        text on every poll; rewriting every port's PMA files on every tick is most of a loaded writer's lag."""
        self._rdma_at = float("-inf")
        self.ticks: list[tuple[float, float]] | None = [] if record else None
        """With ``record``: per write, (the time its counters are up to, the time the files were all written)."""
        self.clock = clock
        self.episodes: list[Episode] = []
        self._by_port: dict[str, list[Episode]] = {}
        self._bounds: list[float] = []
        self._lock = threading.Lock()
        now = clock()
        self.ports: dict[str, _Port] = {
            nic.interface: _Port(nic.interface, traffic_pps, nic.pfc_priorities, now) for nic in host.nics
        }
        for port in self.ports.values():
            self._write_link(port)
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.writes = 0
        self.max_gap_s = 0.0
        """Longest time between two writes while something was moving (the writer's own lag, seconds)."""

    # -- scheduling ---------------------------------------------------------------------------------------------

    def _add(self, ep: Episode) -> Episode:
        """Index a new episode (caller holds the lock): per port, sorted by start; its boundaries in a heap."""
        self.episodes.append(ep)
        bisect.insort(self._by_port.setdefault(ep.interface, []), ep, key=lambda e: e.start)
        heapq.heappush(self._bounds, ep.start)
        if ep.end is not None:
            heapq.heappush(self._bounds, ep.end)
        return ep

    def pause(
        self,
        interface: str,
        *,
        priority: int = 3,
        direction: str = "rx",
        start: float | None = None,
        duration_s: float | None = None,
    ) -> Episode:
        """Schedule pause on one port and priority from ``start`` (default now) for ``duration_s`` (None: until
        :meth:`stop`). A pause longer than the watchdog's detection time is a storm; shorter is a burst."""
        t0 = self.clock() if start is None else start
        ep = Episode(interface, "pause", t0, None if duration_s is None else t0 + duration_s, priority, direction)
        with self._lock:
            return self._add(ep)

    def flap(
        self,
        interface: str,
        *,
        start: float | None = None,
        duration_s: float = 0.3,
        pause_while_down: bool = True,
        priority: int = 3,
    ) -> Episode:
        """Schedule a link outage; with ``pause_while_down`` the pause duration counter keeps rising meanwhile."""
        t0 = self.clock() if start is None else start
        ep = Episode(interface, "link_down", t0, t0 + duration_s, priority, "rx", pause_while_down)
        with self._lock:
            return self._add(ep)

    def reset(self, interface: str, *, at: float | None = None) -> None:
        """Zero all counters of the NIC at ``at`` (default now), as a driver reload does."""
        with self._lock:
            t = self.clock() if at is None else at
            self.ports[interface].resets.append(t)
            heapq.heappush(self._bounds, t)

    def stop(self, ep: Episode, at: float | None = None) -> float:
        """End an open episode at ``at`` (default now); returns the end time."""
        with self._lock:
            ep.end = self.clock() if at is None else at
            heapq.heappush(self._bounds, ep.end)
            return ep.end

    # -- writing ------------------------------------------------------------------------------------------------

    def _advance(self, now: float) -> None:
        """Bring every port's counters from its last write to ``now``. Caller holds the lock."""
        for port in self.ports.values():
            a = port.last_t
            if now <= a:
                continue
            mine = self._by_port.get(port.interface, [])
            while mine and mine[0].end is not None and mine[0].end <= a:
                mine.pop(0)  # finished and accounted for
            eps = []
            for e in mine:
                if e.start >= now:
                    break
                if e.overlap(a, now) > 0:
                    eps.append(e)
            due = [r for r in port.resets if a < r <= now]
            for r in due:
                self._segment(port, eps, a, r)
                self.host.reset(port.interface)
                port.resets.remove(r)
                a = r
            self._segment(port, eps, a, now)
            port.last_t = now
            down = any(e.kind == "link_down" and e.active(now) for e in mine)
            if down == port.link_up:
                port.link_up = not down
                port.carrier_changes += 1
                if down:
                    self.host.add(port.interface, "link_down_events_phy", 1)
                self._write_link(port)

    def _segment(self, port: _Port, eps: list[Episode], a: float, b: float) -> None:
        dt = b - a
        if dt <= 0:
            return
        down_s = sum(e.overlap(a, b) for e in eps if e.kind == "link_down")
        for prio in port.priorities:
            paused = {"rx": 0.0, "tx": 0.0}
            for e in eps:
                if e.priority != prio:
                    continue
                if e.kind == "pause":
                    paused[e.direction] = max(paused[e.direction], e.overlap(a, b))
                elif e.kind == "link_down" and e.pause_while_down:
                    paused["rx"] = max(paused["rx"], e.overlap(a, b))
            for d, p in paused.items():
                if p <= 0:
                    continue
                key = (prio, d)
                us = port.carry_us.get(key, 0.0) + p * 1e6
                whole = int(us)
                port.carry_us[key] = us - whole
                self.host.pause(
                    port.interface, prio, direction=d, frames=max(1, whole // PAUSE_REFRESH_US), duration_us=whole
                )
            if port.traffic_pps <= 0:
                continue
            # an rx pause holds the NIC's transmit; a tx pause stops what it receives; a down link stops both
            for d, held in (("tx", paused["rx"]), ("rx", paused["tx"])):
                flowing = max(0.0, dt - max(held, down_s))
                key = (prio, d)
                pk = port.carry_pkts.get(key, 0.0) + flowing * port.traffic_pps
                whole = int(pk)
                port.carry_pkts[key] = pk - whole
                if whole:
                    self.host.traffic(port.interface, prio, direction=d, packets=whole)

    def _write_link(self, port: _Port) -> None:
        base = os.path.join("sys", "class", "net", port.interface)
        add_sysfs_files(
            self.host.root,
            {
                os.path.join(base, "operstate"): "up" if port.link_up else "down",
                os.path.join(base, "carrier_changes"): str(port.carrier_changes),
            },
        )

    def tick(self, now: float | None = None) -> None:
        """Advance to ``now`` and rewrite what changed (the writer thread calls this every ``tick_s``)."""
        with self._lock:
            at = self.clock() if now is None else now
            self._advance(at)
            rdma = at - self._rdma_at >= self.rdma_every_s
            if rdma:
                self._rdma_at = at
            self.host.flush(rdma=rdma)
            self.writes += 1
            if self.ticks is not None:
                self.ticks.append((at, self.clock()))

    def visible_at(self, t: float) -> float | None:
        """With ``record``: when the files first showed the counters up to ``t`` (the end of the first write whose
        counters reach ``t``); None if no such write was recorded."""
        ticks = self.ticks or []
        i = bisect.bisect_left(ticks, (t, float("-inf")))
        return ticks[i][1] if i < len(ticks) else None

    def _next_boundary(self, now: float) -> float:
        with self._lock:
            bounds = self._bounds
            while bounds and bounds[0] <= now:
                heapq.heappop(bounds)
            return bounds[0] if bounds else now + 3600.0

    def _active(self, now: float) -> bool:
        with self._lock:
            if any(p.traffic_pps > 0 for p in self.ports.values()):
                return True
            for eps in self._by_port.values():
                for e in eps:
                    if e.start > now:
                        break
                    if e.active(now):
                        return True
            return False

    def _run(self) -> None:
        if self.realtime:
            # The writer stands for NIC hardware, whose counters never stall. On a loaded machine a descheduled
            # writer would look like pause that stopped, so timing tests run it as a real-time thread (lowest
            # SCHED_FIFO priority; it sleeps between ticks). Without the privilege it stays a normal thread.
            try:
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
            except (OSError, AttributeError):
                log.info("stormgen: no real-time scheduling (needs CAP_SYS_NICE); writer may lag under load")
        last = self.clock()
        grid_t = last
        while not self._stop.is_set():
            now = self.clock()
            if self.grid:  # a stepped source: counters refresh on the grid only, whatever the episodes do
                # fell behind: skip the missed refreshes rather than bunch them
                grid_t = max(grid_t + self.tick_s, now)
                if self._stop.wait(grid_t - now):
                    break
                self.tick(grid_t)
                done = self.clock()
                self.max_gap_s = max(self.max_gap_s, done - last)
                last = done
                continue
            active = self._active(now)
            nxt = self._next_boundary(now)
            wait = min(self.tick_s if active else 0.25, max(0.0, nxt - now))
            if wait > 0 and self._stop.wait(wait):
                break
            self.tick()
            done = self.clock()
            if active:
                self.max_gap_s = max(self.max_gap_s, done - last)
            last = done

    def start(self) -> StormGen:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="stormgen", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
            self._thread = None
        self.tick()

    def __enter__(self) -> StormGen:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
