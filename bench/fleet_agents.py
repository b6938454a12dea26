"""Real ``fabricd agent`` processes on 24 namespace hosts, scraped by a real Prometheus (1 s), as a fleet.

Each namespace host (tests/integration/nshost.py: a network namespace with its NIC netdev on a veth pair, and a fake
mlx5 sysfs/configfs tree from real captures) gets its own agent in enforce mode with a 30 s interval. Measured:

1. start: until Prometheus shows all 24 hosts compliant (every agent applied its host's intent at start);
2. idle cost: the agents' CPU over 20 s with nothing to do (from /proc/<pid>/stat), per agent;
3. repair: 4 hosts get a simulated driver reload (netdev deleted and re-created, RDMA device tree rebuilt at its
   power-on values) and 2 agents are stopped; the time from each reload until Prometheus shows the host compliant
   again with its drift counter moved (the fleet view saw the drift), and ``audit fleet`` naming exactly the 2
   stopped hosts.

The bound is the reconcile interval (a reloaded host must be compliant again within one interval): value = the
slowest repair, anchor = the interval, ratio = value / anchor (<= 1 required). Needs root and Debian's prometheus.

Run from the repo root: ``python bench/fleet_agents.py``. The last line is the JSON result.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))

from nshost import NsHost, can_netns  # noqa: E402

from fabricd.audit.fleet import audit_fleet, prometheus_query  # noqa: E402
from fabricd.intent.host import host_intent  # noqa: E402
from fabricd.inventory import load_inventory  # noqa: E402

HOSTS = 24
INTERVAL_S = 30.0
RELOADED = 4
STOPPED = 2
FABRICD = str(Path(sys.executable).with_name("fabricd"))
TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def query(prom: str, expr: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr}), timeout=30) as r:
        return list(json.loads(r.read())["data"]["result"])


def by_host(prom: str, expr: str) -> dict[str, float]:
    try:
        return {r["metric"]["host"]: float(r["value"][1]) for r in query(prom, expr)}
    except OSError:
        return {}


def write_inventory(work: Path) -> Path:
    """The lab inventory with :data:`HOSTS` hosts, in ``work``."""
    inv = work / "inventory"
    shutil.copytree(REPO / "inventory" / "lab", inv)
    doc = yaml.safe_load((inv / "hosts.yml").read_text())
    for i in range(len(doc["hosts"]), HOSTS):
        doc["hosts"].append(
            {
                "name": f"gpu{i + 1}",
                "groups": ["gpu"],
                "nics": [{"netdev": "ens1f0np0", "rdma_device": "mlx5_0", "ip": f"10.100.1.{i + 1}/16"}],
            }
        )
    (inv / "hosts.yml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return inv


def start_agent(inv: Path, work: Path, name: str, host: NsHost, port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            FABRICD,
            "agent",
            str(inv),
            "--host",
            name,
            "--netns",
            host.ns,
            "--root",
            str(host.root),
            "--skip",
            "vlan,dcb",
            "--mode",
            "enforce",
            "--interval",
            str(INTERVAL_S),
            "--listen",
            f"127.0.0.1:{port}",
        ],
        env=dict(os.environ, FABRICD_STATE_DIR=str(work / "state"), FABRICD_APPLY_LOCK_DIR=str(work / "lock")),
        stdout=subprocess.DEVNULL,
        stderr=(work / f"agent-{name}.log").open("w"),
    )


def start_prometheus(prom_bin: str, work: Path, targets: list[int]) -> tuple[subprocess.Popen[bytes], str]:
    prom_port = free_port()
    (work / "prometheus.yml").write_text(
        yaml.safe_dump(
            {
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "scrape_configs": [
                    {"job_name": "fabricd-agent", "static_configs": [{"targets": [f"127.0.0.1:{p}" for p in targets]}]}
                ],
            }
        )
    )
    proc = subprocess.Popen(
        [
            prom_bin,
            f"--config.file={work / 'prometheus.yml'}",
            f"--storage.tsdb.path={work / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{prom_port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=(work / "prometheus.log").open("w"),
    )
    return proc, f"http://127.0.0.1:{prom_port}"


def wait_all_compliant(prom: str) -> None:
    deadline = time.monotonic() + 300
    while sum(v == 1 for v in by_host(prom, "fabricd_host_compliant").values()) < HOSTS:
        if time.monotonic() > deadline:
            sys.exit(f"not all hosts compliant after 300 s: {by_host(prom, 'fabricd_host_compliant')}")
        time.sleep(0.5)


def idle_cpu_pct(procs: dict[str, subprocess.Popen[bytes]], names: list[str]) -> list[float]:
    """Each agent's CPU over 20 s of idling, in %, sorted."""
    time.sleep(3)  # let start-up settle before measuring the idle cost
    before = {n: cpu_s(p.pid) for n, p in procs.items()}
    time.sleep(20)
    return sorted((cpu_s(procs[n].pid) - before[n]) / 20 * 100 for n in names)


def repair_times(prom: str, hosts: dict[str, NsHost], reload: list[str]) -> dict[str, float]:
    """Reload the driver on ``reload``; seconds until each is compliant again with a drift counted."""
    drift0 = by_host(prom, "fabricd_agent_drift_detected_total")
    t0: dict[str, float] = {}
    for n in reload:
        hosts[n].reload_driver()
        t0[n] = time.monotonic()
    repaired: dict[str, float] = {}
    deadline = time.monotonic() + 2 * INTERVAL_S + 30
    while len(repaired) < len(reload) and time.monotonic() < deadline:
        drift = by_host(prom, "fabricd_agent_drift_detected_total")
        ok = by_host(prom, "fabricd_host_compliant")
        for n in reload:
            if n not in repaired and drift.get(n, 0) > drift0.get(n, 0) and ok.get(n) == 1:
                repaired[n] = time.monotonic() - t0[n]
        time.sleep(0.2)
    return repaired


def stop_all(
    procs: dict[str, subprocess.Popen[bytes]], prom_proc: subprocess.Popen[bytes] | None, hosts: dict[str, NsHost]
) -> None:
    for p in procs.values():
        if p.poll() is None:
            p.terminate()
    for p in procs.values():
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
    if prom_proc is not None:
        prom_proc.terminate()
        prom_proc.wait(20)
    for h in hosts.values():
        h.close()


def main() -> None:
    why = can_netns()
    prom_bin = shutil.which("prometheus")
    if why or prom_bin is None:
        sys.exit(f"bench/fleet_agents.py: {why or 'needs prometheus (Debian package)'}")
    work = Path(tempfile.mkdtemp(prefix="fabricd-bench-agents-"))
    hosts: dict[str, NsHost] = {}
    procs: dict[str, subprocess.Popen[bytes]] = {}
    prom_proc = None
    try:
        inv = write_inventory(work)
        fabric = load_inventory(inv).fabric
        names = [h.name for h in fabric.hosts][:HOSTS]
        ports = {n: free_port() for n in names}
        for n in names:
            hosts[n] = NsHost.create(host_intent(fabric, n), work)
        t_start = time.monotonic()
        for n in names:
            procs[n] = start_agent(inv, work, n, hosts[n], ports[n])
        prom_proc, prom = start_prometheus(prom_bin, work, list(ports.values()))
        wait_all_compliant(prom)
        start_s = time.monotonic() - t_start
        idle_pct = idle_cpu_pct(procs, names)

        reload = names[1 : 1 + RELOADED]
        stop = names[-STOPPED:]
        for n in stop:
            procs[n].send_signal(signal.SIGTERM)
        repaired = repair_times(prom, hosts, reload)
        if len(repaired) < RELOADED:
            sys.exit(f"hosts not repaired: {sorted(set(reload) - set(repaired))}")
        deadline = time.monotonic() + 30
        while any(n in by_host(prom, "fabricd_agent_info") for n in stop) and time.monotonic() < deadline:
            time.sleep(0.5)
        t = time.monotonic()
        result = audit_fleet(prometheus_query(prom), names)
        audit_s = time.monotonic() - t
        assert result.absent == sorted(stop), result.absent
        assert result.noncompliant == [] and result.stale == []
        worst = max(repaired.values())
        print(
            f"{HOSTS} agents: all compliant {start_s:.1f} s after start; idle CPU per agent median "
            f"{idle_pct[len(idle_pct) // 2]:.2f} % (max {idle_pct[-1]:.2f} %); driver reloads repaired in "
            f"{', '.join(f'{v:.1f}' for v in sorted(repaired.values()))} s (interval {INTERVAL_S:g} s); audit fleet "
            f"named {result.absent} in {audit_s * 1000:.0f} ms",
            file=sys.stderr,
        )
        print(
            json.dumps(
                {
                    "bench": "fleet_agents",
                    "value": round(worst, 2),
                    "unit": "s",
                    "anchor": "reconcile interval (a reloaded host must be compliant within one)",
                    "anchor_value": INTERVAL_S,
                    "ratio": round(worst / INTERVAL_S, 3),
                    "hosts": HOSTS,
                    "start_all_compliant_s": round(start_s, 1),
                    "idle_cpu_pct_median": round(idle_pct[len(idle_pct) // 2], 3),
                    "idle_cpu_pct_max": round(idle_pct[-1], 3),
                    "repair_s": {n: round(v, 2) for n, v in sorted(repaired.items())},
                    "absent_named": result.absent,
                    "audit_fleet_ms": round(audit_s * 1000, 1),
                    "load_average_1m": round(os.getloadavg()[0], 2),
                }
            )
        )
    finally:
        stop_all(procs, prom_proc, hosts)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
