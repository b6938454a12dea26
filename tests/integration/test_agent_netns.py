"""`fabricd agent` on real namespace hosts (pyroute2 netlink in a network namespace, a fake mlx5 sysfs tree from
real captures): enforce repairs a simulated driver reload within one interval, audit only reports, and the apply
lock keeps two appliers apart. Needs root; namespace names start with fdt-fl-."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from metrics_text import metric_value
from nshost import NsHost, can_netns
from wdhelpers import get, wait_for

from fabricd import settings
from fabricd.hosts.lock import ApplyLock
from fabricd.intent.host import host_intent
from fabricd.inventory import load_inventory

pytestmark = [pytest.mark.integration, pytest.mark.netns]

FABRICD = str(Path(sys.executable).with_name("fabricd"))
INTERVAL_S = 4.0


@pytest.fixture()
def nshost(tmp_path: Path) -> Iterator[NsHost]:
    why = can_netns()
    if why:
        pytest.skip(why)
    intent = host_intent(load_inventory(settings.default_inventory()).fabric, "gpu1")
    host = NsHost.create(intent, tmp_path)
    try:
        yield host
    finally:
        host.close()


def _env(tmp_path: Path) -> dict[str, str]:
    return dict(os.environ, FABRICD_STATE_DIR=str(tmp_path / "state"), FABRICD_APPLY_LOCK_DIR=str(tmp_path / "lock"))


class AgentProc:
    def __init__(self, host: NsHost, tmp_path: Path, mode: str, interval_s: float = INTERVAL_S, *, port: int) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tmp_path / f"agent-{mode}.log"
        self.proc = subprocess.Popen(
            [
                FABRICD,
                "agent",
                str(settings.default_inventory()),
                "--host",
                host.name,
                "--netns",
                host.ns,
                "--root",
                str(host.root),
                "--skip",
                "vlan,dcb",
                "--mode",
                mode,
                "--interval",
                str(interval_s),
                "--listen",
                f"127.0.0.1:{self.port}",
            ],
            env=_env(tmp_path),
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("w"),
        )

    def metrics(self) -> str:
        try:
            code, text = get(self.url + "/metrics", timeout=2)
        except OSError:
            return ""
        return text if code == 200 else ""

    def value(self, name: str, **labels: str) -> float | None:
        return metric_value(self.metrics(), name, **labels)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def test_enforce_repairs_a_driver_reload_within_one_interval(
    nshost: NsHost, tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    agent = AgentProc(nshost, tmp_path, "enforce", port=reserve_port())
    try:
        # start: the fresh namespace host is not configured; the agent applies at once
        assert wait_for(lambda: agent.value("fabricd_host_compliant", host="gpu1") == 1, 30), agent.log.read_text()
        text = agent.metrics()
        assert metric_value(text, "fabricd_agent_reconciles_total", trigger="start", result="applied") == 1
        assert metric_value(text, "fabricd_agent_applies_total", host="gpu1") == 1
        assert metric_value(text, "fabricd_host_check_compliant", interface="ens1f0np0", check="HOST-MTU") == 1
        assert metric_value(text, "fabricd_agent_info", host="gpu1", mode="enforce") == 1
        drift_before = metric_value(text, "fabricd_agent_drift_detected_total", host="gpu1")
        assert drift_before == 1

        # a driver reload: new netdev (MTU 1500, down, no address), configfs back to power-on values
        reloaded = time.monotonic()
        nshost.reload_driver()
        assert wait_for(
            lambda: (
                (agent.value("fabricd_agent_drift_detected_total", host="gpu1") or 0) >= 2
                and agent.value("fabricd_host_compliant", host="gpu1") == 1
            ),
            INTERVAL_S + 2,
        ), agent.log.read_text()
        assert time.monotonic() - reloaded <= INTERVAL_S + 2
        text = agent.metrics()
        # the drift was seen (the fleet view's counter moved) and repaired; by the device event, or the interval
        repaired = sum(
            metric_value(text, "fabricd_agent_reconciles_total", trigger=t, result="applied") or 0
            for t in ("device", "interval")
        )
        assert repaired >= 1
        assert metric_value(text, "fabricd_agent_apply_failures_total", reason="apply_error") == 0
        mtu = subprocess.run(
            ["ip", "-n", nshost.ns, "-o", "link", "show", "ens1f0np0"], capture_output=True, text=True, check=True
        ).stdout
        assert "mtu 9000" in mtu
        tos = nshost.root / "sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos"
        assert tos.read_text().strip() == "106"
    finally:
        agent.stop()


def test_device_event_triggers_a_reconcile_before_the_interval(
    nshost: NsHost, tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    agent = AgentProc(nshost, tmp_path, "enforce", interval_s=600, port=reserve_port())
    try:
        assert wait_for(lambda: agent.value("fabricd_host_compliant", host="gpu1") == 1, 30), agent.log.read_text()
        nshost.reload_driver()
        assert wait_for(
            lambda: agent.value("fabricd_agent_reconciles_total", trigger="device", result="applied"), 15
        ), agent.log.read_text()
        assert agent.value("fabricd_host_compliant", host="gpu1") == 1
        assert "netdev ens1f0np0 appeared" in agent.log.read_text() or "rdma device" in agent.log.read_text()
    finally:
        agent.stop()


def test_audit_mode_reports_and_never_writes(nshost: NsHost, tmp_path: Path, reserve_port: Callable[[], int]) -> None:
    agent = AgentProc(nshost, tmp_path, "audit", interval_s=2, port=reserve_port())
    try:
        assert wait_for(lambda: agent.value("fabricd_host_compliant", host="gpu1") == 0, 30), agent.log.read_text()
        text = agent.metrics()
        assert metric_value(text, "fabricd_host_check_compliant", interface="ens1f0np0", check="HOST-MTU") == 0
        assert metric_value(text, "fabricd_host_check_compliant", interface="ens1f0np0", check="HOST-CNP") == 1
        assert metric_value(text, "fabricd_agent_applies_total", host="gpu1") == 0
        assert wait_for(
            lambda: (agent.value("fabricd_agent_reconciles_total", trigger="interval", result="drift") or 0) >= 1, 10
        )
        assert (
            "mtu 1500"
            in subprocess.run(
                ["ip", "-n", nshost.ns, "-o", "link", "show", "ens1f0np0"], capture_output=True, text=True, check=True
            ).stdout
        )
        assert (nshost.root / "sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos").read_text().strip() == "0"
        code, status = get(agent.url + "/status")
        assert code == 200 and '"mode": "audit"' in status and "ens1f0np0:HOST-MTU" in status
    finally:
        agent.stop()


def test_the_apply_lock_keeps_two_appliers_apart(nshost: NsHost, tmp_path: Path) -> None:
    env = _env(tmp_path)
    args = [
        str(settings.default_inventory()),
        "--host",
        "gpu1",
        "--netns",
        nshost.ns,
        "--root",
        str(nshost.root),
        "--skip",
        "vlan,dcb",
    ]
    os.environ["FABRICD_APPLY_LOCK_DIR"] = env["FABRICD_APPLY_LOCK_DIR"]
    try:
        with ApplyLock("gpu1", "test holder"):
            res = subprocess.run(
                [FABRICD, "agent", *args, "--mode", "enforce", "--once"],
                env=env,
                check=False,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert res.returncode == 3, res.stdout + res.stderr
            assert re.search(r"another applier holds .*fabricd-host-gpu1\.lock \(pid \d+ test holder\)", res.stderr)
            res = subprocess.run(
                [FABRICD, "host", "apply", *args, "--yes", "--lock-wait", "0.2"],
                env=env,
                check=False,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert res.returncode == 3 and "another applier holds" in res.stderr, res.stderr
            assert (
                "mtu 1500"
                in subprocess.run(
                    ["ip", "-n", nshost.ns, "-o", "link", "show", "ens1f0np0"],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
        res = subprocess.run(
            [FABRICD, "agent", *args, "--mode", "enforce", "--once"],
            env=env,
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert res.returncode == 0 and "applied" in res.stdout, res.stdout + res.stderr
    finally:
        os.environ.pop("FABRICD_APPLY_LOCK_DIR", None)
