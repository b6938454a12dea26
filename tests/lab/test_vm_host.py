"""fabricd's host side inside a Soft-RoCE VM, a kernel that has what this host's lacks (8021q, rdma_rxe):
the netlink host backend creates an RDMA VLAN for real, ``fabricd audit host`` audits a VM endpoint, and the
``fabricd lab vm`` CLI reports and executes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.vm, pytest.mark.timeout(1800)]  # the first test also builds and boots

REPO = Path(__file__).resolve().parents[2]


def fabricd(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    code = "import sys; from fabricd.cli.main import main; sys.argv[0] = 'fabricd'; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def test_lab_vm_status_and_exec(lab_vm: Any) -> None:
    st = fabricd("lab", "vm", "status", "--name", lab_vm.name, "--output", "json")
    assert st.returncode == 0, st.stderr
    data = json.loads(st.stdout)
    assert data["state"] == "running" and data["accel"] in ("tcg", "kvm") and data["accel_reason"]
    assert [(e["host"], e["rdma_port_state"]) for e in data["endpoints"]] == [
        ("rxe-a", "4: ACTIVE"),
        ("rxe-b", "4: ACTIVE"),
    ]
    r = fabricd(
        "lab",
        "vm",
        "exec",
        "rxe-b",
        "--name",
        lab_vm.name,
        "--",
        "sh",
        "-c",
        "cat /sys/class/infiniband/rxe0/ports/1/link_layer; exit 7",
    )
    assert r.returncode == 7 and r.stdout.strip() == "Ethernet"


def test_netlink_backend_creates_an_rdma_vlan_in_the_vm(lab_vm: Any) -> None:
    """`fabricd host apply` (pyroute2 netlink backend) on rxe-a with VLAN 300: the 802.1Q netdev appears with the
    MTU and address of the intent, and rxe adds a RoCE v2 GID for the new address."""
    inv = (REPO / "inventory" / "examples" / "softroce.yml").read_text()
    inv = inv.replace("ip: 198.18.100.1/24, vlan: 100,", "ip: 198.18.30.1/24, vlan: 300,")
    inv = inv.replace(
        "members: ['leaf1:Ethernet0', 'leaf1:Ethernet8']}",
        "members: ['leaf1:Ethernet8']}\n    - {id: 300, name: rdma300, subnet: 198.18.30.0/24, "
        "members: ['leaf1:Ethernet0']}",
    )
    path = lab_vm.share("vlan300.yml", inv)
    agent = lab_vm.agent("a")
    try:
        r = agent.run(
            [
                "fabricd",
                "host",
                "apply",
                path,
                "--host",
                "rxe-a",
                "--skip",
                "dcb,sysfs,pause",
                "--yes",
                "--output",
                "json",
            ],
            timeout_s=300,
        )
        assert r.rc == 0, r.stderr
        link = agent.run(["ip", "-d", "-j", "link", "show", "eth0.300"], timeout_s=30)
        (info,) = json.loads(link.stdout)
        assert info["linkinfo"]["info_kind"] == "vlan" and info["linkinfo"]["info_data"]["id"] == 300
        assert info["mtu"] == 9000 and "UP" in info["flags"]
        addr = agent.run(["ip", "-j", "addr", "show", "eth0.300"], timeout_s=30)
        assert "198.18.30.1" in addr.stdout
        gid = agent.run(
            ["sh", "-c", "grep -l 0000:0000:0000:0000:0000:ffff:c612:1e01 /sys/class/infiniband/rxe0/ports/1/gids/*"],
            timeout_s=30,
        )
        assert gid.ok and gid.stdout.strip(), "rxe has no RoCE v2 GID for the new VLAN address"
    finally:
        agent.run(["ip", "link", "del", "eth0.300"], timeout_s=30)


def test_audit_host_on_a_vm_endpoint(lab_vm: Any) -> None:
    """The link-level intent holds on rxe-a; what virtio-net and rxe cannot do (DCB, mlx5 ECN knobs) is skipped with
    the reason from the rxe NIC profile (issue 17: the family is known not to have it), not a crash."""
    path = lab_vm.share("softroce.yml", (REPO / "inventory" / "examples" / "softroce.yml").read_text())
    r = lab_vm.agent("a").run(["fabricd", "audit", "host", path, "--host", "rxe-a", "--output", "json"], timeout_s=300)
    assert r.rc in (0, 1), r.stderr
    (report,) = json.loads(r.stdout) if r.stdout.lstrip().startswith("[") else [json.loads(r.stdout)]
    status = {c["code"]: c["status"] for c in report["checks"]}
    assert r.rc == (1 if "fail" in status.values() else 0), (r.rc, status)
    for code in ("HOST-NIC", "HOST-LINK", "HOST-MTU", "HOST-VLAN", "HOST-ADDR", "HOST-GID"):
        assert status[code] == "pass", (code, report)
    pfc = next(c for c in report["checks"] if c["code"] == "HOST-PFC")
    assert pfc["status"] == "skip" and "no DCB on this NIC family" in json.dumps(pfc), pfc
