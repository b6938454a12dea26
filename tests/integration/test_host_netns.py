"""`fabricd host apply` and `fabricd audit host` on a real network namespace with a veth pair (pyroute2 netlink),
plus the fake mlx5 sysfs/configfs tree for the sysfs backend. Needs root; names start with fdt-host-."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from fabricd import settings
from fabricd.intent.host import host_intent
from fabricd.inventory import load_inventory
from fabricd_lab.fake_host import build_fake_host, fake_nics_for

pytestmark = [pytest.mark.integration, pytest.mark.netns]

FABRICD = [str(Path(sys.executable).with_name("fabricd"))]


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


@dataclass
class Bed:
    ns: str
    peer_ns: str
    root: Path
    env: dict[str, str]

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*FABRICD, *args], capture_output=True, text=True, env=self.env, timeout=120, check=False)

    def host_args(self, *extra: str) -> list[str]:
        return [
            str(settings.default_inventory()),
            "--host",
            "gpu1",
            "--netns",
            self.ns,
            "--root",
            str(self.root),
            *extra,
        ]


@pytest.fixture()
def bed(tmp_path: Path) -> Iterator[Bed]:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root and iproute2 to create network namespaces")
    tag = uuid.uuid4().hex[:6]
    ns, peer_ns = f"fdt-host-{tag}", f"fdt-host-{tag}-sw"
    ip("netns", "add", ns)
    try:
        ip("netns", "add", peer_ns)
        ip("-n", ns, "link", "add", "ens1f0np0", "type", "veth", "peer", "name", "swp1", "netns", peer_ns)
        ip("-n", peer_ns, "link", "set", "swp1", "mtu", "9216", "up")
        intent = host_intent(load_inventory(settings.default_inventory()).fabric, "gpu1")
        root = build_fake_host(tmp_path / "sys-root", fake_nics_for(intent, skip_vlan=True))
        env = dict(os.environ, FABRICD_STATE_DIR=str(tmp_path / "state"))
        yield Bed(ns, peer_ns, root, env)
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False, capture_output=True)
        subprocess.run(["ip", "netns", "del", peer_ns], check=False, capture_output=True)


def audit(bed: Bed) -> tuple[int, dict[str, list[dict[str, object]]]]:
    res = bed.run("audit", "host", *bed.host_args("--skip", "vlan,dcb", "--output", "json"))
    assert res.returncode in (0, 1), res.stderr
    data = json.loads(res.stdout)
    return res.returncode, {c["code"]: c["findings"] for c in data["checks"] if c["status"] == "fail"}


def test_apply_audit_clean_tamper_reapply(bed: Bed, tmp_path: Path) -> None:
    code, found = audit(bed)
    assert code == 1 and {"HOST-MTU", "HOST-LINK", "HOST-ADDR", "HOST-ROCE-TOS"} <= set(found)

    res = bed.run("host", "apply", *bed.host_args("--skip", "vlan,dcb", "--yes"))
    assert res.returncode == 0, res.stderr + res.stdout
    code, found = audit(bed)
    assert (code, found) == (0, {})
    junit = tmp_path / "audit.xml"
    assert bed.run("audit", "host", *bed.host_args("--skip", "vlan,dcb", "--junit", str(junit))).returncode == 0
    assert "<testsuites" in junit.read_text() and 'failures="0"' in junit.read_text()

    # by hand, as an operator would: MTU back to 1500 and a different address
    ip("-n", bed.ns, "link", "set", "ens1f0np0", "mtu", "1500")
    ip("-n", bed.ns, "addr", "del", "10.100.0.11/16", "dev", "ens1f0np0")
    ip("-n", bed.ns, "addr", "add", "10.100.0.99/16", "dev", "ens1f0np0")
    code, found = audit(bed)
    assert code == 1
    assert set(found) == {"HOST-MTU", "HOST-ADDR"}, found
    assert found["HOST-MTU"][0]["got"] == 1500 and found["HOST-MTU"][0]["expected"] == 9000
    assert found["HOST-ADDR"][0]["got"] == ["10.100.0.99/16"]

    res = bed.run("host", "apply", *bed.host_args("--skip", "vlan,dcb", "--yes"))
    assert res.returncode == 0, res.stderr
    assert audit(bed) == (0, {})
    addrs = subprocess.run(
        ["ip", "-n", bed.ns, "-4", "-o", "addr", "show", "dev", "ens1f0np0"], check=True, capture_output=True, text=True
    ).stdout
    assert "10.100.0.11/16" in addrs and "10.100.0.99" not in addrs  # the competing address was removed

    # idempotent: nothing left to do
    plan = json.loads(bed.run("host", "plan", *bed.host_args("--skip", "vlan,dcb", "--output", "json")).stdout)
    assert plan["steps"] == []

    # restore the snapshot of the last apply (taken after the tamper): the hand-made state comes back
    assert bed.run("host", "restore", "--host", "gpu1", "--netns", bed.ns, "--root", str(bed.root)).returncode == 0
    code, found = audit(bed)
    assert code == 1 and set(found) == {"HOST-MTU", "HOST-ADDR"}


def test_vlan_without_8021q_is_a_located_error_and_nothing_is_half_applied(bed: Bed) -> None:
    ip("-n", bed.ns, "link", "set", "ens1f0np0", "mtu", "1500")
    res = bed.run("host", "apply", *bed.host_args("--skip", "dcb", "--yes"))
    links = subprocess.run(
        ["ip", "-n", bed.ns, "-j", "link", "show"], check=True, capture_output=True, text=True
    ).stdout
    by_name = {link["ifname"]: link for link in json.loads(links)}
    if res.returncode == 0:  # a kernel with 802.1Q (the Soft-RoCE VM): the VLAN netdev exists
        assert "ens1f0np0.100" in by_name
        return
    assert res.returncode == 3, res.stderr
    assert "create vlan ens1f0np0.100" in res.stderr and "8021q" in res.stderr and bed.ns in res.stderr
    assert "restored the snapshot: complete" in res.stderr
    # the netlink steps before the VLAN (MTU 9000, link up) were rolled back
    assert by_name["ens1f0np0"]["mtu"] == 1500
    assert "UP" not in by_name["ens1f0np0"]["flags"]
    # and the sysfs backend never ran
    assert (bed.root / "sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos").read_text().strip() == "0"


def test_missing_netns_is_bad_input(bed: Bed) -> None:
    res = bed.run("audit", "host", "--host", "gpu1", "--netns", "fdt-host-does-not-exist", "--root", str(bed.root))
    assert res.returncode == 2
    assert "no such network namespace" in res.stderr
    assert not os.path.exists("/var/run/netns/fdt-host-does-not-exist")
