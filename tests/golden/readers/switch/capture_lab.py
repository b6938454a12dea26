"""Regenerate the ``lab-*.txt`` captures: the show outputs fabricd's own switch simulators (lab/fabricd_lab)
print for the commands the switch exporter runs, after a fixed traffic/pause/drop/ECN/watchdog scenario.

These formats have no public capture (JSON forms of EOS/NX-OS/NVUE, NX-OS ``show queuing``/``pfc-queue``, SONiC PFC
history): the simulators write them from the vendors' documented field names, and the parsers must read exactly
what the lab speaks. Run from the repo root: ``python tests/golden/readers/switch/capture_lab.py``.
"""

from __future__ import annotations

from pathlib import Path

from fabricd.collectors.switch import SwitchTarget, commands_for
from fabricd.inventory import load_inventory
from fabricd_lab.counters import WatchdogSettings
from fabricd_lab.runtime import spec_for, switch_class

REPO = Path(__file__).resolve().parents[4]
HERE = Path(__file__).parent
CLOCK = [1000.0]
SHAPES = {
    "sonic": "shape of the real sonic-utilities outputs beside it (*-sonic-utilities-test.txt, issue captures)",
}
"""Per platform, where the simulator's output shape comes from (the default: documented field names only)."""
REFERENCE_FORMS = {
    "cisco_nxos": {
        "pfc-json": "show interface priority-flow-control | json",
        "queuing-json": "show queuing interface | json",
    },
}
"""Per platform, the other output forms of polled commands that a reference role parses (lab-<role>.txt too)."""


def clock() -> float:
    return CLOCK[0]


def main() -> None:
    fabric = load_inventory(REPO / "inventory" / "lab").fabric
    for switch in fabric.switches:
        if not switch.name.startswith("leaf"):
            continue
        sim = switch_class(switch.platform)(spec_for(switch, password="x", port=0), clock=clock)
        ports = [p.name for p in switch.ports][:2]
        sim.counters.set_watchdog(
            WatchdogSettings(priorities=frozenset({3}), detection_ms=200, restoration_ms=200, action="drop")
        )
        sim.counters.traffic(ports[0], 3, 120_000, 4096)
        sim.counters.traffic(ports[0], 0, 5_000, 1500)
        sim.counters.ecn_mark(ports[0], 3, 1_700, 4096)
        sim.counters.drop(ports[1], 0, 42, 1500)
        sim.counters.pause(ports[0], 3, 900, direction="rx")
        sim.counters.pause(ports[1], 3, 15, direction="tx")
        sim.counters.storm_start(ports[1], 3)
        sim.counters.buffer(ports[0], 3, shared=2_092_800, headroom=98_304, queue=2_097_408)
        CLOCK[0] += 1.0
        shell = sim.open_shell()
        for setup in ("terminal length 0", "enable"):
            if switch.platform.value in ("arista_eos", "cisco_nxos"):
                shell.handle(setup)
        target = SwitchTarget(switch.name, switch.platform.value, tuple(ports[:1]))
        runs = [
            (role, command)
            for optional in (False, True)
            for role, command, _ in commands_for(target, optional=optional)
        ]
        for role, command in [*runs, *REFERENCE_FORMS.get(switch.platform.value, {}).items()]:
            reply = shell.handle(command)
            if "% Invalid" in reply.output or "Error:" in reply.output:
                print(switch.platform.value, command, "not supported by the simulator")
                continue
            name = f"lab-{role}.txt"
            shape = SHAPES.get(
                switch.platform.value, "format from the vendor's documented field names (no public capture)"
            )
            (HERE / switch.platform.value / name).write_text(
                f"# source: fabricd lab simulator lab/fabricd_lab/{switch.platform.value.split('_')[-1]}.py "
                f"(this repository), `{command}` on {switch.name} after capture_lab.py's scenario; {shape}\n"
                + reply.output.rstrip("\n")
                + "\n"
            )
            print(switch.platform.value, name, len(reply.output))


if __name__ == "__main__":
    main()
