"""The demo's export stage (:class:`ExportStage`): mlx5-like replay roots written live for two inventory hosts,
``fabricd serve`` (host exporter, watchdog, switch poller on the lab) and ``fabricd export host`` on them, lab
traffic on the switch ports, and a real Prometheus scraping them every second with the shipped rule pack.

It publishes what the storm stage and the run record need on the :class:`~fabricd_lab.demo_context.DemoContext`:
``prom``, ``prom_started_ts``, ``serve``, ``children``, ``gens`` and ``traffic``.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from fabricd import settings
from fabricd.model import Host

from .demo_context import Stage
from .demo_parts import (
    FABRICD_ARGV,
    WRITER_TICK_S,
    Child,
    LabTraffic,
    StageFailedError,
    StageResult,
    StageSkippedError,
    log_tail,
    pick_hosts,
    rate_text,
    rdma_nic,
    wait_http,
)
from .demo_prom import PrometheusServer, ScrapeJob, free_port


def rules_file() -> Path:
    """The shipped Prometheus rule pack the demo's Prometheus evaluates."""
    return settings.data_dir("exporters") / "rules" / "fabricd.rules.yml"


class ExportStage(Stage):
    """Replay roots, ``fabricd serve`` and the host exporters, lab traffic, and Prometheus scraping them."""

    name = "export"

    def run(self) -> StageResult:
        prom = PrometheusServer(
            self.ctx.workdir() / "prometheus", [], [rules_file()], binary=self.ctx.options.prometheus_bin
        )
        if not Path(prom.binary).exists() and shutil.which(prom.binary) is None:
            raise StageSkippedError(f"{prom.binary} is not installed (as root: apt-get install prometheus)")
        origin, victim = pick_hosts(self.ctx.fabric, self.ctx.options.host, self.ctx.options.victim)
        roots = self._replay_roots([origin] + ([victim] if victim is not None else []))
        exporters = self._exporters(origin, roots)
        serve = exporters[origin.name]
        if self.ctx.lab_up:
            self._lab_traffic()
        prom.jobs = [
            ScrapeJob("fabricd-serve", [(serve.address, {"host": origin.name})]),
            ScrapeJob("fabricd-host", [(e.address, {"host": n}) for n, e in exporters.items() if e is not serve]),
        ]
        version = prom.version()
        self.ctx.prom_started_ts = time.time()
        url = prom.start()
        self.ctx.prom = prom
        self.ctx.defer(prom.stop)
        self.note(
            f"{version} on {url} (1 s scrape and rule evaluation, rules "
            f"{rules_file().name}, storage {prom.workdir / 'data'})"
        )
        targets = _wait_targets(prom, len(exporters), timeout_s=20.0)
        time.sleep(3.5)  # a few scrapes, so rates have two points
        counters = self._counter_table(prom)
        series = prom.query('count({job=~"fabricd.*"})')
        n_series = int(series[0].value) if series else 0
        data = {
            "prometheus": {"url": url, "version": version, "pid": prom.proc.pid if prom.proc else None},
            "serve": {"url": serve.url, "pid": serve.proc.pid},
            "exporters": {n: {"url": e.url, "pid": e.proc.pid} for n, e in exporters.items() if e is not serve},
            "targets": targets,
            "series": n_series,
            "counters": counters,
            "hosts": list(roots),
        }
        up = sum(1 for t in targets if t["health"] == "up")
        job_names = ", ".join(sorted({t["job"] for t in targets}))
        summary = (
            f"Prometheus {url}: {up}/{len(targets)} targets up ({job_names}), {n_series} fabricd series; "
            f"{len(counters)} key counters read back through PromQL"
        )
        if up < len(targets) or not counters:
            raise StageFailedError("Prometheus did not scrape every exporter", data)
        return self.ok(summary, data)

    def _replay_roots(self, hosts: list[Host]) -> dict[str, Path]:
        """An mlx5-like replay root per host, rewritten live by a :class:`~fabricd_lab.stormgen.StormGen` (kept
        in ``ctx.gens`` for the storm)."""
        from fabricd_lab.replay import ReplayHost, ReplayNic
        from fabricd_lab.stormgen import StormGen

        policy = self.ctx.fabric.policy
        prios = tuple(policy.pfc.priorities)
        ecn_prios = tuple(policy.dcqcn.np_priorities or [policy.qos.roce.priority])
        roce = policy.qos.roce
        roots: dict[str, Path] = {}
        for h in hosts:
            nic = rdma_nic(h)
            assert nic is not None and nic.rdma_device is not None
            rnic = ReplayNic(
                nic.netdev,
                nic.rdma_device,
                port=nic.rdma_port,
                channels=2,
                pfc_priorities=prios,
                ecn_priorities=ecn_prios,
                roce_tos=roce.dscp << 2 | 2,
                mtu=nic.mtu,
                rate=rate_text(nic.speed.gbps) if nic.speed else "100 Gb/sec (2X HDR)",
            )
            root = self.ctx.workdir() / "replay" / h.name
            replay = ReplayHost(root, [rnic])
            replay.build()
            gen = StormGen(replay, tick_s=WRITER_TICK_S, traffic_pps=self.ctx.options.traffic_pps)
            gen.start()
            self.ctx.defer(gen.close)
            self.ctx.gens[h.name] = gen
            roots[h.name] = root
        self.note(
            f"replay roots (mlx5-like sysfs and ethtool text, rewritten every "
            f"{WRITER_TICK_S * 1000:.0f} ms with RoCE traffic at {self.ctx.options.traffic_pps:.0f} "
            f"packets/s on priority {roce.priority}) for {', '.join(roots)}"
        )
        return roots

    def _exporters(self, origin: Host, roots: dict[str, Path]) -> dict[str, Child]:
        """``fabricd serve`` on every root (the origin's exporter; ``ctx.serve``) and ``fabricd export host`` on
        each other root, by host name."""
        switches = self.ctx.lab_up
        serve_argv = [
            "serve",
            str(self.ctx.options.inventory),
            *[a for name, root in roots.items() for a in ("--root", f"{name}={root}")],
            "--switches" if switches else "--no-switches",
        ]
        jobs = [("serve", serve_argv, "/healthz")]
        jobs += [
            (f"export-{name}", ["export", "host", "--root", str(root)], "/metrics")
            for name, root in list(roots.items())[1:]
        ]
        children = self._fabricd(jobs)
        serve = children[0]
        self.ctx.serve = serve
        exporters = {origin.name: serve}
        exporters.update(zip(list(roots)[1:], children[1:], strict=True))
        self.note(
            f"fabricd serve on {serve.url}: host exporter ({origin.name}), watchdog on "
            f"{', '.join(roots)}"
            + (", switch poller on the lab" if switches else "")
            + ", drift audit, /status and /events"
        )
        for name, exp in list(exporters.items())[1:]:
            self.note(f"fabricd export host --root <replay root of {name}> on {exp.url}")
        return exporters

    def _lab_traffic(self) -> None:
        """RoCE packets (1% ECN-marked) out of every lab switch port until the storm is over (``ctx.traffic``)."""
        fabric = self.ctx.fabric
        roce = fabric.policy.qos.roce
        ports = [(sw.name, p.name) for sw in fabric.switches for p in sw.ports]
        traffic = LabTraffic(ports, roce.priority, self.ctx.options.traffic_pps)
        traffic.start()
        self.ctx.traffic = traffic
        self.ctx.defer(traffic.stop)
        self.note(
            f"lab traffic: {self.ctx.options.traffic_pps:.0f} packets/s on priority "
            f"{roce.priority} out of each of the {len(ports)} switch ports, 1% ECN-marked "
            "(`fabricd lab drive` traffic/ecn)"
        )

    def _fabricd(self, jobs: list[tuple[str, list[str], str]], timeout_s: float = 30.0) -> list[Child]:
        """Start ``fabricd ARGV --listen 127.0.0.1:<free port>`` for each (name, argv, ready path) at once, each in
        its own session, and wait until each answers on its ready path (a lost port race is retried)."""
        out: list[Child] = []
        pending = [self._spawn(name, argv) for name, argv, _ in jobs]
        for (name, argv, ready), first in zip(jobs, pending, strict=True):
            child = first
            for attempt in range(3):
                if wait_http(child.url + ready, timeout_s, child.proc):
                    break
                last = log_tail(child.log)
                child.stop()
                if "cannot bind" not in last or attempt == 2:
                    raise StageFailedError(f"fabricd {argv[0]} did not come up: {last or 'no output'}")
                child = self._spawn(name, argv)
            out.append(child)
        return out

    def _spawn(self, name: str, argv: list[str]) -> Child:
        port = free_port()
        log_path = self.ctx.workdir() / f"{name}.log"
        with log_path.open("ab") as logf:
            proc = subprocess.Popen(
                [*FABRICD_ARGV, *argv, "--listen", f"127.0.0.1:{port}"],
                stdin=subprocess.DEVNULL,
                stdout=logf,
                stderr=logf,
                start_new_session=True,
            )
        child = Child(name, proc, log_path, f"http://127.0.0.1:{port}")
        self.ctx.children.append(child)
        self.ctx.defer(child.stop)
        return child

    def _counter_table(self, prom: PrometheusServer) -> list[dict[str, Any]]:
        pol = self.ctx.fabric.policy
        p = pol.qos.roce.priority
        queries = (
            (
                f"RoCE traffic on priority {p}",
                "bytes/s",
                f'sum by (host, direction) (rate(fabricd_nic_priority_bytes_total{{priority="{p}"}}[5s]))',
            ),
            (
                f"PFC pause frames on priority {p}",
                "frames",
                f'sum by (host, direction) (fabricd_nic_pfc_pause_frames_total{{priority="{p}"}})',
            ),
            ("RDMA port data", "bytes/s", "sum by (host, direction) (rate(fabricd_rdma_port_data_bytes_total[5s]))"),
            (
                f"ECN enabled on priority {p} (roce_np, roce_rp)",
                "0/1",
                f'min by (host) (fabricd_nic_ecn_enabled{{priority="{p}"}})',
            ),
            ("RoCE ToS (RDMA-CM default)", "", "max by (host) (fabricd_nic_roce_tos)"),
            (
                f"switch PFC pause frames on priority {p}",
                "frames/s",
                f'sum by (switch, direction) (rate(fabricd_switch_pfc_pause_frames_total{{priority="{p}"}}[5s]))',
            ),
            (
                f"switch ECN-marked packets, queue {p}",
                "packets/s",
                f'sum by (switch) (rate(fabricd_switch_queue_ecn_marked_packets_total{{queue="{p}"}}[5s]))',
            ),
            ("switches up", "", "sum(fabricd_switch_up)"),
            ("watchdog detection time", "s", "max(fabricd_watchdog_detection_seconds)"),
        )
        rows = []
        for what, unit, q in queries:
            for s in prom.query(q):
                where = " ".join(f"{k}={s.labels[k]}" for k in ("host", "switch", "direction") if k in s.labels)
                rows.append({"what": what, "where": where, "value": s.value, "unit": unit, "query": q})
        return rows


def _wait_targets(prom: PrometheusServer, expected: int, timeout_s: float) -> list[dict[str, Any]]:
    """Prometheus's scrape targets once ``expected`` of them are up (or as they are when the time is up)."""
    deadline = time.monotonic() + timeout_s
    rows: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        rows = [
            {
                "job": t["labels"].get("job", ""),
                "instance": t["labels"].get("instance", ""),
                "health": t.get("health", "unknown"),
                "labels": t["labels"],
            }
            for t in prom.targets()
        ]
        if len(rows) >= expected and all(r["health"] == "up" for r in rows):
            break
        time.sleep(0.25)
    return rows
