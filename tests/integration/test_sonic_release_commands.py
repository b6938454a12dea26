"""The SONiC exporter on a release without `show queue wredcounters` (sonic-utilities added wredstat in 2025-02) or
`show pfc counters --history` (2025-08): the lab SONiC simulator over real SSH, the real SonicDriver.

On such a release click answers ``Usage: show [OPTIONS] COMMAND ... Error: No such command "..."``. The driver must
raise on that reply (never hand an error message to a parser as counters) so that the poller records the optional
command as unsupported and the switch stays up with the counters it has. The simulator knows both commands, so the
old release is played by a runner that sends the old release's unknown command in their place: the simulator then
answers with its own click error, which is what the driver sees on the real old release.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest
from metrics_text import metric_value

from fabricd.collectors.core import Registry
from fabricd.collectors.switch import SwitchCollector, SwitchPoller, SwitchTarget
from fabricd.errors import DriverError
from fabricd.inventory import load_inventory

runtime = pytest.importorskip("fabricd_lab.runtime", reason="the switch lab (lab/fabricd_lab) is not in this checkout")
registry_mod = pytest.importorskip("fabricd.platforms.registry", reason="the platform drivers are not here")

from fabricd.platforms.access import Access  # noqa: E402
from fabricd.platforms.base import DriverOptions  # noqa: E402
from fabricd.platforms.secrets import Secret  # noqa: E402
from fabricd_lab.counters import WatchdogSettings  # noqa: E402

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
NAME = "leaf1-sonic"
MISSING = {"show queue wredcounters": "show queue wredcounterz", "show pfc counters --history": "show pfc counterz"}
"""Each command an older release lacks -> a command the simulator lacks too (it answers with click's error)."""


class OlderRelease:
    """A SonicDriver session that runs everything but the commands an older release lacks as they are."""

    def __init__(self, driver: object) -> None:
        self.driver = driver
        self.sent: list[str] = []

    def run(self, commands: list[str]) -> dict[str, str]:
        out = {}
        for command in commands:
            self.sent.append(command)
            sent = MISSING.get(command, command)
            out[command] = self.driver.run([sent])[sent]  # type: ignore[attr-defined]
        return out

    def close(self) -> None:
        self.driver.close()  # type: ignore[attr-defined]


def test_sonic_release_without_wredcounters_and_history(tmp_path: Path) -> None:
    fabric = load_inventory(REPO / "inventory" / "lab").fabric
    sw = fabric.switch(NAME)
    assert sw is not None
    password = secrets.token_urlsafe(12)
    with runtime.LabThread([runtime.spec_for(sw, password=password, port=0)]) as lab:
        known_hosts = tmp_path / "known_hosts"
        known_hosts.write_text(lab.known_hosts())
        port = lab.switch(NAME).port_names[0]

        def drive() -> None:
            sim = lab.switch(NAME)
            sim.counters.set_watchdog(WatchdogSettings(priorities=frozenset({3})))
            sim.counters.pause(port, 3, 900, direction="rx")
            sim.counters.traffic(port, 3, 1000, 4096)

        lab.call(drive)
        ep = lab.endpoint(NAME)
        runners: list[OlderRelease] = []

        def connect() -> object:
            access = Access(NAME, ep.host, ep.port, sw.credentials.username, Secret(password), (known_hosts,))
            driver = registry_mod.make_driver(
                sw.model_copy(update={"mgmt": sw.mgmt.model_copy(update={"port": ep.port})}),
                access,
                DriverOptions(read_timeout_s=20.0, conn_timeout_s=10.0),
            )
            driver.open()
            return driver

        driver = connect()
        try:
            with pytest.raises(DriverError, match='No such command "queue"'):
                driver.run(["show queue wredcounterz"])  # type: ignore[attr-defined]
            assert "Port Rx" in driver.run(["show pfc counters"])["show pfc counters"]  # type: ignore[attr-defined]
        finally:
            driver.close()  # type: ignore[attr-defined]

        def factory(target: SwitchTarget) -> OlderRelease:
            runners.append(OlderRelease(connect()))
            return runners[-1]

        poller = SwitchPoller([SwitchTarget(NAME, "sonic", (port,))], factory, concurrency=1, timeout_s=120)
        try:
            reg = Registry([SwitchCollector(poller)])
            first = reg.exposition()
            second = reg.exposition()
        finally:
            poller.close()
    for text in (first, second):
        assert metric_value(text, f'fabricd_switch_up{{switch="{NAME}"}}') == 1, text[:1500]
        assert metric_value(text, 'fabricd_scrape_collector_success{collector="switch"}') == 1
        assert (
            metric_value(
                text,
                f'fabricd_switch_pfc_pause_frames_total{{switch="{NAME}",interface="{port}",'
                'priority="3",direction="rx"}',
            )
            == 900
        )
        assert "fabricd_switch_queue_ecn_marked_packets_total{" not in text  # wredcounters: not on this release
    # the unsupported optional commands were tried once, then left out of later polls
    sent = [c for r in runners for c in r.sent]
    assert sent.count("show queue wredcounters") == 1 and sent.count("show pfc counters --history") == 1
