"""``fabricd export switches --once`` end to end, as a user runs it: ``fabricd lab up`` on a copy of inventory/lab
(ephemeral ports and a private state dir, so parallel runs never collide), ``fabricd lab drive`` to put pause, ECN
and a storm into the simulators, then the exporter resolves credentials and host keys from the lab's state and polls
every switch over SSH."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from switchalerts import faulty_lab

pytestmark = pytest.mark.integration
FABRICD = str(Path(sys.executable).parent / "fabricd")


def run(*args: str, env: dict[str, str], timeout: int = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([FABRICD, *args], capture_output=True, text=True, timeout=timeout, env=env, check=False)


@pytest.fixture
def switch_lab(tmp_path: Path, reserve_port: Callable[[], int]) -> Iterator[tuple[Path, dict[str, str]]]:
    with faulty_lab(tmp_path, None, reserve_port) as lab:  # its ports held until the test ends
        yield lab


def test_export_switches_once_against_the_lab(switch_lab: tuple[Path, dict[str, str]]) -> None:
    """Guaranteed under load: the lab's twelve ports are held by this process until its daemon listens on them
    (the ``reserve_port`` fixture), so no other process can take one between the pick and the bind."""
    inv, env = switch_lab
    for args in (
        ("leaf1-sonic", "pause", "--port", "Ethernet0", "--packets", "1234"),
        ("leaf2-eos", "ecn", "--port", "Ethernet1", "--packets", "321"),
        ("leaf3-nxos", "drop", "--port", "Ethernet1/1", "--priority", "0", "--packets", "9"),
        ("leaf4-nvue", "storm-start", "--port", "swp1"),
    ):
        res = run("lab", "drive", *args, env=env)
        assert res.returncode == 0, res.stderr
    res = run("export", "switches", str(inv), "--once", env=env)
    assert res.returncode == 0, res.stderr
    text = res.stdout
    assert "Traceback" not in res.stderr
    for name in ("spine1", "spine2", "leaf1-sonic", "leaf2-eos", "leaf3-nxos", "leaf4-nvue"):
        assert f'fabricd_switch_up{{switch="{name}"}} 1' in text
    assert (
        'fabricd_switch_pfc_pause_frames_total{switch="leaf1-sonic",interface="Ethernet0",priority="3",'
        'direction="rx"} 1234'
    ) in text
    assert 'fabricd_switch_queue_ecn_marked_packets_total{switch="leaf2-eos",interface="Ethernet1",queue="3"' in text
    assert re.search(
        r'fabricd_switch_queue_dropped_packets_total\{switch="leaf3-nxos",interface="Ethernet1/1",'
        r'queue="0",type="unicast"\} 9\b',
        text,
    )
    assert re.search(
        r'fabricd_switch_pfc_pause_duration_seconds_total\{switch="leaf4-nvue",interface="swp1",'
        r'priority="3",direction="rx"\} [0-9.e-]+',
        text,
    )
    assert 'fabricd_scrape_collector_success{collector="switch"} 1' in text
