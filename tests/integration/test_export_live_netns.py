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
        subprocess.run(["ip", "-n", name, "link", "add", "fdtv0", "type", "veth", "peer", "name", "fdtv1",
                        "netns", peer], check=True)
        subprocess.run(["ip", "-n", name, "link", "set", "fdtv0", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)
        subprocess.run(["ip", "netns", "del", peer], check=False)


def test_live_ethtool_source_in_netns(netns: str) -> None:
    code = (
        "from fabricd.collectors.ethtool_live import LiveEthtoolSource\n"
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
    res = subprocess.run(["ip", "netns", "exec", netns, sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=False)
    assert res.returncode == 0 and "ok" in res.stdout, res.stderr


def test_export_host_once_live_in_netns(netns: str) -> None:
    res = subprocess.run(["ip", "netns", "exec", netns, FABRICD, "export", "host", "--once", "--include-virtual",
                          "--include", "^fdtv"], capture_output=True, text=True, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    assert 'fabricd_nic_info{interface="fdtv0",driver="veth",firmware="",version="1.0"} 1' in res.stdout
    assert 'fabricd_scrape_collector_success{collector="nic"} 1' in res.stdout
