"""A flapping switch port raises FabricLinkFlapping in a real Prometheus (issue 29).

``fabricd lab up --fault leaf2-eos:flap=Ethernet1`` (a daemon: the EOS simulator's Ethernet1 goes down and up every
2 s of lab time, so its ``show interfaces | json`` ``linkStatusChanges`` grows by 2 each time), ``fabricd export
switches --device leaf2-eos --listen`` polling it over SSH (host keys verified) and reading that counter into
``fabricd_switch_carrier_transitions_total``, and Debian's Prometheus scraping the exporter every second with the
shipped rules unchanged (FabricLinkFlapping has no ``for``). Before this change no switch series fed the rule: it
could fire on host ports only. The steady port (Ethernet2) must not fire. The same runs on a SONiC leaf (``show
interfaces flap``, whose steady ports print ``Never``, read as 0) and an NVUE spine (``nv show interface <port>
counters``)."""

from __future__ import annotations

import json
import os
import re
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


CASES = {
    "arista_eos": ("leaf2-eos", "Ethernet1", "Ethernet2", 1.0),
    "sonic": ("leaf1-sonic", "Ethernet0", "Ethernet8", 0.0),
    "cumulus_nvue": ("spine2", "swp1", "swp2", 1.0),
}
"""Platform -> (switch, flapping port, steady port, the steady port's value)."""


@pytest.fixture(params=sorted(CASES))
def flapping_lab(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, dict[str, str], str]]:
    switch, port, _, _ = CASES[request.param]
    inv = tmp_path / "inventory"
    shutil.copytree(REPO / "inventory" / "lab", inv)
    switches = inv / "switches.yml"
    switches.write_text(re.sub(r"port: 102\d\d", lambda m: f"port: {free_port()}", switches.read_text()))
    env = {**os.environ, "FABRICD_STATE_DIR": str(tmp_path / "state")}
    env.pop("FABRICD_INVENTORY", None)
    up = run("lab", "up", str(inv), "--fault", f"{switch}:flap={port}", env=env)
    if up.returncode != 0:
        pytest.fail(f"fabricd lab up failed: {up.stderr}")
    try:
        yield inv, env, request.param
    finally:
        run("lab", "down", env=env, timeout=60)


@pytest.mark.skipif(PROMETHEUS is None, reason="prometheus not installed (Debian package prometheus)")
def test_flapping_switch_port_fires_link_flapping(
    flapping_lab: tuple[Path, dict[str, str], str], tmp_path: Path
) -> None:
    assert PROMETHEUS is not None
    inv, env, platform = flapping_lab
    switch, port, steady_port, steady_value = CASES[platform]
    exporter_port, prom_port = free_port(), free_port()
    prom = f"http://127.0.0.1:{prom_port}"
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text(
        yaml.safe_dump(
            {
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "rule_files": [str(REPO / "exporters" / "rules" / "fabricd.rules.yml")],
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

        series = wait_for(lambda: query(f'fabricd_switch_carrier_transitions_total{{switch="{switch}"}}'), 60)
        assert series, procs[0].tail() + procs[1].tail()
        assert {s["metric"]["interface"] for s in series} >= {port, steady_port}

        def firing() -> list[dict[str, Any]]:
            alerts = get_json(f"{prom}/api/v1/alerts")["data"]["alerts"]
            return [a for a in alerts if a["labels"]["alertname"] == "FabricLinkFlapping" and a["state"] == "firing"]

        alerts = wait_for(firing, 90)
        assert alerts, procs[0].tail()
        assert [(a["labels"]["switch"], a["labels"]["interface"]) for a in alerts] == [(switch, port)]
        assert float(alerts[0]["value"]) >= 4
        steady = query(f'fabricd_switch_carrier_transitions_total{{switch="{switch}",interface="{steady_port}"}}')
        assert float(steady[0]["value"][1]) == steady_value
    finally:
        for p in procs:
            p.stop()
