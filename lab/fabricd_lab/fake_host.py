"""A fake RDMA host under a directory: the sysfs/configfs files fabricd reads and writes, from real captures.

Used by tests (sysfs backend, audit, ``fabricd gids``) and by demos that have no RDMA NIC. It covers every file
fabricd touches on a RoCE host:

- ``sys/class/net/<if>/{mtu,operstate,flags,address,type,carrier,speed,duplex,ifindex}`` and the whole
  ``ecn/roce_np|roce_rp`` tree: values from prometheus/procfs' fixture (tests/golden/host/
  net-class-eth0-ecn-procfs.txt), the MLNX_OFED files as the exporter of record parses them;
- ``sys/class/net/<vlan>/...`` for the RDMA VLAN netdev when there is one;
- ``sys/class/infiniband/<dev>/...`` from procfs' mlx5_0 fixture (tests/golden/host/ib-mlx5_0-procfs), with
  ``link_layer`` Ethernet (a RoCE port), a GID table (``gids/``, ``gid_attrs/types|ndevs``) laid out as the kernel
  does and as mlnx-tools ``show_gids`` reads it (link-local and IPv4-mapped GIDs, each as RoCE v1 and v2, netdev
  = the RDMA netdev), and MLNX_OFED's ``tc/<p>/traffic_class`` (empty = unset, as on a fresh host);
- ``sys/kernel/config/rdma_cm/<dev>/ports/<p>/{default_roce_tos,default_roce_mode}`` (configfs, kernel ABI
  configfs-rdma_cm; a fresh host has ToS 0 and mode "RoCE v2").

No capture of the configfs files or traffic_class exists; their content follows the kernel ABI and mlx5's
``traffic_class_show`` (tests/golden/host/SOURCES.md).

Every NIC family (``FakeNic.family``, docs/nics.md) is written from its profile (``NicProfile.lab``, a
:class:`fabricd.intent.nics.LabNic`), with no per-family code here: the netdev and RDMA port files are the same
captures; the sysfs ``ecn/`` files are kept only for a family whose knobs live there (mlx5), ``tc/<p>/traffic_class``
only where the profile has it; a family whose device is not the capture (``device_capture`` False) gets its own
hw_counters names (from its driver, tests/golden/host/SOURCES.md) at 0 instead of mlx5's, without mlx5's board files;
every runtime configfs knob the NIC's transport has is written at its documented default (0 when none) in the knob's
format, and the family's commit file with it. So ``bnxt`` gets ``bnxt_re/<dev>/ports/<p>/cc/*`` holding ``0x0`` as
Broadcom's configfs prints values (``%#x``; the real group is populated by the driver after mkdir; unverified values:
no capture of a bnxt_re cc/ tree exists), ``ice`` gets ``irdma/<dev>/{roce_*|iw_*}_enable`` at the irdma README's
defaults by ``FakeNic.transport``, ``rxe`` only the RDMA-CM configfs files.

``ethtool/<if>.stats`` and ``.info`` (the replay root layout) are written from the family's ethtool capture
(``LabNic.ethtool_capture``, tests/golden/readers/ethtool) when ``with_ethtool`` is set.
"""

from __future__ import annotations

import ipaddress
import shutil
from dataclasses import dataclass
from pathlib import Path

from fabricd.intent.host import HostIntent
from fabricd.intent.nics import BY_FAMILY, Knob, NicProfile
from fabricd.model import Transport

ROCE_V1 = "IB/RoCE v1"
ROCE_V2 = "RoCE v2"
CAPTURE_MAC = "08:c0:eb:21:03:da"
"""MAC behind the link-local GID fe80::0ac0:ebff:fe21:03da of tests/golden/host/show_gids-mlx5_0-rdma0.txt."""
GID_SLOTS = 8
"""GID table slots written (real mlx5 ports have 256; the rest read as zero GIDs)."""


_PACKAGE = Path(__file__).resolve().parent


def _captures(name: str, in_checkout: Path) -> Path:
    """A folder of captures: ``fabricd_lab/_data/<name>`` in the wheel (lab/pyproject.toml force-includes them),
    else where they live in a source checkout."""
    packaged = _PACKAGE / "_data" / name
    return packaged if packaged.is_dir() else _PACKAGE.parent.parent / in_checkout


def default_captures() -> Path:
    """The host captures (tests/golden/host in a source checkout)."""
    return _captures("host", Path("tests/golden/host"))


def ethtool_captures() -> Path:
    """The ethtool -S captures (tests/golden/readers/ethtool in a source checkout)."""
    return _captures("ethtool", Path("tests/golden/readers/ethtool"))


@dataclass(frozen=True)
class FakeNic:
    """One RDMA NIC port of the fake host."""

    netdev: str
    rdma_device: str = "mlx5_0"
    rdma_port: int = 1
    ip: str | None = None
    ip_netdev: str | None = None
    vlan_netdev: str | None = None
    mac: str = CAPTURE_MAC
    mtu: int | None = None
    family: str = "mlx5"
    transport: Transport = Transport.ROCE_V2_LOSSLESS
    speed_mbps: int | None = None
    """``sys/class/net/<if>/speed``: the inventory's NIC speed (audit host's HOST-SPEED), else the capture's."""


def _read_capture(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition("\t")
        out[key] = value
    return out


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def link_local_gid(mac: str) -> str:
    """fe80::/64 GID from a MAC (modified EUI-64, RFC 4291), in the kernel's 8x4-hex-digit sysfs form."""
    b = [int(x, 16) for x in mac.split(":")]
    eui = [b[0] ^ 0x02, b[1], b[2], 0xFF, 0xFE, b[3], b[4], b[5]]
    words = ["fe80", "0000", "0000", "0000"] + [f"{eui[i]:02x}{eui[i + 1]:02x}" for i in range(0, 8, 2)]
    return ":".join(words)


def ipv4_gid(ip: str) -> str:
    """The IPv4-mapped GID (::ffff:a.b.c.d) in sysfs form."""
    packed = ipaddress.IPv4Address(ip).packed
    return "0000:0000:0000:0000:0000:ffff:" + f"{packed[0]:02x}{packed[1]:02x}:{packed[2]:02x}{packed[3]:02x}"


ECN_TEMPLATE = "/sys/class/net/{netdev}/ecn/"
"""Where a family's sysfs ECN knobs live (mlx5 with MLNX_OFED): the fake host keeps the capture's ``ecn/`` for it."""
CONFIGFS_PREFIX = "/sys/kernel/config/"

ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"


def build_fake_host(root: str | Path, nics: list[FakeNic], captures: str | Path | None = None) -> Path:
    """Write the fake tree for ``nics`` under ``root`` (created); returns the root."""
    root = Path(root)
    cap = Path(captures) if captures is not None else default_captures()
    net = _read_capture(cap / "net-class-eth0-ecn-procfs.txt")
    ib_src = cap / "ib-mlx5_0-procfs"
    for nic in nics:
        profile = BY_FAMILY[nic.family]
        _netdevs(root, nic, net, ecn=any(k.path.startswith(ECN_TEMPLATE) for k in _knobs(profile)))
        dev = root / "sys/class/infiniband" / nic.rdma_device
        if not dev.exists():
            shutil.copytree(ib_src, dev)
            if nic.rdma_port != 1:
                (dev / "ports" / "1").rename(dev / "ports" / str(nic.rdma_port))
            if not profile.lab.device_capture:
                _other_family_device(dev / "ports" / str(nic.rdma_port), profile)
        port = dev / "ports" / str(nic.rdma_port)
        _write(port / "link_layer", "Ethernet\n")
        _gids(port, nic)
        if profile.traffic_class:
            _write(dev / "tc" / str(nic.rdma_port) / "traffic_class", "")
        cm = root / "sys/kernel/config/rdma_cm" / nic.rdma_device / "ports" / str(nic.rdma_port)
        _write(cm / "default_roce_tos", "0\n")
        _write(cm / "default_roce_mode", ROCE_V2 + "\n")
        _family_configfs(root, nic, profile)
    return root


def _netdevs(root: Path, nic: FakeNic, net: dict[str, str], *, ecn: bool) -> None:
    """``/sys/class/net/<netdev>`` from the capture (its ``ecn/`` only for a family with sysfs ECN knobs), with the
    NIC's address, MTU and speed; and its VLAN netdev if it has one."""
    ndir = root / "sys/class/net" / nic.netdev
    for rel, value in net.items():
        if ecn or not rel.startswith("ecn/"):
            _write(ndir / rel, value + "\n")
    _write(ndir / "address", nic.mac + "\n")
    if nic.mtu is not None:
        _write(ndir / "mtu", f"{nic.mtu}\n")
    if nic.speed_mbps is not None:
        _write(ndir / "speed", f"{nic.speed_mbps}\n")
    if nic.vlan_netdev:
        vdir = root / "sys/class/net" / nic.vlan_netdev
        for rel in ("mtu", "operstate", "flags", "address", "type", "carrier"):
            _write(vdir / rel, (nic.mac if rel == "address" else net[rel]) + "\n")
        if nic.mtu is not None:
            _write(vdir / "mtu", f"{nic.mtu}\n")


def _gids(port: Path, nic: FakeNic) -> None:
    """The port's GID table: link-local and (with an address) IPv4-mapped GIDs, RoCE v1 and v2, then zeros."""
    ndev = nic.ip_netdev or nic.vlan_netdev or nic.netdev
    gids = [(link_local_gid(nic.mac), ROCE_V1), (link_local_gid(nic.mac), ROCE_V2)]
    if nic.ip:
        gids += [(ipv4_gid(nic.ip), ROCE_V1), (ipv4_gid(nic.ip), ROCE_V2)]
    for i in range(GID_SLOTS):
        if i < len(gids):
            _write(port / "gids" / str(i), gids[i][0] + "\n")
            _write(port / "gid_attrs/types" / str(i), gids[i][1] + "\n")
            _write(port / "gid_attrs/ndevs" / str(i), ndev + "\n")
        else:
            _write(port / "gids" / str(i), ZERO_GID + "\n")


def _knobs(profile: NicProfile) -> tuple[Knob, ...]:
    return (*profile.roles.values(), *profile.tunables.values())


def _other_family_device(port: Path, profile: NicProfile) -> None:
    """Replace mlx5's hw_counters by the family's names (at 0) and drop mlx5-only device files."""
    shutil.rmtree(port / "hw_counters")
    for name in profile.hw_counters:
        _write(port / "hw_counters" / name, "0\n")
    for rel in ("board_id", "fw_ver", "hca_type"):
        (port.parent.parent / rel).unlink(missing_ok=True)


def _family_configfs(root: Path, nic: FakeNic, profile: NicProfile) -> None:
    """The family's configfs knobs (runtime, present under the NIC's transport) at their default, and its commit
    file; a knob named by two roles is written once."""
    files: dict[str, str] = {}
    for knob in _knobs(profile):
        if knob.runtime and knob.exists_for(nic.transport) and knob.path.startswith(CONFIGFS_PREFIX):
            default = knob.default or 0
            files[knob.render_path(nic.netdev, nic.rdma_device, nic.rdma_port)] = (
                f"{default:#x}" if knob.fmt == "hex" else str(default)
            )
    if profile.cc_commit and files:
        files[profile.cc_commit.format(dev=nic.rdma_device, port=nic.rdma_port)] = "0x0"
    for path, text in files.items():
        _write(root / path.lstrip("/"), text + "\n")


def write_ethtool(root: str | Path, nics: list[FakeNic], captures: str | Path | None = None) -> None:
    """``ethtool/<if>.stats`` (the family's real ``ethtool -S`` capture) and ``.info`` (``driver: <name>``)."""
    cap = Path(captures) if captures is not None else ethtool_captures()
    for nic in nics:
        lab = BY_FAMILY[nic.family].lab
        if lab.ethtool_capture is None:  # no capture of this family's ethtool -S exists: nothing to replay
            continue
        name, driver = lab.ethtool_capture, lab.ethtool_info_driver
        _write(Path(root) / "ethtool" / f"{nic.netdev}.stats", (cap / name).read_text())
        _write(Path(root) / "ethtool" / f"{nic.netdev}.info", f"driver: {driver}\n")


def fake_nics_for(intent: HostIntent, *, skip_vlan: bool = False) -> list[FakeNic]:
    """FakeNic entries matching a host intent's NICs (names, RDMA device/port, address, VLAN netdev)."""
    out = []
    for n in intent.nics:
        if n.rdma_device is None:
            continue
        vlan = None if skip_vlan else n.vlan_netdev
        out.append(
            FakeNic(
                netdev=n.netdev,
                rdma_device=n.rdma_device,
                rdma_port=n.rdma_port,
                ip=n.address_ip,
                ip_netdev=vlan or n.netdev,
                vlan_netdev=vlan,
                family=n.family or "mlx5",
                transport=n.transport,
                speed_mbps=n.speed.gbps * 1000 if n.speed else None,
            )
        )
    return out
