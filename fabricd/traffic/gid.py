"""Choose the RDMA device and GID index for a local IP address, from sysfs (``/sys/class/infiniband``).

RoCE v2 addresses a peer by a GID derived from an IP address: an IPv4 address ``a.b.c.d`` appears as the
IPv4-mapped GID ``::ffff:a.b.c.d``, one entry per RoCE version, on the netdev (or VLAN upper device) that holds the
address (Linux ``drivers/infiniband/core/roce_gid_mgmt.c``; lab.md "GID table"). perftest wants the index with ``-x``;
fabricd finds it from the address the out-of-band connection uses, so users rarely have to.

Pure functions over a root directory (``/`` live, a replay tree in tests) using :mod:`fabricd.readers.rdma`.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass

from fabricd.errors import UsageError
from fabricd.readers.rdma import GidEntry, list_rdma_devices, read_gids

from .spec import RoceVersion


@dataclass(frozen=True)
class GidChoice:
    """Where traffic leaves from: device, port, GID index and text, its RoCE type and netdev."""

    device: str
    port: int
    index: int
    gid: str
    type: str | None
    ndev: str | None


def gid_ip(gid: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The IP address a GID carries: IPv4 for ``::ffff:a.b.c.d``, IPv6 otherwise; None if unparsable."""
    try:
        addr = ipaddress.IPv6Address(gid)
    except ValueError:
        return None
    return addr.ipv4_mapped or addr


def version_of(gid_type: str | None) -> RoceVersion | None:
    """``RoCE v2`` -> v2, ``IB/RoCE v1`` -> v1 (sysfs ``gid_attrs/types/N`` text), else None."""
    if not gid_type:
        return None
    low = gid_type.lower()
    if "v2" in low:
        return RoceVersion.V2
    if "v1" in low:
        return RoceVersion.V1
    return None


def _ports(root: str | os.PathLike[str], device: str) -> list[int]:
    pdir = os.path.join(os.fspath(root), "sys", "class", "infiniband", device, "ports")
    try:
        return sorted(int(p) for p in os.listdir(pdir) if p.isdigit())
    except OSError:
        return []


def _describe(entries: tuple[GidEntry, ...]) -> str:
    shown = [
        f"{e.index} ({gid_ip(e.gid)} {e.type or '?'} on {e.ndev or '?'})"
        for e in entries
        if not e.gid.startswith("fe80:")
    ]
    return ", ".join(shown) or "no routable entries"


def choose_gid(
    root: str | os.PathLike[str],
    *,
    ip: str | None,
    device: str | None = None,
    port: int | None = None,
    index: int | None = None,
    version: RoceVersion = RoceVersion.V2,
) -> GidChoice:
    """The GID to send from.

    * ``index`` given: that slot of ``device`` (required then), which must be populated and of ``version``;
    * else the entry of ``version`` whose address is ``ip``, on ``device`` if given, else on any RDMA device.

    Raises UsageError naming the device, the wanted address or index and what the table holds instead.
    """
    devices = _devices(root, device)
    if index is not None:
        if device is None:
            raise UsageError("--gid-index needs --device", hint="name the RDMA device the index belongs to")
        return _by_index(root, device, port=port, index=index, version=version)
    return _by_address(root, devices, ip=ip, port=port, version=version, named=device)


def _devices(root: str | os.PathLike[str], device: str | None) -> list[str]:
    """The RDMA devices to look at: ``device`` (which must exist), else every one under ``root``."""
    present = list_rdma_devices(root)
    if device and device not in present:
        raise UsageError(
            f"RDMA device {device!r} does not exist under {os.path.join(os.fspath(root), 'sys/class/infiniband')} "
            f"(present: {', '.join(present) or 'none'})",
            hint="for Soft-RoCE: 'rdma link add rxe0 type rxe netdev eth0'; check the name with 'fabricd gids'",
        )
    devices = [device] if device else present
    if not devices:
        raise UsageError(
            "no RDMA device on this host (/sys/class/infiniband is empty or missing)",
            hint="load the NIC's RDMA driver, or for Soft-RoCE 'modprobe rdma_rxe; rdma link add rxe0 type rxe "
            "netdev eth0'",
        )
    return devices


def _by_index(
    root: str | os.PathLike[str], device: str, *, port: int | None, index: int, version: RoceVersion
) -> GidChoice:
    """Slot ``index`` of ``device`` (on ``port``, else its first port), which must be populated and of
    ``version``."""
    p = port or (_ports(root, device) or [1])[0]
    entries = read_gids(root, device, p)
    entry = next((e for e in entries if e.index == index), None)
    if entry is None:
        raise UsageError(
            f"GID index {index} on {device} port {p} is empty",
            hint=f"populated RoCE entries: {_describe(entries)}; or omit --gid-index to pick by address",
        )
    if version_of(entry.type) != version:
        same = tuple(e for e in entries if version_of(e.type) == version)
        raise UsageError(
            f"GID index {index} on {device} port {p} is {entry.type or 'of unknown type'}, not RoCE {version.value}",
            hint=f"RoCE {version.value} entries: {_describe(same)}",
        )
    return GidChoice(device, p, entry.index, entry.gid, entry.type, entry.ndev)


def _by_address(
    root: str | os.PathLike[str],
    devices: list[str],
    *,
    ip: str | None,
    port: int | None,
    version: RoceVersion,
    named: str | None,
) -> GidChoice:
    """The entry of ``version`` whose address is ``ip`` on ``devices`` (without ``ip``: the first IPv4 one);
    ``named``: the device the user named, for the error."""
    want = ipaddress.ip_address(ip) if ip else None
    seen: list[str] = []
    fallback: GidChoice | None = None
    for dev in devices:
        for p in [port] if port else _ports(root, dev):
            entries = read_gids(root, dev, p)
            seen.append(f"{dev}/{p}: {_describe(entries)}")
            for e in entries:
                if version_of(e.type) != version:
                    continue
                addr = gid_ip(e.gid)
                if want is not None and addr == want:
                    return GidChoice(dev, p, e.index, e.gid, e.type, e.ndev)
                if want is None and fallback is None and isinstance(addr, ipaddress.IPv4Address):
                    fallback = GidChoice(dev, p, e.index, e.gid, e.type, e.ndev)
    if fallback is not None:
        return fallback
    what = f"address {ip}" if ip else "an IPv4 address"
    raise UsageError(
        f"no RoCE {version.value} GID for {what} on {named or 'any RDMA device'} ({'; '.join(seen) or 'no ports'})",
        hint="put the address on the RDMA netdev (or its VLAN), check with 'fabricd gids', or pass --gid-index",
    )
