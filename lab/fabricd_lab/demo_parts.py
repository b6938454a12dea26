"""The demo's parts that are not the :class:`~fabricd_lab.demo.Demo` run itself: its stages and results
(:class:`StageResult`, :class:`DemoReport`), options and observer, the hosts and switch path it picks, and the
child processes and HTTP polls it runs (split from :mod:`fabricd_lab.demo`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from fabricd import settings
from fabricd.errors import FabricdError, HostBackendError
from fabricd.model import Fabric, Host, Nic, split_endpoint

from .demo_prom import PROMETHEUS_BIN


class StageStatus(StrEnum):
    OK = "ok"
    SKIPPED = "skipped"
    FAILED = "failed"


STAGES: tuple[tuple[str, str], ...] = (
    ("validate", "Validate the intent (host-to-switch checks included)"),
    ("render", "Render configs for every switch OS and the hosts"),
    ("push", "Push to the simulated switches over SSH"),
    ("host", "Apply and audit a host"),
    ("export", "Export counters into a real Prometheus"),
    ("storm", "Inject a PFC storm: detect, alert, find its origin, restore"),
    ("vm", "Verbs traffic through validate-fabric (Soft-RoCE VM)"),
)
"""(name, title) of every stage, in run order."""

HOST_SWITCH_CHECKS: tuple[str, ...] = ("FAB009", "FAB010", "FAB012", "FAB013", "FAB034", "FAB039", "FAB076")
"""Semantic checks that compare a host NIC with its peer switch port or the switch-side policy: peer exists, RDMA
NIC has a peer, speed, MTU (frame vs port), RoCE ToS vs the DSCP map, PCP trust needs tagging, VLAN on the port."""

HOST_SKIP_PARTS = frozenset({"vlan", "dcb"})
HOST_SKIP_REASON = (
    "this kernel has no 802.1Q and veth has no DCB, so VLAN and DCB are left to the Soft-RoCE VM (`fabricd lab vm`)"
)
NETNS_PREFIX = "fdt-demo-"
STORM_HOLD_S = 5.0
"""The storm lasts at least this long (seconds) so the pictures show its plateau."""
TAIL_S = 6.0
"""Seconds recorded after the storm stops, so the 5 s rate windows fall back to zero in the pictures."""
ALERT_NAME = "FabricPfcStormActive"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
"""Management hosts the switch lab can serve (it listens on each switch's inventory address)."""
VM_NAME = "demo"
"""The demo's Soft-RoCE VM instance (``fabricd lab vm status --name demo``), apart from a user's ``lab``."""
VM_TRAFFIC_TIMEOUT_S = 300.0
DIFF_HEAD_LINES = 12
"""Lines of each switch's push diff kept in the stage result (the full diff: `fabricd push --dry-run`)."""
WRITER_TICK_S = 0.01
"""How often the replay roots are rewritten (s); a poll can read counters up to one tick old."""


@dataclass
class StageResult:
    """What one stage did: ``summary`` is one line; ``data`` holds the key figures (JSON-able)."""

    name: str
    title: str
    status: StageStatus
    summary: str
    data: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "status": self.status.value,
            "summary": self.summary,
            "seconds": round(self.seconds, 3),
            "data": self.data,
        }


@dataclass
class DemoReport:
    """The whole run: stages in order, the saved run record, and what was left running (``keep_running``)."""

    fabric: str
    inventory: str
    stages: list[StageResult] = field(default_factory=list)
    started_ts: float = 0.0
    ended_ts: float = 0.0
    run_record: str | None = None
    run_record_note: str | None = None
    services: dict[str, Any] = field(default_factory=dict)
    workdir: str | None = None

    @property
    def ok(self) -> bool:
        return all(s.status is not StageStatus.FAILED for s in self.stages)

    def stage(self, name: str) -> StageResult | None:
        return next((s for s in self.stages if s.name == name), None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "fabric": self.fabric,
            "inventory": self.inventory,
            "ok": self.ok,
            "wall_s": round(self.ended_ts - self.started_ts, 3),
            "stages": [s.as_dict() for s in self.stages],
            "counts": {st.value: sum(1 for s in self.stages if s.status is st) for st in StageStatus},
            "run_record": self.run_record,
            "run_record_note": self.run_record_note,
            "services": self.services,
            "workdir": self.workdir,
        }


class DemoObserver(Protocol):
    """Receives progress while the demo runs (the CLI narrates it). Called from the demo's thread."""

    def stage_started(self, index: int, total: int, name: str, title: str) -> None: ...

    def note(self, stage: str, text: str) -> None: ...

    def stage_done(self, result: StageResult) -> None: ...


class SilentObserver:
    def stage_started(self, index: int, total: int, name: str, title: str) -> None:
        return None

    def note(self, stage: str, text: str) -> None:
        return None

    def stage_done(self, result: StageResult) -> None:
        return None


@dataclass
class DemoOptions:
    """What to run. ``state`` defaults to ``settings.state_dir()/demo``; ``host`` (the host applied, audited and
    stormed) defaults to the first host with an RDMA NIC, ``victim`` to the first such host on another switch."""

    inventory: Path
    keep_running: bool = False
    vm: bool = True
    host: str | None = None
    victim: str | None = None
    state: Path | None = None
    prometheus_bin: str = PROMETHEUS_BIN
    traffic_pps: float = 20_000.0
    storm_hold_s: float = STORM_HOLD_S
    tail_s: float = TAIL_S


class StageSkippedError(Exception):
    """Raised inside a stage: it cannot run here, for the stated reason."""


class StageFailedError(Exception):
    """Raised inside a stage: it ran and did not get the expected result."""

    def __init__(self, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.data = data or {}


def rdma_nic(host: Host) -> Nic | None:
    return next((n for n in host.nics if n.rdma_device is not None and n.peer), None)


def peer_switch(nic: Nic) -> str:
    return split_endpoint(nic.peer)[0] if nic.peer else ""


def pick_hosts(fabric: Fabric, host: str | None = None, victim: str | None = None) -> tuple[Host, Host | None]:
    """The host to apply and storm (an RDMA NIC with a peer) and a victim on another switch (None if none)."""
    candidates = [h for h in fabric.hosts if rdma_nic(h) is not None]
    if not candidates:
        raise StageSkippedError("the inventory has no host with an RDMA NIC and a peer switch port")
    chosen = next((h for h in candidates if h.name == host), None) if host else candidates[0]
    if chosen is None:
        raise FabricdError(
            f"--host {host}: no such host with an RDMA NIC and a peer in the inventory",
            hint=f"use one of: {', '.join(h.name for h in candidates)}",
        )
    nic = rdma_nic(chosen)
    assert nic is not None
    if victim:
        other = next((h for h in candidates if h.name == victim), None)
    else:
        other = next(
            (
                h
                for h in candidates
                if peer_switch(rdma_nic(h)) != peer_switch(nic)  # type: ignore[arg-type]
                and h.name != chosen.name
            ),
            None,
        )
    return chosen, other


FABRICD_ARGV: tuple[str, ...] = (sys.executable, "-m", "fabricd")
"""How the demo starts fabricd's own long-running commands (serve, export host): this interpreter, this package."""
RUNNING_FILE = "running.json"
"""Under the demo state dir: what ``--keep-running`` left up, for ``fabricd demo --stop``."""


@dataclass
class Child:
    """A process the demo started in its own session (Ctrl-C reaches the demo, which stops it in order)."""

    name: str
    proc: subprocess.Popen[bytes]
    log: Path
    url: str

    @property
    def address(self) -> str:
        return self.url.removeprefix("http://")

    def stop(self, timeout_s: float = 10.0) -> None:
        """SIGTERM, wait, SIGKILL if needed. Safe to call twice; a detached child is left alone."""
        if self.proc.returncode is not None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5.0)

    def detach(self) -> int:
        """Leave it running (``--keep-running``); returns its pid."""
        pid = int(self.proc.pid)
        self.proc.returncode = 0  # meant to outlive the demo: no stop, no "still running" warning
        return pid


def log_tail(path: Path, lines: int = 3) -> str:
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(text[-lines:])


def http_json(url: str, timeout_s: float = 5.0) -> Any:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as resp:
            return json.loads(resp.read().decode("utf-8"))
    except (urllib.error.URLError, OSError, json.JSONDecodeError) as exc:
        raise StageFailedError(f"{url}: {exc}") from None


def wait_http(url: str, timeout_s: float, proc: subprocess.Popen[bytes]) -> bool:
    """True once ``url`` answers 200; False when ``proc`` exits or the time is up."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(url, timeout=1.0) as resp:
                if int(resp.status) == 200:
                    return True
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.1)
    return False


def storm_path(fabric: Fabric, origin: Host, victim: Host | None) -> list[tuple[str, str, str]]:
    """The switch ports a storm from ``origin``'s stalled NIC pauses on its way to ``victim``'s sender, as
    (switch, port, direction): pause spreads against the traffic, hop by hop (Guo et al. 2016). The origin's peer
    port receives pause (rx); its switch then sends pause (tx) on the uplinks that feed it; each spine that links
    both leaves receives it there (rx) and sends it (tx) towards the victim's leaf, which receives it on its
    uplinks (rx) and sends it to the victim's NIC (tx)."""
    o_nic = rdma_nic(origin)
    assert o_nic is not None and o_nic.peer
    leaf_a, port_a = split_endpoint(o_nic.peer)
    out = [(leaf_a, port_a, "rx")]
    v_nic = rdma_nic(victim) if victim is not None else None
    if v_nic is None or not v_nic.peer:
        return out
    leaf_b, port_b = split_endpoint(v_nic.peer)
    if leaf_b != leaf_a:
        cables: dict[str, list[tuple[str, str, str]]] = {}  # switch -> (its port, peer switch, peer port)
        for link in fabric.links:
            (da, pa), (db, pb) = split_endpoint(link.a), split_endpoint(link.b)
            cables.setdefault(da, []).append((pa, db, pb))
            cables.setdefault(db, []).append((pb, da, pa))
        for up_port, spine, spine_port_a in cables.get(leaf_a, []):
            down = [(sp, lp) for sp, peer, lp in cables.get(spine, []) if peer == leaf_b]
            if not down:
                continue
            out += [(leaf_a, up_port, "tx"), (spine, spine_port_a, "rx")]
            for spine_port_b, leaf_b_port in down:
                out += [(spine, spine_port_b, "tx"), (leaf_b, leaf_b_port, "rx")]
    out.append((leaf_b, port_b, "tx"))
    return list(dict.fromkeys(out))


class LabTraffic:
    """Keeps the lab's counters moving like a busy fabric: every :attr:`PERIOD_S`, RoCE packets out of every switch
    port on the RoCE priority and ECN marks on a small share of them (``fabricd lab drive``'s traffic and ecn
    actions)."""

    PERIOD_S = 2.0
    """Seconds between two rounds of drive requests (two per port; kept low for a 2-core machine)."""

    def __init__(self, ports: list[tuple[str, str]], priority: int, pps: float, ecn_share: float = 0.01) -> None:
        self.ports = ports
        self.priority = priority
        self.pps = pps
        self.ecn_share = ecn_share
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lab-traffic", daemon=True)
        self.errors = 0

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        from fabricd_lab import daemon

        while not self._stop.wait(self.PERIOD_S):
            for device, port in self.ports:
                try:
                    daemon.control(
                        {
                            "op": "drive",
                            "device": device,
                            "action": "traffic",
                            "port": port,
                            "priority": self.priority,
                            "packets": int(self.pps * self.PERIOD_S),
                        }
                    )
                    daemon.control(
                        {
                            "op": "drive",
                            "device": device,
                            "action": "ecn",
                            "port": port,
                            "priority": self.priority,
                            "packets": int(self.pps * self.PERIOD_S * self.ecn_share),
                        }
                    )
                except (FabricdError, OSError, ValueError):
                    self.errors += 1
                if self._stop.is_set():
                    return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10.0)


def rate_text(speed_gbps: int) -> str:
    """sysfs ``ports/1/rate`` text as mlx5 prints it for common speeds (e.g. ``400 Gb/sec (4X NDR)``)."""
    known = {
        400: "400 Gb/sec (4X NDR)",
        200: "200 Gb/sec (4X HDR)",
        100: "100 Gb/sec (2X HDR)",
        50: "50 Gb/sec (2X HDR)",
        25: "25 Gb/sec (1X EDR)",
    }
    return known.get(speed_gbps, f"{speed_gbps} Gb/sec")


def run_ip(*args: str, check: bool = True) -> None:
    """Run ``ip ARGS`` (iproute2); a failure raises HostBackendError with its stderr when ``check``."""
    res = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)
    if check and res.returncode != 0:
        raise HostBackendError(
            "ip",
            " ".join(args),
            res.stderr.strip() or f"exit {res.returncode}",
            hint="the host stage needs root and iproute2 (`fabricd doctor`)",
        )


def host_as_device(labels: dict[str, str]) -> dict[str, str]:
    """Name a host series by its inventory host (the scrape target's ``host`` label) as the report's ``device``."""
    out = dict(labels)
    if "host" in out:
        out["device"] = out.pop("host")
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _lab_down() -> list[str]:
    """``fabricd lab down``: stops exactly the lab daemon of this state dir."""
    res = subprocess.run([*FABRICD_ARGV, "lab", "down"], capture_output=True, text=True, timeout=60, check=False)
    text = (res.stdout.strip() or res.stderr.strip() or f"exit {res.returncode}").splitlines()
    return [f"fabricd lab down: {text[-1] if text else 'done'}"]


def stop_kept(state: Path | None = None, timeout_s: float = 10.0) -> list[str]:
    """Stop what ``fabricd demo --keep-running`` left up (recorded in ``<state>/demo/running.json``): each process
    whose command line still matches, the switch lab when it was started, then the run's temp directory.
    Returns what was done, one line each (empty when nothing was recorded)."""
    state = state or settings.state_dir() / "demo"
    path = state / RUNNING_FILE
    try:
        record = json.loads(path.read_text())
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise FabricdError(
            f"{path}: unreadable ({exc})", hint=f"remove {path} and stop the processes by hand"
        ) from None
    done: list[str] = []
    for item in record.get("processes", []):
        pid, name, marker = int(item["pid"]), str(item["name"]), str(item["marker"])
        if marker not in _cmdline(pid):
            done.append(f"{name} (pid {pid}) was not running")
            continue
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while marker in _cmdline(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if marker in _cmdline(pid):
            os.kill(pid, signal.SIGKILL)
        done.append(f"stopped {name} (pid {pid})")
    if record.get("lab"):
        done.extend(_lab_down())
    workdir = record.get("workdir")
    if workdir and Path(workdir).name.startswith("fabricd-demo-"):
        shutil.rmtree(workdir, ignore_errors=True)
        done.append(f"removed {workdir}")
    path.unlink(missing_ok=True)
    return done
