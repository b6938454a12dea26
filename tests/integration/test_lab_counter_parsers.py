"""The exporter's switch parsers (fabricd/readers/switch) read what the simulators print, over real SSH.

Each leaf gets the lab intent pushed (so its PFC watchdog comes from its running config), its counter model is
driven (RoCE traffic, pause frames, ECN marks, drops and a real-time PFC storm that the watchdog detects and
restores), then the driver runs the exporter's own command list and the parsers must find exactly those values.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from switchlab import LEAVES, switch_lab

from fabricd.deploy.pipeline import push
from fabricd.nos.arista_eos import show as arista_eos
from fabricd.nos.cisco_nxos import show as cisco_nxos
from fabricd.nos.cumulus_nvue import show as cumulus_nvue
from fabricd.nos.sonic import show as sonic
from fabricd.readers.switch.model import SwitchCounters, merge

pytestmark = pytest.mark.integration

HOST_PORT = {"leaf1-sonic": "Ethernet0", "leaf2-eos": "Ethernet1", "leaf3-nxos": "Ethernet1/1", "leaf4-nvue": "swp1"}
OTHER_PORT = {"leaf1-sonic": "Ethernet8", "leaf2-eos": "Ethernet2", "leaf3-nxos": "Ethernet1/2", "leaf4-nvue": "swp2"}
READERS = {"leaf1-sonic": sonic, "leaf2-eos": arista_eos, "leaf3-nxos": cisco_nxos, "leaf4-nvue": cumulus_nvue}


def _commands(name: str) -> dict[str, str]:
    """The exporter's commands for this platform (required and optional) that have a parser."""
    module = READERS[name]
    every = {**module.COMMANDS, **getattr(module, "OPTIONAL_COMMANDS", {})}
    return {role: cmd for role, cmd in every.items() if role in module.PARSERS}


def _parse(name: str, outputs: dict[str, str], port: str) -> SwitchCounters:
    module = READERS[name]
    parts = []
    for role, command in _commands(name).items():
        text = outputs[command.format(interface=port)]
        parser = module.PARSERS[role]
        parts.append(parser(text, port) if name == "leaf4-nvue" else parser(text))
    return merge(parts)


@pytest.mark.parametrize("name", LEAVES)
def test_exporter_parsers_read_the_simulator(tmp_path: Path, name: str) -> None:
    port, other = HOST_PORT[name], OTHER_PORT[name]
    with switch_lab(tmp_path, [name]) as lab:
        assert not push(lab.targets(), lab.candidates, lab.options, factory=lab.factory()).failed
        counters = lab.thread.switch(name).counters

        def drive() -> None:
            counters.traffic(port, 3, 1000, 4096)
            counters.traffic(port, 0, 250, 1500)
            counters.pause(port, 3, 500, direction="rx")
            counters.pause(port, 3, 40, direction="tx")
            counters.ecn_mark(port, 3, 77, 4096)
            counters.drop(other, 0, 5, 1500)
            counters.storm_start(port, 3)

        lab.thread.call(drive)
        time.sleep(0.45)  # > detection (200 ms on every platform's rendered lab config)
        lab.thread.call(lambda: counters.storm_stop(port, 3))
        time.sleep(0.45)  # > restoration
        stormed = lab.thread.call(lambda: counters.read()[port].pfc[3].rx_frames)
        assert stormed > 500 + 1000, "a full storm at 400G is ~23,800 pause frames/s"
        commands = [c.format(interface=port) for c in _commands(name).values()]
        drv = lab.driver(name)
        drv.open()
        try:
            outputs = drv.run(commands)
        finally:
            drv.close()
        snap = _parse(name, outputs, port)
        model = lab.thread.call(lambda: counters.read()[port])

        rx = {(c.interface, c.priority): c.frames for c in snap.pfc if c.direction == "rx" and c.frames is not None}
        prio3 = rx.get((port, 3), rx.get((port, None)))
        assert prio3 is not None and prio3 >= model.pfc[3].rx_frames - 50, (prio3, model.pfc[3].rx_frames)
        queues = {(q.interface, q.index): q for q in snap.queues if q.kind in ("unicast", "all")}
        q3 = queues[(port, 3)]
        assert q3.packets == 1000
        if q3.ecn_marked_packets is not None or name != "leaf4-nvue":
            assert q3.ecn_marked_packets == 77
        wd = {(w.interface, w.queue): w for w in snap.pfcwd}
        assert wd[(port, 3)].detected == 1, wd
        if wd[(port, 3)].restored is not None:
            assert wd[(port, 3)].restored == 1
        assert wd[(port, 3)].status == "operational"
