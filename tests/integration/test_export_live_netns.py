"""The live host exporter in a real network namespace: ETHTOOL_GSTATS and GDRVINFO through pyroute2's ioctl socket on
a veth pair (the only NIC this machine can create; veth has no PFC counters, so this checks the live path and
discovery, while the replay tests check normalisation)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.netns]
FABRICD = str(Path(sys.executable).parent / "fabricd")


@pytest.fixture
def netns() -> Iterator[str]:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root and iproute2 to create a network namespace")
    name = f"fdt-exp-{os.getpid()}"
    peer = f"{name}-p"
    subprocess.run(["ip", "netns", "add", name], check=True)
    subprocess.run(["ip", "netns", "add", peer], check=True)
    try:
        subprocess.run(
            ["ip", "-n", name, "link", "add", "fdtv0", "type", "veth", "peer", "name", "fdtv1", "netns", peer],
            check=True,
        )
        subprocess.run(["ip", "-n", name, "link", "set", "fdtv0", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)
        subprocess.run(["ip", "netns", "del", peer], check=False)


def test_live_ethtool_source_in_netns(netns: str) -> None:
    code = (
        "from fabricd.sources.ethtool_live import LiveEthtoolSource\n"
        "s = LiveEthtoolSource(include_virtual=True)\n"
        "assert 'fdtv0' in s.interfaces(), s.interfaces()\n"
        "st = s.read('fdtv0')\n"
        "assert st.info.driver == 'veth', st.info\n"
        "assert 'peer_ifindex' in st.raw and not st.problems, st\n"
        "again = s.read('fdtv0')\n"
        "assert again.raw.keys() == st.raw.keys()\n"
        "assert LiveEthtoolSource().interfaces() == [], 'veth has no device link: not a NIC by default'\n"
        "gone = s.read('nosuchif')\n"
        "assert gone.problems and not gone.raw\n"
        "print('ok')\n"
    )
    res = subprocess.run(
        ["ip", "netns", "exec", netns, sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert res.returncode == 0 and "ok" in res.stdout, res.stderr


def test_export_host_once_live_in_netns(netns: str) -> None:
    res = subprocess.run(
        ["ip", "netns", "exec", netns, FABRICD, "export", "host", "--once", "--include-virtual", "--include", "^fdtv"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    assert 'fabricd_nic_info{interface="fdtv0",driver="veth",firmware="",version="1.0"} 1' in res.stdout
    assert 'fabricd_scrape_collector_success{collector="nic"} 1' in res.stdout


def test_live_counters_fast_path_matches_the_snapshot_path(netns: str) -> None:
    """The collector's fast path (names layout cached, values picked from the GSTATS array) renders what the snapshot
    path renders, and the watchdog's name lookup reads what ``read`` reads (a quiet veth: its counters do not move)."""
    code = (
        "from fabricd.collectors.core import Registry\n"
        "from fabricd.sources.ethtool_live import LiveEthtoolSource\n"
        "from fabricd.collectors.nic import NicCollector\n"
        "s = LiveEthtoolSource(include_virtual=True)\n"
        "got = s.counters('fdtv0')\n"
        "assert got is not None, 'the fast path was not taken'\n"
        "layout, values = got\n"
        "assert layout.info.driver == 'veth' and len(values) == len(layout.selection)\n"
        "again = s.counters('fdtv0')\n"
        "assert again is not None and again[0] is layout, 'the layout is rebuilt on every read'\n"
        "fast = Registry([NicCollector(s)], clock=lambda: 0.0).exposition()\n"
        "slow = Registry([NicCollector(LiveEthtoolSource(include_virtual=True), on_snapshot=lambda st: None)],\n"
        "                clock=lambda: 0.0).exposition()\n"
        "assert fast == slow, (fast, slow)\n"
        'assert \'interface="fdtv0",driver="veth"\' in fast\n'
        "mapping = s.values('fdtv0')\n"
        "assert mapping is not None and dict(mapping) == dict(s.read('fdtv0').raw), mapping\n"
        "assert mapping.get('peer_ifindex') is not None\n"
        "assert s.counters('nosuchif') is None and s.values('nosuchif') is None\n"
        "s.forget_others({'fdtv0'})\n"
        "print('ok')\n"
    )
    res = subprocess.run(
        ["ip", "netns", "exec", netns, sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert res.returncode == 0 and "ok" in res.stdout, res.stderr
