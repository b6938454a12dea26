"""The switch's own view as a watchdog source (issue 27 part 3), without sockets.

- wiring: a gNMI switch feeds the watchdog through ``SwitchStreams`` (polled at the watchdog's poll) with its SAMPLE
  interval declared as ``update_s``; SSH switches keep their own round;
- a storm on a switch-to-switch link, streamed as SONiC's COUNTERS_DB values converted by the pack's gNMI table, is
  raised within detection + 2 x the sample interval and attributed by the root-cause tracer;
- the switch watchdog's detected counter raises a storm (or corroborates one), its restored counter ends one it
  raised; frames and pause duration of one channel make one sample.

The stream itself is replaced by ``_Stream``, a :class:`~fabricd.collectors.switch.Poller` that hands out
counters converted from COUNTERS_DB values by the real SONiC table (no gNMI server can run in a unit test; the
integration test tests/integration/test_switch_stream_storm.py streams from the lab's)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from fabricd.collectors.switch import SwitchHealth, SwitchPoll, SwitchTarget
from fabricd.inventory import Inventory, load_inventory
from fabricd.nos.gnmi import path_key
from fabricd.nos.sonic.gnmi import PORTS, QUEUE_NAMES, QUEUE_TYPES, QUEUES, TARGET, to_counters
from fabricd.readers.switch.model import PfcCounter, SwitchCounters
from fabricd.service.wiring import SwitchFleet, SwitchStreams, build_watchdog, gnmi_update_s
from fabricd.watchdog.detector import Detector
from fabricd.watchdog.params import WatchdogParams
from fabricd.watchdog.switch_source import SwitchSource
from fabricd.watchdog.types import ChannelKey, Direction, Event, EventKind, PauseSample, Scope, WdKey, WdSample

REPO = Path(__file__).resolve().parents[2]


def _inventory(gnmi: dict[str, float | None]) -> Inventory:
    inv = load_inventory(REPO / "inventory" / "lab")
    switches = [
        s.model_copy(
            update={
                "telemetry": s.telemetry.model_copy(
                    update={
                        "transport": "gnmi",
                        "gnmi": s.telemetry.gnmi.model_copy(update={"sample_interval_s": gnmi[s.name]}),
                    }
                )
            }
        )
        if s.name in gnmi
        else s
        for s in inv.fabric.switches
    ]
    fabric = inv.fabric.model_copy(update={"switches": switches})
    fabric.__dict__.pop("switch_by_name", None)  # model_copy keeps the old lookup table
    return dataclasses.replace(inv, fabric=fabric)


def _never(target: SwitchTarget) -> Any:
    raise AssertionError(f"{target.name} was dialled")


class _Stream:
    """The latest COUNTERS_DB values of each switch, as a gNMI poller hands them out (``fresh`` once per update)."""

    def __init__(self, targets: list[SwitchTarget]) -> None:
        self.targets = targets
        self.values: dict[str, dict[str, Any]] = {t.name: {} for t in targets}
        self.updates = {t.name: 0 for t in targets}
        self.handed: dict[str, int] = {}

    def update(self, switch: str, values: dict[str, Any]) -> None:
        self.values[switch] = values
        self.updates[switch] += 1

    def poll(self, wait_s: float | None = None) -> list[SwitchPoll]:
        out = []
        for t in self.targets:
            fresh = self.updates[t.name] != self.handed.get(t.name)
            self.handed[t.name] = self.updates[t.name]
            out.append(SwitchPoll(t, to_counters(self.values[t.name]), None, 0.0, fresh))
        return out

    def health(self) -> list[SwitchHealth]:
        return [SwitchHealth(t.name, True, 1, self.updates[t.name], 0, 0, 0, None, None, None) for t in self.targets]

    def close(self) -> None:
        pass


def _values(
    ports: dict[str, dict[int, tuple[int, int]]], wd: dict[str, tuple[int, int]] | None = None
) -> dict[str, Any]:
    """COUNTERS_DB values: per port, per priority (rx frames, rx pause µs); per port, priority 3's watchdog
    (detected, restored) and its queue (no traffic)."""
    port_obj: dict[str, dict[str, str]] = {}
    queues: dict[str, dict[str, str]] = {}
    names: dict[str, str] = {}
    types: dict[str, str] = {}
    for i, (port, prios) in enumerate(sorted(ports.items())):
        fields: dict[str, str] = {}
        for p in range(8):
            frames, us = prios.get(p, (0, 0))
            fields[f"SAI_PORT_STAT_PFC_{p}_RX_PKTS"] = str(frames)
            fields[f"SAI_PORT_STAT_PFC_{p}_TX_PKTS"] = "0"
            fields[f"SAI_PORT_STAT_PFC_{p}_RX_PAUSE_DURATION_US"] = str(us)
        port_obj[port] = fields
        oid = f"oid:0x15{i:08x}0003"
        names[f"{port}:3"], types[oid] = oid, "SAI_QUEUE_TYPE_UNICAST"
        q = {"SAI_QUEUE_STAT_PACKETS": "0", "SAI_QUEUE_STAT_DROPPED_PACKETS": "0"}
        if wd is not None and port in wd:
            det, rest = wd[port]
            q |= {
                "PFC_WD_STATUS": "stormed" if det > rest else "operational",
                "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED": str(det),
                "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED": str(rest),
            }
        queues[f"{port}:3"] = q
    return {
        path_key(TARGET, "", PORTS): port_obj,
        path_key(TARGET, "", QUEUES): queues,
        path_key(TARGET, "", QUEUE_NAMES): names,
        path_key(TARGET, "", QUEUE_TYPES): types,
    }


def test_gnmi_switches_feed_the_watchdog_from_their_streams_with_their_sample_interval() -> None:
    inv = _inventory({"spine1": None, "leaf1-sonic": 2.5})
    fleet = SwitchFleet(inv.fabric, ["spine1", "leaf1-sonic", "leaf2-eos"], factory=_never)
    try:
        assert fleet.update_s == {"spine1": 1.0, "leaf1-sonic": 2.5, "leaf2-eos": None}  # SONiC's 1 s default
        assert {n: c.update_s for n, c in fleet.converters.items()} == fleet.update_s
        sources = fleet.watch_sources(1.0, 0.05)
        assert [(s.name, p) for s, p in sources] == [("switches", 1.0), ("switches:gnmi", 0.05)]
        assert isinstance(sources[1][0], SwitchStreams) and sources[1][0].gnmi is fleet.gnmi
        assert fleet.ssh is not None and fleet.ssh is not fleet.gnmi
        assert gnmi_update_s(inv.fabric, "leaf2-eos") is None
    finally:
        fleet.close()
    only = SwitchFleet(_inventory({"spine1": None}).fabric, ["spine1"], factory=_never)
    try:
        assert [s.name for s, _ in only.watch_sources(1.0, 0.05)] == ["switches:gnmi"]  # no SSH round
    finally:
        only.close()


def test_a_storm_between_two_switches_is_raised_from_the_stream_and_traced() -> None:
    inv = _inventory({"spine1": None, "leaf1-sonic": None})
    fleet = SwitchFleet(inv.fabric, ["spine1", "leaf1-sonic"], factory=_never)
    assert fleet.gnmi is not None
    fleet.gnmi.close()
    stream = _Stream(fleet.targets)
    fleet.gnmi = stream  # type: ignore[assignment]
    streams = SwitchStreams(fleet)
    params = WatchdogParams(detection_s=0.2, restoration_s=0.4, poll_s=0.05)
    now = [100.0]
    wd = build_watchdog(inv, params, [streams], periods={streams.name: params.poll_s})
    wd.clock = lambda: now[0]
    quiet = {"Ethernet0": {3: (0, 0)}, "Ethernet8": {3: (0, 0)}}
    events: list[tuple[float, Event]] = []
    # the switch refreshes every 1 s (its SAMPLE interval); the watchdog polls every 50 ms
    storm_start, frames, us = 102.3, 0, 0
    for tick in range(int(8 / params.poll_s)):
        now[0] = 100.0 + tick * params.poll_s
        if abs(now[0] % 1.0) < 1e-6 or abs(now[0] % 1.0 - 1.0) < 1e-6:  # an update arrives each whole second
            paused = max(0.0, now[0] - storm_start)
            frames, us = int(paused * 23_800), int(paused * 1e6)
            stream.update("spine1", _values({**quiet, "Ethernet0": {3: (frames, us)}}))
            stream.update("leaf1-sonic", _values({"Ethernet48": {3: (0, 0)}}))
        new = wd.step(streams)
        events += [(now[0], e) for e in new]
    raised = [(t, e) for t, e in events if e.event is EventKind.STORM_DETECTED]
    assert len(raised) == 1, events
    at, ev = raised[0]
    assert (ev.device, ev.interface, ev.priority, ev.direction) == ("spine1", "Ethernet0", 3, Direction.RX)
    latency = at - storm_start
    assert latency <= params.detection_s + 2 * 1.0 + params.poll_s, latency
    assert ev.origin == "leaf1-sonic:Ethernet48" and ev.origin_kind == "inferred_peer"  # the link's sender


def test_the_switch_watchdog_raises_corroborates_and_restores() -> None:
    params = WatchdogParams(detection_s=0.2, restoration_s=0.4, poll_s=0.1, stuck_after_s=60.0)
    det = Detector(params)
    key = WdKey("spine1", "Ethernet0", 3)
    assert det.observe_wd(WdSample(key, 1.0, 4, 4), 1.0) is None  # baseline (storms before fabricd started)
    ev = det.observe_wd(WdSample(key, 2.0, 5, 4), 2.0)
    assert ev is not None and ev.event is EventKind.STORM_DETECTED and ev.reason == "switch_watchdog"
    assert (ev.scope, ev.device, ev.interface, ev.priority, ev.direction) == ("switch", "spine1", "Ethernet0", 3, "rx")
    ch = ChannelKey(Scope.SWITCH, "spine1", "Ethernet0", 3, Direction.RX)
    assert det.active() == [ch]
    assert det.observe_wd(WdSample(key, 3.0, 5, 4), 3.0) is None  # no second event while it lasts
    back = det.observe_wd(WdSample(key, 4.0, 5, 5), 4.0)
    assert back is not None and back.event is EventKind.STORM_RESTORED and back.storm_duration_s == 2.0
    assert det.active() == []
    # corroboration: the counters raised it first; the switch's watchdog adds no second storm
    t = 10.0
    for i in range(6):
        det.observe(PauseSample(ch, t + i * 0.1, pause_s=(i * 0.1) if i else 0.0, update_s=0.1), t + i * 0.1)
    assert det.active() == [ch] and det.channels[ch].detected == 2
    assert det.observe_wd(WdSample(key, 10.6, 6, 5), 10.6) is None
    assert det.channels[ch].detected == 2


def test_frames_and_pause_duration_of_one_channel_make_one_sample() -> None:
    counters = SwitchCounters(
        pfc=(
            PfcCounter("Ethernet0", "rx", 3, 1200),
            PfcCounter("Ethernet0", "tx", 3, 0),
            PfcCounter("Ethernet0", "rx", 3, None, 2_500_000),
        )
    )
    batch = SwitchSource("spine1", priorities=[3], update_s=1.0).to_batch(counters, 5.0)
    by_dir = {s.key.direction: s for s in batch.pause}
    assert len(batch.pause) == 2
    assert by_dir[Direction.RX].frames == 1200 and by_dir[Direction.RX].pause_s == 2.5
    assert by_dir[Direction.RX].update_s == 1.0
    assert by_dir[Direction.TX].frames == 0 and by_dir[Direction.TX].pause_s is None
