"""NX-OS PFC watchdog end to end without a network: the rendered lines, what the running-config parser reads back
from them, the inverse timers the audit compares with, and what fabricd's NX-OS simulator does with them."""

from __future__ import annotations

from fabricd.audit.switch import intended_timers
from fabricd.model import Platform, Watchdog, WatchdogAction
from fabricd.nos.cisco_nxos import show as cisco_nxos
from fabricd.nos.cisco_nxos.intent import NxosSwitchIntent
from fabricd.nos.cisco_nxos.running import parse_running_config
from fabricd.nos.cisco_nxos.watchdog import nxos_watchdog
from fabricd_lab.device import DeviceSpec
from fabricd_lab.nxos import NxosSwitch

CONFIG = """\
policy-map type network-qos NQ
  class type network-qos c-8q-nq3
    mtu 9216
    pause pfc-cos 3
system qos
  service-policy type network-qos NQ
priority-flow-control watch-dog-interval on
priority-flow-control watch-dog interval 300
priority-flow-control fixed-restore multiplier 10
interface Ethernet1/1
  mtu 9216
  priority-flow-control mode on
  priority-flow-control watch-dog-interval on
  priority-flow-control watch-dog interface-multiplier 2
  priority-flow-control watch-dog disable-action
"""


def _ignore(field: str, intended: str, rendered: str, reason: str) -> None:
    raise AssertionError(f"unexpected render warning {field}: {reason}")


def test_running_config_timers_are_polls_of_the_configured_interval() -> None:
    port = parse_running_config(CONFIG).ports["Ethernet1/1"]
    assert port.watchdog_priorities == frozenset({3})
    assert (port.detection_ms, port.restoration_ms) == (600, 3000)


def test_inverse_timers_follow_the_poll() -> None:
    wd = nxos_watchdog(
        Watchdog(detection_ms=600, restoration_ms=3000, poll_ms=300, action=WatchdogAction.ALERT), _ignore
    )
    intent = NxosSwitchIntent.model_construct(watchdog=wd)
    assert intended_timers(intent) == (600, 3000)


def test_lab_reads_interval_multiplier_and_disable_action() -> None:
    """disable-action (DME disableAction: syslog only) makes the simulated watchdog alert-only: a storm is detected
    but the queue keeps forwarding."""
    sw = NxosSwitch(DeviceSpec("sw1", Platform.CISCO_NXOS, password="x", ports=(("Ethernet1/1", 400_000_000_000),)))
    sh = sw.open_shell()
    sh.handle("configure terminal")
    for line in CONFIG.splitlines():
        reply = sh.handle(line.strip()).output
        assert "Invalid" not in reply and "Incomplete" not in reply, (line, reply)
    sh.handle("end")
    settings = sw.counters.watchdog
    assert settings is not None
    assert (settings.detection_ms, settings.restoration_ms, settings.action) == (600, 3000, "alert")
    out = sh.handle("show queuing pfc-queue interface ethernet1/1 detail").output
    assert "Disable-action                     : Yes" in out
    assert "PFC watch-dog interface-multiplier : 2" in out
    parsed = cisco_nxos.parse_show_queuing_pfc_queue(out)
    assert [(w.interface, w.queue) for w in parsed.pfcwd] == [("Ethernet1/1", 3)] and not parsed.problems
