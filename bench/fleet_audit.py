"""``fabricd audit fleet`` over 1,024 hosts x 8 NICs against a real Prometheus (Debian's), goal <= 10 s.

The agents' series for 1,024 hosts (8 NICs each, every host audit check per NIC: 131,072
``fabricd_host_check_compliant`` series, plus each agent's info, interval, last success and host compliance) are
written as OpenMetrics over the last 4 minutes and loaded with ``promtool tsdb create-blocks-from openmetrics``; a
Prometheus then serves them. 12 hosts are made non-compliant (1-3 checks on one NIC), 5 agents stopped 2 hours ago
(seen within a day, absent now), and the inventory lists 3 hosts that never had an agent. The bench checks that
audit fleet names exactly those, then times it (median of 5).

Anchor, same run, same server: the obvious script, one instant query of every ``fabricd_host_check_compliant``
series with its JSON decoded (what any per-host report has to start from without aggregating in Prometheus).

Run from the repo root: ``python bench/fleet_audit.py``. The last line is the JSON result.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

from fabricd.audit.fleet import audit_fleet, prometheus_query
from fabricd.audit.host import HOST_CHECKS

HOSTS = 1024
NICS = 8
DRIFTED = 12
STOPPED = 5
NEVER = 3
GOAL_S = 10.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_openmetrics(path: Path, now: float) -> tuple[set[str], set[str], list[str]]:
    rng = random.Random(19)
    hosts = [f"gpu{i:04d}" for i in range(HOSTS)]
    drifted = set(rng.sample(hosts, DRIFTED))
    stopped = set(rng.sample(sorted(set(hosts) - drifted), STOPPED))
    checks = [c.code for c in HOST_CHECKS]
    bad: dict[tuple[str, str, str], bool] = {}
    for h in drifted:
        nic = f"ens{rng.randrange(NICS)}f0np0"
        for code in rng.sample(checks, rng.randint(1, 3)):
            bad[(h, nic, code)] = True
    live_ts = [now - 240, now - 120, now - 30]
    old_ts = [now - 7200 - 240, now - 7200 - 120, now - 7200]
    lines: list[str] = []

    def family(name: str, rows: list[tuple[str, float, list[float]]]) -> None:
        lines.append(f"# TYPE {name} gauge")
        for labels, value, stamps in rows:
            lines.extend(f"{name}{{{labels}}} {value:g} {t:.3f}" for t in stamps)

    def ts(h: str) -> list[float]:
        return old_ts if h in stopped else live_ts

    family("fabricd_agent_info", [(f'host="{h}",mode="enforce",version="0.1.0"', 1, ts(h)) for h in hosts])
    family("fabricd_agent_reconcile_interval_seconds", [(f'host="{h}"', 300, ts(h)) for h in hosts])
    lines.append("# TYPE fabricd_agent_last_success_timestamp_seconds gauge")
    for h in hosts:
        lines.extend(f'fabricd_agent_last_success_timestamp_seconds{{host="{h}"}} {t - 20:.3f} {t:.3f}' for t in ts(h))
    family("fabricd_host_compliant", [(f'host="{h}"', 0 if h in drifted else 1, ts(h)) for h in hosts])
    rows = []
    for h in hosts:
        for n in range(NICS):
            nic = f"ens{n}f0np0"
            for code in checks:
                rows.append((f'host="{h}",interface="{nic}",check="{code}"', 0 if (h, nic, code) in bad else 1, ts(h)))
    family("fabricd_host_check_compliant", rows)
    lines.append("# EOF")
    path.write_text("\n".join(lines) + "\n")
    return drifted, stopped, hosts


def main() -> None:
    prom_bin, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if prom_bin is None or promtool is None:
        sys.exit("bench/fleet_audit.py needs Debian's prometheus package (prometheus and promtool)")
    work = Path(tempfile.mkdtemp(prefix="fabricd-bench-fleet-"))
    proc = None
    try:
        now = time.time()
        om = work / "fleet.om"
        t0 = time.perf_counter()
        drifted, stopped, hosts = write_openmetrics(om, now)
        gen_s = time.perf_counter() - t0
        data = work / "data"
        t0 = time.perf_counter()
        subprocess.run(
            [promtool, "tsdb", "create-blocks-from", "openmetrics", "-q", str(om), str(data)],
            check=True,
            capture_output=True,
            timeout=1200,
        )
        load_s = time.perf_counter() - t0
        om.unlink()
        port = free_port()
        cfg = work / "prometheus.yml"
        cfg.write_text("global: {scrape_interval: 1m}\n")
        url = f"http://127.0.0.1:{port}"
        proc = subprocess.Popen(
            [
                prom_bin,
                f"--config.file={cfg}",
                f"--storage.tsdb.path={data}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--storage.tsdb.retention.time=30d",
            ],
            stdout=subprocess.DEVNULL,
            stderr=(work / "prometheus.log").open("w"),
        )
        query = prometheus_query(url, timeout_s=120)
        deadline = time.monotonic() + 120
        while True:
            try:
                if len(query("fabricd_agent_info")) == HOSTS - STOPPED:
                    break
            except Exception:  # not up yet
                pass
            if time.monotonic() > deadline:
                sys.exit("prometheus did not serve the loaded blocks: " + (work / "prometheus.log").read_text()[-2000:])
            time.sleep(0.5)
        inventory = [*hosts, *(f"new{i}" for i in range(NEVER))]
        never = {f"new{i}" for i in range(NEVER)}
        result = audit_fleet(query, inventory)  # warm-up and correctness
        assert set(result.noncompliant) == drifted, (sorted(result.noncompliant), sorted(drifted))
        assert set(result.absent) == stopped | never, (sorted(result.absent), sorted(stopped | never))
        assert result.stale == [] and len(result.reports) == HOSTS + NEVER
        times, anchors = [], []
        for _ in range(5):
            t0 = time.perf_counter()
            audit_fleet(query, inventory)
            times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            with urllib.request.urlopen(
                f"{url}/api/v1/query?" + urllib.parse.urlencode({"query": "fabricd_host_check_compliant"}), timeout=120
            ) as resp:
                raw = json.loads(resp.read())
            anchors.append(time.perf_counter() - t0)
            assert len(raw["data"]["result"]) == (HOSTS - STOPPED) * NICS * len(HOST_CHECKS)
        value, anchor = statistics.median(times), statistics.median(anchors)
        print(
            f"audit fleet: {HOSTS} hosts x {NICS} NICs x {len(HOST_CHECKS)} checks: median {value:.3f} s "
            f"(runs {', '.join(f'{t:.2f}' for t in times)}); raw dump of every series {anchor:.3f} s; "
            f"goal <= {GOAL_S:g} s",
            file=sys.stderr,
        )
        print(
            json.dumps(
                {
                    "bench": "fleet_audit",
                    "value": round(value, 3),
                    "unit": "s",
                    "anchor": "instant query of every "
                    "fabricd_host_check_compliant series, JSON decoded, same Prometheus",
                    "anchor_value": round(anchor, 3),
                    "ratio": round(value / anchor, 3),
                    "goal_s": GOAL_S,
                    "met": value <= GOAL_S,
                    "hosts": HOSTS,
                    "nics": NICS,
                    "checks": len(HOST_CHECKS),
                    "series": HOSTS * NICS * len(HOST_CHECKS),
                    "runs_s": [round(t, 3) for t in times],
                    "named_noncompliant": len(result.noncompliant),
                    "named_absent": len(result.absent),
                    "generate_s": round(gen_s, 1),
                    "promtool_load_s": round(load_s, 1),
                    "load_average_1m": round(os.getloadavg()[0], 2),
                }
            )
        )
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
