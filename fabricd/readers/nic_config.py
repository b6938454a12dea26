"""Host NIC lossless configuration as the kernel exposes it, read back so that drift can alert.

Sources, under a root (``/`` live, a replay directory otherwise):

- ECN/DCQCN (mlx5): ``sys/class/net/<if>/ecn/roce_np|roce_rp/enable/<prio>`` (0/1 per priority) and every other
  file in ``roce_np/``/``roce_rp/`` as a numeric parameter (``min_time_between_cnps``, ``cnp_dscp``,
  ``rpg_time_reset``, ...). Defaults differ between firmware and docs, so they are read back, never assumed.
- RDMA-CM ToS: configfs ``sys/kernel/config/rdma_cm/<dev>/ports/<port>/default_roce_tos`` (and
  ``default_roce_mode``), which only exists after ``mkdir /sys/kernel/config/rdma_cm/<dev>``; and MLNX_OFED's
  ``sys/class/infiniband/<dev>/tc/<port>/traffic_class`` (``Global tclass=106``, or a bare number).
- Trust and PFC "where exposed": MLNX_OFED's ``sys/class/net/<if>/qos/trust`` (``pcp``/``dscp``) and
  ``qos/pfc`` (eight 0/1 flags). Upstream kernels expose these only through DCB netlink, which the host backend reads;
  when the files are absent the values are None (unknown), never a guess.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from .common import Problems, ReadProblem, parse_counter, read_dir_values, read_text

NET_DIR = os.path.join("sys", "class", "net")
RDMA_CM_DIR = os.path.join("sys", "kernel", "config", "rdma_cm")

EcnPoint = Literal["np", "rp"]
"""DCQCN roles: ``np`` notification point (receiver, sends CNPs), ``rp`` reaction point (sender, slows down)."""

_NUMBER = re.compile(r"(-?\d+)")


@dataclass(frozen=True, slots=True)
class EcnConfig:
    """One DCQCN role of one interface: per-priority enable flags and numeric parameters (units as the driver's)."""

    point: EcnPoint
    enabled: Mapping[int, bool | None]
    parameters: Mapping[str, int | None]


@dataclass(frozen=True, slots=True)
class NicConfig:
    """Lossless configuration of one netdev. ``ecn`` is empty when the driver has no ``ecn/`` directory."""

    interface: str
    ecn: tuple[EcnConfig, ...]
    trust: str | None
    pfc_enabled: tuple[bool, ...] | None
    mtu: int | None
    operstate: str | None
    problems: tuple[ReadProblem, ...] = ()


@dataclass(frozen=True, slots=True)
class RoceTos:
    """The ToS RDMA-CM stamps on RoCE traffic of one device port (0-255; DSCP << 2 | ECN), from both sources."""

    device: str
    port: int
    default_roce_tos: int | None
    default_roce_mode: str | None
    traffic_class: int | None
    problems: tuple[ReadProblem, ...] = ()

    @property
    def tos(self) -> int | None:
        """The effective ToS: the ``tc/<port>/traffic_class`` override when set, else configfs ``default_roce_tos``."""
        return self.traffic_class if self.traffic_class is not None else self.default_roce_tos


def list_net_interfaces(root: str | os.PathLike[str]) -> list[str]:
    """Netdev names under ``<root>/sys/class/net``, sorted; ``[]`` when absent."""
    try:
        return sorted(os.listdir(os.path.join(os.fspath(root), NET_DIR)))
    except OSError:
        return []


def _read_ecn_point(base: str, point: EcnPoint, problems: Problems) -> EcnConfig | None:
    pdir = f"{base}/roce_{point}"
    files = read_dir_values(pdir, problems, optional=True, skip_dirs=True)
    enable = read_dir_values(f"{pdir}/enable", problems, optional=True)
    if not files and not enable:
        return None
    enabled: dict[int, bool | None] = {}
    for prio, text in enable.items():
        if not prio.isdigit():
            continue
        value = None if text is None else parse_counter(text, f"{pdir}/enable/{prio}", problems)
        enabled[int(prio)] = None if value is None else value != 0
    params = {
        name: None if text is None else parse_counter(text, f"{pdir}/{name}", problems) for name, text in files.items()
    }
    return EcnConfig(point=point, enabled=dict(sorted(enabled.items(), key=lambda kv: kv[0])), parameters=params)


def _parse_pfc(text: str | None, path: str, problems: Problems) -> tuple[bool, ...] | None:
    if text is None:
        return None
    flags = [int(x) for x in re.findall(r"[01]", text.split(":", 1)[-1])]
    if len(flags) != 8:
        problems.add(path, f"expected 8 PFC flags (0/1), got {text[:40]!r}")
        return None
    return tuple(bool(f) for f in flags)


def read_nic_config(root: str | os.PathLike[str], interface: str) -> NicConfig:
    """Read ECN/DCQCN, trust, PFC, MTU and operstate of one netdev under the root."""
    problems = Problems()
    idir = os.path.join(os.fspath(root), NET_DIR, interface)
    if not os.path.isdir(idir):
        problems.add(idir, "vanished after discovery (interface removed or tree rewritten)")
    ecn_dir = os.path.join(idir, "ecn")
    ecn = tuple(c for c in (_read_ecn_point(ecn_dir, "np", problems), _read_ecn_point(ecn_dir, "rp", problems)) if c)
    trust = read_text(os.path.join(idir, "qos", "trust"), problems)
    pfc_path = os.path.join(idir, "qos", "pfc")
    pfc = _parse_pfc(read_text(pfc_path, problems), pfc_path, problems)
    mtu_path = os.path.join(idir, "mtu")
    mtu_text = read_text(mtu_path, problems)
    return NicConfig(
        interface=interface,
        ecn=ecn,
        trust=trust or None,
        pfc_enabled=pfc,
        mtu=None if mtu_text is None else parse_counter(mtu_text, mtu_path, problems),
        operstate=read_text(os.path.join(idir, "operstate"), problems) or None,
        problems=tuple(problems),
    )


def read_roce_tos(root: str | os.PathLike[str], device: str, port: int) -> RoceTos:
    """Read the RDMA-CM ToS of one RDMA device port from configfs and from ``tc/<port>/traffic_class``."""
    problems = Problems()
    base = os.fspath(root)
    cm_dir = f"{os.path.join(base, RDMA_CM_DIR)}/{device}/ports/{port}"
    tos_path = f"{cm_dir}/default_roce_tos"
    tos_text = read_text(tos_path, problems)
    tc_path = f"{os.path.join(base, 'sys', 'class', 'infiniband')}/{device}/tc/{port}/traffic_class"
    tc_text = read_text(tc_path, problems)
    tc: int | None = None
    if tc_text:
        m = _NUMBER.search(tc_text)
        if m is None:
            problems.add(tc_path, f"no number in {tc_text[:40]!r}")
        else:
            tc = int(m.group(1))
    return RoceTos(
        device=device,
        port=port,
        default_roce_tos=None if tos_text is None else parse_counter(tos_text, tos_path, problems),
        default_roce_mode=read_text(f"{cm_dir}/default_roce_mode", problems) or None,
        traffic_class=tc,
        problems=tuple(problems),
    )


@dataclass(frozen=True, slots=True, eq=False)
class PointLayout:
    """The files of one DCQCN role: ``(priority, ints index)`` sorted by priority, ``(name, ints index)`` by name."""

    point: EcnPoint
    enabled: tuple[tuple[int, int], ...]
    parameters: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True, eq=False)
class NicConfigLayout:
    """The files :func:`read_nic_config` reads for one netdev, as they were when the layout was built. ``mtu``
    indexes :class:`NicConfigValues` ``ints``; ``trust``, ``pfc`` and ``operstate`` its ``texts`` (-1: no file)."""

    interface: str
    ecn: tuple[PointLayout, ...]
    mtu: int
    trust: int
    pfc: int
    operstate: int
    ints: int


@dataclass(frozen=True, slots=True)
class NicConfigValues:
    """One read through a :class:`NicConfigLayout`: numbers as ints, the other files as stripped text."""

    layout: NicConfigLayout
    ints: list[int]
    texts: list[str]

    def text(self, index: int) -> str | None:
        return None if index < 0 else self.texts[index]

    def pfc_enabled(self) -> tuple[bool, ...] | None:
        """The ``qos/pfc`` flags (None: no file). Raises ValueError when the text does not hold 8 flags."""
        problems = Problems()
        flags = _parse_pfc(self.text(self.layout.pfc), "qos/pfc", problems)
        if problems:
            raise ValueError(str(problems[0]))
        return flags
