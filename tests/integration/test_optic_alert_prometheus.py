"""The lab's degrading optic raises FabricOpticRxPowerLow in a real Prometheus.

``fabricd lab up --fault leaf1-sonic:degrade-optic=Ethernet0`` (a daemon: the SONiC simulator's Ethernet0 loses
0.5 dB of received power a second from the start, below -10 dBm after 16 s), ``fabricd export switches --device
leaf1-sonic --listen`` polling it over SSH (host keys verified), and Debian's Prometheus scraping the exporter every
second with the shipped rules. The shipped rule waits 2 minutes (``for: 2m``); this test loads a copy of the rules
in which only that rule's ``for`` is 5 s, so the expression and labels under test are the shipped ones and the
test takes seconds (the 2-minute wait is covered by promtool: exporters/rules/tests/linkhealth.yml). The healthy
port (Ethernet8) must not fire. The same runs on the NVUE spine (``nv show interface <port> transceiver`` for the
power, ``link phy-detail`` for the pre-FEC BER)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from labports import lab_port_count, move_lab_ports, reserved_ports

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
FABRICD = str(Path(sys.executable).parent / "fabricd")
PROMETHEUS = shutil.which("prometheus") or ("/usr/bin/prometheus" if Path("/usr/bin/prometheus").exists() else None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(*args: str, env: dict[str, str], timeout: int = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([FABRICD, *args], capture_output=True, text=True, timeout=timeout, env=env, check=False)


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as resp:
        return json.loads(resp.read())


def wait_for(pred: Callable[[], Any], timeout: float, step: float = 0.5) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            got = pred()
        except OSError:
            got = None
        if got:
            return got
        time.sleep(step)
    return None


class Proc:
    """A child process that is always stopped, its output kept for failures."""

    def __init__(self, argv: list[str], log: Path, env: dict[str, str] | None = None) -> None:
        self.log = log
        self._fh = log.open("w")
        self.p = subprocess.Popen(argv, stdout=self._fh, stderr=subprocess.STDOUT, env=env)

    def stop(self) -> None:
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(20)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self._fh.close()

    def tail(self) -> str:
        return self.log.read_text()[-3000:]


CASES = {"sonic": ("leaf1-sonic", "Ethernet0", "Ethernet8"), "cumulus_nvue": ("spine2", "swp1", "swp2")}
"""Platform -> (switch, degrading port, healthy port)."""


@pytest.fixture(params=sorted(CASES))
def degraded_lab(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, dict[str, str], str]]:
    switch, port, _ = CASES[request.param]
    inv = tmp_path / "inventory"
    shutil.copytree(REPO / "inventory" / "lab", inv)
    env = {**os.environ, "FABRICD_STATE_DIR": str(tmp_path / "state")}
    env.pop("FABRICD_INVENTORY", None)
    with reserved_ports(lab_port_count(inv)) as ports:  # held until the daemon listens on them
        move_lab_ports(inv, ports)
        up = run("lab", "up", str(inv), "--fault", f"{switch}:degrade-optic={port}", env=env)
    if up.returncode != 0:
        pytest.fail(f"fabricd lab up failed: {up.stderr}")
    try:
        yield inv, env, request.param
    finally:
        run("lab", "down", env=env, timeout=60)


def rules_with_short_for(tmp: Path) -> Path:
    """The shipped rules with FabricOpticRxPowerLow's ``for`` cut to 5 s (nothing else changed)."""
    data = yaml.safe_load((REPO / "exporters" / "rules" / "fabricd.rules.yml").read_text())
    found = 0
    for group in data["groups"]:
        for rule in group["rules"]:
            if rule.get("alert") == "FabricOpticRxPowerLow":
                rule["for"] = "5s"
                found += 1
    assert found == 1
    out = tmp / "rules.yml"
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out


@pytest.mark.skipif(PROMETHEUS is None, reason="prometheus not installed (Debian package prometheus)")
def test_degrading_optic_fires_rx_power_low(degraded_lab: tuple[Path, dict[str, str], str], tmp_path: Path) -> None:
    assert PROMETHEUS is not None
    inv, env, platform = degraded_lab
    switch, port, healthy_port = CASES[platform]
    exporter_port, prom_port = free_port(), free_port()
    prom = f"http://127.0.0.1:{prom_port}"
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "rule_files": [str(rules_with_short_for(tmp_path))],
                "scrape_configs": [
                    {"job_name": "fabricd-switches", "static_configs": [{"targets": [f"127.0.0.1:{exporter_port}"]}]}
                ],
            }
        )
    )
    procs = [
        Proc(
            [FABRICD, "export", "switches", str(inv), "--device", switch, "--listen", f"127.0.0.1:{exporter_port}"],
            tmp_path / "exporter.log",
            env=env,
        ),
        Proc(
            [
                PROMETHEUS,
                f"--config.file={cfg}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{prom_port}",
            ],
            tmp_path / "prometheus.log",
        ),
    ]
    try:

        def query(expr: str) -> list[dict[str, Any]]:
            body = get_json(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
            return list(body["data"]["result"])

        series = wait_for(lambda: query(f'fabricd_switch_optic_rx_power_dbm{{switch="{switch}"}}'), 60)
        assert series, procs[0].tail() + procs[1].tail()
        assert {s["metric"]["interface"] for s in series} >= {port, healthy_port}

        def firing() -> list[dict[str, Any]]:
            alerts = get_json(f"{prom}/api/v1/alerts")["data"]["alerts"]
            return [a for a in alerts if a["labels"]["alertname"] == "FabricOpticRxPowerLow" and a["state"] == "firing"]

        alerts = wait_for(firing, 90)
        assert alerts, procs[0].tail()
        assert [(a["labels"]["switch"], a["labels"]["interface"]) for a in alerts] == [(switch, port)]
        assert float(alerts[0]["value"]) < -10
        healthy = query(f'fabricd_switch_optic_rx_power_dbm{{switch="{switch}",interface="{healthy_port}",lane="1"}}')
        assert float(healthy[0]["value"][1]) == -2.0
        ber = query(f'fabricd_switch_pre_fec_ber{{switch="{switch}",interface="{port}"}}')
        assert float(ber[0]["value"][1]) > 1e-5  # the BER rises with the loss
    finally:
        for p in procs:
            p.stop()
