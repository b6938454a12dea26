"""Per-port state: each watched port's latest observation, and the samples it gives the detector.

A :class:`PortState` is made from a port's :class:`~fabricd.watchdog.discovery.CounterPlan` and reads through
its :class:`~fabricd.watchdog.reading.PortFiles`. It keeps, per pause channel, the values of the port's last read,
and whether that observation was handed to the detector: with the detector's ``settled`` a channel's sample is
left out when the detector would only move that channel's time with it, and the left-out observation is handed
over, with its own time, right before the channel's next sample the detector does need (:meth:`PortState.observe`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .discovery import CounterPlan
from .files import HostTree
from .reading import PortFiles, Raw, Values
from .types import ChannelKey, DropKey, DropSample, PauseSample

Settled = Callable[[ChannelKey, "float | None", "int | None"], bool]
"""The detector's :meth:`~fabricd.watchdog.detector.Detector.settled`: would a sample of this channel with these
pause counters (``pause_s``, ``frames``) only move its time?"""

Link = tuple["bool | None", "int | None"]
"""A port's link state as read: up (None: unknown) and its link-flap epoch (None: unknown)."""

Reading = tuple["float | None", "int | None", "int | None"]
"""One channel's values in one read: ``pause_s``, ``frames``, ``drain``."""


@dataclass(slots=True, eq=False)
class Channel:
    """One pause channel of a port: where its counters are in the port's values (-1: none), and its latest
    observation (read at the port's last observation time, with the port's link state) for the detector."""

    key: ChannelKey
    duration: int
    frames: int
    progress: int
    pause_s: float | None = None
    count: int | None = None
    drain: int | None = None
    ok: bool = False
    """The port's latest read had this channel's counter (a torn or partial read skips the channel)."""
    pending: bool = False
    """The latest observation was not handed to the detector: the detector was settled on it (see ``settled``)."""

    def reading(self, vals: Values) -> Reading | None:
        """This channel's values in a read of the port; None when its pause counter is missing (a torn or
        partial read)."""
        if self.duration >= 0:
            dur = vals[self.duration]
            if dur is None:
                return None
            pause_s: float | None = dur / 1e6
            frames: int | None = None
        else:
            pause_s = None
            frames = vals[self.frames]
            if frames is None:
                return None
        return pause_s, frames, vals[self.progress] if self.progress >= 0 else None


class PortState:
    """One port: how it is read (``files``), its channels and drops, and its latest observation: the values of
    its last changed read (``vals``), the monotonic time of its last read (``seen_t``) and its link state then."""

    __slots__ = ("channels", "drops", "files", "link_epoch", "seen_t", "up", "vals")

    def __init__(self, tree: HostTree, iface: str, plan: CounterPlan) -> None:
        self.files = files = PortFiles(tree, iface, plan)
        idx = files.index
        self.channels = [Channel(ch.key, idx(ch.duration), idx(ch.frames), idx(ch.progress)) for ch in plan.channels]
        self.drops: list[DropKey] = [dr.key for dr in plan.drops]
        self.vals: Values | None = None
        self.seen_t = 0.0
        """Monotonic time of the port's latest read (a later regular poll that found the file unchanged also counts:
        see :meth:`fabricd.watchdog.changes.ChangeTracker.floor`)."""
        self.up: bool | None = None
        self.link_epoch: int | None = None

    def observe(
        self, *, changed: bool, now: float, seen: float, link: Link, settled: Settled | None, out: list[PauseSample]
    ) -> bool:
        """Add this read's samples to ``out``: read at ``now`` (``changed``: from :attr:`vals`, just looked up;
        else the file is unchanged since the last read, same values and link state), the previous observation made
        at ``seen``. True when every channel's observation is now pending (settled in the detector): while the
        file does not change, the port needs nothing."""
        quiet = settled is not None
        for ch in self.channels:
            got = self._reading(ch, changed=changed, seen=seen, out=out)
            if got is None:
                continue
            pause_s, frames, drain = got
            if settled is not None and ch.ok and settled(ch.key, pause_s, frames):
                ch.drain = drain
                ch.pending = True
                continue
            if ch.pending:  # the observation the detector was settled on, then this one
                out.append(self._pending(ch, seen))
            out.append(PauseSample(ch.key, now, pause_s, frames, drain, *link))
            ch.pause_s, ch.count, ch.drain, ch.ok, ch.pending = pause_s, frames, drain, True, False
            quiet = False
        self.seen_t = now
        self.up, self.link_epoch = link
        return quiet

    def _reading(self, ch: Channel, *, changed: bool, seen: float, out: list[PauseSample]) -> Reading | None:
        """The channel's values at this read, or None to skip it (missing in this read, or in the unchanged
        file's last read). A channel missing from a new read hands over its pending observation and starts
        again: never guess."""
        if not changed:
            return (ch.pause_s, ch.count, ch.drain) if ch.ok else None
        assert self.vals is not None
        got = ch.reading(self.vals)
        if got is None:
            if ch.pending:
                out.append(self._pending(ch, seen))
            ch.ok = ch.pending = False
        return got

    def _pending(self, ch: Channel, seen: float) -> PauseSample:
        """The channel's pending observation (made at ``seen``, with the link state of the port's last read)."""
        return PauseSample(ch.key, seen, ch.pause_s, ch.count, ch.drain, self.up, self.link_epoch)

    def hand_over(self, out: list[PauseSample], seen: float) -> None:
        """The pending observations of the port's channels (made at ``seen``), as samples."""
        for ch in self.channels:
            if ch.pending:
                out.append(self._pending(ch, seen))
                ch.pending = False

    def drop_samples(self, raw: Raw, now: float) -> list[DropSample]:
        """The port's drop counters in ``raw`` (read at ``now``)."""
        return [DropSample(key, now, value) for key, value in zip(self.drops, self.files.drop_values(raw), strict=True)]

    def close(self) -> None:
        self.files.close()
