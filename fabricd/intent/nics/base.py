"""The NIC profile data model: what one driver family can set, where, in what units, and what it counts.

A :class:`NicProfile` is data, one module per family (registered in ``fabricd/intent/nics/__init__.py``), each knob
with the vendor document it comes from, and everything else about the family: its counter names (ethtool per driver
generation, RDMA hw_counters), the lab's fake device (:class:`LabNic`) and the docs row (docs/nics.md is generated).
``Nic.driver`` (or ``Nic.rdma_driver``) selects the profile; the host intent, the rendered script, the host backends,
``fabricd validate``, the audit, the readers and the lab all read the same profile, so a knob a family lacks is a
located validate error instead of a path that does not exist at apply time.

Path templates use ``{netdev}``, ``{dev}`` (RDMA device), ``{port}`` (RDMA port) and ``{prio}`` (802.1p priority).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from fabricd.model import Transport
from fabricd.readers.counter_names import DriverNames, HwMeaning

ValueFormat = Literal["dec", "hex"]
"""How a knob's value is written and printed: ``dec`` (``26``) or ``hex`` (``0x1a``, bnxt_re configfs ``%#x``)."""


@dataclass(frozen=True, slots=True)
class Knob:
    """One writable setting of a family: its file, range, unit, documented default and source.

    ``runtime`` False marks a load-time module parameter (``/etc/modprobe.d``): fabricd cannot set it on a running
    host and ``fabricd validate`` says so. ``verified`` False marks a range or path that no capture or vendor
    document confirms (taken from the driver's source types); the NIC support matrix lists those.
    """

    name: str
    path: str
    minimum: int
    maximum: int
    unit: str
    source: str
    default: int | None = None
    fmt: ValueFormat = "dec"
    runtime: bool = True
    verified: bool = True
    description: str = ""
    transports: frozenset[Transport] | None = None
    """Transports under which the driver exposes the knob (irdma: ``roce_*`` files in RoCEv2 mode, ``iw_*`` in
    iWARP mode); None = any."""

    def exists_for(self, transport: Transport) -> bool:
        return self.transports is None or transport in self.transports

    def render_path(self, netdev: str, dev: str | None, port: int, prio: int | None = None) -> str:
        return self.path.format(netdev=netdev, dev=dev or "", port=port, prio="" if prio is None else prio)

    def in_range(self, value: int) -> bool:
        return self.minimum <= value <= self.maximum


@dataclass(frozen=True, slots=True)
class Prerequisite:
    """Something that must hold before the family's DCB or RDMA settings take effect, which fabricd checks in the
    rendered script and reports in the plan but does not change through a host backend (``command`` does it)."""

    what: str
    check: str
    command: str
    source: str
    transports: frozenset[Transport] | None = None
    verified: bool = True

    def applies_to(self, transport: Transport) -> bool:
        return self.transports is None or transport in self.transports

    def render(self, text: str, netdev: str, dev: str | None) -> str:
        return text.format(netdev=netdev, dev=dev or "")


@dataclass(frozen=True, slots=True)
class LabNic:
    """How fabricd-lab's fake host (``fabricd_lab.fake_host``) writes one NIC of this family, from real captures.

    ``ethtool_capture``: the family's ``ethtool -S`` capture in tests/golden/readers/ethtool (None: no capture exists,
    the fake host writes no ethtool files for it) and ``ethtool_info_driver`` the driver its ``ethtool -i`` names.
    ``device_capture`` True: the RDMA device is the mlx5_0 capture as is (its hw_counters and board files); False:
    the capture's port files with the family's own hw_counters names at 0. The family's sysfs ``ecn/`` files come
    from the capture when its knobs live there, its configfs knobs are written at their documented default (0 when
    none) in the knob's format, and ``tc/<port>/traffic_class`` exists when ``traffic_class`` is set.
    """

    ethtool_capture: str | None
    ethtool_info_driver: str
    device_capture: bool = False


@dataclass(frozen=True, slots=True)
class NicProfile:
    """Everything fabricd knows about one NIC driver family.

    - ``drivers``/``rdma_drivers``: kernel driver names (``ethtool -i``, ``/sys/class/infiniband/<dev>/device/driver``)
      that select this family;
    - ``transports``: the RDMA transports the family runs;
    - DCB: ``dcb`` True when trust/PFC/ETS/APP go through DCB netlink (iproute2 ``dcb``, fabricd's dcbnl backend);
      ``apptrust`` True when the driver implements ``dcbnl_setapptrust`` (else DSCP trust follows from the DSCP APP
      entries); ``app_all_dscp`` False when the driver wants only the mapped DSCPs in its APP table;
      ``max_tcs``, ``max_pfc_priorities``; ``tc_of_class`` pins traffic classes by role (``roce``, ``cnp``,
      ``default``) where the driver requires it; ``compact_tcs`` renumbers the used TCs 0..n-1 (contiguous from 0);
    - RoCE ToS: ``rdma_cm`` (configfs ``default_roce_tos``/``default_roce_mode``), ``traffic_class`` (MLNX_OFED
      ``tc/<port>/traffic_class``, optional);
    - congestion control: ``cc_group`` (a configfs group fabricd creates with mkdir before writing), ``cc_commit``
      (a file written with 1 after the knobs, e.g. bnxt_re ``cc/apply``), ``roles`` (knobs fabricd sets from the
      policy: ``cnp_dscp``, ``cnp_prio``, ``roce_dscp``, ``roce_prio``, ``cc_enable`` per transport as
      ``cc_enable.<transport>``, ``np_enable``/``rp_enable`` per priority), ``tunables`` (knobs a NIC may set in
      ``cc:``; the DCQCN names of ``policy.dcqcn`` resolve here too; ``aliases`` names the family's nearest knob for
      a DCQCN name it lacks, for the fix hint);
    - counters: ``ethtool`` (the netdev driver's ``ethtool -S`` names per generation; None when the family has no
      netdev driver of its own, rxe) and ``hw_counters`` (the RDMA ``hw_counters`` names of this family's driver,
      normalised); the readers walk the registry for both (``fabricd.readers.ethtool_maps``, ``readers.rdma``);
    - ``lab``: how the lab's fake host writes this family's device (:class:`LabNic`);
    - ``limits``: what the family cannot do, as sentences for the support matrix.
    """

    family: str
    title: str
    drivers: tuple[str, ...]
    rdma_drivers: tuple[str, ...]
    transports: frozenset[Transport]
    dcb: bool
    apptrust: bool
    max_tcs: int
    max_pfc_priorities: int
    global_pause: bool
    rdma_cm: bool
    traffic_class: bool
    ethtool: DriverNames | None
    hw_counters: Mapping[str, HwMeaning]
    sources: tuple[str, ...]
    lab: LabNic
    roles: Mapping[str, Knob] = field(default_factory=dict)
    tunables: Mapping[str, Knob] = field(default_factory=dict)
    cc_group: str | None = None
    cc_commit: str | None = None
    tc_of_class: Mapping[str, int] = field(default_factory=dict)
    compact_tcs: bool = False
    app_all_dscp: bool = True
    aliases: Mapping[str, str] = field(default_factory=dict)
    prerequisites: tuple[Prerequisite, ...] = ()
    limits: tuple[str, ...] = ()

    @property
    def ethtool_driver(self) -> str | None:
        """The driver whose ``ethtool -S`` names :attr:`ethtool` holds (None: the netdev's own driver, rxe)."""
        return self.ethtool.driver if self.ethtool is not None else None

    def role(self, name: str) -> Knob | None:
        return self.roles.get(name)

    def cc_enable(self, transport: Transport) -> Knob | None:
        """The single knob that turns this family's congestion control on for ``transport`` (None: per priority
        knobs ``np_enable``/``rp_enable``, or none)."""
        return self.roles.get(f"cc_enable.{transport.value}")

    @property
    def knob_names(self) -> list[str]:
        return sorted(self.tunables)
