"""Terminal handling of the simulators over a raw SSH shell (paramiko): paging until ``terminal length 0``, echo
wrapping until ``terminal width``, and the pty size from the SSH request, as on the real devices."""

from __future__ import annotations

import time

import paramiko
import pytest

from fabricd.model import Platform
from fabricd_lab.device import DeviceSpec
from fabricd_lab.runtime import LabThread

pytestmark = pytest.mark.integration


def _read_until(chan: paramiko.Channel, marker: str, timeout: float = 5.0) -> str:
    buf = ""
    deadline = time.monotonic() + timeout
    while marker not in buf and time.monotonic() < deadline:
        if chan.recv_ready():
            buf += chan.recv(65536).decode()
        else:
            time.sleep(0.01)
    assert marker in buf, f"{marker!r} not seen in {buf[-300:]!r}"
    return buf


def test_paging_and_width_on_eos() -> None:
    ports = tuple((f"Ethernet{i}", 400_000_000_000) for i in range(1, 33))
    spec = DeviceSpec("pager", Platform.ARISTA_EOS, password="pw", ports=ports)
    with LabThread([spec]) as lab:
        client = paramiko.SSHClient()
        client.set_missing_host_key_policy(paramiko.AutoAddPolicy())  # a throwaway test client, no fabricd code
        client.connect("127.0.0.1", lab.endpoint("pager").port, "admin", "pw", allow_agent=False, look_for_keys=False)
        chan = client.invoke_shell(width=40, height=24)
        _read_until(chan, "pager#")
        chan.send("show running-config\n")
        first = _read_until(chan, " --More-- ")
        assert first.count("\n") <= 25
        chan.send(" ")
        _read_until(chan, " --More-- ")
        chan.send("q")
        _read_until(chan, "pager#")
        chan.send("terminal length 0\n")
        _read_until(chan, "Pagination disabled.")
        chan.send("show running-config\n")
        full = _read_until(chan, "\r\nend\r\npager#")
        assert "--More--" not in full and "interface Ethernet32" in full
        long = "show running-config section interface Ethernet1"
        chan.send(long + "\n")
        wrapped = _read_until(chan, "pager#")
        assert long not in wrapped, "a 40-column terminal wraps the echo"
        chan.send("terminal width 511\n")
        _read_until(chan, "Width set to 511 columns.")
        chan.send(long + "\n")
        assert long in _read_until(chan, "pager#")
        client.close()
