"""Scrape cost of ``fabricd export host --root`` against Debian's prometheus-node-exporter 1.5 (infiniband collector
only, ``--path.sysfs``) on the same replay tree of 8 mlx5-like RoCE NICs (each: full mlx5_core ethtool stat set with 16
channels and PFC on priority 3, 21 PMA counters, 30 hw_counters, ECN/DCQCN files, RDMA-CM ToS).

Both exporters serve on 127.0.0.1 ephemeral ports and are scraped over a kept-alive HTTP connection, as Prometheus
does, alternating between them. fabricd exports hw_counters, ethtool PFC/priority counters and NIC config that
node_exporter 1.5 lacks. The headline compares the exporters as shipped (fabricd re-reads the NIC configuration every
60 s, ``--config-interval``). Also measured, each in a phase of its own that alternates with the same node_exporter
again so that every ratio is against an anchor from the same conditions:

- fabricd limited to its rdma collector (the same sources as node_exporter's infiniband collector plus hw_counters);
- variants: fabricd reading the NIC configuration on every scrape (``--config-interval 0``), and fabricd on a copy of
  the tree whose 8 ethtool texts are rewritten in place between rounds (untimed), so that no text is ever read twice
  byte for byte and each is parsed on every scrape (a text read again unchanged is not parsed again). On a live host
  the ethtool counters come from the ETHTOOL_GSTATS ioctl, not from text;
- node_exporter's infiniband collector on a second tree with enough devices that it reads as many files per scrape as
  fabricd reads on the first (``same_files``; timed in its own phase, so that its 4-6 ms scrapes do not cool the
  caches of the main comparison), and both exporters' cost per file and per series;
- fabricd's collect + render in-process with kept-open files (the served path) and with every file opened on every
  scrape (the path taken while a directory is racy or rewritten, e.g. a replay tree driven by renames);
- the exposition alone, fabricd's text writer vs prometheus_client's ``generate_latest`` on the same families;
- the live host's ethtool conversion (Python side of ETHTOOL_GSTATS for a 753-name mlx5 set, the ioctl excluded):
  the snapshot path against the names-layout fast path the collector and the watchdog use.

Timing starts once the trees are older than fabricd's racy window (fabricd.sources.kept.RACY_NS): a long-running
exporter reads directories that changed seconds ago the slow way, and this bench measures the steady state.

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
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from fabricd.collectors.core import PrometheusBridge, Registry, render  # noqa: E402
from fabricd.collectors.host import HostReading, host_collectors  # noqa: E402
from fabricd.sources.kept import RACY_NS  # noqa: E402
from fabricd_lab.replay import ReplayHost  # noqa: E402

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
    proc = subprocess.Popen(
        [FABRICD, "export", "host", "--root", str(root), "--listen", "127.0.0.1:0", *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    for _ in range(50):
        line = proc.stderr.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", line)
        if m:
            return proc, int(m.group(1))
    proc.kill()
    raise SystemExit(f"fabricd exporter did not start: {proc.communicate()}")


def fabricd_files(root: Path, *, config: bool = False) -> int:
    """Files ``fabricd export host`` reads per scrape of a ReplayHost tree in its steady state: the RDMA tree except
    the GID table (``gids/``, ``gid_attrs/``, read only by ``fabricd gids``) and the ToS files, plus ``ethtool/``.
    ``config=True`` adds the NIC configuration files (netdev ``ecn/``, ``mtu``, ``operstate``, configfs ``rdma_cm``,
    ``tc/``), which are read every ``--config-interval`` (and on every scrape with 0). Checked against strace
    (pread64 + read per scrape)."""
    n = 0
    for dirpath, _, files in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        is_config = rel.startswith(("sys/class/net", "sys/kernel/config")) or "/tc/" in f"/{rel}/"
        if "/gid" in f"/{rel}" or (is_config and not config):
            continue
        n += len(files)
    return n


class EthtoolChanger:
    """Rewrites every ``ethtool/<if>.stats`` of a tree in place (same inode, no directory change) with one of two
    texts that differ in a few counters, alternating, so that each scrape reads a text it has not just parsed."""

    def __init__(self, root: Path) -> None:
        self.texts: list[tuple[Path, bytes, bytes]] = []
        for path in sorted((root / "ethtool").glob("*.stats")):
            a = path.read_bytes()
            b = a
            for name in (b"rx_packets: ", b"tx_bytes: ", b"rx_prio3_pause: "):
                b = b.replace(b"\n     " + name, b"\n     " + name + b"1", 1)
            assert b != a, path
            self.texts.append((path, a, b))
        self.step = 0

    def change(self) -> None:
        self.step += 1
        for path, a, b in self.texts:
            with open(path, "r+b") as f:
                f.write(b if self.step % 2 else a)
                f.truncate()


def node_exporter_files(root: Path) -> int:
    """Files node_exporter 1.5's infiniband collector reads per scrape (procfs ``sysfs/class_infiniband.go``):
    board_id, fw_ver, hca_type per device; link_layer, phys_state, rate, state and every ``counters/`` file per
    port."""
    n = 0
    for dev in (root / "sys/class/infiniband").iterdir():
        n += 3
        for port in (dev / "ports").iterdir():
            n += 4 + sum(1 for _ in (port / "counters").iterdir())
    return n


def inprocess_ms(root: Path, *, kept_files: bool, rounds: int = 200) -> float:
    """p50 of one collect + render in this process (no HTTP)."""
    registry = Registry(host_collectors(root, replay=True, reading=HostReading(kept_files=kept_files)))
    for _ in range(20):
        registry.exposition()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        registry.exposition()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def live_ethtool_cost(root: Path, reps: int = 2000) -> dict[str, float]:
    """µs per interface of the live host's Python side of ETHTOOL_GSTATS (the ioctl itself excluded: no mlx5 NIC
    here) for a 753-name mlx5 set: the snapshot path (``{name: value}`` dict + ``normalise``, what the collector did
    on every scrape and the watchdog on every poll before this pass) against the fast path (one ``tolist()`` of the
    u64 array + the cached names layout's picks). The GSTATS buffer is filled with the replay text's values."""
    from fabricd.readers.ethtool import _STAT_LINE, EthtoolInfo, names_layout, normalise
    from fabricd.sources.ethtool_live import _gstats_type

    pairs = _STAT_LINE.findall((root / "ethtool" / "eth0.stats").read_text())
    names = [n for n, _ in pairs]
    buf = _gstats_type(len(names) + 256)(cmd=0, n_stats=len(names))
    for i, (_, v) in enumerate(pairs):
        buf.data[i] = int(v)
    info = EthtoolInfo(driver="mlx5_core")
    layout = names_layout(names, info)

    def snapshot() -> object:
        data = buf.data
        return normalise("eth0", {name: int(data[i]) for i, name in enumerate(names)}, info.driver, info=info)

    def fast() -> object:
        values = memoryview(buf.data).cast("B").cast("Q")[: len(names)].tolist()
        return [values[p] for p in layout.positions]

    out = {}
    for name, fn in (("snapshot", snapshot), ("fast", fast)):
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        out[name] = statistics.median(times) * 1e6
    out["names"] = len(names)
    out["selected"] = len(layout.positions)
    return out


def start_node_exporter(root: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    proc = subprocess.Popen(
        [
            NODE_EXPORTER,
            f"--path.sysfs={root / 'sys'}",
            "--collector.disable-defaults",
            "--collector.infiniband",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
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
    return {
        "series": n,
        "render_us_per_series": ours / n * 1e6,
        "prometheus_client_us_per_series": theirs / n * 1e6,
        "render_ms": ours * 1e3,
        "prometheus_client_ms": theirs * 1e3,
        "collect_ms": collect * 1e3,
    }


def timed(
    phases: list[dict[str, Scraper]],
    between: Callable[[], None] | None = None,
) -> tuple[dict[str, list[float]], dict[str, bytes]]:
    """Scrape each phase's exporters in turn, ROUNDS times after WARMUP; ``between`` runs (untimed) before each
    round of the phases that include a changing tree."""
    bodies: dict[str, bytes] = {}
    times: dict[str, list[float]] = {}
    for phase in phases:
        for name, s in phase.items():
            for _ in range(WARMUP):
                if between is not None and "fabricd_ethtool_changing" in phase:
                    between()
                _, bodies[name] = s.get()
            times[name] = []
        for _ in range(ROUNDS):
            if between is not None and "fabricd_ethtool_changing" in phase:
                between()
            for name, s in phase.items():
                dt, _ = s.get()
                times[name].append(dt * 1000)
    return times, bodies


def main() -> None:
    if not os.access(NODE_EXPORTER, os.X_OK):
        raise SystemExit(f"{NODE_EXPORTER} not found: apt-get install prometheus-node-exporter")
    with tempfile.TemporaryDirectory(prefix="fdx-bench-scrape-") as tmp:
        root = Path(tmp) / "nics"
        ReplayHost.mlx5(root, NICS).build()
        changing = Path(tmp) / "changing"
        ReplayHost.mlx5(changing, NICS).build()
        changer = EthtoolChanger(changing)
        fab_files, fab_config_files = fabricd_files(root), fabricd_files(root, config=True)
        per_device = node_exporter_files(root) // NICS
        big = Path(tmp) / "same-files"
        ReplayHost.mlx5(big, -(-fab_files // per_device)).build()
        built = time.time()
        procs: list[subprocess.Popen[str] | subprocess.Popen[bytes]] = []
        try:
            fab, fab_port = start_fabricd(root)
            procs.append(fab)
            fab_rdma, fab_rdma_port = start_fabricd(root, "--collectors", "rdma")
            procs.append(fab_rdma)
            fab_cfg0, fab_cfg0_port = start_fabricd(root, "--config-interval", "0")
            procs.append(fab_cfg0)
            fab_chg, fab_chg_port = start_fabricd(changing)
            procs.append(fab_chg)
            ne, ne_port = start_node_exporter(root)
            procs.append(ne)
            ne_big, ne_big_port = start_node_exporter(big)
            procs.append(ne_big)
            fab_scraper, ne_scraper = Scraper(fab_port), Scraper(ne_port)
            phases = [
                {"fabricd": fab_scraper, "fabricd_rdma": Scraper(fab_rdma_port), "node_exporter": ne_scraper},
                {
                    "fabricd_config_every_scrape": Scraper(fab_cfg0_port),
                    "fabricd_ethtool_changing": Scraper(fab_chg_port),
                    "node_exporter_variants": ne_scraper,
                },
                # its own phase, so that the 4-6 ms node_exporter scrape does not cool the caches of the others
                {"fabricd_same_phase": fab_scraper, "node_exporter_same_files": Scraper(ne_big_port)},
            ]
            time.sleep(max(0.0, built + RACY_NS / 1e9 + 0.5 - time.time()))  # past the racy window (docstring)
            times, bodies = timed(phases, changer.change)
            result = {n: {"p50_ms": statistics.median(t), "p95_ms": pct(t, 0.95)} for n, t in times.items()}
            fab_rss, ne_rss = rss_mb(fab.pid), rss_mb(ne.pid)
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                p.wait(timeout=10)
        ne_files, ne_big_files = node_exporter_files(root), node_exporter_files(big)
        kept_ms = inprocess_ms(root, kept_files=True)
        reopen_ms = inprocess_ms(root, kept_files=False)
        expo = exposition_cost(root)
        live = live_ethtool_cost(root)
    load = os.getloadavg()
    fab_series = series(bodies["fabricd"], "fabricd_")
    ne_series = series(bodies["node_exporter"], "node_infiniband_")
    ne_all = series(bodies["node_exporter"])
    ne_big_all = series(bodies["node_exporter_same_files"])
    if series(bodies["fabricd_config_every_scrape"], "fabricd_") != fab_series:
        raise SystemExit("the --config-interval 0 exporter exported a different number of series")
    for name, r in result.items():
        print(f"{name:28s} p50 {r['p50_ms']:.2f} ms  p95 {r['p95_ms']:.2f} ms")
    print(
        f"series: fabricd {fab_series} (fabricd_*; rdma-only {series(bodies['fabricd_rdma'], 'fabricd_')}), "
        f"node_exporter {ne_series} (node_infiniband_*), its body {ne_all} in all; same-files tree {ne_big_all}"
    )
    print(
        f"hw_counter series: fabricd {series(bodies['fabricd'], 'fabricd_rdma_cnp_')} cnp_* ... "
        f"node_exporter {sum(1 for ln in bodies['node_exporter'].decode().splitlines() if 'cnp' in ln)} cnp lines"
    )
    value = result["fabricd"]["p50_ms"]
    anchor = result["node_exporter"]["p50_ms"]
    variants_anchor = result["node_exporter_variants"]["p50_ms"]
    cfg0 = result["fabricd_config_every_scrape"]["p50_ms"]
    chg = result["fabricd_ethtool_changing"]["p50_ms"]
    same = result["node_exporter_same_files"]["p50_ms"]
    fab_same = result["fabricd_same_phase"]["p50_ms"]
    print(
        f"files read per scrape: fabricd {fab_files} ({fab_config_files} when the NIC configuration is read too), "
        f"node_exporter {ne_files}, node_exporter on the {ne_big_files // per_device}-device tree {ne_big_files}"
    )
    print(
        f"variants against node_exporter {variants_anchor:.2f} ms in their phase: config read every scrape "
        f"{cfg0:.2f} ms (ratio {cfg0 / variants_anchor:.2f}), ethtool texts changing every scrape {chg:.2f} ms "
        f"(ratio {chg / variants_anchor:.2f})"
    )
    print(
        f"per file: fabricd {value / fab_files * 1000:.2f} us, node_exporter {anchor / ne_files * 1000:.2f} us, "
        f"same-files {same / ne_big_files * 1000:.2f} us; per series: fabricd {value / fab_series * 1000:.2f} us, "
        f"node_exporter {anchor / ne_all * 1000:.2f} us"
    )
    print(
        f"same number of files: fabricd {fab_same:.2f} ms ({fab_files} files) vs node_exporter {same:.2f} ms "
        f"({ne_big_files} files): ratio {fab_same / same:.2f}"
    )
    print(f"in-process collect+render: kept-open files {kept_ms:.2f} ms, every file reopened {reopen_ms:.2f} ms")
    print(
        f"exposition: fabricd render {expo['render_us_per_series']:.2f} us/series ({expo['render_ms']:.2f} ms), "
        f"prometheus_client generate_latest {expo['prometheus_client_us_per_series']:.2f} us/series "
        f"({expo['prometheus_client_ms']:.2f} ms) for {int(expo['series'])} series; "
        f"collect {expo['collect_ms']:.2f} ms"
    )
    print(
        f"live host ethtool, Python side per interface ({int(live['names'])} names, {int(live['selected'])} picked, "
        f"ioctl excluded): snapshot path {live['snapshot']:.1f} us, fast path {live['fast']:.1f} us"
    )
    print(f"RSS: fabricd {fab_rss:.1f} MB, node_exporter {ne_rss:.1f} MB; load average {load[0]:.2f} {load[1]:.2f}")
    print(f"target ratio <= 1.0: {'met' if value <= anchor else 'NOT met'} ({value / anchor:.2f})")
    print(
        json.dumps(
            {
                "bench": "scrape",
                "value": round(value, 3),
                "unit": "ms",
                "anchor": "prometheus-node-exporter 1.5 --collector.infiniband (p50 ms)",
                "anchor_value": round(anchor, 3),
                "ratio": round(value / anchor, 3),
                "target_met": value <= anchor,
                "fabricd_p95_ms": round(result["fabricd"]["p95_ms"], 3),
                "node_exporter_p95_ms": round(result["node_exporter"]["p95_ms"], 3),
                "fabricd_rdma_only_p50_ms": round(result["fabricd_rdma"]["p50_ms"], 3),
                "fabricd_rdma_only_ratio": round(result["fabricd_rdma"]["p50_ms"] / anchor, 3),
                "variants_anchor_p50_ms": round(variants_anchor, 3),
                "config_every_scrape_p50_ms": round(cfg0, 3),
                "config_every_scrape_ratio": round(cfg0 / variants_anchor, 3),
                "ethtool_changing_p50_ms": round(chg, 3),
                "ethtool_changing_ratio": round(chg / variants_anchor, 3),
                "fabricd_series": fab_series,
                "fabricd_rdma_only_series": series(bodies["fabricd_rdma"], "fabricd_"),
                "node_exporter_series": ne_series,
                "node_exporter_body_series": ne_all,
                "fabricd_files": fab_files,
                "fabricd_files_with_config": fab_config_files,
                "node_exporter_files": ne_files,
                "node_exporter_same_files_files": ne_big_files,
                "node_exporter_same_files_p50_ms": round(same, 3),
                "fabricd_same_phase_p50_ms": round(fab_same, 3),
                "same_files_ratio": round(fab_same / same, 3),
                "fabricd_us_per_file": round(value / fab_files * 1000, 3),
                "node_exporter_us_per_file": round(anchor / ne_files * 1000, 3),
                "fabricd_us_per_series": round(value / fab_series * 1000, 3),
                "node_exporter_us_per_series": round(anchor / ne_all * 1000, 3),
                "inprocess_kept_ms": round(kept_ms, 3),
                "inprocess_reopen_ms": round(reopen_ms, 3),
                "fabricd_rss_mb": round(fab_rss, 1),
                "node_exporter_rss_mb": round(ne_rss, 1),
                "render_us_per_series": round(expo["render_us_per_series"], 3),
                "prometheus_client_us_per_series": round(expo["prometheus_client_us_per_series"], 3),
                "live_ethtool_snapshot_us": round(live["snapshot"], 1),
                "live_ethtool_fast_us": round(live["fast"], 1),
                "nics": NICS,
                "load_average_1m": round(load[0], 2),
            }
        )
    )


if __name__ == "__main__":
    main()
