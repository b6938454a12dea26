"""A lab switch with one fault, ``fabricd export switches`` polling it and Debian's Prometheus scraping the exporter
with fabricd's rules: the shared setup of the switch alert tests (test_flap_alert_prometheus.py,
test_optic_alert_prometheus.py). Every process is real and always stopped; the lab's ports are held until its
daemon listens on them (labports.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from labports import move_lab_ports
from wdhelpers import Proc

REPO = Path(__file__).resolve().parents[2]
FABRICD = str(Path(sys.executable).parent / "fabricd")
PROMETHEUS = shutil.which("prometheus") or ("/usr/bin/prometheus" if Path("/usr/bin/prometheus").exists() else None)
needs_prometheus = pytest.mark.skipif(PROMETHEUS is None, reason="prometheus not installed (Debian package prometheus)")


def run(*args: str, env: dict[str, str], timeout: int = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([FABRICD, *args], capture_output=True, text=True, timeout=timeout, env=env, check=False)


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as resp:
        return json.loads(resp.read())


def wait_for(pred: Callable[[], Any], timeout: float, step: float = 0.5) -> Any:
    """``pred()`` once it is truthy (an OSError counts as not yet), or None after ``timeout`` seconds."""
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


@contextmanager
def faulty_lab(tmp_path: Path, fault: str | None, reserve: Callable[[], int]) -> Iterator[tuple[Path, dict[str, str]]]:
    """``fabricd lab up --fault FAULT`` (``fault`` None: no fault) on a copy of the lab inventory (its ports moved to
    ones ``reserve``, the ``reserve_port`` fixture, holds; its state in ``tmp_path``); yields (inventory,
    environment) and brings the lab down after."""
    inv = tmp_path / "inventory"
    shutil.copytree(REPO / "inventory" / "lab", inv)
    env = {**os.environ, "FABRICD_STATE_DIR": str(tmp_path / "state")}
    env.pop("FABRICD_INVENTORY", None)
    move_lab_ports(inv, reserve)
    up = run("lab", "up", str(inv), *(("--fault", fault) if fault else ()), env=env)
    if up.returncode != 0:
        pytest.fail(f"fabricd lab up failed: {up.stderr}")
    try:
        yield inv, env
    finally:
        run("lab", "down", env=env, timeout=60)


class Watched:
    """The exporter of one switch and the Prometheus scraping it every second, with ``rules`` loaded."""

    def __init__(
        self, inv: Path, env: dict[str, str], switch: str, rules: Path, tmp_path: Path, *, reserve: Callable[[], int]
    ) -> None:
        assert PROMETHEUS is not None
        exporter_port, prom_port = reserve(), reserve()
        self.url = f"http://127.0.0.1:{prom_port}"
        cfg = tmp_path / "prometheus.yml"
        target = {"targets": [f"127.0.0.1:{exporter_port}"]}
        cfg.write_text(
            yaml.safe_dump(
                {
                    "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                    "rule_files": [str(rules)],
                    "scrape_configs": [{"job_name": "fabricd-switches", "static_configs": [target]}],
                }
            )
        )
        exporter = [FABRICD, "export", "switches", str(inv), "--device", switch]
        self.exporter = Proc([*exporter, "--listen", f"127.0.0.1:{exporter_port}"], tmp_path / "exporter.log", env)
        self.prometheus = Proc(
            [
                PROMETHEUS,
                f"--config.file={cfg}",
                f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{prom_port}",
            ],
            tmp_path / "prometheus.log",
        )

    def query(self, expr: str) -> list[dict[str, Any]]:
        body = get_json(f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
        return list(body["data"]["result"])

    def firing(self, alertname: str) -> list[dict[str, Any]]:
        alerts = get_json(f"{self.url}/api/v1/alerts")["data"]["alerts"]
        return [a for a in alerts if a["labels"]["alertname"] == alertname and a["state"] == "firing"]

    def tails(self) -> str:
        return self.exporter.tail() + self.prometheus.tail()

    def stop(self) -> None:
        self.exporter.stop()
        self.prometheus.stop()
