"""Detection latency, CPU share and false positives of ``fabricd watch`` on a live 64-port replay host.

Setup: a replay root (on tmpfs when there is one) with 64 mlx5-like RoCE NICs (full mlx5_core ethtool stat set with
16 channels, PFC on priority 3), rewritten every 5 ms by :class:`fabricd_lab.stormgen.StormGen` (a real-time
thread when allowed: it stands for NIC counters, which never stall). A separate ``fabricd watch --root DIR
--poll-ms 50 --detection-ms 200 --restoration-ms 200 --output json`` process watches it, at nice -10 as the shipped
systemd unit runs the service.

1. **Storms**: 100 storms of 500 ms, one every 150 ms, round-robin over the 64 ports, alternating direction (a NIC
   paused by its peer / a NIC sending pause). Detection latency = event ``ts`` - storm start.
2. **Bursty non-storm traffic** for ``FABRICD_BENCH_FP_SECONDS`` (default 60 s; the issue's 10 minutes is
   ``FABRICD_BENCH_FP_SECONDS=600``): on every port, pause bursts of 10-180 ms (all shorter than detection)
   separated by 60-400 ms of no pause (at least one poll plus the writer's few ms of lag, so that no poll interval
   can hold two bursts). Every event in this phase is a false positive.
3. **CPU**: the watcher's user+system time (``/proc/<pid>/stat``) over phases 1 and 2 divided by wall time: its
   share of one core.

Traffic: every port carries ``FABRICD_BENCH_TRAFFIC_PPS`` packets/s (default 20) on the PFC priority in both
directions while nothing pauses it, so that a queue that is not paused drains (SONiC's rule needs it; without it
every pause burst looks like a storm to a packet-counter detector).

Anchor, measured in the same run on the same tree: a SONiC-pfcwd-style poller (``bench/anchors/sonic_pfcwd.py``:
pause frames moved and the queue's packets did not, for the detection time, counted in polls of SONiC's default
``pfcwd interval`` of 200 ms, as ``pfc_detect_mellanox.lua`` counts them) with the same 200 ms detection and
restoration, as a second process watching the same replay files over both phases; its p99 detection latency and
its false positives. Targets: p99 <= 250 ms, CPU <= 2 %, 0 false positives.

Run from the repo root: ``python bench/watchdog.py``. The last line is the JSON result.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from fabricd_lab.replay import ReplayHost, ReplayNic  # noqa: E402
from fabricd_lab.stormgen import Episode, StormGen  # noqa: E402

PORTS = 64
STORMS = 100
STORM_S = 0.5
STORM_EVERY_S = 0.15
DETECTION_MS, RESTORATION_MS, POLL_MS = 200, 200, 50
SONIC_POLL_MS = 200  # sonic-utilities pfcwd/main.py DEFAULT_POLL_INTERVAL
FP_SECONDS = float(os.environ.get("FABRICD_BENCH_FP_SECONDS", "60"))
TRAFFIC_PPS = float(os.environ.get("FABRICD_BENCH_TRAFFIC_PPS", "20"))
FABRICD = str(Path(sys.executable).parent / "fabricd")
SONIC_POLLER = str(Path(__file__).resolve().parent / "anchors" / "sonic_pfcwd.py")


def start_reader(proc: subprocess.Popen[str], events: list[dict[str, Any]]) -> threading.Thread:
    assert proc.stdout is not None
    out = proc.stdout
    reader = threading.Thread(target=lambda: events.extend(json.loads(line) for line in out), daemon=True)
    reader.start()
    return reader


def detection(events: list[dict[str, Any]], storms: list[Episode]) -> tuple[list[float], int]:
    """Latency (ms) of the first ``storm_detected`` event of each storm's port and direction, and the misses."""
    latencies: list[float] = []
    missed = 0
    for ep in storms:
        hits = [e for e in events if e["event"] == "storm_detected" and e["interface"] == ep.interface
                and e["direction"] == ep.direction and ep.start <= e["ts"] <= ep.start + 2.0]
        if hits:
            latencies.append((hits[0]["ts"] - ep.start) * 1000.0)
        else:
            missed += 1
            print(f"missed: {ep.interface} {ep.direction} at {ep.start:.3f}", file=sys.stderr)
    return latencies, missed


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def main() -> None:
    shm = Path("/dev/shm")
    root = Path(tempfile.mkdtemp(prefix="fdt-bench-wd-", dir=shm if shm.is_dir() else None))
    proc: subprocess.Popen[str] | None = None
    sonic: subprocess.Popen[str] | None = None
    gen: StormGen | None = None
    try:
        nics = [ReplayNic(f"eth{i}", f"mlx5_{i}") for i in range(PORTS)]
        host = ReplayHost(root, nics)
        host.build()
        size = (root / "ethtool" / "eth0.stats").stat().st_size
        gen = StormGen(host, tick_s=0.005, traffic_pps=TRAFFIC_PPS, realtime=True).start()
        with contextlib.suppress(OSError):  # the watcher runs at nice -10, as the systemd unit runs it
            os.setpriority(os.PRIO_PROCESS, 0, -10)
        duration = 3.0 + STORMS * STORM_EVERY_S + STORM_S + 1.5 + FP_SECONDS + 2.0
        proc = subprocess.Popen(
            [FABRICD, "watch", "--root", str(root), "--poll-ms", str(POLL_MS), "--detection-ms", str(DETECTION_MS),
             "--restoration-ms", str(RESTORATION_MS), "--output", "json", "--duration", f"{duration:.1f}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        sonic = subprocess.Popen(
            [sys.executable, SONIC_POLLER, "--root", str(root), "--poll-ms", str(SONIC_POLL_MS), "--detection-ms",
             str(DETECTION_MS), "--restoration-ms", str(RESTORATION_MS), "--duration", f"{duration:.1f}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        events: list[dict[str, Any]] = []
        sonic_events: list[dict[str, Any]] = []
        reader = start_reader(proc, events)
        sonic_reader = start_reader(sonic, sonic_events)
        time.sleep(3.0)  # imports, first plans and baselines
        gc.freeze()  # keep collections of the schedule's objects from stalling the writer thread

        # 1. storms
        cpu0, wall0 = cpu_seconds(proc.pid), time.time()
        first = time.time() + 0.2
        storms: list[Episode] = []
        for i in range(STORMS):
            direction = "rx" if i % 2 == 0 else "tx"
            storms.append(gen.pause(f"eth{i % PORTS}", direction=direction, start=first + i * STORM_EVERY_S,
                                    duration_s=STORM_S))
        storm_end = first + (STORMS - 1) * STORM_EVERY_S + STORM_S + RESTORATION_MS / 1000 + 1.0
        time.sleep(max(0.0, storm_end - time.time()))
        cpu1, wall1 = cpu_seconds(proc.pid), time.time()

        # 2. bursty non-storm pause traffic
        rng = random.Random(7)
        fp_start = time.time() + 0.2
        fp_end = fp_start + FP_SECONDS
        bursts = 0
        for i in range(PORTS):
            t = fp_start + rng.uniform(0.0, 0.3)
            while t < fp_end:
                length = rng.uniform(0.010, 0.180)
                gen.pause(f"eth{i}", direction="rx" if rng.random() < 0.5 else "tx", start=t, duration_s=length)
                bursts += 1
                t += length + rng.uniform(0.060, 0.400)
        time.sleep(max(0.0, fp_end + 1.0 - time.time()))
        cpu2, wall2 = cpu_seconds(proc.pid), time.time()
        proc.wait(timeout=duration + 60)
        sonic.wait(timeout=60)
        reader.join(5)
        sonic_reader.join(5)
        stderr = proc.stderr.read() if proc.stderr else ""
        sonic_stderr = sonic.stderr.read() if sonic.stderr else ""
        if sonic.returncode != 0:
            raise SystemExit(f"SONiC-style poller failed (exit {sonic.returncode}): {sonic_stderr.strip()}")
    finally:
        for p in (proc, sonic):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
        if gen is not None:
            gen.close()
        shutil.rmtree(root, ignore_errors=True)
    writer_gap_ms = gen.max_gap_s * 1000 if gen is not None else float("nan")

    latencies, missed = detection(events, storms)
    false_pos = [e for e in events if fp_start <= e["ts"] <= fp_end + 1.0]
    s_lat, s_missed = detection(sonic_events, storms)
    s_fp = [e for e in sonic_events if e["event"] == "storm_detected" and fp_start <= e["ts"] <= fp_end + 1.0]
    s_p99 = percentile(s_lat, 0.99) if s_lat else float("nan")
    cpu_storm = (cpu1 - cpu0) / (wall1 - wall0) * 100.0
    cpu_bursty = (cpu2 - cpu1) / (wall2 - wall1) * 100.0
    cpu_all = (cpu2 - cpu0) / (wall2 - wall0) * 100.0
    p99 = percentile(latencies, 0.99) if latencies else float("nan")
    anchor = s_p99
    summary = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    print(f"replay host: {PORTS} ports, ethtool -S {size} bytes each, writer tick 5 ms; watcher: poll {POLL_MS} ms, "
          f"detection {DETECTION_MS} ms, restoration {RESTORATION_MS} ms")
    print(f"storms: {len(latencies)}/{STORMS} detected ({missed} missed); detection latency ms: "
          f"min {min(latencies):.1f} p50 {statistics.median(latencies):.1f} p99 {p99:.1f} max {max(latencies):.1f}")
    if s_lat:
        print(f"SONiC-pfcwd-style poller (poll {SONIC_POLL_MS} ms, same detection and tree): {len(s_lat)}/{STORMS} "
              f"detected ({s_missed} missed); ms: min {min(s_lat):.1f} p50 {statistics.median(s_lat):.1f} "
              f"p99 {s_p99:.1f} max {max(s_lat):.1f}; false positives {len(s_fp)}; {sonic_stderr.strip()}")
    print(f"bursty phase: {FP_SECONDS:.0f} s, {bursts} bursts of 10-180 ms, gaps 60-400 ms, on {PORTS} ports; "
          "false positives: "
          f"{len(false_pos)}")
    print(f"watcher CPU (share of one core): storms {cpu_storm:.2f} %, bursty {cpu_bursty:.2f} %, overall "
          f"{cpu_all:.2f} %; {summary}; writer max gap {writer_gap_ms:.1f} ms")
    print(f"targets: p99 <= 250 ms ({'met' if p99 <= 250 else 'NOT met'}), CPU <= 2 % "
          f"({'met' if cpu_all <= 2.0 else 'NOT met'}), 0 false positives "
          f"({'met' if not false_pos and not missed else 'NOT met'})")
    print(json.dumps({
        "bench": "watchdog", "value": round(p99, 1), "unit": "ms",
        "anchor": f"SONiC-pfcwd-style poller, p99 (poll {SONIC_POLL_MS} ms, detection {DETECTION_MS} ms, same tree, "
                  "same run)",
        "anchor_value": round(anchor, 1), "ratio": round(p99 / anchor, 3),
        "anchor_p50_ms": round(statistics.median(s_lat), 1) if s_lat else None,
        "anchor_missed": s_missed, "anchor_false_positives": len(s_fp), "traffic_pps": TRAFFIC_PPS,
        "p50_ms": round(statistics.median(latencies), 1), "max_ms": round(max(latencies), 1),
        "storms": STORMS, "missed": missed, "ports": PORTS, "cpu_percent": round(cpu_all, 2),
        "cpu_percent_storms": round(cpu_storm, 2), "cpu_percent_bursty": round(cpu_bursty, 2),
        "false_positives": len(false_pos), "bursty_seconds": FP_SECONDS, "bursts": bursts,
        "writer_max_gap_ms": round(writer_gap_ms, 1),
    }))


if __name__ == "__main__":
    main()
