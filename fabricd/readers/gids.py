"""The GID table of every RDMA port under a root, as ``show_gids`` (mlnx-tools) reports it: device, port, index,
GID, the IPv4 address of an IPv4-mapped GID, RoCE version and netdev. Pure reads of sysfs; no printing."""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass

from .framing import framed
from .rdma import class_dir, list_rdma_devices, read_gids
from .textparse import TextParseError, content_lines, to_int

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
                rows.append(GidRow(dev, port, e.index, e.gid, ipv4_of_gid(e.gid), roce_version(e.type), e.type, e.ndev))
    return rows


_GID_TEXT = re.compile(r"^[0-9a-f]{4}(?::[0-9a-f]{4}){7}$")


@framed
def parse_show_gids(text: str, source: str = "show_gids") -> list[GidRow]:
    """mlnx-tools ``show_gids`` text (``DEV PORT INDEX GID IPv4 VER DEV`` rows, ``n_gids_found=N``) as a bundle holds
    it. The count line, when present, must match the rows (a truncated table is an error); every row is checked.
    Capture: tests/golden/host/show_gids-mlx5_0-rdma0.txt. Raises :class:`~fabricd.readers.textparse.TextParseError`.
    """
    rows: list[GidRow] = []
    found: tuple[int, int] | None = None
    header = False
    for n, line in content_lines(text):
        tokens = line.split()
        if tokens[:3] == ["DEV", "PORT", "INDEX"]:
            header = True
            continue
        if set(line.strip()) <= set("-\t "):
            continue
        if tokens[0].startswith("n_gids_found="):
            found = (n, to_int(tokens[0].split("=", 1)[1], source, n, "n_gids_found"))
            continue
        if not header:
            raise TextParseError(
                source, n, "row before the header", expected="DEV PORT INDEX GID IPv4 VER DEV", got=line.strip()
            )
        if len(tokens) not in (5, 6, 7):
            raise TextParseError(
                source, n, "not a GID row", expected="DEV PORT INDEX GID [IPv4] VER [DEV]", got=line.strip()
            )
        dev, port, index, gid = tokens[:4]
        rest = tokens[4:]
        ipv4 = rest.pop(0) if rest and not rest[0].lower().startswith("v") else None
        if not rest or not rest[0].lower().startswith("v"):
            raise TextParseError(source, n, "no RoCE version", expected="v1 or v2", got=line.strip())
        version = rest.pop(0)
        ndev = rest.pop(0) if rest else None
        if not _GID_TEXT.match(gid.lower()):
            raise TextParseError(source, n, "GID", expected="8 groups of 4 hex digits", got=gid)
        if ipv4 is not None and ipv4_of_gid(gid) != ipv4:
            raise TextParseError(
                source, n, "IPv4 column does not match the GID", expected=str(ipv4_of_gid(gid)), got=ipv4
            )
        rows.append(
            GidRow(
                device=dev,
                port=to_int(port, source, n, "PORT"),
                index=to_int(index, source, n, "INDEX"),
                gid=gid.lower(),
                ipv4=ipv4,
                version=version,
                type="RoCE v2" if version.lower() == "v2" else "IB/RoCE v1",
                netdev=ndev,
            )
        )
    if found is not None and found[1] != len(rows):
        raise TextParseError(
            source,
            found[0],
            "n_gids_found does not match the rows (truncated table?)",
            expected=f"{found[1]} rows",
            got=f"{len(rows)} rows",
        )
    if not rows and found is None:
        raise TextParseError(source, 1, "no GID rows", expected="show_gids output", got=text.strip()[:80] or "empty")
    return rows
