"""The fleet view end to end: real `fabricd agent` processes on namespace hosts, scraped by a real Prometheus, read
back by `fabricd audit fleet`. One host drifts (audit mode, never applied), one is repaired after a simulated driver
reload (enforce) and Prometheus keeps the drift it saw in between, one agent is stopped, and one inventory host never
had an agent: audit fleet names exactly the drifted, stopped and never-seen hosts; its JUnit parses. Needs root and
Debian's prometheus."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from nshost import NsHost, can_netns
from wdhelpers import Proc, get, wait_for

from fabricd import settings
from fabricd.intent.host import host_intent
from fabricd.inventory import load_inventory

pytestmark = [pytest.mark.integration, pytest.mark.netns, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
FABRICD = str(Path(sys.executable).with_name("fabricd"))
PROMETHEUS = shutil.which("prometheus")
INV = settings.default_inventory()


def query(prom: str, expr: str) -> list[dict[str, Any]]:
    code, body = get(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    assert code == 200, body
    return list(json.loads(body)["data"]["result"])


@pytest.fixture()
def ns_hosts(tmp_path: Path) -> Iterator[dict[str, NsHost]]:
    why = can_netns()
    if why:
        pytest.skip(why)
    if PROMETHEUS is None:
        pytest.skip("prometheus not installed (Debian package prometheus)")
    fabric = load_inventory(INV).fabric
    made: dict[str, NsHost] = {}
    try:
        for name in ("gpu1", "gpu2", "gpu3"):
            made[name] = NsHost.create(host_intent(fabric, name), tmp_path)
        yield made
    finally:
        for h in made.values():
            h.close()


def test_audit_fleet_names_drifted_stopped_and_missing_hosts(
    ns_hosts: dict[str, NsHost], tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    assert PROMETHEUS is not None
    procs: list[Proc] = []
    env = dict(os.environ, FABRICD_STATE_DIR=str(tmp_path / "state"), FABRICD_APPLY_LOCK_DIR=str(tmp_path / "lock"))
    modes = {"gpu1": "enforce", "gpu2": "audit", "gpu3": "enforce"}
    ports = {name: reserve_port() for name in ns_hosts}
    agents: dict[str, Proc] = {}
    try:
        for name, h in ns_hosts.items():
            agents[name] = Proc(
                [
                    FABRICD,
                    "agent",
                    str(INV),
                    "--host",
                    name,
                    "--netns",
                    h.ns,
                    "--root",
                    str(h.root),
                    "--skip",
                    "vlan,dcb",
                    "--mode",
                    modes[name],
                    "--interval",
                    "3",
                    "--listen",
                    f"127.0.0.1:{ports[name]}",
                ],
                tmp_path / f"agent-{name}.log",
                env,
            )
            procs.append(agents[name])
        prom_port = reserve_port()
        prom = f"http://127.0.0.1:{prom_port}"
        cfg = tmp_path / "prometheus.yml"
        cfg.write_text(
            yaml.safe_dump(
                {
                    "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                    "rule_files": [str(REPO / "exporters" / "rules" / "fabricd-fleet.rules.yml")],
                    "scrape_configs": [
                        {
                            "job_name": "fabricd-agent",
                            "static_configs": [{"targets": [f"127.0.0.1:{p}" for p in ports.values()]}],
                        }
                    ],
                }
            )
        )
        procs.append(
            Proc(
                [
                    PROMETHEUS,
                    f"--config.file={cfg}",
                    f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                    f"--web.listen-address=127.0.0.1:{prom_port}",
                ],
                tmp_path / "prometheus.log",
            )
        )

        def reporting() -> bool:
            try:
                return len(query(prom, "fabricd_host_compliant")) == 3
            except OSError:
                return False

        assert wait_for(reporting, 60, 0.5), (tmp_path / "prometheus.log").read_text()[-2000:]
        assert wait_for(
            lambda: (
                {r["metric"]["host"]: r["value"][1] for r in query(prom, "fabricd_host_compliant")}
                == {"gpu1": "1", "gpu2": "0", "gpu3": "1"}
            ),
            30,
            0.5,
        )

        # gpu1's driver reloads: its agent repairs it within an interval; Prometheus saw the drift
        drift_before = float(query(prom, 'fabricd_agent_drift_detected_total{host="gpu1"}')[0]["value"][1])
        ns_hosts["gpu1"].reload_driver()
        assert wait_for(
            lambda: float(query(prom, 'fabricd_agent_drift_detected_total{host="gpu1"}')[0]["value"][1]) > drift_before,
            10,
            0.5,
        )
        assert wait_for(lambda: query(prom, 'fabricd_host_compliant{host="gpu1"} == 1'), 10, 0.5)

        # gpu3's agent stops; its series go stale at the next failed scrape
        agents["gpu3"].stop()
        assert wait_for(lambda: not query(prom, 'fabricd_agent_info{host="gpu3"}'), 15, 0.5)

        junit = tmp_path / "fleet.xml"
        res = subprocess.run(
            [FABRICD, "audit", "fleet", str(INV), "--prometheus", prom, "--junit", str(junit), "--output", "json"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert res.returncode == 1, res.stderr
        data = json.loads(res.stdout)
        never = {h.name for h in load_inventory(INV).fabric.hosts} - set(ns_hosts)
        assert set(data["absent"]) == {"gpu3"} | never
        assert data["noncompliant"] == ["gpu2"]
        assert data["stale"] == []
        by_host = {r["target"]: r for r in data["hosts"]}
        assert by_host["gpu1"]["compliant"] is True
        gpu2_failed = {c["code"] for c in by_host["gpu2"]["checks"] if c["status"] == "fail"}
        assert gpu2_failed == {"HOST-MTU", "HOST-LINK", "HOST-ADDR", "HOST-ROCE-TOS"}
        assert [f["object"] for c in by_host["gpu2"]["checks"] if c["code"] == "HOST-MTU" for f in c["findings"]] == [
            "ens1f0np0"
        ]
        gpu3 = next(c for c in by_host["gpu3"]["checks"] if c["code"] == "FLEET-AGENT")
        assert gpu3["status"] == "fail" and "had an agent within 1d" in gpu3["findings"][0]["message"]

        suites = ET.parse(junit).getroot()
        assert suites.tag == "testsuites"
        failing = {s.get("name", "").rsplit(" ", 1)[-1] for s in suites if int(s.get("failures", "0"))}
        assert failing == {"gpu2", "gpu3"} | never

        text = subprocess.run(
            [FABRICD, "audit", "fleet", str(INV), "--prometheus", prom, "--hosts", "gpu[1-3]"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert text.returncode == 1
        assert text.stdout.splitlines() == [
            "gpu1: compliant",
            "gpu2: 4 failed check(s): HOST-ADDR ens1f0np0; HOST-LINK ens1f0np0; HOST-MTU ens1f0np0; "
            "HOST-ROCE-TOS ens1f0np0",
            "gpu3: NO AGENT (no fabricd agent reports for this host (had an agent within 1d))",
        ]
        assert "3 host(s): 1 compliant, 1 drifted, 1 without an agent, 0 stale" in text.stderr
        # the recording rule agrees (its group is evaluated every 30 s)
        assert wait_for(lambda: query(prom, 'fabricd:host_noncompliant_checks{host="gpu2"} == 4'), 45, 0.5)
    finally:
        for p in procs:
            p.stop()


def test_unreachable_prometheus_is_exit_3_without_traceback(tmp_path: Path, reserve_port: Callable[[], int]) -> None:
    port = reserve_port()
    t0 = time.monotonic()
    res = subprocess.run(
        [FABRICD, "audit", "fleet", "--prometheus", f"http://127.0.0.1:{port}"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert res.returncode == 3 and "Prometheus query failed" in res.stderr and "Traceback" not in res.stderr
    assert time.monotonic() - t0 < 30
    res = subprocess.run([FABRICD, "audit", "fleet"], capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == 2 and "--prometheus is missing" in res.stderr
