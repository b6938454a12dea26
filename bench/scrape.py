"""Scrape cost of ``fabricd export host --root`` against Debian's prometheus-node-exporter 1.5 (infiniband collector
only, ``--path.sysfs``) on the same replay tree of 8 mlx5-like RoCE NICs (each: full mlx5_core ethtool stat set with 16
channels and PFC on priority 3, 21 PMA counters, 30 hw_counters, ECN/DCQCN files, RDMA-CM ToS).

Both exporters serve on 127.0.0.1 ephemeral ports and are scraped over a kept-alive HTTP connection, as Prometheus
does, alternating between them. fabricd exports hw_counters, ethtool PFC/priority counters and NIC config that
node_exporter 1.5 lacks. Also measured: fabricd limited to its rdma collector (the same sources as node_exporter's
infiniband collector plus hw_counters), and the exposition alone, fabricd's text writer vs prometheus_client's
``generate_latest`` on the same families.

Run from the repo root: ``python bench/scrape.py``. The last line is the JSON result.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from fabricd.collectors.core import PrometheusBridge, Registry, render  # noqa: E402
from fabricd.collectors.host import host_collectors  # noqa: E402
from fabricd.lab.replay import ReplayHost  # noqa: E402

NICS = 8
WARMUP = 30
ROUNDS = 300
FABRICD = str(Path(sys.executable).parent / "fabricd")
NODE_EXPORTER = shutil.which("prometheus-node-exporter") or "/usr/bin/prometheus-node-exporter"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_fabricd(root: Path, *extra: str) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([FABRICD, "export", "host", "--root", str(root), "--listen", "127.0.0.1:0", *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for _ in range(50):
        line = proc.stderr.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", line)
        if m:
            return proc, int(m.group(1))
    proc.kill()
    raise SystemExit(f"fabricd exporter did not start: {proc.communicate()}")


def start_node_exporter(root: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    proc = subprocess.Popen([NODE_EXPORTER, f"--path.sysfs={root / 'sys'}", "--collector.disable-defaults",
                             "--collector.infiniband", f"--web.listen-address=127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("node_exporter did not start")


class Scraper:
    """GET /metrics over one kept-alive connection (as Prometheus scrapes)."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def get(self) -> tuple[float, bytes]:
        t0 = time.perf_counter()
        self.conn.request("GET", "/metrics")
        resp = self.conn.getresponse()
        body = resp.read()
        dt = time.perf_counter() - t0
        if resp.status != 200:
            raise SystemExit(f"HTTP {resp.status}")
        return dt, body


def series(body: bytes, prefix: str = "") -> int:
    return sum(1 for ln in body.decode().splitlines() if ln and not ln.startswith("#") and ln.startswith(prefix))


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def exposition_cost(root: Path) -> dict[str, float]:
    """µs per series: fabricd's render vs prometheus_client generate_latest on the same scrape's families."""
    from prometheus_client import CollectorRegistry, generate_latest

    registry = Registry(host_collectors(root, replay=True))
    families = registry.scrape()
    n = sum(len(f.samples) for f in families)

    class Frozen:
        def collect(self):  # type: ignore[no-untyped-def]
            bridge = PrometheusBridge(registry)
            bridge.registry = type("R", (), {"scrape": staticmethod(lambda: families)})()  # type: ignore[assignment]
            return bridge.collect()

    creg = CollectorRegistry()
    creg.register(Frozen())  # type: ignore[arg-type]
    reps = 50
    t0 = time.perf_counter()
    for _ in range(reps):
        render(families)
    ours = (time.perf_counter() - t0) / reps
    t0 = time.perf_counter()
    for _ in range(reps):
        generate_latest(creg)
    theirs = (time.perf_counter() - t0) / reps
    t0 = time.perf_counter()
    for _ in range(reps):
        registry.scrape()
    collect = (time.perf_counter() - t0) / reps
    return {"series": n, "render_us_per_series": ours / n * 1e6, "prometheus_client_us_per_series": theirs / n * 1e6,
            "render_ms": ours * 1e3, "prometheus_client_ms": theirs * 1e3, "collect_ms": collect * 1e3}


def main() -> None:
    if not os.access(NODE_EXPORTER, os.X_OK):
        raise SystemExit(f"{NODE_EXPORTER} not found: apt-get install prometheus-node-exporter")
    with tempfile.TemporaryDirectory(prefix="fdx-bench-scrape-") as tmp:
        root = Path(tmp)
        ReplayHost.mlx5(root, NICS).build()
        fab, fab_port = start_fabricd(root)
        fab_rdma, fab_rdma_port = start_fabricd(root, "--collectors", "rdma")
        ne, ne_port = start_node_exporter(root)
        try:
            scrapers = {"fabricd": Scraper(fab_port), "fabricd_rdma": Scraper(fab_rdma_port),
                        "node_exporter": Scraper(ne_port)}
            bodies: dict[str, bytes] = {}
            for name, s in scrapers.items():
                for _ in range(WARMUP):
                    _, bodies[name] = s.get()
            times: dict[str, list[float]] = {n: [] for n in scrapers}
            for _ in range(ROUNDS):
                for name, s in scrapers.items():
                    dt, _ = s.get()
                    times[name].append(dt * 1000)
            result = {n: {"p50_ms": statistics.median(t), "p95_ms": pct(t, 0.95)} for n, t in times.items()}
            fab_rss, ne_rss = rss_mb(fab.pid), rss_mb(ne.pid)
        finally:
            for p in (fab, fab_rdma, ne):
                p.terminate()
            for p in (fab, fab_rdma, ne):
                p.wait(timeout=10)
        expo = exposition_cost(root)
    fab_series = series(bodies["fabricd"], "fabricd_")
    ne_series = series(bodies["node_exporter"], "node_infiniband_")
    for name, r in result.items():
        print(f"{name:14s} p50 {r['p50_ms']:.2f} ms  p95 {r['p95_ms']:.2f} ms")
    print(f"series: fabricd {fab_series} (fabricd_*; rdma-only {series(bodies['fabricd_rdma'], 'fabricd_')}), "
          f"node_exporter {ne_series} (node_infiniband_*), its body {series(bodies['node_exporter'])} in all")
    print(f"hw_counter series: fabricd {series(bodies['fabricd'], 'fabricd_rdma_cnp_')} cnp_* ... "
          f"node_exporter {sum(1 for ln in bodies['node_exporter'].decode().splitlines() if 'cnp' in ln)} cnp lines")
    print(f"exposition: fabricd render {expo['render_us_per_series']:.2f} us/series ({expo['render_ms']:.2f} ms), "
          f"prometheus_client generate_latest {expo['prometheus_client_us_per_series']:.2f} us/series "
          f"({expo['prometheus_client_ms']:.2f} ms) for {int(expo['series'])} series; "
          f"collect {expo['collect_ms']:.2f} ms")
    print(f"RSS: fabricd {fab_rss:.1f} MB, node_exporter {ne_rss:.1f} MB")
    value = result["fabricd"]["p50_ms"]
    anchor = result["node_exporter"]["p50_ms"]
    print(json.dumps({
        "bench": "scrape", "value": round(value, 3), "unit": "ms",
        "anchor": "prometheus-node-exporter 1.5 --collector.infiniband (p50 ms)", "anchor_value": round(anchor, 3),
        "ratio": round(value / anchor, 3),
        "fabricd_p95_ms": round(result["fabricd"]["p95_ms"], 3),
        "node_exporter_p95_ms": round(result["node_exporter"]["p95_ms"], 3),
        "fabricd_rdma_only_p50_ms": round(result["fabricd_rdma"]["p50_ms"], 3),
        "fabricd_rdma_only_ratio": round(result["fabricd_rdma"]["p50_ms"] / anchor, 3),
        "fabricd_series": fab_series, "fabricd_rdma_only_series": series(bodies["fabricd_rdma"], "fabricd_"),
        "node_exporter_series": ne_series,
        "fabricd_rss_mb": round(fab_rss, 1), "node_exporter_rss_mb": round(ne_rss, 1),
        "render_us_per_series": round(expo["render_us_per_series"], 3),
        "prometheus_client_us_per_series": round(expo["prometheus_client_us_per_series"], 3),
        "nics": NICS,
    }))


if __name__ == "__main__":
    main()
