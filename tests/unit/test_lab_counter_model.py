"""The fabric counter model: pause arithmetic, storms and the PFC watchdog's timing (SONiC semantics)."""

from __future__ import annotations

import pytest

from fabricd_lab.counters import DeviceCounters, UnknownPortError, WatchdogSettings

G400 = 400_000_000_000


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make() -> tuple[DeviceCounters, Clock]:
    clock = Clock()
    c = DeviceCounters([("Ethernet0", G400), ("Ethernet4", G400)], clock=clock)
    c.set_watchdog(WatchdogSettings(frozenset({3}), detection_ms=200, restoration_ms=400))
    return c, clock


def test_pause_time_is_quanta_times_bit_time() -> None:
    c, _ = make()
    c.pause("Ethernet0", 3, 1000, quanta=0xFFFF)
    pfc = c.read()["Ethernet0"].pfc[3]
    assert pfc.rx_frames == 1000
    assert pfc.rx_pause_us == int(1000 * 65535 * 512 / G400 * 1e6)  # 83.9 µs each at 400G
    c.pause("Ethernet0", 3, 7, direction="tx", quanta=100)
    assert c.read()["Ethernet0"].pfc[3].tx_frames == 7


def test_storm_is_detected_after_detection_time_and_restored_after_restoration() -> None:
    c, clock = make()
    c.storm_start("Ethernet0", 3)
    clock.now += 0.199
    assert c.read()["Ethernet0"].watchdog[3].detected == 0
    clock.now += 0.002
    wd = c.read()["Ethernet0"].watchdog[3]
    assert (wd.detected, wd.stormed) == (1, True)
    frames = c.read()["Ethernet0"].pfc[3].rx_frames
    assert 4000 < frames < 5500  # ~23.8 k frames/s for 0.2 s
    assert c.read()["Ethernet0"].pfc[3].rx_pause_us == pytest.approx(201_000, abs=2)
    c.traffic("Ethernet0", 3, 500)  # the queue is stormed with action drop: dropped, counted by the watchdog
    p = c.read()["Ethernet0"]
    assert (p.queues[3].tx_packets, p.queues[3].dropped_packets, p.watchdog[3].tx_drop) == (0, 500, 500)
    c.storm_stop("Ethernet0", 3)
    clock.now += 0.399
    assert c.read()["Ethernet0"].watchdog[3].stormed
    clock.now += 0.002
    wd = c.read()["Ethernet0"].watchdog[3]
    assert (wd.detected, wd.restored, wd.stormed) == (1, 1, False)
    c.traffic("Ethernet0", 3, 10)
    assert c.read()["Ethernet0"].queues[3].tx_packets == 10


def test_bursty_pause_and_unwatched_priorities_never_storm() -> None:
    c, clock = make()
    c.storm_start("Ethernet0", 3, fraction=0.5)  # queue drains half the time
    c.storm_start("Ethernet4", 4)  # priority 4 is not watched
    clock.now += 5
    ports = c.read()
    assert ports["Ethernet0"].watchdog[3].detected == 0
    assert 4 not in ports["Ethernet4"].watchdog
    assert ports["Ethernet4"].pfc[4].rx_frames > 100_000


def test_clear_and_unknown_port() -> None:
    c, _ = make()
    c.traffic("Ethernet4", 0, 9, 100)
    c.ecn_mark("Ethernet4", 3, 4)
    c.drop("Ethernet4", 0, 2)
    q = c.read()["Ethernet4"].queues
    assert (q[0].tx_packets, q[0].tx_bytes, q[3].ecn_marked_packets, q[0].dropped_packets) == (9, 900, 4, 2)
    c.clear()
    assert c.read()["Ethernet4"].queues[0].tx_packets == 0
    with pytest.raises(UnknownPortError):
        c.traffic("Ethernet99", 0, 1)
