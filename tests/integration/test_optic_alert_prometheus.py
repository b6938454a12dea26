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

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from switchalerts import REPO, Watched, faulty_lab, needs_prometheus, wait_for

pytestmark = pytest.mark.integration


CASES = {"sonic": ("leaf1-sonic", "Ethernet0", "Ethernet8"), "cumulus_nvue": ("spine2", "swp1", "swp2")}
"""Platform -> (switch, degrading port, healthy port)."""


@pytest.fixture(params=sorted(CASES))
def degraded_lab(
    request: pytest.FixtureRequest, tmp_path: Path, reserve_port: Callable[[], int]
) -> Iterator[tuple[Path, dict[str, str], str]]:
    switch, port, _ = CASES[request.param]
    with faulty_lab(tmp_path, f"{switch}:degrade-optic={port}", reserve_port) as (inv, env):
        yield inv, env, request.param


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


@needs_prometheus
def test_degrading_optic_fires_rx_power_low(
    degraded_lab: tuple[Path, dict[str, str], str], tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    inv, env, platform = degraded_lab
    switch, port, healthy_port = CASES[platform]
    prom = Watched(inv, env, switch, rules_with_short_for(tmp_path), tmp_path, reserve=reserve_port)
    try:
        series = wait_for(lambda: prom.query(f'fabricd_switch_optic_rx_power_dbm{{switch="{switch}"}}'), 60)
        assert series, prom.tails()
        assert {s["metric"]["interface"] for s in series} >= {port, healthy_port}
        alerts = wait_for(lambda: prom.firing("FabricOpticRxPowerLow"), 90)
        assert alerts, prom.exporter.tail()
        assert [(a["labels"]["switch"], a["labels"]["interface"]) for a in alerts] == [(switch, port)]
        assert float(alerts[0]["value"]) < -10
        healthy = prom.query(
            f'fabricd_switch_optic_rx_power_dbm{{switch="{switch}",interface="{healthy_port}",lane="1"}}'
        )
        assert float(healthy[0]["value"][1]) == -2.0
        ber = prom.query(f'fabricd_switch_pre_fec_ber{{switch="{switch}",interface="{port}"}}')
        assert float(ber[0]["value"][1]) > 1e-5  # the BER rises with the loss
    finally:
        prom.stop()
