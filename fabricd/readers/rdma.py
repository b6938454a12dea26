"""RDMA sysfs: ``/sys/class/infiniband/<dev>/ports/<n>/{counters,counters_ext,hw_counters,state,phys_state,rate,
link_layer,gids,gid_attrs}`` under a root (``/`` on a live host, a replay directory otherwise).

Facts the reader handles (Linux ``Documentation/ABI/stable/sysfs-class-infiniband``, prometheus/procfs
``sysfs/class_infiniband.go``, and the captures in tests/golden/readers/sysfs/):

- ``port_rcv_data``/``port_xmit_data`` (and the ``counters_ext/*_64`` variants on mlx4) count **4-octet units**;
  :meth:`RdmaPort.normalised` returns bytes;
- PMA counters read ``N/A (no PMA)`` on devices without a performance-management agent (i40iw): ``None``;
- 32-bit PMA counters saturate at 4294967295; they are passed through and listed in :attr:`RdmaPort.saturated`;
- ``counters_ext/*_64`` win over their 32-bit ``counters/`` twins;
- RoCE congestion and transport counters live in ``hw_counters`` with driver-specific names: mlx5 (``np_cnp_sent``,
  ``rp_cnp_handled``, ``out_of_sequence``...) and Soft-RoCE rxe (``sent_pkts``, ``rcvd_pkts``,
  ``out_of_seq_request``, ``rcvd_seq_err``, ``completer_retry_err``...; rxe has no ``counters/`` at all); each NIC
  profile (fabricd/intent/nics/) holds its family's names and :data:`HW_COUNTER_MAP` maps them to one vocabulary.
  ``lifespan`` is a cache-lifetime knob, not a counter.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from fabricd.intent.nics import PROFILES

from .common import (
    SATURATED_U32,
    Direction,
    Problems,
    ReadProblem,
    list_dir,
    parse_counter,
    read_dir_values,
    read_text,
)
from .counter_names import HwMeaning

CLASS_DIR = os.path.join("sys", "class", "infiniband")

_STATE = re.compile(r"^\s*(\d+)\s*:\s*(.*?)\s*$")
_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*Gb/sec")

NOT_COUNTERS = frozenset({"lifespan"})
"""hw_counters entries that are settings, not counters (rxe/mlx5 ``lifespan``: stats cache lifetime)."""

DATA_4_OCTETS = frozenset({"port_rcv_data", "port_xmit_data"})
"""PMA counters in units of 4 octets (IBTA PortCounters / PortCountersExtended)."""

# sysfs name -> (normalised counter, direction or None, qualifier or None)
PMA_COUNTER_MAP: dict[str, tuple[str, Direction | None, str | None]] = {
    "port_rcv_data": ("data_bytes", "rx", None),
    "port_xmit_data": ("data_bytes", "tx", None),
    "port_rcv_packets": ("packets", "rx", None),
    "port_xmit_packets": ("packets", "tx", None),
    "unicast_rcv_packets": ("unicast_packets", "rx", None),
    "unicast_xmit_packets": ("unicast_packets", "tx", None),
    "multicast_rcv_packets": ("multicast_packets", "rx", None),
    "multicast_xmit_packets": ("multicast_packets", "tx", None),
    "port_rcv_discards": ("discards", "rx", None),
    "port_xmit_discards": ("discards", "tx", None),
    "port_xmit_wait": ("xmit_wait_ticks", "tx", None),
    "link_downed": ("link_downed", None, None),
    "link_error_recovery": ("link_error_recovery", None, None),
    "port_rcv_errors": ("errors", "rx", "receive"),
    "symbol_error": ("errors", "rx", "symbol"),
    "port_rcv_remote_physical_errors": ("errors", "rx", "remote_physical"),
    "port_rcv_switch_relay_errors": ("errors", "rx", "switch_relay"),
    "port_rcv_constraint_errors": ("errors", "rx", "rcv_constraint"),
    "port_xmit_constraint_errors": ("errors", "tx", "xmit_constraint"),
    "local_link_integrity_errors": ("errors", None, "local_link_integrity"),
    "excessive_buffer_overrun_errors": ("errors", "rx", "buffer_overrun"),
    "VL15_dropped": ("errors", "rx", "vl15_dropped"),
}
"""PMA ``counters/`` names (IBTA) -> normalised meaning. ``data_bytes`` is converted from 4-octet units."""

_EXT_TWINS: dict[str, str] = {
    "port_rcv_data_64": "port_rcv_data",
    "port_xmit_data_64": "port_xmit_data",
    "port_rcv_packets_64": "port_rcv_packets",
    "port_xmit_packets_64": "port_xmit_packets",
    "port_unicast_rcv_packets": "unicast_rcv_packets",
    "port_unicast_xmit_packets": "unicast_xmit_packets",
    "port_multicast_rcv_packets": "multicast_rcv_packets",
    "port_multicast_xmit_packets": "multicast_xmit_packets",
}
"""``counters_ext`` (64-bit, mlx4) names -> the ``counters/`` name they replace."""

HW_COUNTERS_BY_DRIVER: dict[str, Mapping[str, HwMeaning]] = {d: p.hw_counters for p in PROFILES for d in p.rdma_drivers}
"""RDMA driver (``/sys/class/infiniband/<dev>/device/driver``, or the NIC profile's) -> its hw_counters map, from the
NIC profiles (``NicProfile.hw_counters``, fabricd/intent/nics/)."""

HW_COUNTER_MAP: dict[str, HwMeaning] = {n: m for p in reversed(PROFILES) for n, m in p.hw_counters.items()}
"""Every family's hw_counters names -> normalised meaning, used when the driver is not known (a replay tree); the
families' names do not conflict (where two share a name, they share its meaning; the first profile in the registry
wins). Unlisted hw_counters stay available by their own name. For ``packets``, a PMA ``counters/`` value wins over a
hw_counter."""


T = TypeVar("T")


def merge_counters_ext(counters: dict[str, T], ext: Mapping[str, T]) -> set[str]:
    """Let ``counters_ext/*_64`` values replace their 32-bit ``counters/`` twins in ``counters`` (in place; a twin
    missing from ``counters/`` is appended). Returns the names replaced."""
    replaced: set[str] = set()
    for ext_name, value in ext.items():
        twin = _EXT_TWINS.get(ext_name)
        if twin is not None and value is not None:
            counters[twin] = value
            replaced.add(twin)
    return replaced


def meanings(counters: Mapping[str, T | None], hw: Mapping[str, T | None]) -> dict[RdmaKey, tuple[T, int]]:
    """``meaning -> (source, multiplier)`` in report order: PMA counters first (``data_bytes`` x 4), then the
    hw_counters whose meaning no PMA counter gave. ``source`` is the value, or whatever stands for it (a layout
    passes file positions); None sources are left out."""
    out: dict[RdmaKey, tuple[T, int]] = {}
    for name, value in counters.items():
        meaning = PMA_COUNTER_MAP.get(name)
        if meaning is None or value is None:
            continue
        out[RdmaKey(*meaning)] = (value, 4 if name in DATA_4_OCTETS else 1)
    for name, value in hw.items():
        meaning = HW_COUNTER_MAP.get(name)
        if meaning is None or value is None:
            continue
        out.setdefault(RdmaKey(*meaning), (value, 1))
    return out


def unmapped(hw: Mapping[str, T | None]) -> dict[str, T]:
    """hw_counters without a normalised meaning and not settings (``lifespan``), in the given order."""
    return {n: v for n, v in hw.items() if v is not None and n not in HW_COUNTER_MAP and n not in NOT_COUNTERS}


def saturable(counters: Mapping[str, T | None], replaced: set[str]) -> list[tuple[str, T]]:
    """``counters/`` entries a 32-bit PMA could saturate (those not replaced by ``counters_ext``), sorted by name."""
    return sorted(((n, v) for n, v in counters.items() if v is not None and n not in replaced), key=lambda nv: nv[0])


@dataclass(frozen=True, slots=True)
class RdmaKey:
    """A normalised RDMA counter: ``counter`` name, ``direction`` rx|tx or None, ``qualifier`` (error reason)."""

    counter: str
    direction: Direction | None = None
    qualifier: str | None = None


@dataclass(frozen=True, slots=True)
class GidEntry:
    """One populated GID table slot: index, GID text, type (``RoCE v2``, ``IB/RoCE v1``) and netdev (None if unset)."""

    index: int
    gid: str
    type: str | None
    ndev: str | None


@dataclass(frozen=True, slots=True)
class RdmaPort:
    """One port of an RDMA device. Counter values are raw sysfs units; :meth:`normalised` converts data to bytes."""

    device: str
    port: int
    state: int | None
    state_name: str | None
    phys_state: int | None
    phys_state_name: str | None
    rate: str | None
    rate_gbps: float | None
    link_layer: str | None
    counters: Mapping[str, int | None]
    hw_counters: Mapping[str, int | None]
    saturated: tuple[str, ...] = ()

    def normalised(self) -> dict[RdmaKey, int]:
        """Counters by meaning (:data:`PMA_COUNTER_MAP`, :data:`HW_COUNTER_MAP`); data in bytes; absent: left out."""
        return {key: value * scale for key, (value, scale) in meanings(self.counters, self.hw_counters).items()}

    def unmapped_hw_counters(self) -> dict[str, int]:
        """hw_counters without a normalised meaning (and not settings like ``lifespan``), by their own name."""
        return unmapped(self.hw_counters)

    @property
    def rate_bytes_per_second(self) -> float | None:
        """Link rate in bytes per second (``rate`` is in Gb/s), None when unknown."""
        return None if self.rate_gbps is None else self.rate_gbps * 1e9 / 8


@dataclass(frozen=True, slots=True)
class RdmaDevice:
    """One RDMA device: identity files, its ports, the netdevs it sits on, and problems met while reading."""

    name: str
    fw_ver: str | None
    board_id: str | None
    hca_type: str | None
    node_guid: str | None
    node_type: str | None
    netdevs: tuple[str, ...]
    ports: tuple[RdmaPort, ...]
    hw_counters: Mapping[str, int | None]
    problems: tuple[ReadProblem, ...] = ()


def class_dir(root: str | os.PathLike[str]) -> str:
    """``<root>/sys/class/infiniband``."""
    return os.path.join(os.fspath(root), CLASS_DIR)


def list_rdma_devices(root: str | os.PathLike[str]) -> list[str]:
    """RDMA device names under the root, sorted; ``[]`` when the class directory does not exist."""
    try:
        return sorted(os.listdir(class_dir(root)))
    except OSError:
        return []


@lru_cache(maxsize=256)
def parse_state(text: str | None) -> tuple[int | None, str | None]:
    """``4: ACTIVE`` -> ``(4, "ACTIVE")`` (a ``state`` or ``phys_state`` file); text without a number -> its name."""
    if text is None:
        return None, None
    m = _STATE.match(text)
    if m is None:
        return None, text or None
    return int(m.group(1)), m.group(2) or None


@lru_cache(maxsize=256)
def parse_rate(text: str | None) -> float | None:
    """``100 Gb/sec (4X EDR)`` -> 100.0 (Gb/s); None when the text does not start with a rate."""
    if text is None:
        return None
    m = _RATE.match(text)
    return float(m.group(1)) if m else None


def _read_counter_dir(path: str, problems: Problems, *, optional: bool) -> dict[str, int | None]:
    return {
        name: None if text is None else parse_counter(text, f"{path}/{name}", problems)
        for name, text in read_dir_values(path, problems, optional=optional).items()
    }


def read_port(dev_dir: str, device: str, port: int, problems: Problems) -> RdmaPort:
    """Read one port directory (``<dev_dir>/ports/<port>``)."""
    pdir = f"{dev_dir}/ports/{port}"
    state, state_name = parse_state(read_text(f"{pdir}/state", problems))
    phys, phys_name = parse_state(read_text(f"{pdir}/phys_state", problems))
    rate = read_text(f"{pdir}/rate", problems)
    link_layer = read_text(f"{pdir}/link_layer", problems)
    counters = _read_counter_dir(f"{pdir}/counters", problems, optional=True)
    ext = _read_counter_dir(f"{pdir}/counters_ext", problems, optional=True)
    replaced = merge_counters_ext(counters, ext)
    saturated = tuple(n for n, v in saturable(counters, replaced) if v == SATURATED_U32)
    hw = _read_counter_dir(f"{pdir}/hw_counters", problems, optional=True)
    if state is None and not counters and not hw and not os.path.isdir(pdir):
        problems.add(pdir, "vanished after discovery (device removed or tree rewritten)")
    return RdmaPort(
        device=device,
        port=port,
        state=state,
        state_name=state_name,
        phys_state=phys,
        phys_state_name=phys_name,
        rate=rate,
        rate_gbps=parse_rate(rate),
        link_layer=link_layer,
        counters=counters,
        hw_counters=hw,
        saturated=saturated,
    )


def read_rdma_device(root: str | os.PathLike[str], device: str) -> RdmaDevice:
    """Read one device under the root. A device that vanished since discovery gives a snapshot with a problem."""
    problems = Problems()
    dev_dir = f"{class_dir(root)}/{device}"
    ports: list[RdmaPort] = []
    port_names = list_dir(os.path.join(dev_dir, "ports"), problems, optional=not os.path.isdir(dev_dir))
    if not port_names and not os.path.isdir(dev_dir):
        problems.add(dev_dir, "vanished after discovery (device removed or tree rewritten)")
    for name in port_names:
        if not name.isdigit():
            continue
        ports.append(read_port(dev_dir, device, int(name), problems))
    netdevs = tuple(list_dir(os.path.join(dev_dir, "device", "net"), problems, optional=True))
    return RdmaDevice(
        name=device,
        fw_ver=read_text(f"{dev_dir}/fw_ver", problems),
        board_id=read_text(f"{dev_dir}/board_id", problems),
        hca_type=read_text(f"{dev_dir}/hca_type", problems),
        node_guid=read_text(f"{dev_dir}/node_guid", problems),
        node_type=read_text(f"{dev_dir}/node_type", problems),
        netdevs=netdevs,
        ports=tuple(sorted(ports, key=lambda p: p.port)),
        hw_counters=_read_counter_dir(f"{dev_dir}/hw_counters", problems, optional=True),
        problems=tuple(problems),
    )


def read_rdma(root: str | os.PathLike[str]) -> list[RdmaDevice]:
    """Every RDMA device under the root."""
    return [read_rdma_device(root, d) for d in list_rdma_devices(root)]


_ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"


def read_gids(root: str | os.PathLike[str], device: str, port: int) -> tuple[GidEntry, ...]:
    """The populated GID table of one port (``gids/N``, ``gid_attrs/types/N``, ``gid_attrs/ndevs/N``).

    Empty slots (all-zero GID, or attribute files that fail with EINVAL as the kernel does for unset slots) are skipped.
    """
    pdir = os.path.join(class_dir(root), device, "ports", str(port))
    problems = Problems()
    entries: list[GidEntry] = []
    for name in list_dir(os.path.join(pdir, "gids"), problems, optional=True):
        if not name.isdigit():
            continue
        gid = read_text(os.path.join(pdir, "gids", name), problems)
        if not gid or gid == _ZERO_GID:
            continue
        gtype = read_text(os.path.join(pdir, "gid_attrs", "types", name), Problems())
        ndev = read_text(os.path.join(pdir, "gid_attrs", "ndevs", name), Problems())
        entries.append(GidEntry(int(name), gid, gtype or None, ndev or None))
    return tuple(sorted(entries, key=lambda e: e.index))


@dataclass(frozen=True, slots=True, eq=False)
class PortLayout:
    """Which files of one port exist and what they mean. Indexes point into :class:`RdmaValues` ``ints`` (counter
    files) or ``texts`` (attribute files; -1: the file does not exist)."""

    port: int
    state: int
    phys_state: int
    rate: int
    link_layer: int
    meanings: tuple[tuple[RdmaKey, int, int], ...]
    """``(meaning, ints index, multiplier)`` in :meth:`RdmaPort.normalised` order."""
    unmapped: tuple[tuple[str, int], ...]
    """hw_counters without a meaning, ``(name, ints index)`` in :meth:`RdmaPort.unmapped_hw_counters` order."""
    saturable: tuple[tuple[str, int], ...]
    """``counters/`` files a 32-bit PMA could saturate, ``(name, ints index)`` sorted by name."""


@dataclass(frozen=True, slots=True, eq=False)
class DeviceLayout:
    """The files of one RDMA device that :func:`read_rdma_device` reads, as they were when the layout was built."""

    device: str
    fw_ver: int
    board_id: int
    hca_type: int
    node_guid: int
    node_type: int
    ports: tuple[PortLayout, ...]
    ints: int
    """How many counter files (``ints``) the layout reads."""


@dataclass(frozen=True, slots=True)
class RdmaValues:
    """One read of a device through its :class:`DeviceLayout`: every counter file as an int, every attribute file
    as stripped text (as :func:`read_rdma_device` would give them) and the netdevs under ``device/net``."""

    layout: DeviceLayout
    ints: list[int]
    texts: list[str]
    netdevs: tuple[str, ...]

    def text(self, index: int) -> str | None:
        """The attribute file at ``index`` (None for -1, a file that does not exist)."""
        return None if index < 0 else self.texts[index]
