"""The detector as a pure state machine: synthetic counter timelines sampled at poll times with random phase.

Each timeline is a set of pause episodes on one channel; the counters at time t are computed exactly (pause
duration = paused time so far, pause frames = one per 1 ms paused, drain packets = one per 1 ms not paused), so the
SONiC contract can be checked to the microsecond: detection <= observed <= detection + poll, same for restoration.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from fabricd.errors import UsageError
from fabricd.model.policy import Watchdog
from fabricd.watchdog.detector import Detector
from fabricd.watchdog.params import WatchdogParams, resolve_params
from fabricd.watchdog.types import (
    ChannelKey,
    Direction,
    DropKey,
    DropSample,
    EventKind,
    PauseSample,
    Scope,
    WdKey,
    WdSample,
)

KEY = ChannelKey(Scope.NIC, "gpu1", "ens1f0np0", 3, Direction.RX)
D, R, P = 0.200, 0.200, 0.050


@dataclass
class Timeline:
    episodes: list[tuple[float, float]]
    link_down: list[tuple[float, float]] | None = None
    reset_at: float | None = None

    def paused(self, t: float) -> float:
        return sum(max(0.0, min(t, e) - s) for s, e in self.episodes)

    def sample(self, t: float, *, duration: bool = True, frames: bool = True, progress: bool = True) -> PauseSample:
        p = self.paused(t)
        base = 0.0
        if self.reset_at is not None and t >= self.reset_at:
            base = self.paused(self.reset_at)
        link_up = not any(s <= t < e for s, e in (self.link_down or []))
        epoch = sum(1 for s, _ in (self.link_down or []) if s <= t)
        return PauseSample(
            key=KEY,
            t=t,
            pause_s=(p - base) if duration else None,
            frames=int((p - base) * 1000) if frames else None,
            progress=int((t - p) * 1000) if progress else None,
            link_up=link_up,
            link_epoch=epoch,
        )


PARAMS = WatchdogParams(D, R, P)


def run(
    tl: Timeline, end: float, phase: float, params: WatchdogParams = PARAMS, **kw: bool
) -> list[tuple[EventKind, float]]:
    det = Detector(params)
    out = []
    t = phase
    while t <= end:
        ev = det.observe(tl.sample(t, **kw), wall=t)
        if ev is not None:
            out.append((ev.event, t))
        t += params.poll_s
    return out


def phases(n: int = 40, seed: int = 7) -> list[float]:
    rng = random.Random(seed)
    return [rng.uniform(0.0, P) for _ in range(n)]


@pytest.mark.parametrize(
    "mode",
    [
        {"duration": True, "frames": True, "progress": True},
        {"duration": True, "frames": False, "progress": False},
        {"duration": False, "frames": True, "progress": True},
    ],
)
def test_storm_detected_and_restored_within_contract(mode: dict[str, bool]) -> None:
    for i, phase in enumerate(phases()):
        start = 1.0 + i * 0.0137
        end = start + 1.5
        events = run(Timeline([(start, end)]), end + 1.0, phase, **mode)
        assert [e for e, _ in events] == [EventKind.STORM_DETECTED, EventKind.STORM_RESTORED], (mode, phase)
        det_lat = events[0][1] - start
        res_lat = events[1][1] - end
        assert D - 1e-9 <= det_lat <= D + P + 1e-9, (mode, phase, det_lat)
        assert R - 1e-9 <= res_lat <= R + P + 1e-9, (mode, phase, res_lat)


def test_frames_without_drain_counter_bounds_are_wider_but_bursts_never_fire() -> None:
    for i, phase in enumerate(phases()):
        start = 1.0 + i * 0.0113
        events = run(Timeline([(start, start + 1.0)]), start + 2.0, phase, duration=False, progress=False)
        assert events[0][0] == EventKind.STORM_DETECTED
        # + 1 ms: the counter shows the storm at its first whole pause frame (1 frame per ms here)
        assert D - 1e-9 <= events[0][1] - start <= D + 2 * P + 0.001 + 1e-9
        burst = run(Timeline([(start, start + D - 0.002)]), start + 2.0, phase, duration=False, progress=False)
        assert burst == []


@pytest.mark.parametrize("length", [0.010, 0.060, 0.120, 0.180, 0.199])
def test_bursts_shorter_than_detection_never_fire(length: float) -> None:
    for mode in ({"duration": True}, {"duration": False}):
        for i, phase in enumerate(phases()):
            start = 1.0 + i * 0.0071
            # a train of bursts separated by 30 ms gaps: each shorter than detection
            eps = [(start + k * (length + 0.030), start + k * (length + 0.030) + length) for k in range(6)]
            assert run(Timeline(eps), start + 3.0, phase, **mode) == [], (length, mode, phase)


def test_counter_reset_never_fires_and_rebaselines() -> None:
    for phase in phases():
        # pause counters drop to zero (driver reload) with no pause at all: must stay silent
        tl = Timeline([(0.2, 0.25)], reset_at=1.0)
        assert run(tl, 3.0, phase) == []


def test_counter_jump_from_reset_to_huge_value_does_not_fire() -> None:
    det = Detector(WatchdogParams(D, R, P))
    values = [0, 0, 5_000_000, 5_000_000, 5_000_000, 5_000_000, 5_000_000, 5_000_000]  # one jump, then flat
    events = [
        det.observe(PauseSample(KEY, 1 + i * P, pause_s=v / 1e6, progress=i), wall=0) for i, v in enumerate(values)
    ]
    assert all(e is None for e in events)


def test_link_flap_never_fires() -> None:
    for phase in phases():
        # link down 400 ms: no transmit progress and (buggy firmware) the duration counter keeps rising
        tl = Timeline([(1.0, 1.4)], link_down=[(1.0, 1.4)])
        assert run(tl, 3.0, phase) == []
        # flaps shorter than a poll interval: only the epoch counter shows them
        tl = Timeline([(1.0, 1.15), (1.2, 1.35)], link_down=[(1.16, 1.17), (1.36, 1.37)])
        assert run(tl, 3.0, phase) == []


def test_storm_restores_when_link_stays_down() -> None:
    tl = Timeline([(1.0, 10.0)], link_down=[(2.0, 10.0)])
    events = run(tl, 3.0, 0.01)
    assert [e for e, _ in events] == [EventKind.STORM_DETECTED, EventKind.STORM_RESTORED]
    assert 2.0 + R <= events[1][1] <= 2.0 + R + 2 * P


def test_pause_with_draining_queue_is_not_a_storm() -> None:
    """XON/XOFF cycling at 90 % duty with the queue still draining: heavy pause, no stall, no storm (SONiC's
    "no TX" condition)."""
    det = Detector(WatchdogParams(D, R, P))
    out = []
    for i in range(60):
        t = i * P
        out.append(det.observe(PauseSample(KEY, t, pause_s=0.9 * t, progress=i * 10), wall=t))
    assert all(e is None for e in out)


def test_restore_restarts_when_pause_returns() -> None:
    # storm 1.0-2.0, then a 20 ms pause at 2.1 inside the restoration window: restoration waits for it
    tl = Timeline([(1.0, 2.0), (2.1, 2.12)])
    events = run(tl, 4.0, 0.0)
    assert [e for e, _ in events] == [EventKind.STORM_DETECTED, EventKind.STORM_RESTORED]
    assert events[1][1] >= 2.12 + R - 1e-9


def test_event_fields() -> None:
    det = Detector(WatchdogParams(D, R, P))
    tl = Timeline([(0.0, 5.0)])
    ev = None
    t = 0.0
    while ev is None:
        t += P
        ev = det.observe(tl.sample(t), wall=1_700_000_000.0 + t)
    data = ev.as_dict()
    assert data["event"] == "storm_detected" and data["scope"] == "nic" and data["direction"] == "rx"
    assert data["device"] == "gpu1" and data["interface"] == "ens1f0np0" and data["priority"] == 3
    assert data["ts"] == pytest.approx(1_700_000_000.0 + t)
    assert data["paused_ms"] >= 200.0
    assert det.channels[KEY].detected == 1 and det.active() == [KEY]


def test_lossless_drop_events_hold_off_and_accumulate() -> None:
    params = WatchdogParams(D, R, P, drop_holdoff_s=1.0)
    det = Detector(params)
    key = DropKey(Scope.SWITCH, "leaf1-sonic", "Ethernet0", 3, "queue_drop")
    counts = [10, 10, 15, 20, 20, 2, 7]  # growth, growth in hold-off, reset to 2, growth after hold-off
    times = [0.0, 0.1, 0.2, 0.5, 0.9, 1.0, 1.3]
    evs = [det.observe_drops(DropSample(key, t, c), wall=t) for t, c in zip(times, counts, strict=True)]
    fired = [(e.count, e.ts) for e in evs if e is not None]
    assert fired == [(5, 0.2), (10, 1.3)]  # 5 at 0.2; then 5 (held) + 5 after the reset baseline
    assert evs[2] is not None and evs[2].reason == "queue_drop" and evs[2].event == EventKind.LOSSLESS_DROP


def test_switch_watchdog_stuck_and_healthy() -> None:
    params = WatchdogParams(D, R, P, stuck_after_s=2.0)
    det = Detector(params)
    key = WdKey("leaf1-sonic", "Ethernet0", 3)
    seq = [(0.0, 4, 4), (1.0, 5, 4), (2.0, 5, 4), (3.1, 5, 4), (4.0, 5, 4), (5.0, 5, 5)]
    evs = [det.observe_wd(WdSample(key, t, d, r), wall=t) for t, d, r in seq]
    stuck = [e for e in evs if e is not None and e.event is EventKind.WATCHDOG_STUCK]
    assert len(stuck) == 1 and stuck[0].ts == 3.1 and stuck[0].detected == 5 and stuck[0].restored == 4
    # the switch's own detection raised the storm on the port (no pause samples here) and its restore ended it
    raised = [(e.ts, e.event) for e in evs if e is not None and e.reason == "switch_watchdog"]
    assert raised == [(1.0, EventKind.STORM_DETECTED), (5.0, EventKind.STORM_RESTORED)]
    # a watchdog that restores within the window is healthy
    det2 = Detector(params)
    seq2 = [(0.0, 0, 0), (1.0, 1, 0), (1.5, 1, 1), (2.0, 2, 1), (3.0, 2, 2), (9.0, 2, 2)]
    evs2 = [det2.observe_wd(WdSample(key, t, d, r), wall=t) for t, d, r in seq2]
    assert not [e for e in evs2 if e is not None and e.event is EventKind.WATCHDOG_STUCK]
    # outstanding before fabricd started: not judged
    det3 = Detector(params)
    assert all(det3.observe_wd(WdSample(key, t, 3, 1), wall=t) is None for t in (0.0, 5.0, 10.0))


def test_params_validation_and_resolution() -> None:
    with pytest.raises(UsageError, match="poll 300 ms is longer"):
        WatchdogParams.from_ms(200, 200, 300)
    with pytest.raises(UsageError, match="positive"):
        WatchdogParams.from_ms(0, 200, 100)
    intent = Watchdog(detection_ms=400, restoration_ms=800, poll_ms=100)
    p = resolve_params(intent)
    assert (p.detection_ms, p.restoration_ms, p.poll_ms) == (400, 800, 100)
    p = resolve_params(intent, detection_ms=200, poll_ms=50)
    assert (p.detection_ms, p.restoration_ms, p.poll_ms) == (200, 800, 50)
    p = resolve_params(None, detection_ms=150)
    assert (p.detection_ms, p.restoration_ms, p.poll_ms) == (150, 150, 100)


def test_stale_reads_keep_the_bounds_within_the_staleness() -> None:
    """Counters read up to 5 ms late (a replay tree's writer tick): the bounds widen by at most that much, and the
    lower bounds hold exactly (a late read never makes a storm look longer than it is)."""
    lag_max = 0.005
    rng = random.Random(11)
    for i, phase in enumerate(phases(60, seed=3)):
        start = 1.0 + i * 0.0093
        end = start + 0.8
        tl = Timeline([(start, end)])
        det = Detector(WatchdogParams(D, R, P))
        events = []
        t = phase
        while t <= end + 1.0:
            stale = tl.sample(t - rng.uniform(0.0, lag_max))
            sample = PauseSample(
                KEY, t, pause_s=stale.pause_s, frames=stale.frames, progress=stale.progress, link_up=True, link_epoch=0
            )
            ev = det.observe(sample, wall=t)
            if ev is not None:
                events.append((ev.event, t))
            t += P
        assert [e for e, _ in events] == [EventKind.STORM_DETECTED, EventKind.STORM_RESTORED]
        assert D <= events[0][1] - start <= D + P + lag_max + 1e-9
        assert R <= events[1][1] - end <= R + P + lag_max + 1e-9


def test_a_late_poll_does_not_join_two_bursts_into_a_storm() -> None:
    """A poll that comes 150 ms after the previous one (an overrun) sees a 60 ms burst, a 60 ms gap and the start of
    a 190 ms burst: only the pause in its last poll period may open a run, so the two bursts (each shorter than
    detection) never make a storm; a real storm behind such a late poll is still declared, late."""
    for late in (0.130, 0.150, 0.170):
        burst1 = (1.0, 1.06)
        burst2 = (1.12, 1.31)
        tl = Timeline([burst1, burst2])
        det = Detector(PARAMS)
        times = [0.9, 0.95, 1.0 - 0.001, 1.0 - 0.001 + late] + [1.0 - 0.001 + late + k * P for k in range(1, 12)]
        events = [det.observe(tl.sample(t), wall=t) for t in times]
        assert all(e is None for e in events), late
        storm = Timeline([(1.05, 3.0)])
        det = Detector(PARAMS)
        fired = [t for t in times if det.observe(storm.sample(t), wall=t) is not None]
        assert fired and D <= fired[0] - 1.05 <= D + late + P
