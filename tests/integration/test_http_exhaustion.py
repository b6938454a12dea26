"""Connection exhaustion against every HTTP endpoint fabricd serves (issue 23 part 2): the exporter (`fabricd export
host`), the agent (`fabricd agent`) and `fabricd serve`, each a real process under a 1,024-descriptor limit (systemd's
default soft limit), with 1,100 idle connections held open against it. A real scrape must still succeed, the process
must not spin (CPU time measured over a window), and `serve` must still detect a storm played on its replay root.
Also: a slowloris holds only its own slot until the header deadline, and a flood of wrong passwords does not slow a
scraper whose credentials passed."""

from __future__ import annotations

import base64
import json
import os
import re
import resource
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from wdhelpers import get, wait_for

from fabricd_lab.replay import ReplayHost, ReplayNic
from fabricd_lab.stormgen import StormGen

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
NOFILE = 1024
IDLE = 1100


# fabricd under systemd's default descriptor limit: the limit is set in the child, then fabricd's __main__ runs
LIMITED = [
    sys.executable,
    "-c",
    "import resource, runpy, sys; "
    f"resource.setrlimit(resource.RLIMIT_NOFILE, ({NOFILE}, {NOFILE})); "
    "sys.argv[0] = 'fabricd'; runpy.run_module('fabricd', run_name='__main__', alter_sys=True)",
]


@pytest.fixture(autouse=True)
def _enough_fds_here() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < IDLE + 200:
        if hard != resource.RLIM_INFINITY and hard < IDLE + 200:
            pytest.skip(f"this test process needs {IDLE + 200} descriptors; the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (IDLE + 200, hard))


@contextmanager
def _process(args: list[str], log: Path, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*LIMITED, *args], stdout=subprocess.DEVNULL, stderr=out, env={**os.environ, **(env or {})}
        )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _idle_connections(port: int, n: int) -> list[socket.socket]:
    """``n`` connections that send nothing, each established before the next (the server may close some of them
    or, past its cap, refuse them: that is allowed; a connect the kernel never completes is not retried)."""
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.settimeout(0.5)
        try:
            s.connect(("127.0.0.1", port))
        except OSError:
            s.close()
            continue
        socks.append(s)
    time.sleep(1.0)  # let the server accept (or refuse) the last of them
    return socks


def _scrape(url: str, timeout: float = 5.0) -> tuple[int, str]:
    for _ in range(3):  # a scraper retries a refused connection; the point is that one of them gets through
        try:
            return get(url, timeout=timeout)
        except OSError:
            time.sleep(0.5)
    return get(url, timeout=timeout)


def _assert_survives(proc: subprocess.Popen[bytes], port: int, path: str, expect: str, log: Path) -> None:
    limits = Path(f"/proc/{proc.pid}/limits").read_text()
    assert re.search(rf"Max open files\s+{NOFILE}\s", limits), limits
    socks = _idle_connections(port, IDLE)
    try:
        assert proc.poll() is None, log.read_text()
        code, text = _scrape(f"http://127.0.0.1:{port}{path}")
        assert code == 200 and expect in text, (code, text[:300])
        cpu0, t0 = _cpu_s(proc.pid), time.monotonic()
        time.sleep(3.0)
        share = (_cpu_s(proc.pid) - cpu0) / (time.monotonic() - t0)
        assert share < 0.25, f"the server used {share:.0%} of a core with {IDLE} idle connections (spinning?)"
        code, _ = _scrape(f"http://127.0.0.1:{port}{path}")
        assert code == 200
    finally:
        for s in socks:
            s.close()


def test_exporter_under_1100_idle_connections(tmp_path: Path, reserve_port: Callable[[], int]) -> None:
    host = ReplayHost(tmp_path / "root", [ReplayNic("ens1f0np0", "mlx5_0")])
    host.build()
    port = reserve_port()
    log = tmp_path / "export.log"
    with _process(["export", "host", "--root", str(tmp_path / "root"), "--listen", f"127.0.0.1:{port}"], log) as proc:
        assert wait_for(lambda: _up(f"http://127.0.0.1:{port}/metrics"), 20), log.read_text()
        _assert_survives(proc, port, "/metrics", "fabricd_scrape_collector_success", log)


def test_agent_under_1100_idle_connections(tmp_path: Path, reserve_port: Callable[[], int]) -> None:
    host = ReplayHost(tmp_path / "root", [ReplayNic("ens1f0np0", "mlx5_0")])
    host.build()
    port = reserve_port()
    log = tmp_path / "agent.log"
    with _process(
        [
            "agent",
            str(REPO / "inventory" / "lab"),
            "--host",
            "gpu1",
            "--root",
            str(tmp_path / "root"),
            "--mode",
            "audit",
            "--no-watch-devices",
            "--skip",
            "vlan,dcb",
            "--interval",
            "3600",
            "--listen",
            f"127.0.0.1:{port}",
        ],
        log,
        {"FABRICD_STATE_DIR": str(tmp_path / "state")},
    ) as proc:
        assert wait_for(lambda: _up(f"http://127.0.0.1:{port}/status"), 30), log.read_text()
        _assert_survives(proc, port, "/status", '"version"', log)


def test_serve_under_1100_idle_connections_and_api_load_still_detects_storms(
    tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    root = tmp_path / "root"
    host = ReplayHost(root, [ReplayNic("ens1f0np0", "mlx5_0", channels=0)])
    host.build()
    gen = StormGen(host, traffic_pps=10_000).start()
    port = reserve_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "serve.log"
    try:
        with _process(
            [
                "serve",
                str(REPO / "inventory" / "lab"),
                "--root",
                f"gpu1={root}",
                "--no-switches",
                "--listen",
                f"127.0.0.1:{port}",
                "--poll-ms",
                "50",
                "--detection-ms",
                "200",
                "--restoration-ms",
                "200",
                "--drift-interval-s",
                "3600",
            ],
            log,
        ) as proc:
            assert wait_for(lambda: _up(base + "/healthz"), 30), log.read_text()
            socks = _idle_connections(port, IDLE)
            stop = threading.Event()

            def hammer(path: str) -> None:  # API load while the storms play: every client as fast as it can
                while not stop.is_set():
                    try:
                        get(base + path, timeout=5)
                    except OSError:
                        time.sleep(0.05)

            load = [threading.Thread(target=hammer, args=(p,), daemon=True) for p in ("/status", "/metrics") * 8]
            for t in load:
                t.start()
            try:
                detected = 0
                for _ in range(3):
                    ep = gen.pause("ens1f0np0", direction="tx", duration_s=None)
                    time.sleep(0.8)
                    gen.stop(ep)
                    time.sleep(0.6)

                    def storms(since: float = ep.start) -> list[dict[str, Any]]:
                        evs = json.loads(_scrape(f"{base}/events?since={since - 0.01}")[1])
                        # this episode's storm (the next one starts more than 1.4 s later)
                        return [e for e in evs if e["event"] == "storm_detected" and e["ts"] - since < 1.4]

                    detected += bool(wait_for(storms, 5))
                assert detected == 3, f"{detected} of 3 storms detected under {IDLE} idle connections and API load"
            finally:
                stop.set()
                for t in load:
                    t.join(10)
                for s in socks:
                    s.close()
            _assert_survives(proc, port, "/metrics", "fabricd_pfc_storm_active", log)
    finally:
        gen.close()


def test_slowloris_holds_only_its_slot_until_the_header_deadline(
    tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    host = ReplayHost(tmp_path / "root", [ReplayNic("ens1f0np0", "mlx5_0")])
    host.build()
    port = reserve_port()
    log = tmp_path / "export.log"
    with _process(
        [
            "export",
            "host",
            "--root",
            str(tmp_path / "root"),
            "--listen",
            f"127.0.0.1:{port}",
            "--max-connections",
            "20",
            "--header-timeout",
            "2",
        ],
        log,
    ):
        assert wait_for(lambda: _up(f"http://127.0.0.1:{port}/metrics"), 20), log.read_text()
        slow = []
        for _ in range(20):  # every slot: each has started a request and trickles it
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"GET /metrics HTTP/1.1\r\n")
            slow.append(s)
        try:
            time.sleep(0.3)
            t0 = time.monotonic()
            for s in slow:
                s.sendall(b"X-a: b\r\n")  # trickle: each send is well within a per-read timeout
            # the cap is full of recent trickles; within the header deadline (2 s) and the slow-header grace (1 s)
            # a new client gets through
            assert wait_for(lambda: _up(f"http://127.0.0.1:{port}/metrics"), 5), log.read_text()
            closed = 0
            for s in slow:
                s.settimeout(5)
                try:
                    closed += s.recv(1) == b""
                except OSError:
                    closed += 1
            assert closed == 20 and time.monotonic() - t0 < 6
        finally:
            for s in slow:
                s.close()


def test_password_flood_does_not_slow_a_proven_scraper(tmp_path: Path, reserve_port: Callable[[], int]) -> None:
    import bcrypt

    web = tmp_path / "web.yml"
    web.write_text("basic_auth_users:\n  prom: " + bcrypt.hashpw(b"secret", bcrypt.gensalt(10)).decode() + "\n")
    host = ReplayHost(tmp_path / "root", [ReplayNic("ens1f0np0", "mlx5_0")])
    host.build()
    port = reserve_port()
    url = f"http://127.0.0.1:{port}/metrics"
    log = tmp_path / "export.log"
    good = "Basic " + base64.b64encode(b"prom:secret").decode()

    def fetch(auth: str) -> int:
        req = urllib.request.Request(url, headers={"Authorization": auth})
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                resp.read()
                return int(resp.status)
        except urllib.error.HTTPError as exc:
            return exc.code

    with _process(
        ["export", "host", "--root", str(tmp_path / "root"), "--listen", f"127.0.0.1:{port}", "--web-config", str(web)],
        log,
    ) as proc:
        assert wait_for(lambda: _listening(port), 20), log.read_text()
        assert fetch(good) == 200  # Prometheus has scraped before the flood starts
        stop = threading.Event()
        codes: list[int] = []

        def flood(i: int) -> None:
            n = 0
            while not stop.is_set():
                n += 1
                codes.append(fetch("Basic " + base64.b64encode(f"prom:guess{i}-{n}".encode()).decode()))

        threads = [threading.Thread(target=flood, args=(i,), daemon=True) for i in range(16)]
        for t in threads:
            t.start()
        try:
            time.sleep(1.0)
            cpu0, t0 = _cpu_s(proc.pid), time.monotonic()
            worst = 0.0
            for _ in range(10):
                s0 = time.monotonic()
                assert fetch(good) == 200
                worst = max(worst, time.monotonic() - s0)
                time.sleep(0.2)
            share = (_cpu_s(proc.pid) - cpu0) / (time.monotonic() - t0)
        finally:
            stop.set()
            for t in threads:
                t.join(15)
        assert worst < 2.0, f"a proven scrape took {worst:.2f} s during the flood"
        assert 429 in codes and 401 in codes, sorted(set(codes))
        assert share < 1.3, f"the flood cost {share:.0%} of a core (bcrypt checks are one at a time)"


def _up(url: str) -> bool:
    try:
        return get(url, timeout=2.0)[0] == 200
    except OSError:
        return False


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False
