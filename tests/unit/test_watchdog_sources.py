"""Watchdog sources on real captures and replay trees: the fast per-poll lookup agrees with the readers' full parse,
the driver maps pick the right channels, and switch snapshots become samples."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fabricd.lab.replay import ReplayHost, ReplayNic, add_ethtool_capture
from fabricd.readers.ethtool import parse_ethtool_stats
from fabricd.readers.switch.model import PfcCounter, PfcwdCounter, QueueCounter, SwitchCounters
from fabricd.watchdog.sources import HostSource, SwitchSource, _value
from fabricd.watchdog.types import ChannelKey, Direction, Scope

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
    src = HostSource(tmp_path, "gpu1", priorities=[3], drop_every=1)
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
    stats.write_text("".join(line + "\n" for line in stats.read_text().splitlines()
                             if "rx_prio3_pause_duration" not in line))
    assert {s.key.direction for s in src.poll(2.0).pause} == {Direction.TX}  # never a guessed value
    stats.unlink()
    batch = src.poll(3.0)
    assert batch.pause == [] and batch.problems == ["gpu1:eth0: statistics vanished"]


def test_switch_source_maps_pfc_queues_and_watchdog() -> None:
    counters = SwitchCounters(
        pfc=(PfcCounter("Ethernet0", "rx", 3, 100, 2500), PfcCounter("Ethernet0", "tx", 3, 5),
             PfcCounter("Ethernet0", "rx", 0, 9), PfcCounter("Ethernet0", "rx", None, 200)),
        queues=(QueueCounter("Ethernet0", 3, "unicast", packets=42, dropped_packets=2),
                QueueCounter("Ethernet0", 0, "unicast", packets=1, dropped_packets=50),
                QueueCounter("Ethernet0", 3, "multicast", packets=99)),
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


def test_idle_ports_are_read_less_often_and_the_contract_still_holds(tmp_path: Path) -> None:
    """With detection 200 ms and poll 50 ms an idle port is read every 3rd poll; a storm that starts between two
    reads is still declared at the first poll after 200 ms (its duration counter says how long it has lasted)."""
    from fabricd.watchdog.detector import Detector
    from fabricd.watchdog.params import WatchdogParams
    from fabricd.watchdog.types import EventKind

    d, r, p = 0.2, 0.2, 0.05
    host = ReplayHost(tmp_path, [ReplayNic("eth0", "mlx5_0", channels=0), ReplayNic("eth1", "mlx5_1", channels=0)])
    host.build()
    for k, start in enumerate((1.013, 3.049, 5.0251, 7.0377)):
        src = HostSource(tmp_path, "h", drop_every=10_000)
        src.tune(d, r, p)
        assert (src.idle_every, src.hot_polls) == (3, 6)
        det = Detector(WatchdogParams(d, r, p))
        end = start + 0.6
        events: list[tuple[EventKind, float]] = []
        idle_reads = 0
        t = 0.0
        for _ in range(int(2.5 / p) + k * int(2 / p) + 40):
            t = round(t + p, 6)
            paused = max(0.0, min(t, end) - start)
            host.set("eth0", "rx_prio3_pause_duration", int(paused * 1e6))
            host.flush()
            batch = src.poll(t)
            idle_reads += sum(1 for s in batch.pause if s.key.interface == "eth1")
            for s in batch.pause:
                ev = det.observe(s, wall=t)
                if ev is not None:
                    events.append((ev.event, t))
        assert [e for e, _ in events] == [EventKind.STORM_DETECTED, EventKind.STORM_RESTORED], start
        assert d <= events[0][1] - start <= d + p + 1e-6
        assert r <= events[1][1] - end <= r + p + 1e-6
        polls = round(t / p)
        # 2 channels; every 3rd poll, plus a hot window of 6 polls after the first plan and after each re-plan
        assert idle_reads <= 2 * (polls // 3 + 2 * (src.hot_polls + 1) * (1 + polls // src.replan_every))
