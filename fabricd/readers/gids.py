"""The GID table of every RDMA port under a root, as ``show_gids`` (mlnx-tools) reports it: device, port, index,
GID, the IPv4 address of an IPv4-mapped GID, RoCE version and netdev. Pure reads of sysfs; no printing."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass

from .rdma import class_dir, list_rdma_devices, read_gids

LINK_LOCAL_ZERO = "fe80:0000:0000:0000:0000:0000:0000:0000"
"""A link-local GID with an all-zero interface id: a slot the kernel keeps but nothing uses (show_gids skips it)."""


@dataclass(frozen=True, slots=True)
class GidRow:
    """One populated GID of one port (field order is the JSON order of ``fabricd gids --output json``)."""

    device: str
    port: int
    index: int
    gid: str
    ipv4: str | None
    version: str
    type: str | None
    netdev: str | None


def rdma_ports(root: str | os.PathLike[str], device: str) -> list[int]:
    """Port numbers of one RDMA device, sorted (none when the device has no ``ports/`` directory)."""
    try:
        names = os.listdir(os.path.join(class_dir(root), device, "ports"))
    except OSError:
        return []
    return sorted(int(n) for n in names if n.isdigit())


def ipv4_of_gid(gid: str) -> str | None:
    """The IPv4 address of an IPv4-mapped GID (``::ffff:a.b.c.d``), as show_gids prints it; None for any other."""
    try:
        addr = ipaddress.IPv6Address(gid)
    except ValueError:
        return None
    return str(addr.ipv4_mapped) if addr.ipv4_mapped is not None else None


def gid_of_ipv4(ip: str) -> str:
    """The IPv4-mapped GID of an IPv4 address, in sysfs' text form (``0000:...:ffff:c0a8:0101``)."""
    a, b, c, d = (int(x) for x in ip.split("."))
    return f"0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}"


def roce_version(gid_type: str | None) -> str:
    """``RoCE v2`` -> ``v2``, ``IB/RoCE v1`` -> ``v1`` (show_gids: ``grep -o "[Vv].*"``); empty when unknown."""
    if not gid_type:
        return ""
    i = gid_type.lower().find("v")
    return gid_type[i:].strip() if i >= 0 else gid_type.strip()


def list_gids(root: str | os.PathLike[str], devices: list[str] | None = None) -> list[GidRow]:
    """Populated GIDs of the given RDMA devices (default: all) and their ports under ``root``, zero and unused
    link-local GIDs skipped, in device, port and index order."""
    rows: list[GidRow] = []
    for dev in devices or list_rdma_devices(root):
        for port in rdma_ports(root, dev):
            for e in read_gids(root, dev, port):
                if e.gid == LINK_LOCAL_ZERO:
                    continue
                rows.append(GidRow(dev, port, e.index, e.gid, ipv4_of_gid(e.gid), roce_version(e.type), e.type,
                                   e.ndev))
    return rows
