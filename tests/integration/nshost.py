"""Namespace hosts for fleet tests and benches: a network namespace with the host's NIC netdev (one end of a veth
pair whose other end sits in a peer namespace, the "switch port"), plus a fake mlx5 sysfs/configfs tree built from
the real captures (fabricd_lab.fake_host) for the sysfs backend. Lab-only machinery: it lives in tests/, not in the
product. Names start with ``fdt-fl-`` and carry a random tag, so runs in parallel worktrees never collide.

:meth:`NsHost.reload_driver` simulates a NIC driver reload: the netdev is deleted and created again (new ifindex,
MTU 1500, down, no address: what a real reload leaves) and the RDMA device's sysfs/configfs are rebuilt with their
power-on values (a new directory, as the driver registers the device again).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

from fabricd.intent.host import HostIntent
from fabricd_lab.fake_host import build_fake_host, fake_nics_for


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


def can_netns() -> str | None:
    """None when namespace hosts can be made here, else why not."""
    if os.geteuid() != 0:
        return "needs root to create network namespaces"
    if shutil.which("ip") is None:
        return "needs iproute2 (ip)"
    return None


@dataclass
class NsHost:
    name: str
    intent: HostIntent
    ns: str
    peer_ns: str
    root: Path

    @classmethod
    def create(cls, intent: HostIntent, workdir: Path, tag: str | None = None) -> NsHost:
        tag = tag or uuid.uuid4().hex[:6]
        ns, peer = f"fdt-fl-{tag}", f"fdt-fl-{tag}-sw"
        ip("netns", "add", ns)
        host = cls(intent.host, intent, ns, peer, workdir / f"root-{intent.host}-{tag}")
        try:
            ip("netns", "add", peer)
            host._links()
            build_fake_host(host.root, fake_nics_for(intent, skip_vlan=True))
        except BaseException:
            host.close()
            raise
        return host

    def _links(self) -> None:
        for i, nic in enumerate(self.intent.nics):
            port = f"swp{i + 1}"
            ip("-n", self.ns, "link", "add", nic.netdev, "type", "veth", "peer", "name", port, "netns", self.peer_ns)
            ip("-n", self.peer_ns, "link", "set", port, "mtu", "9216", "up")

    def reload_driver(self) -> None:
        """Delete and re-create every NIC netdev and RDMA device with power-on settings."""
        for nic in self.intent.nics:
            subprocess.run(["ip", "-n", self.ns, "link", "del", nic.netdev], check=False, capture_output=True)
        for nic in self.intent.nics:
            shutil.rmtree(self.root / "sys/class/net" / nic.netdev, ignore_errors=True)
            if nic.rdma_device:
                shutil.rmtree(self.root / "sys/class/infiniband" / nic.rdma_device, ignore_errors=True)
                shutil.rmtree(self.root / "sys/kernel/config/rdma_cm" / nic.rdma_device, ignore_errors=True)
        self._links()
        build_fake_host(self.root, fake_nics_for(self.intent, skip_vlan=True))

    def close(self) -> None:
        for n in (self.ns, self.peer_ns):
            subprocess.run(["ip", "netns", "del", n], check=False, capture_output=True)
