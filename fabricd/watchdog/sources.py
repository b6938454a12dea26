"""Where the watchdog's samples come from: a host (live or a replay root) and switches (show commands).

Both turn the readers' normalised counters into detector samples (:mod:`fabricd.watchdog.types`):

- :class:`HostSource` reads ``<root>/ethtool/<if>.stats`` (or a live ``ethtool -S`` provider handed in by the
  service: :mod:`fabricd.sources.ethtool_live`'s ETHTOOL_GSTATS ioctl, injected so that replay roots and tests never
  import pyroute2), ``<root>/sys/class/net/<if>/{operstate,carrier_changes}``
  and, at a slower cadence, RDMA ``hw_counters/out_of_buffer``. It runs a poll over four parts, each with one job:
  :mod:`~fabricd.watchdog.discovery` (which ports, and which of their counters matter: the driver's name map in
  ``readers.ethtool_maps`` says which raw names), :mod:`~fabricd.watchdog.reading` (one port's files, with only
  those names looked up after the first full parse, which keeps a 64-port host at 20 polls/s within a few % of one
  core: bench/watchdog.py), :mod:`~fabricd.watchdog.changes` (which ports of a replay root a poll must visit) and
  :mod:`~fabricd.watchdog.port_state` (each port's latest observation and the samples it gives the detector);
  :mod:`~fabricd.watchdog.rdma_drops` reads the RDMA drop counters.
- :class:`SwitchSource` (in :mod:`fabricd.watchdog.switch_source`, re-exported here) turns a switch's parsed show
  outputs (``readers.switch``, read by the service over a kept-open driver session) into samples: PFC frames (and
  pause duration where the platform has it), egress queue packets and drops, and the switch's own PFC watchdog
  counters. :class:`Batch` (what one poll produced) is in :mod:`fabricd.watchdog.types`.

Files are re-read on every poll (a replay tree may be rewritten at any time); nothing caches values. The fast file
reads and name lookups are in :mod:`fabricd.watchdog.files`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from .changes import ChangeTracker, Visit
from .discovery import DROP_REASONS as DROP_REASONS  # noqa: PLC0414  (explicit re-export: it lived here)
from .discovery import LINK_FLAP_COUNTERS as LINK_FLAP_COUNTERS  # noqa: PLC0414  (explicit re-export)
from .discovery import Discovery, plan_counters
from .files import (
    HostTree,
    _value,  # noqa: F401  (re-exported: tests/unit/test_watchdog_sources.py imports it from here)
)
from .files import RawStats as RawStats  # noqa: PLC0414  (explicit re-export: it lived here)
from .port_state import Link, PortState
from .port_state import Settled as Settled  # noqa: PLC0414  (explicit re-export: it lived here)
from .rdma_drops import RdmaDrops
from .reading import Raw
from .switch_source import SwitchSource as SwitchSource  # noqa: PLC0414  (explicit re-export: it lived here)
from .types import Batch as Batch  # noqa: PLC0414  (explicit re-export: it lived here)


@dataclass(frozen=True, slots=True)
class PollEvery:
    """How often, in polls, a :class:`HostSource` does its slower work: read drop counters (``drops``: they change
    slowly and RDMA's cost a file each), re-read the whole statistic set (``replan``: a driver adds per-priority
    counters when PFC is enabled on a priority) and look for new interfaces (``discover``). At least 1 each."""

    drops: int = 10
    replan: int = 1200
    discover: int = 20

    def __post_init__(self) -> None:
        for name in ("drops", "replan", "discover"):
            object.__setattr__(self, name, max(1, getattr(self, name)))


class HostSource:
    """Samples one host's NIC ports for the watchdog.

    ``device`` names the host in events (the inventory host name, or this machine's hostname). ``priorities``
    limits the watched priorities (the intent's lossless ones); None watches every priority with pause counters.
    ``interfaces`` limits the ports (the host's NIC netdevs in the inventory); None watches every interface the
    root has statistics for. ``raw_stats`` replaces the replay root's ``ethtool/<if>.stats`` files with a live
    provider. ``every``: how often the slower work is done (:class:`PollEvery`).
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
        every: PollEvery = PollEvery(),
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.device = device
        self.name = f"host:{device}"
        self.priorities = frozenset(priorities) if priorities is not None else None
        self.raw_stats = raw_stats
        self.every = every
        self.deadline_margin_s = 0.002 if raw_stats is not None else 0.010
        """How long after a deadline to read: a replay root's writer may be one tick (5-10 ms) behind."""
        self.clock = clock
        self._tree = HostTree(root, live=raw_stats)
        self.root = self._tree.root
        self._discovery = Discovery(self._tree, interfaces, every=every.discover)
        self._changes = ChangeTracker(self._tree, clock=clock)
        self._rdma = RdmaDrops(self.root, device)
        self._states: dict[str, PortState] = {}
        self._polls = 0

    def state_of(self, iface: str) -> PortState | None:
        """The port's state (its files and latest observation); None before its first read."""
        return self._states.get(iface)

    # -- polling ------------------------------------------------------------------------------------------------

    def poll(self, t: float, settled: Settled | None = None) -> Batch:
        """One regular poll of every port; ``t`` is the monotonic time of the poll (seconds).

        ``settled`` (the detector's :meth:`~fabricd.watchdog.detector.Detector.settled`) lets the source leave out
        a channel's sample when the detector would only move that channel's time with it (no run or storm open,
        same pause counters as its last sample). The left-out observation is kept and handed over, with its own
        time, right before the channel's next sample that the detector does need, so the detector goes through the
        same states as when it is fed every sample. On a replay root a poll then starts with one ``stat`` per
        statistics file (or a read of its inotify watch: :mod:`fabricd.watchdog.changes`) and visits only the ports
        whose file changed or whose channels are not all settled. Without ``settled`` every channel of every port
        gives a sample on every poll.
        The caller must be the only one feeding this source's channels to the detector.
        """
        self._polls += 1
        return self._read(t, self._discovery.ports(self._polls, self._states), regular=True, settled=settled)

    def poll_ports(self, t: float, ports: Iterable[str], settled: Settled | None = None) -> Batch:
        """A deadline read: only ``ports``, now (see :meth:`tune`; ``settled`` as in :meth:`poll`)."""
        return self._read(t, list(ports), regular=False, settled=settled)

    def _read(self, t: float, ports: list[str], *, regular: bool, settled: Settled | None) -> Batch:
        batch = Batch()
        polls, every = self._polls, self.every
        replan = regular and polls % every.replan == 0
        read_drops = regular and (every.drops == 1 or polls % every.drops == 1)
        visits, checked = self._changes.visits(
            t,
            ports,
            regular=regular,
            replan=replan,
            settle=settled is not None and self._tree.replay,
            planned=self._states,
        )
        for visit in visits:
            self._port(visit, t, batch, settled, replan=replan, drops=read_drops)
        if regular and checked is not None:
            self._changes.swept(ports, checked)
        if read_drops:
            batch.drops.extend(self._rdma.read(t))
        return batch

    def _port(
        self, visit: Visit, t: float, batch: Batch, settled: Settled | None, *, replan: bool, drops: bool
    ) -> None:
        """Read one port and add its samples to ``batch``. ``visit.seen``: a time at which the port's file was
        known to still hold what it held at its last read (a sweep or a watch that found it unchanged); the port's
        last observation is the later of that and its last read."""
        iface = visit.port
        self._changes.visited(iface)
        state = self._states.get(iface)
        raw = self._raw(visit, state)
        # the port's previous observation: its last read, or a later sweep or watch that found its file unchanged
        seen = state.seen_t if state is not None and state.seen_t > visit.seen else visit.seen
        if raw is None:
            if state is not None:
                batch.problems.append(f"{self.device}:{iface}: statistics vanished")
                state.hand_over(batch.pause, seen)
                self._changes.mark(iface, loud=True)
            return
        if state is None or replan:
            state = self._replan(iface, raw, old=state, out=batch, seen=seen)
        raw, changed, link = self._refresh(iface, state, raw)
        # the time this port was read: its values are no newer than this
        now = self.clock() if self.clock is not None else t
        quiet = state.observe(changed=changed, now=now, seen=seen, link=link, settled=settled, out=batch.pause)
        self._changes.mark(iface, loud=not quiet)
        if changed and drops and state.drops:
            batch.drops.extend(state.drop_samples(raw, now))

    def _raw(self, visit: Visit, state: PortState | None) -> Raw | None:
        """The port's statistics: the live provider's, its planned file's (a window of it) or, before its first
        plan, the whole file; None when it is gone."""
        live = self._tree.live
        if live is not None:
            return live(visit.port)
        if state is None:
            return self._tree.read_stats(visit.port)
        stats = state.files.stats
        known = self._changes.rewatch(visit.port, stats.path, visit.known)
        raw = state.files.read(visit.stamp, known=known)
        if visit.known and raw is not None:
            self._changes.read_done(visit.port, renewed=stats.renewed)
        return raw

    def _replan(self, iface: str, raw: Raw, *, old: PortState | None, out: Batch, seen: float) -> PortState:
        """A new state for the port, planned from a full read of its statistics."""
        if old is not None:
            old.hand_over(out.pause, seen)  # a new plan starts without observations: give them now
            old.close()
        plan = plan_counters(self._discovery, iface, raw, device=self.device, priorities=self.priorities)
        state = self._states[iface] = PortState(self._tree, iface, plan)
        self._changes.forget_link(iface)
        return state

    def _refresh(self, iface: str, state: PortState, raw: Raw) -> tuple[Raw, bool, Link]:
        """Look the port's values up in ``raw`` and read its link state, unless the file is unchanged since the
        last read (then: same values and link state). Returns ``raw`` (the whole file when the window missed a
        name), whether it changed, and the link state."""
        files = state.files
        if not (state.vals is None or self._tree.live is not None or files.stats.changed):
            return raw, False, (state.up, state.link_epoch)
        raw, vals = files.values(raw)
        state.vals = vals
        changes = self._changes
        if changes.link_current(iface):  # unchanged since the last read (the directory watch says so)
            up, epoch = state.up, state.link_epoch
        else:  # watch the directory first, then read: a change after the read is reported at the next call
            changes.watch_link(iface, self._tree.link_dir(iface))
            up, epoch = files.link()
        if files.epoch >= 0:
            epoch = vals[files.epoch]
        return raw, True, (up, epoch)

    def tune(self, detection_s: float, restoration_s: float, poll_s: float) -> None:
        """Adapt to the watchdog's timers: drop counters are read once a second (every poll is read for pause).

        Every port is checked on every poll: a long gap between two reads of a port could hold the end of one burst
        and the start of the next, and the detector would have to credit both to one run. Cost is kept down by
        not re-reading an unchanged replay file (:class:`~fabricd.watchdog.files.PolledFile`,
        :mod:`fabricd.watchdog.changes`) and by the runner's *deadline reads* (:meth:`poll_ports`): once a read
        shows pause, the duration counter says how long it has lasted, and the port is read again exactly when the
        run would reach ``detection`` (or the quiet time ``restoration``), so a storm is declared at ``detection``
        plus the read's own delay rather than at the next poll after it. The statistic set is re-planned once a
        minute.
        """
        self.every = replace(self.every, drops=round(1.0 / poll_s), replan=round(60.0 / poll_s))

    def close(self) -> None:
        """Close the kept-open files."""
        for state in self._states.values():
            state.close()
        self._tree.close()
        self._rdma.close()
        self._changes.close()
