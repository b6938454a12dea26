"""End to end on the lab: a real Prometheus (Debian's server, 1 s scrape and evaluation, the shipped rule pack)
scrapes ``fabricd serve``, which watches switch simulators (SONiC leaf1 and spine1 over real SSH) and a replay-root
host (gpu1). A storm started at gpu1's NIC, which stops draining and sends pause, spreads: leaf1 Ethernet0 is
paused and leaf1 pauses spine1 on its uplink. Injected into the replay tree and the lab counter model, it must:

- make ``FabricPfcStormActive`` fire in Prometheus's ``/api/v1/alerts`` within ``ALERT_BOUND_S`` of the injection;
- reach a webhook receiver (a small HTTP server here), straight from fabricd's watchdog and, when Debian's
  ``prometheus-alertmanager`` is installed, through Alertmanager too;
- be traced back to its origin: gpu1's port, in the events, ``/status`` and ``fabricd_pfc_storm_origin_info``.

leaf1's own PFC watchdog (the simulator runs SONiC's) detects the storm on Ethernet0 and, the storm going on, does
not restore it: fabricd reports it ``watchdog_stuck`` (``--stuck-after-s 2`` here). Drops on leaf1's lossless
queue 3 are a ``lossless_drop`` event.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from switchlab import write_lab_credentials
from wdhelpers import Proc, Receiver, get, wait_for

from fabricd_lab.replay import ReplayHost, ReplayNic
from fabricd_lab.stormgen import StormGen

runtime = pytest.importorskip("fabricd_lab.runtime", reason="the switch lab (lab/fabricd_lab) is not in this checkout")

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
PROMETHEUS = shutil.which("prometheus") or ("/usr/bin/prometheus" if Path("/usr/bin/prometheus").exists() else None)
ALERTMANAGER = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
FABRICD = [sys.executable, "-m", "fabricd"]
SWITCHES = ("leaf1-sonic", "spine1")
ALERT_BOUND_S = 8.0
"""Injection -> firing in /api/v1/alerts: detection 0.2 s + a switch poll 0.5 s + scrape 1 s + evaluation 1 s, plus
Prometheus's own scheduling and this test's 0.2 s polling: 8 s leaves room on a loaded 2-core machine."""


def lab_inventory_at_ports(tmp: Path, ports: dict[str, int]) -> Path:
    """inventory/lab with the simulated switches' management ports moved to the ephemeral ones."""
    inv = tmp / "inventory"
    shutil.copytree(REPO / "inventory" / "lab", inv)
    data = yaml.safe_load((inv / "switches.yml").read_text())
    for sw in data["switches"]:
        if sw["name"] in ports:
            sw["mgmt"]["port"] = ports[sw["name"]]
    (inv / "switches.yml").write_text(yaml.safe_dump(data, sort_keys=False))
    return inv


@pytest.fixture
def shm_dir(tmp_path: Path) -> Iterator[Path]:
    if not Path("/dev/shm").is_dir():
        yield tmp_path
        return
    path = Path(tempfile.mkdtemp(prefix="fdt-prom-", dir="/dev/shm"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def query(prom: str, expr: str) -> list[dict[str, Any]]:
    code, body = get(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    assert code == 200, body
    return list(json.loads(body)["data"]["result"])


@pytest.mark.skipif(PROMETHEUS is None, reason="prometheus not installed (Debian package prometheus)")
def test_storm_alert_webhook_and_origin_on_the_lab(
    tmp_path: Path, shm_dir: Path, reserve_port: Callable[[], int]
) -> None:
    assert PROMETHEUS is not None
    fabric_inv = REPO / "inventory" / "lab"
    password = secrets.token_urlsafe(12)
    from fabricd.inventory import load_inventory

    fabric = load_inventory(fabric_inv).fabric
    specs = [runtime.spec_for(fabric.switch(n), password=password, port=0) for n in SWITCHES]
    procs: list[Proc] = []
    hook = Receiver()
    host = ReplayHost(shm_dir, [ReplayNic("ens1f0np0", "mlx5_0", channels=0)])
    host.build()
    gen = StormGen(host, tick_s=0.005, traffic_pps=10_000, realtime=True).start()
    try:
        with runtime.LabThread(specs) as lab:
            inv = lab_inventory_at_ports(tmp_path, {n: lab.endpoint(n).port for n in SWITCHES})
            write_lab_credentials(tmp_path / "state", password)  # the files inventory/lab names
            serve_port, prom_port = reserve_port(), reserve_port()
            serve_url, prom = f"http://127.0.0.1:{serve_port}", f"http://127.0.0.1:{prom_port}"

            am_url = None
            if ALERTMANAGER is not None:
                am_port = reserve_port()
                am_url = f"http://127.0.0.1:{am_port}"
                am_cfg = tmp_path / "alertmanager.yml"
                am_cfg.write_text(
                    yaml.safe_dump(
                        {
                            "route": {
                                "receiver": "test",
                                "group_by": ["alertname"],
                                "group_wait": "0s",
                                "group_interval": "1s",
                                "repeat_interval": "1h",
                            },
                            "receivers": [{"name": "test", "webhook_configs": [{"url": hook.url + "/am"}]}],
                        }
                    )
                )
                procs.append(
                    Proc(
                        [
                            ALERTMANAGER,
                            f"--config.file={am_cfg}",
                            f"--storage.path={tmp_path / 'am'}",
                            f"--web.listen-address=127.0.0.1:{am_port}",
                            "--cluster.listen-address=",
                        ],
                        tmp_path / "alertmanager.log",
                    )
                )

            prom_cfg = tmp_path / "prometheus.yml"
            prom_cfg.write_text(
                yaml.safe_dump(
                    {
                        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                        "rule_files": [str(REPO / "exporters" / "rules" / "fabricd.rules.yml")],
                        "alerting": {"alertmanagers": [{"static_configs": [{"targets": [am_url.split("//")[1]]}]}]}
                        if am_url
                        else {},
                        "scrape_configs": [
                            {"job_name": "fabricd-serve", "static_configs": [{"targets": [f"127.0.0.1:{serve_port}"]}]}
                        ],
                    }
                )
            )
            procs.append(
                Proc(
                    [
                        PROMETHEUS,
                        f"--config.file={prom_cfg}",
                        f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                        f"--web.listen-address=127.0.0.1:{prom_port}",
                    ],
                    tmp_path / "prometheus.log",
                )
            )

            serve = Proc(
                [
                    *FABRICD,
                    "serve",
                    str(inv),
                    "--root",
                    f"gpu1={shm_dir}",
                    "--switch",
                    SWITCHES[0],
                    "--switch",
                    SWITCHES[1],
                    "--switch-poll-ms",
                    "500",
                    "--poll-ms",
                    "50",
                    "--detection-ms",
                    "200",
                    "--restoration-ms",
                    "200",
                    "--stuck-after-s",
                    "2",
                    "--listen",
                    f"127.0.0.1:{serve_port}",
                    "--webhook",
                    hook.url + "/fabricd",
                    "--no-verify-host-key",
                    "--drift-interval-s",
                    "3600",
                ],
                tmp_path / "serve.log",
                env={**os.environ, "FABRICD_STATE_DIR": str(tmp_path / "state")},
            )
            procs.append(serve)

            def healthy() -> bool:
                try:
                    return get(serve_url + "/healthz", 1.0)[0] == 200
                except OSError:
                    return False

            assert wait_for(healthy, 60), serve.tail()

            def target_up() -> bool:
                try:
                    return any(r["value"][1] == "1" for r in query(prom, 'up{job="fabricd-serve"}'))
                except OSError:
                    return False

            assert wait_for(target_up, 60, 0.5), procs[-2].tail()
            assert wait_for(lambda: query(prom, "fabricd_switch_up == 1"), 30, 0.5), serve.tail()
            assert query(prom, "ALERTS") == []
            from fabricd_lab.counters import WatchdogSettings

            lab.call(
                lambda: lab.switch("leaf1-sonic").counters.set_watchdog(
                    WatchdogSettings(priorities=frozenset({3}), detection_ms=200, restoration_ms=200)
                )
            )
            time.sleep(1.5)  # two switch polls: the watchdog counters' baseline

            # gpu1's receive pipeline stalls: it sends pause; leaf1 Ethernet0 is paused and pauses spine1
            t_inject = time.time()
            gen.pause("ens1f0np0", direction="tx", duration_s=None)

            def storm(sw: str, port: str, direction: str) -> None:
                lab.call(lambda: lab.switch(sw).counters.storm_start(port, 3, direction=direction))

            storm("leaf1-sonic", "Ethernet0", "rx")
            storm("leaf1-sonic", "Ethernet48", "tx")
            storm("spine1", "Ethernet0", "rx")

            def firing() -> list[dict[str, Any]]:
                _code, body = get(prom + "/api/v1/alerts")
                return [
                    a
                    for a in json.loads(body)["data"]["alerts"]
                    if a["labels"]["alertname"] == "FabricPfcStormActive"
                    and a["state"] == "firing"
                    and a["labels"].get("device") == "gpu1"
                ]

            alerts = wait_for(firing, ALERT_BOUND_S + 2, 0.2)
            fired_after = time.time() - t_inject
            assert alerts, f"FabricPfcStormActive did not fire\n{serve.tail()}"
            print(f"FabricPfcStormActive firing {fired_after:.2f} s after the injection (bound {ALERT_BOUND_S} s)")
            assert fired_after <= ALERT_BOUND_S, fired_after
            assert alerts[0]["labels"]["interface"] == "ens1f0np0" and alerts[0]["labels"]["direction"] == "tx"

            # root cause: every storm leads back to gpu1's port
            def traced() -> dict[str, Any] | None:
                st = json.loads(get(serve_url + "/status")[1])
                keys = {(a["device"], a["interface"], a["direction"]) for a in st["active_storms"]}
                want = {("gpu1", "ens1f0np0", "tx"), ("leaf1-sonic", "Ethernet0", "rx"), ("spine1", "Ethernet0", "rx")}
                return st if want <= keys else None

            status = wait_for(traced, 10, 0.2)
            assert status, json.loads(get(serve_url + "/status")[1])
            assert [(o["device"], o["interface"], o["kind"]) for o in status["origins"]] == [
                ("gpu1", "ens1f0np0", "stalled_receiver")
            ]
            events = json.loads(get(serve_url + f"/events?since={t_inject - 1}")[1])
            switch_storms = [e for e in events if e["event"] == "storm_detected" and e["scope"] == "switch"]
            assert switch_storms and all(e["origin"] == "gpu1:ens1f0np0" for e in switch_storms), events
            spine = next(e for e in switch_storms if e["device"] == "spine1")
            assert spine["origin_path"] == [
                "spine1:Ethernet0",
                "leaf1-sonic:Ethernet48",
                "leaf1-sonic:Ethernet0",
                "gpu1:ens1f0np0",
            ]
            assert wait_for(
                lambda: query(
                    prom,
                    'fabricd_pfc_storm_origin_info{device="gpu1",interface="ens1f0np0",kind="stalled_receiver"} == 1',
                ),
                5,
                0.5,
            )

            # the webhook: fabricd's own notification, and Alertmanager's when it is installed
            direct = wait_for(
                lambda: [a for a in hook.alerts() if a["labels"].get("device") == "gpu1" and a["status"] == "firing"], 5
            )
            assert direct and "/fabricd" in hook.paths
            if am_url is not None:
                via_am = wait_for(
                    lambda: [
                        b
                        for b, p in zip(hook.bodies, hook.paths, strict=True)
                        if p == "/am" and any(a["labels"]["alertname"] == "FabricPfcStormActive" for a in b["alerts"])
                    ],
                    15,
                    0.5,
                )
                assert via_am, procs[0].tail()

            # leaf1's watchdog detected the storm and cannot restore it while it lasts: stuck after 2 s
            def stuck() -> list[dict[str, Any]]:
                evs = json.loads(get(serve_url + f"/events?since={t_inject - 1}")[1])
                return [e for e in evs if e["event"] == "watchdog_stuck"]

            stuck_events = wait_for(stuck, 10, 0.3)
            assert stuck_events, serve.tail()
            assert (stuck_events[0]["device"], stuck_events[0]["interface"], stuck_events[0]["priority"]) == (
                "leaf1-sonic",
                "Ethernet0",
                3,
            )
            assert stuck_events[0]["detected"] > stuck_events[0]["restored"]

            # drops on a lossless queue
            t_drop = time.time()
            lab.call(lambda: lab.switch("leaf1-sonic").counters.drop("Ethernet8", 3, 50))

            def dropped() -> list[dict[str, Any]]:
                evs = json.loads(get(serve_url + f"/events?since={t_drop - 0.1}")[1])
                return [e for e in evs if e["event"] == "lossless_drop" and e["device"] == "leaf1-sonic"]

            drops = wait_for(dropped, 5, 0.2)
            assert drops and drops[0]["interface"] == "Ethernet8" and drops[0]["count"] == 50, serve.tail()
            assert drops[0]["priority"] == 3 and drops[0]["reason"] == "queue_drop"

            for sw, port in (("leaf1-sonic", "Ethernet0"), ("leaf1-sonic", "Ethernet48"), ("spine1", "Ethernet0")):
                lab.call(lambda sw=sw, port=port: lab.switch(sw).counters.storm_stop(port, 3))
            assert serve.stop() == 0, serve.tail()
    finally:
        for p in reversed(procs):
            p.stop()
        gen.close()
        hook.close()
