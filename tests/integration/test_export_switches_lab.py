"""The switch exporter against all four lab simulators (SONiC, EOS, NX-OS, NVUE) over real SSH: the platform
drivers (netmiko -> asyncssh, host keys verified) run the exporter's show commands on sessions kept open between
scrapes, and counters driven into the simulators' counter model come out as the right metrics."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
from metrics_text import metric_value

from fabricd.collectors.core import Registry
from fabricd.collectors.switch import SwitchCollector, SwitchPoller, SwitchTarget
from fabricd.inventory import load_inventory

runtime = pytest.importorskip("fabricd_lab.runtime", reason="the switch lab (lab/fabricd_lab) is not in this checkout")
registry_mod = pytest.importorskip("fabricd.platforms.registry", reason="the platform drivers are not here")

from fabricd.platforms.access import Access  # noqa: E402
from fabricd.platforms.base import DriverOptions  # noqa: E402
from fabricd.platforms.secrets import Secret  # noqa: E402
from fabricd_lab.counters import WatchdogSettings  # noqa: E402

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
LEAVES = ("leaf1-sonic", "leaf2-eos", "leaf3-nxos", "leaf4-nvue")


def test_scrape_all_four_simulators(tmp_path: Path) -> None:
    fabric = load_inventory(REPO / "inventory" / "lab").fabric
    password = secrets.token_urlsafe(12)
    switches = {n: fabric.switch(n) for n in LEAVES}
    specs = [runtime.spec_for(sw, password=password, port=0) for sw in switches.values() if sw is not None]
    with runtime.LabThread(specs) as lab:
        known_hosts = tmp_path / "known_hosts"
        known_hosts.write_text(lab.known_hosts())
        first_port = {}
        for name in LEAVES:
            sim = lab.switch(name)
            port = sim.port_names[0]
            first_port[name] = port

            def drive(sim=sim, port=port) -> None:  # type: ignore[no-untyped-def]
                sim.counters.set_watchdog(WatchdogSettings(priorities=frozenset({3})))
                sim.counters.pause(port, 3, 900, direction="rx")
                sim.counters.traffic(port, 3, 1000, 4096)
                sim.counters.ecn_mark(port, 3, 77, 4096)
                sim.counters.drop(port, 0, 5, 1500)
                sim.counters.buffer(port, 3, shared=2_092_800, headroom=75_000, queue=2_097_408)

            lab.call(drive)

        def factory(target: SwitchTarget):  # type: ignore[no-untyped-def]
            sw = switches[target.name]
            assert sw is not None
            ep = lab.endpoint(target.name)
            access = Access(target.name, ep.host, ep.port, sw.credentials.username, Secret(password), (known_hosts,))
            driver = registry_mod.make_driver(
                sw.model_copy(update={"mgmt": sw.mgmt.model_copy(update={"port": ep.port})}),
                access,
                DriverOptions(read_timeout_s=20.0, conn_timeout_s=10.0),
            )
            driver.open()
            return driver

        targets = [
            SwitchTarget(
                n,
                switches[n].platform.value,
                (first_port[n],),  # type: ignore[union-attr]
                ((first_port[n], 3, 79_872),),
            )
            for n in LEAVES
        ]
        poller = SwitchPoller(targets, factory, concurrency=4, timeout_s=120)
        try:
            reg = Registry([SwitchCollector(poller)])
            text = reg.exposition()
            second = reg.exposition()
        finally:
            poller.close()
        for name in LEAVES:
            assert metric_value(text, f'fabricd_switch_up{{switch="{name}"}}') == 1, text[:2000]
            port = first_port[name]
            per_prio = metric_value(
                text,
                f'fabricd_switch_pfc_pause_frames_total{{switch="{name}",interface="{port}",'
                'priority="3",direction="rx"}',
            )
            assert per_prio == 900, name
            marked = metric_value(
                text,
                f'fabricd_switch_queue_ecn_marked_packets_total{{switch="{name}",'
                f'interface="{port}",queue="3",type="unicast"}}',
            )
            on_port = metric_value(
                text,
                f'fabricd_switch_interface_ecn_marked_packets_total{{switch="{name}",'
                f'interface="{port}",direction="tx"}}',
            )
            assert 77 in (marked, on_port), name
            assert metric_value(second, f'fabricd_switch_up{{switch="{name}"}}') == 1
            assert lab.call(lambda n=name: lab.switch(n).sessions) == 1, f"{name}: the session was not kept open"
        assert metric_value(text, 'fabricd_scrape_collector_success{collector="switch"}') == 1
        sonic_dropped = metric_value(
            text,
            'fabricd_switch_queue_dropped_packets_total{switch="leaf1-sonic",'
            f'interface="{first_port["leaf1-sonic"]}",queue="0",type="unicast"}}',
        )
        assert sonic_dropped == 5
        # buffer watermarks (SONiC watermarkstat over SSH) beside the intended headroom of the lossless PG
        sonic_port = first_port["leaf1-sonic"]
        on_sonic = f'switch="leaf1-sonic",interface="{sonic_port}"'
        assert (
            metric_value(text, f'fabricd_switch_pg_watermark_bytes{{{on_sonic},priority_group="3",kind="headroom"}}')
            == 75_000
        )
        assert (
            metric_value(text, f'fabricd_switch_queue_watermark_bytes{{{on_sonic},queue="3",type="unicast"}}')
            == 2_097_408
        )
        assert metric_value(text, f'fabricd_switch_pg_headroom_size_bytes{{{on_sonic},priority_group="3"}}') == 79_872
        # EOS per-port discards (show interfaces counters discards | json)
        eos_port = first_port["leaf2-eos"]
        assert (
            metric_value(
                text,
                f'fabricd_switch_interface_discards_total{{switch="leaf2-eos",interface="{eos_port}",'
                'direction="tx",reason=""}',
            )
            == 5
        )
