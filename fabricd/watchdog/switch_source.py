"""A switch as a watchdog source: its parsed show outputs (``readers.switch``) turned into detector samples.

The service reads each switch over a kept-open driver session (``service/wiring.py``); this module only maps the
parsed counters: per-priority PFC frames (and pause duration where the platform has it), the egress queue of the same
number as the drain, queue drops, and the switch's own PFC watchdog counters. Split out of ``sources.py`` (the host
source), which keeps re-exporting it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from fabricd.readers.switch.model import SwitchCounters

from .types import Batch, ChannelKey, Direction, DropKey, DropSample, PauseSample, Scope, WdKey, WdSample


class SwitchSource:
    """Turns one switch's parsed counters (``readers.switch`` :class:`SwitchCounters`) into detector samples.

    ``read`` returns a fresh snapshot (the service runs the platform's show commands over a kept-open driver session
    and parses them). ``priorities``: the lossless priorities to watch (None: every priority the switch reports).
    The drain of a paused port is its egress unicast queue with the same number as the priority (standard recipe:
    priority 3 -> queue 3); drops on that queue are ``lossless_drop`` events.

    ``update_s``: how often the switch refreshes the counters it shows, seconds, declared to the detector with every
    sample (a gNMI SAMPLE subscription's interval; SONiC's COUNTERS_DB port and PFC counters: 1 s); None lets the
    detector measure it (see :class:`~fabricd.watchdog.detector.Cadence`).
    """

    def __init__(
        self,
        device: str,
        read: Callable[[], SwitchCounters] | None = None,
        *,
        priorities: Iterable[int] | None = None,
        update_s: float | None = None,
    ) -> None:
        self.device = device
        self.name = f"switch:{device}"
        self.read = read
        self.priorities = frozenset(priorities) if priorities is not None else None
        self.update_s = update_s

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
        # one sample per channel: a platform may give frames and pause duration as separate entries (SONiC's
        # COUNTERS/Ethernet* over gNMI, PFC history over SSH); two samples of one channel at the same time would
        # each be judged against the other (frames vs duration: no evidence), and no storm would ever restore
        merged: dict[tuple[str, int, Direction], list[int | None]] = {}
        for c in counters.pfc:
            if c.priority is None or not self._watched(c.priority):
                continue
            if c.frames is None and c.duration_us is None:
                continue
            slot = merged.setdefault((c.interface, c.priority, Direction(c.direction)), [None, None])
            if c.frames is not None:
                slot[0] = c.frames
            if c.duration_us is not None:
                slot[1] = c.duration_us
        for (iface, prio, d), (frames, duration_us) in merged.items():
            progress = drain.get((iface, prio)) if d is Direction.RX else None
            batch.pause.append(
                PauseSample(
                    ChannelKey(Scope.SWITCH, self.device, iface, prio, d),
                    t,
                    pause_s=duration_us / 1e6 if duration_us is not None else None,
                    frames=frames,
                    progress=progress,
                    update_s=self.update_s,
                )
            )
        for w in counters.pfcwd:
            if self._watched(w.queue):
                batch.wd.append(WdSample(WdKey(self.device, w.interface, w.queue), t, w.detected, w.restored))
        return batch

    def _watched(self, prio: int) -> bool:
        return self.priorities is None or prio in self.priorities
