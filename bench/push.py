"""Benchmark: push a full QoS config to 200 simulated switches with fabricd, and with nornir + nornir_netmiko.

The switches are Arista EOS simulators (fabricd_lab), 32 x 400G ports each, all in one background process started
exactly as ``fabricd lab up`` starts it (``python -m fabricd_lab.daemon``), on ephemeral 127.0.0.1 ports. The config
is what ``fabricd render`` produces for each switch from inventory/lab's policy (qos maps, the RoCE qos profile with
PFC, watchdog, ECN and scheduling, and per-port MTU/profile lines).

* **fabricd**: ``fabricd.deploy.pipeline.push`` with its defaults (32 workers): connect with host-key verification,
  read the running config, checkpoint, load into a config session, session diff, ``commit timer``, re-read and verify
  against the intent, confirm.
* **anchor**: nornir 3 (threaded runner, its default 20 workers) running nornir_netmiko's ``netmiko_send_config``
  with the same rendered lines on freshly started simulators (netmiko defaults: line-by-line ``send_config_set``,
  no diff, no verification).

Both runs push to simulators that start from the factory config. The simulator process's resident memory is
sampled idle (1 and N devices) and during each push, for the per-device figures in docs/PERFORMANCE.md.

With ``--latency SPEC`` (``rtt_ms=N,command_ms=N,show_ms=N,commit_ms=N`` or a profile name of
:mod:`fabricd_lab.latency`, whose figures are **unverified**) every simulated switch answers after a round trip and
handles one line at a time, a commit taking seconds: the bench then measures round trips and concurrency, as users
feel them, rather than the simulators' CPU. Without it (the default) a switch answers in microseconds and the two
sides mostly compete for the same 2 cores: the client CPU of each side (this process's user+system time) is printed
so that the figure can be read for what it is.

Run from the repo root: ``python bench/push.py`` (``--switches N`` to scale). The last line is
``{"bench": "push", "value": fabricd devices/s, "unit": "devices/s", "anchor": ..., "anchor_value": nornir
devices/s, "ratio": fabricd / nornir}``. Target: ratio >= 1.5 while fabricd also verifies after commit.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import asyncssh
import yaml

from fabricd.deploy.pipeline import PushOptions, push
from fabricd.deploy.targets import render_candidates
from fabricd.inventory import load_inventory
from fabricd.model import Fabric, Switch
from fabricd.platforms.access import Access
from fabricd.platforms.base import DriverOptions
from fabricd.platforms.registry import make_driver
from fabricd.platforms.secrets import Secret
from fabricd_lab.latency import parse_latency

REPO = Path(__file__).resolve().parent.parent
PORTS = 32
PASSWORD = "bench-" + os.urandom(6).hex()


def build_fabric(n: int) -> Fabric:
    lab = load_inventory(REPO / "inventory" / "lab").fabric
    policy = lab.policy.model_copy(update={"vlans": []})
    switches = [
        Switch.model_validate(
            {
                "name": f"bench-eos-{i:03d}",
                "platform": "arista_eos",
                "role": "leaf",
                "mgmt": {"host": "127.0.0.1", "port": 22},
                "credentials": {"username": "admin", "password_env": "FABRICD_BENCH_PASSWORD"},
                "ports": [
                    {"name": f"Ethernet{p}", "speed": "400G", "mtu": 9216, "role": "host"} for p in range(1, PORTS + 1)
                ],
            }
        )
        for i in range(n)
    ]
    return Fabric(name="bench", policy=policy, switches=switches)


class Sims:
    """The simulator daemon for ``switches`` (ephemeral ports), with RSS and CPU probes."""

    def __init__(self, switches: list[Switch], tmp: Path, latency: str = "") -> None:
        self.dir = tmp / f"lab-{time.monotonic_ns()}"
        self.dir.mkdir(mode=0o700)
        (self.dir / "password").write_text(PASSWORD + "\n")
        key = asyncssh.generate_private_key("ssh-ed25519")
        (self.dir / "host_key").write_text(key.export_private_key("openssh").decode())
        spec = {
            "fabric": "bench",
            "devices": [
                {
                    "name": s.name,
                    "platform": s.platform.value,
                    "host": "127.0.0.1",
                    "port": 0,
                    "username": "admin",
                    "ports": [[p.name, p.speed.bps] for p in s.ports],
                    "faults": [],
                    "latency": latency,
                }
                for s in switches
            ],
        }
        (self.dir / "spec.json").write_text(json.dumps(spec))
        log = open(self.dir / "lab.log", "wb")  # noqa: SIM115 - the child keeps it
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fabricd_lab.cli.lab_daemon", "--dir", str(self.dir)],
            stdout=log,
            stderr=log,
            stdin=subprocess.DEVNULL,
        )
        log.close()
        deadline = time.monotonic() + 120
        while not (self.dir / "lab.json").exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"simulators did not start: {(self.dir / 'lab.log').read_text()[-500:]}")
            time.sleep(0.05)
        state = json.loads((self.dir / "lab.json").read_text())
        self.ports = {d["name"]: d["port"] for d in state["devices"]}
        self.known_hosts = self.dir / "known_hosts"
        self.peak_rss = 0
        self._sampling = False

    def rss(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def sample(self) -> threading.Thread:
        self._sampling = True

        def loop() -> None:
            while self._sampling:
                self.peak_rss = max(self.peak_rss, self.rss())
                time.sleep(0.1)

        t = threading.Thread(target=loop, daemon=True)
        t.start()
        return t

    def stop(self) -> None:
        self._sampling = False
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def client_cpu_s() -> float:
    """This process's user+system CPU seconds (both clients run here, in threads)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def config_lines(text: str) -> list[str]:
    """The rendered config as the lines an operator would paste (comments, ``!`` and ``end`` dropped)."""
    return [ln for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("!") and ln.strip() != "end"]


def run_fabricd(
    switches: list[Switch], candidates: dict[str, str], sims: Sims, concurrency: int = 32
) -> tuple[float, int]:
    targets = [s.model_copy(update={"mgmt": s.mgmt.model_copy(update={"port": sims.ports[s.name]})}) for s in switches]
    options = DriverOptions(read_timeout_s=180.0, conn_timeout_s=60.0)

    def factory(sw: Switch) -> Any:
        access = Access(sw.name, "127.0.0.1", sw.mgmt.port, "admin", Secret(PASSWORD), (sims.known_hosts,))
        return make_driver(sw, access, options)

    t0 = time.perf_counter()
    report = push(targets, candidates, PushOptions(concurrency=concurrency, confirm_timeout_s=300), factory=factory)
    elapsed = time.perf_counter() - t0
    ok = sum(1 for r in report.results if r.changed and r.state.value == "changed")
    failed = [r for r in report.results if r.failed]
    if failed:
        print(f"fabricd: {len(failed)} failed, first: {failed[0].error}", file=sys.stderr)
    return elapsed, ok


def run_nornir(switches: list[Switch], candidates: dict[str, str], sims: Sims, tmp: Path) -> tuple[float, int]:
    from nornir import InitNornir
    from nornir.core.task import Result, Task
    from nornir_netmiko.tasks import netmiko_send_config

    inv = tmp / f"nornir-{time.monotonic_ns()}"
    inv.mkdir()
    hosts = {
        s.name: {
            "hostname": "127.0.0.1",
            "port": sims.ports[s.name],
            "platform": "arista_eos",
            "data": {"lines": config_lines(candidates[s.name])},
        }
        for s in switches
    }
    (inv / "hosts.yaml").write_text(yaml.safe_dump(hosts))
    (inv / "groups.yaml").write_text("{}\n")
    (inv / "defaults.yaml").write_text(yaml.safe_dump({"username": "admin", "password": PASSWORD}))
    nr = InitNornir(
        runner={"plugin": "threaded"},  # its default: 20 workers
        inventory={
            "plugin": "SimpleInventory",
            "options": {
                "host_file": str(inv / "hosts.yaml"),
                "group_file": str(inv / "groups.yaml"),
                "defaults_file": str(inv / "defaults.yaml"),
            },
        },
        logging={"enabled": False},
    )

    def task(t: Task) -> Result:
        return t.run(task=netmiko_send_config, config_commands=t.host.data["lines"])

    t0 = time.perf_counter()
    result = nr.run(task=task)
    elapsed = time.perf_counter() - t0
    nr.close_connections()
    ok = sum(1 for host_result in result.values() if not host_result.failed)
    if result.failed_hosts:
        first = next(iter(result.failed_hosts.values()))
        print(f"nornir: {len(result.failed_hosts)} failed, first: {first.exception!r}", file=sys.stderr)
    return elapsed, ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--switches", type=int, default=200)
    parser.add_argument("--latency", default="", help="per-command latency of the simulators (unverified figures)")
    parser.add_argument("--concurrency", type=int, default=32, help="fabricd's push workers (its default: 32)")
    args = parser.parse_args()
    latency = parse_latency(args.latency).to_text() if args.latency else ""
    logging.basicConfig(level=logging.ERROR)
    n = args.switches
    fabric = build_fabric(n)
    candidates = render_candidates(fabric, fabric.switches)
    lines = len(config_lines(next(iter(candidates.values()))))
    tmp = Path(tempfile.mkdtemp(prefix="fabricd-bench-push-"))
    print(
        f"{n} EOS simulators x {PORTS} ports; {lines} config lines per switch; 2 cores shared by both sides; "
        f"latency: {latency or 'none'}; load average before: {os.getloadavg()[0]:.2f}"
    )

    one = Sims(fabric.switches[:1], tmp)
    time.sleep(0.5)
    rss_one = one.rss()
    one.stop()

    sims = Sims(fabric.switches, tmp, latency)
    time.sleep(0.5)
    rss_idle = sims.rss()
    cpu0 = sims.cpu_s()
    sims.sample()
    c0 = client_cpu_s()
    f_time, f_ok = run_fabricd(fabric.switches, candidates, sims, args.concurrency)
    f_client = client_cpu_s() - c0
    f_cpu = sims.cpu_s() - cpu0
    f_peak = sims.peak_rss
    sims.stop()

    sims = Sims(fabric.switches, tmp, latency)
    time.sleep(0.5)
    cpu0 = sims.cpu_s()
    sims.sample()
    c0 = client_cpu_s()
    n_time, n_ok = run_nornir(fabric.switches, candidates, sims, tmp)
    n_client = client_cpu_s() - c0
    n_cpu = sims.cpu_s() - cpu0
    n_peak = sims.peak_rss
    sims.stop()

    per_device_idle = (rss_idle - rss_one) / max(1, n - 1)
    f_rate = f_ok / f_time
    n_rate = n_ok / n_time
    print(
        f"fabricd ({args.concurrency} workers): {f_ok}/{n} pushed and verified in {f_time:.2f} s = {f_rate:.1f} "
        "devices/s "
        f"(client CPU {f_client:.1f} s, simulator CPU {f_cpu:.1f} s, peak RSS {f_peak / 2**20:.1f} MiB)"
    )
    print(
        f"nornir+nornir_netmiko (20 workers): {n_ok}/{n} pushed in {n_time:.2f} s = {n_rate:.1f} devices/s "
        f"(client CPU {n_client:.1f} s, simulator CPU {n_cpu:.1f} s, peak RSS {n_peak / 2**20:.1f} MiB); "
        f"load average after: {os.getloadavg()[0]:.2f}"
    )
    print(
        f"simulator memory: {rss_one / 2**20:.1f} MiB with 1 switch, {rss_idle / 2**20:.1f} MiB with {n} idle "
        f"-> {per_device_idle / 1024:.1f} KiB per idle switch; peak during fabricd's push "
        f"{f_peak / 2**20:.1f} MiB = +{(f_peak - rss_idle) / 1024 / n:.0f} KiB per switch (its pushed config, the "
        f"config-session copy, and {args.concurrency} SSH sessions open at a time)"
    )
    print(
        json.dumps(
            {
                "bench": "push",
                "value": round(f_rate, 2),
                "unit": "devices/s",
                "anchor": "nornir 3 threaded (20 workers) + nornir_netmiko netmiko_send_config, "
                "same lines, same simulators",
                "anchor_value": round(n_rate, 2),
                "ratio": round(f_rate / n_rate, 2) if n_rate else None,
                "latency": latency or None,
                "client_cpu_s": round(f_client, 1),
                "anchor_client_cpu_s": round(n_client, 1),
                "sim_cpu_s": round(f_cpu, 1),
                "anchor_sim_cpu_s": round(n_cpu, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
