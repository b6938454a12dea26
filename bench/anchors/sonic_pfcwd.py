"""A SONiC-pfcwd-style storm detector over a fabricd replay root: the watchdog bench's measured anchor.

It follows the detection rule of SONiC's PFC watchdog as its per-ASIC Lua scripts state it (read from
sonic-net/sonic-mgmt ``tests/pfcwd/files/pfc_detect_mellanox.lua`` at commit 83b155fc, the copy of
sonic-swss ``orchagent/pfc_detect_mellanox.lua`` that the SONiC tests use; the Broadcom and Barefoot scripts share
the rule): on every poll of the flex-counter timer, a queue whose PFC pause-frame counter moved since the last poll
while its transmitted-packet counter did not (the queue is not draining) has the poll interval taken off its
``PFC_WD_DETECTION_TIME_LEFT``; when the time left is already <= one poll, the storm is declared. Any poll without
that condition puts the time left back to the detection time. Restoration is the mirror (``pfc_restore_*.lua``):
polls with no new pause frames count down the restoration time. The nominal poll interval is what is taken off, as
in the script, whatever time really passed.

What differs from a switch, and why: this reads a host's ``ethtool -S`` replay files, not a switch ASIC's SAI
counters, and there is no queue-occupancy counter (the script's ``occupancy_bytes > 0`` is taken as true: a paused
lossless queue holding traffic). For a NIC paused by its peer (direction ``rx``) the pause counter is
``rx_prioN_pause`` and the queue is the NIC's transmit, ``tx_prioN_packets``; for a NIC sending pause (``tx``) the
switch port facing it sees ``tx_prioN_pause`` as its received pause and its queue toward the NIC drains into
``rx_prioN_packets``. Events go to stdout as JSON lines with the same ``event``, ``interface``, ``direction`` and
``ts`` fields as ``fabricd watch --output json``.

Usage: ``python bench/anchors/sonic_pfcwd.py --root DIR [--poll-ms 200 --detection-ms 200 --restoration-ms 200
--priority 3 --duration S]``. A helper of bench/watchdog.py, not a benchmark itself (``make bench`` runs only
``bench/*.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

DIRECTIONS = (("rx", "tx"), ("tx", "rx"))
"""(pause direction, direction of the packets that stop while it holds)."""


def read_counters(path: Path, names: set[str]) -> dict[str, int]:
    values: dict[str, int] = {}
    with open(path, "rb") as f:
        for raw in f:
            key, sep, rest = raw.decode().partition(":")
            key = key.strip()
            if sep and key in names:
                values[key] = int(rest)
    if len(values) != len(names):
        raise SystemExit(f"{path}: counters {sorted(names - set(values))} missing")
    return values


class Queue:
    """The watchdog state the Lua script keeps in COUNTERS_DB for one queue (one port, priority and direction)."""

    def __init__(self, detection_us: int, restoration_us: int) -> None:
        self.detection_us = detection_us
        self.restoration_us = restoration_us
        self.stormed = False
        self.time_left = detection_us
        self.pause_last: int | None = None
        self.packets_last: int | None = None

    def poll(self, pause: int, packets: int, poll_us: int) -> str | None:
        """One run of the detect (or, once stormed, the restore) script; returns the event it publishes."""
        event = None
        if self.pause_last is not None and self.packets_last is not None:
            moved = pause - self.pause_last > 0
            if not self.stormed:
                if moved and packets - self.packets_last == 0:
                    if self.time_left <= poll_us:
                        event, self.stormed, self.time_left = "storm_detected", True, self.restoration_us
                    else:
                        self.time_left -= poll_us
                else:
                    self.time_left = self.detection_us
            elif not moved:
                if self.time_left <= poll_us:
                    event, self.stormed, self.time_left = "storm_restored", False, self.detection_us
                else:
                    self.time_left -= poll_us
            else:
                self.time_left = self.restoration_us
        self.pause_last, self.packets_last = pause, packets
        return event


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", required=True, type=Path)
    p.add_argument("--poll-ms", type=int, default=200, help="SONiC `pfcwd interval` (default 200, as start_default)")
    p.add_argument("--detection-ms", type=int, default=200)
    p.add_argument("--restoration-ms", type=int, default=200)
    p.add_argument("--priority", type=int, default=3)
    p.add_argument("--duration", type=float, default=None, help="stop after this many seconds")
    a = p.parse_args(argv)
    if a.poll_ms > min(a.detection_ms, a.restoration_ms):
        raise SystemExit("poll interval must be <= min(detection, restoration), as `pfcwd interval` requires")
    prio = a.priority
    files = sorted((a.root / "ethtool").glob("*.stats"))
    if not files:
        raise SystemExit(f"{a.root}/ethtool: no *.stats files")
    names = {f"{d}_prio{prio}_{k}" for d in ("rx", "tx") for k in ("pause", "packets")}
    queues = {(f, d): Queue(a.detection_ms * 1000, a.restoration_ms * 1000) for f in files for d, _ in DIRECTIONS}
    poll_us, period = a.poll_ms * 1000, a.poll_ms / 1000.0
    start = time.time()
    end = None if a.duration is None else start + a.duration
    k = 0
    polls = 0
    cpu0 = time.process_time()
    while end is None or time.time() < end:
        k += 1
        time.sleep(max(0.0, start + k * period - time.time()))  # a fixed-rate timer, as the flex counter poll
        now = time.time()
        for f in files:
            c = read_counters(f, names)
            for d, held in DIRECTIONS:
                ev = queues[(f, d)].poll(c[f"{d}_prio{prio}_pause"], c[f"{held}_prio{prio}_packets"], poll_us)
                if ev:
                    print(
                        json.dumps(
                            {
                                "event": ev,
                                "interface": f.name.removesuffix(".stats"),
                                "direction": d,
                                "priority": prio,
                                "ts": now,
                            }
                        ),
                        flush=True,
                    )
        polls += 1
    cpu = time.process_time() - cpu0
    print(f"sonic-pfcwd-style: {polls} polls of {len(files)} ports, CPU {cpu:.2f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main())
