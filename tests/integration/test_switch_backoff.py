"""One bad switch never slows the others (issue 18, part 7): ``fabricd serve``'s :class:`Service`, in this process,
polls three lab simulators over real SSH (netmiko -> asyncssh) beside two bad switches:

- ``spine1``, whose port is closed (nothing listens; later its own simulator is put behind it, so it recovers);
- ``spine2``, a TCP listener in this test that accepts and never sends an SSH banner (a hung box).

Intervals, deadlines and the back-off are scaled down (0.2 s polls, 2 s deadline, back-off 0.4 s doubling to
1.6 s) so the test takes seconds. It checks the healthy switches' freshness through ``/status`` while the bad ones
fail, the number of connection attempts to the bad ones over the window, the ``up`` and staleness series, failures
and overruns in ``/status``, ``last_error`` cleared after recovery, and one log line per change of state with no
paramiko traceback."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from switchlab import lab_fabric, switch_lab
from wdhelpers import get, wait_for

from fabricd.collectors.switch import Backoff, CommandRunner, SwitchTarget
from fabricd.inventory import load_inventory
from fabricd.platforms.access import Access
from fabricd.platforms.base import DriverOptions
from fabricd.platforms.registry import make_driver
from fabricd.platforms.secrets import Secret
from fabricd.service.serve import ServeOptions, Service
from fabricd.service.wiring import RootSpec
from fabricd_lab.replay import ReplayHost, ReplayNic

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
HEALTHY = ("leaf1-sonic", "leaf2-eos", "leaf4-nvue")
DOWN, HUNG = "spine1", "spine2"


class Silent:
    """Accepts TCP connections, counts them and holds them open without ever writing (no SSH banner)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = int(self.sock.getsockname()[1])
        self.accepted = 0
        self.conns: list[socket.socket] = []
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            self.conns.append(conn)

    def close(self) -> None:
        self.sock.close()
        for c in self.conns:
            c.close()


def status(base: str) -> dict[str, Any]:
    code, text = get(base + "/status")
    assert code == 200
    return json.loads(text)  # type: ignore[no-any-return]


def between_dials(base: str, name: str) -> dict[str, Any] | None:
    """A down switch's ``/status`` entry while no dial to it is in flight (``attempts == failures``), else None."""
    sw = {s["name"]: s for s in status(base)["switches"]}[name]
    return sw if sw["attempts"] == sw["failures"] else None


def by_name(base: str) -> dict[str, dict[str, Any]]:
    """``/status``'s switches by name."""
    return {s["name"]: s for s in status(base)["switches"]}


def worst_staleness(base: str, *, window_s: float) -> float:
    """The longest time since a healthy switch's last success seen in ``/status`` (read every 0.1 s for
    ``window_s``), seconds."""
    worst = 0.0
    t_end = time.monotonic() + window_s
    while time.monotonic() < t_end:
        now = time.time()
        for s in status(base)["switches"]:
            if s["name"] in HEALTHY:
                worst = max(worst, now - s["last_success"])
        time.sleep(0.1)
    return worst


def check_down(base: str, start: dict[str, dict[str, Any]], end: dict[str, dict[str, Any]]) -> None:
    """The down switch over the window: dialled by back-off, and every dial failed and was counted once."""
    # without back-off: one dial per 0.2 s poll, 30 in 6 s; with it (0.3-0.4, 0.6-0.8, 1.2-1.6 s, then
    # every 1.2-1.6 s): at most 7
    dials = end[DOWN]["attempts"] - start[DOWN]["attempts"]
    assert 2 <= dials <= 7, dials
    # ``attempts`` counts a dial when it starts, ``failures`` when the poll loop settles it, so a snapshot taken
    # during a dial (a refused connect is quick, but not on a loaded machine) is one ahead: read it between two
    # dials (it backs off 1.2-1.6 s)
    idle = wait_for(lambda: between_dials(base, DOWN), timeout=10.0, step=0.05)
    assert idle is not None, f"{DOWN}: attempts never matched failures between dials"
    assert idle["up"] is False and idle["attempts"] >= end[DOWN]["attempts"]
    assert idle["consecutive_failures"] >= 4 and idle["last_success"] is None
    assert "refused" in idle["last_error"].lower() or "tcp" in idle["last_error"].lower()


def check_metrics(base: str) -> None:
    """The ``up``, staleness and overrun series of the bad and a healthy switch."""
    code, text = get(base + "/metrics")
    assert code == 200
    assert f'fabricd_switch_up{{switch="{DOWN}"}} 0' in text
    assert f'fabricd_switch_up{{switch="{HUNG}"}} 0' in text
    assert 'fabricd_switch_up{switch="leaf2-eos"} 1' in text
    assert f'fabricd_switch_last_success_timestamp_seconds{{switch="{DOWN}"}}' not in text
    assert 'fabricd_switch_last_success_timestamp_seconds{switch="leaf2-eos"}' in text
    assert f'fabricd_switch_poll_overruns_total{{switch="{HUNG}"}}' in text


def check_log_lines(all_records: list[logging.LogRecord]) -> None:
    """One log line per change of state of a bad switch, and no traceback from paramiko or fabricd."""
    records = [r for r in all_records if r.name.startswith(("fabricd", "paramiko", "netmiko"))]
    noisy = [r for r in records if r.exc_info or (r.name.startswith("paramiko") and r.levelno >= logging.WARNING)]
    assert not noisy, [r.getMessage() for r in noisy]
    poller = [r for r in records if r.name == "fabricd.collectors.switch" and r.levelno >= logging.INFO]
    down_lines = [r.getMessage() for r in poller if f"switch {DOWN}:" in r.getMessage()]
    assert len(down_lines) == 2 and "down" in down_lines[0] and "up again" in down_lines[1], down_lines
    hung_lines = [r.getMessage() for r in poller if f"switch {HUNG}:" in r.getMessage()]
    assert len(hung_lines) == 1 and "down" in hung_lines[0], hung_lines


def test_bad_switches_back_off_and_never_slow_the_healthy_ones(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, reserve_port: Callable[[], int]
) -> None:
    """Guaranteed under load: the healthy switches stay fresh (a margin of about 4 at load 9 on 2 cores: at most
    0.4 s stale against 1.5 s), the down switch's dials are counted by back-off, and its failures equal its dials
    when read between two dials (a dial in flight is counted in ``attempts`` before it fails)."""
    caplog.set_level(logging.INFO)
    root = ReplayHost(tmp_path / "gpu1", [ReplayNic("ens1f0np0", "mlx5_0", channels=0)]).build()
    silent = Silent()
    down = {"port": reserve_port()}  # nothing listens there
    fabric = lab_fabric()
    opts = DriverOptions(read_timeout_s=5.0, conn_timeout_s=3.0)  # a hung dial holds its thread for 3 s
    with switch_lab(tmp_path / "lab", names=(*HEALTHY, DOWN)) as lab:

        def factory(target: SwitchTarget) -> CommandRunner:
            if target.name in HEALTHY:
                driver = lab.driver(target.name, opts)
            else:
                port = down["port"] if target.name == DOWN else silent.port
                sw = fabric.switch(target.name)
                assert sw is not None
                sw = sw.model_copy(update={"mgmt": sw.mgmt.model_copy(update={"host": "127.0.0.1", "port": port})})
                access = Access(
                    sw.name,
                    "127.0.0.1",
                    port,
                    sw.credentials.username,
                    Secret(lab.password),
                    (lab.known_hosts,),
                    verify_host_key=True,
                )
                driver = make_driver(sw, access, opts)
            driver.open()
            return driver

        options = ServeOptions(
            listen=("127.0.0.1", 0),
            roots=[RootSpec(root, "gpu1")],
            switch_names=[*HEALTHY, DOWN, HUNG],
            switch_poll_s=0.2,
            switch_timeout_s=2.0,
            switch_backoff=Backoff(base_s=0.4, ceiling_s=1.6, jitter=0.25),
            drift=False,
        )
        service = Service(load_inventory(REPO / "inventory" / "lab"), options, switch_factory=factory)
        service.start()
        try:
            assert service.server is not None
            assert service.server.request_queue_size == 128  # serve's listener has the exporter's backlog
            base = service.server.base_url
            # warm up: every healthy switch answered once (first SSH logins take a moment on a busy machine)
            up = wait_for(lambda: all(by_name(base)[n]["up"] for n in HEALTHY), timeout=20.0)
            assert up, f"healthy switches did not come up: {by_name(base)}"
            start = by_name(base)
            accepted0 = silent.accepted
            worst = worst_staleness(base, window_s=6.0)
            end = by_name(base)
            # the hung switch holds a dial for 3 s and its poll deadline is 2 s: a shared loop would go >= 2 s
            # stale; on their own, the healthy switches stay within a few of their 0.2 s polls
            assert worst < 1.5, f"healthy switches went {worst:.2f} s stale"
            for n in HEALTHY:
                assert end[n]["polls"] - start[n]["polls"] >= 10, (n, start[n], end[n])
                assert end[n]["failures"] == 0 and end[n]["last_error"] is None
            check_down(base, start, end)
            hung_dials = silent.accepted - accepted0
            assert hung_dials in range(1, 4), hung_dials  # each dial waits 3 s for the banner, then backs off
            assert end[HUNG]["up"] is False and end[HUNG]["overruns"] >= 1 and end[HUNG]["failures"] >= 2
            check_metrics(base)
            # spine1 comes back: its simulator behind its address; the next back-off attempt finds it
            down["port"] = lab.switches[DOWN].mgmt.port
            back = wait_for(lambda: sw if (sw := by_name(base)[DOWN])["up"] else None, timeout=10.0)
            assert back is not None, f"{DOWN} did not come back: {by_name(base)[DOWN]}"
            assert back["last_error"] is None and back["consecutive_failures"] == 0
        finally:
            service.stop()
            silent.close()
    check_log_lines(caplog.records)


def test_export_switches_scrape_is_not_held_by_a_hung_switch(tmp_path: Path) -> None:
    """``fabricd export switches`` (its SwitchPoller and SwitchCollector, as the command builds them with
    ``--scrape-wait``): a switch that accepts TCP and never answers holds no scrape past the scrape budget; the
    healthy switch is exported fresh on every scrape, the hung one with up 0, and its poll is never started twice."""
    from fabricd.collectors.core import Registry
    from fabricd.collectors.switch import SwitchCollector, SwitchPoller

    silent = Silent()
    fabric = lab_fabric()
    opts = DriverOptions(read_timeout_s=20.0, conn_timeout_s=20.0)  # the hung dial holds its thread for 20 s
    with switch_lab(tmp_path / "lab", names=("leaf1-sonic",)) as lab:

        def factory(target: SwitchTarget) -> CommandRunner:
            if target.name == "leaf1-sonic":
                driver = lab.driver(target.name, opts)
            else:
                sw = fabric.switch(target.name)
                assert sw is not None
                sw = sw.model_copy(update={"mgmt": sw.mgmt.model_copy(update={"port": silent.port})})
                driver = make_driver(
                    sw,
                    Access(
                        sw.name,
                        "127.0.0.1",
                        silent.port,
                        sw.credentials.username,
                        Secret(lab.password),
                        (lab.known_hosts,),
                    ),
                    opts,
                )
            driver.open()
            return driver

        targets = [SwitchTarget("leaf1-sonic", "sonic", ("Ethernet0",)), SwitchTarget(HUNG, "sonic", ("Ethernet0",))]
        poller = SwitchPoller(targets, factory, timeout_s=30.0)
        registry = Registry([SwitchCollector(poller, wait_s=1.0)])
        try:
            registry.exposition()  # the first scrape: the healthy switch's first SSH login may take a moment
            durations, ups = [], []
            for _ in range(4):
                t0 = time.monotonic()
                text = registry.exposition()
                durations.append(time.monotonic() - t0)
                ups.append(
                    (
                        'fabricd_switch_up{switch="leaf1-sonic"} 1' in text,
                        f'fabricd_switch_up{{switch="{HUNG}"}} 0' in text,
                    )
                )
            assert max(durations) < 2.0, durations  # the budget (1 s) plus a scrape, not the 20 s hung dial
            assert ups == [(True, True)] * 4, ups
            assert silent.accepted == 1  # the hung poll is still running: never started twice
        finally:
            poller.close()
            silent.close()
