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

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from switchalerts import REPO, Watched, faulty_lab, needs_prometheus, wait_for

pytestmark = pytest.mark.integration


CASES = {
    "arista_eos": ("leaf2-eos", "Ethernet1", "Ethernet2", 1.0),
    "sonic": ("leaf1-sonic", "Ethernet0", "Ethernet8", 0.0),
    "cumulus_nvue": ("spine2", "swp1", "swp2", 1.0),
}
"""Platform -> (switch, flapping port, steady port, the steady port's value)."""


@pytest.fixture(params=sorted(CASES))
def flapping_lab(
    request: pytest.FixtureRequest, tmp_path: Path, reserve_port: Callable[[], int]
) -> Iterator[tuple[Path, dict[str, str], str]]:
    switch, port, _, _ = CASES[request.param]
    with faulty_lab(tmp_path, f"{switch}:flap={port}", reserve_port) as (inv, env):
        yield inv, env, request.param


@needs_prometheus
def test_flapping_switch_port_fires_link_flapping(
    flapping_lab: tuple[Path, dict[str, str], str], tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    inv, env, platform = flapping_lab
    switch, port, steady_port, steady_value = CASES[platform]
    prom = Watched(inv, env, switch, REPO / "exporters" / "rules" / "fabricd.rules.yml", tmp_path, reserve=reserve_port)
    try:
        series = wait_for(lambda: prom.query(f'fabricd_switch_carrier_transitions_total{{switch="{switch}"}}'), 60)
        assert series, prom.tails()
        assert {s["metric"]["interface"] for s in series} >= {port, steady_port}
        alerts = wait_for(lambda: prom.firing("FabricLinkFlapping"), 90)
        assert alerts, prom.exporter.tail()
        assert [(a["labels"]["switch"], a["labels"]["interface"]) for a in alerts] == [(switch, port)]
        assert float(alerts[0]["value"]) >= 4
        steady = prom.query(f'fabricd_switch_carrier_transitions_total{{switch="{switch}",interface="{steady_port}"}}')
        assert float(steady[0]["value"][1]) == steady_value
    finally:
        prom.stop()
