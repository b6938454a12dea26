"""Watchdog sources on real captures and replay trees: the fast per-poll lookup agrees with the readers' full parse,
the driver maps pick the right channels, and switch snapshots become samples."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fabricd.readers.ethtool import parse_ethtool_stats
from fabricd.readers.switch.model import PfcCounter, PfcwdCounter, QueueCounter, SwitchCounters
from fabricd.watchdog.sources import HostSource, PollEvery, SwitchSource, _value
from fabricd.watchdog.types import ChannelKey, Direction, Scope
from fabricd_lab.replay import ReplayHost, ReplayNic, add_ethtool_capture

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "readers" / "ethtool"
CAPTURES = sorted(GOLDEN.glob("*.txt"))


def _driver(text: str) -> str | None:
    m = re.search(r"driver (\S+)", text.splitlines()[0])
    return m.group(1).rstrip(";,)") if m else None


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.stem for c in CAPTURES])
def test_fast_lookup_matches_the_full_parse(capture: Path) -> None:
    text = capture.read_text()
    full = parse_ethtool_stats(text)
    data = text.encode()
    assert full, "capture without counters"
    for name, value in full.items():
        if name.startswith("["):
            continue  # per-ring "[N]: name" lines: not looked up by the watchdog
        # a name printed twice keeps its last value in the full parse; the fast lookup returns the first
        if len(re.findall(rf"(?m)^\s*{re.escape(name)}:", text)) == 1:
            assert _value(data, name.encode()) == value, name
    assert _value(data, b"no_such_counter") is None


def test_lookup_never_matches_a_longer_name_or_a_suffix() -> None:
    data = b"NIC statistics:\n     rx_prio3_pause_duration: 7\n     xrx_prio3_pause: 9\n     rx_prio3_pause: 5\n"
    assert _value(data, b"rx_prio3_pause") == 5
    assert _value(data, b"rx_prio3_pause_duration") == 7


def test_host_source_channels_per_driver(tmp_path: Path) -> None:
    """Per-priority pause channels from real captures: bnxt has duration (µs), ice and i40e frames only."""
    for name, iface in (("bnxt_en-ethq.txt", "bnxt0"), ("ice-ethq.txt", "ice0"), ("i40e-ethq.txt", "i40e0")):
        text = (GOLDEN / name).read_text()
        add_ethtool_capture(tmp_path, iface, text, driver=_driver(text))
    src = HostSource(tmp_path, "h1")
    batch = src.poll(1.0)
    by_key = {s.key: s for s in batch.pause}
    bnxt = by_key[ChannelKey(Scope.NIC, "h1", "bnxt0", 3, Direction.RX)]
    raw = parse_ethtool_stats((GOLDEN / "bnxt_en-ethq.txt").read_text())
    assert bnxt.pause_s == raw["pfc_pri3_rx_duration_us"] / 1e6
    assert bnxt.frames is None  # with a duration counter the frames are not read (duration mode)
    ice = by_key[ChannelKey(Scope.NIC, "h1", "ice0", 3, Direction.TX)]
    raw = parse_ethtool_stats((GOLDEN / "ice-ethq.txt").read_text())
    assert ice.pause_s is None and ice.frames == raw["tx_priority_3_xoff.nic"]
    assert {k.interface for k in by_key} == {"bnxt0", "ice0", "i40e0"}
    assert {k.priority for k in by_key} == set(range(8))  # no inventory: every priority with pause counters


def test_host_source_on_a_replay_host_follows_the_intent_priorities(tmp_path: Path) -> None:
    host = ReplayHost(tmp_path, [ReplayNic("eth0", "mlx5_0", channels=2, pfc_priorities=(3, 4))])
    host.build()
    host.pause("eth0", 3, direction="tx", frames=10, duration_us=1500)
    host.traffic("eth0", 3, direction="rx", packets=7)
    host.add("eth0", "rx_out_of_buffer", 3)
    host.hw_add("mlx5_0", "out_of_buffer", 4)
    host.flush()
    src = HostSource(tmp_path, "gpu1", priorities=[3], every=PollEvery(drops=1))
    batch = src.poll(2.0)
    keys = {(s.key.priority, s.key.direction) for s in batch.pause}
    assert keys == {(3, Direction.RX), (3, Direction.TX)}  # priority 4 has counters but is not watched
    tx = next(s for s in batch.pause if s.key.direction is Direction.TX)
    assert tx.pause_s == pytest.approx(0.0015) and tx.frames is None and tx.progress == 7
    assert tx.link_up is True and tx.link_epoch == 0  # operstate up; mlx5 link_down_events_phy
    drops = {(d.key.reason, d.key.interface): d.count for d in batch.drops}
    assert drops[("out_of_buffer", "eth0")] == 3
    assert drops[("rdma_out_of_buffer", "mlx5_0/1")] == 4


def test_host_source_skips_a_channel_whose_counter_is_missing_this_poll(tmp_path: Path) -> None:
    host = ReplayHost(tmp_path, [ReplayNic("eth0", "mlx5_0", channels=0)])
    host.build()
    src = HostSource(tmp_path, "gpu1")
    assert len(src.poll(1.0).pause) == 2
    stats = tmp_path / "ethtool" / "eth0.stats"
    stats.write_text(
        "".join(line + "\n" for line in stats.read_text().splitlines() if "rx_prio3_pause_duration" not in line)
    )
    assert {s.key.direction for s in src.poll(2.0).pause} == {Direction.TX}  # never a guessed value
    stats.unlink()
    batch = src.poll(3.0)
    assert batch.pause == [] and batch.problems == ["gpu1:eth0: statistics vanished"]


def test_switch_source_maps_pfc_queues_and_watchdog() -> None:
    counters = SwitchCounters(
        pfc=(
            PfcCounter("Ethernet0", "rx", 3, 100, 2500),
            PfcCounter("Ethernet0", "tx", 3, 5),
            PfcCounter("Ethernet0", "rx", 0, 9),
            PfcCounter("Ethernet0", "rx", None, 200),
        ),
        queues=(
            QueueCounter("Ethernet0", 3, "unicast", packets=42, dropped_packets=2),
            QueueCounter("Ethernet0", 0, "unicast", packets=1, dropped_packets=50),
            QueueCounter("Ethernet0", 3, "multicast", packets=99),
        ),
        pfcwd=(PfcwdCounter("Ethernet0", 3, "stormed", 2, 1),),
    )
    batch = SwitchSource("leaf1-sonic", priorities=[3]).to_batch(counters, 5.0)
    rx = next(s for s in batch.pause if s.key.direction is Direction.RX)
    assert rx.key == ChannelKey(Scope.SWITCH, "leaf1-sonic", "Ethernet0", 3, Direction.RX)
    assert (rx.frames, rx.pause_s, rx.progress) == (100, 0.0025, 42)
    tx = next(s for s in batch.pause if s.key.direction is Direction.TX)
    assert (tx.frames, tx.pause_s, tx.progress) == (5, None, None)
    assert len(batch.pause) == 2  # priority 0 and the all-priority total are not watched
    assert [(d.key.priority, d.count) for d in batch.drops] == [(3, 2)]
    assert [(w.key.priority, w.detected, w.restored) for w in batch.wd] == [(3, 2, 1)]


def test_deadline_reads_declare_at_detection_and_unchanged_files_are_not_reread(tmp_path: Path) -> None:
    """Detection 200 ms, poll 50 ms: when a read shows pause, the port is read again exactly when the run would reach
    detection (as the runner does with the detector's ``due``), so a storm is declared at detection + the read
    margin whatever its phase, restored at restoration + margin, and bursts shorter than detection never fire. A
    replay file that did not change is not read again. Time is simulated; the counters are exact at every read."""
    from fabricd.watchdog.detector import Detector
    from fabricd.watchdog.params import WatchdogParams
    from fabricd.watchdog.types import EventKind

    d, r, p, margin = 0.2, 0.2, 0.05, 0.001
    host = ReplayHost(tmp_path, [ReplayNic("eth0", "mlx5_0", channels=0), ReplayNic("eth1", "mlx5_1", channels=0)])
    host.build()
    rng = __import__("random").Random(5)
    for start in [rng.uniform(1.0, 1.05) for _ in range(12)]:
        for length, storm in ((0.6, True), (0.17, False)):
            src = HostSource(tmp_path, "h", every=PollEvery(drops=10_000))
            src.tune(d, r, p)
            det = Detector(WatchdogParams(d, r, p))
            end = start + length
            events: list[tuple[EventKind, float]] = []
            reads = {"eth0": 0, "eth1": 0}
            due: dict[str, float] = {}
            t, next_poll = 0.0, p
            while t < end + 1.0:
                soonest = min(due.values(), default=float("inf")) + margin
                t = min(next_poll, soonest)
                paused = max(0.0, min(t, end) - start)
                host.set("eth0", "rx_prio3_pause_duration", int(paused * 1e6))
                host.flush()
                if t == next_poll:
                    batch = src.poll(t)
                    next_poll = round(next_poll + p, 9)
                else:
                    batch = src.poll_ports(t, [port for port, dd in due.items() if dd + margin <= t])
                for port in {s.key.interface for s in batch.pause}:
                    reads[port] += 1
                    due.pop(port, None)
                for s in batch.pause:
                    ev = det.observe(s, wall=t)
                    if ev is not None:
                        events.append((ev.event, t))
                    if s.key in det.due:
                        due[s.key.interface] = min(due.get(s.key.interface, float("inf")), det.due[s.key])
            if not storm:
                assert events == [], (start, events)
                continue
            assert [e for e, _ in events] == [EventKind.STORM_DETECTED, EventKind.STORM_RESTORED], start
            assert d <= events[0][1] - start <= d + margin + 1e-6
            # + the slack of a "paused throughout" interval (0.2 x poll): an interval in which the storm ended less
            # than 10 ms before the read still counts as paused, and its unpaused tail is not counted as quiet
            assert r <= events[1][1] - end <= r + margin + 0.2 * p + 1e-6
            assert reads["eth1"] == round(t / p)  # every poll...
            assert src.state_of("eth1").files.stats.changed is False  # ...without re-reading its unchanged file
            assert src.state_of("eth0").files.stats.changed is True
