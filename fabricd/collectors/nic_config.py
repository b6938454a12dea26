"""NIC configuration collector: ECN/DCQCN enables and parameters, RDMA-CM ToS, trust and PFC where the kernel
exposes them, as gauges, so that a rule can alert when a host drifts from intent (node_exporter exports none of it).

Interfaces: every netdev under ``<root>/sys/class/net`` that has an ``ecn/`` directory or backs an RDMA device.

The files are read again every :data:`CONFIG_INTERVAL_S` seconds (``fabricd export host --config-interval``), at once
when a file under them is written or replaced (inotify, on local file systems: every replay root there, as the replay
contract asks), and at once when the set of interfaces or RDMA devices changes or the last read had a problem; scrapes
in between export the values of the last clean read, which are then still the files' content. Configuration is not a
counter, and reading it is not free on real NICs: with MLNX_OFED every ``ecn/roce_np|roce_rp`` file read is a
firmware command (``mlx5e_show_ecn_enable`` issues QUERY_CONG_STATUS, each parameter's show function
QUERY_CONG_PARAMS), about 35 per NIC. On a live host sysfs gives no inotify event when the driver or firmware changes
a value, so inotify is not used there and the interval bounds how stale a value can be; the alert on these gauges
(FabricEcnDisabledOnRocePriority, exporters/rules) waits 5 minutes anyway.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from fabricd.readers.nic_config import (
    NET_DIR,
    RDMA_CM_DIR,
    NicConfigLayout,
    list_net_interfaces,
    read_nic_config,
    read_roce_tos,
)
from fabricd.readers.rdma import class_dir, list_rdma_devices
from fabricd.sources.kept import Clock, Layouts
from fabricd.sources.kept_files import NicConfigFiles
from fabricd.sources.notify import DIR_CHANGES, Watch, notifies

from .core import Family, MetricSpec, Scrape, Value

Sample = tuple[tuple[str, ...], Value]

CONFIG_INTERVAL_S = 60.0
"""Default seconds between two reads of the NIC configuration files (see the module docstring); 0 reads them on
every scrape."""

ECN_SRC = "sysfs /sys/class/net/<if>/ecn/roce_np|roce_rp"

ECN_ENABLED = MetricSpec(
    "fabricd_nic_ecn_enabled",
    "gauge",
    "1 when DCQCN is enabled for the priority: point np = notification point (receiver sends CNPs), "
    "rp = reaction point (sender slows down on CNPs); 0 when disabled.",
    ("interface", "point", "priority"),
    f"{ECN_SRC}/enable/<prio>",
)
DCQCN_PARAMETER = MetricSpec(
    "fabricd_nic_dcqcn_parameter",
    "gauge",
    "A DCQCN parameter as read back from the NIC (name is the sysfs file: cnp_dscp, cnp_802p_prio, "
    "min_time_between_cnps (us), rpg_time_reset (us), rpg_ai_rate (Mb/s)...; units are the driver's).",
    ("interface", "point", "name"),
    ECN_SRC,
)
ROCE_TOS = MetricSpec(
    "fabricd_nic_roce_tos",
    "gauge",
    "ToS byte RDMA-CM puts on RoCE traffic (DSCP << 2 | ECN, 0-255; 106 = DSCP 26 + ECT(0)); 0 means lossy TC0.",
    ("device", "port"),
    "configfs rdma_cm/<dev>/ports/<n>/default_roce_tos; MLNX_OFED tc/<n>/traffic_class",
)
PFC_ENABLED = MetricSpec(
    "fabricd_nic_pfc_enabled",
    "gauge",
    "1 when PFC is enabled on the priority, 0 when not (where sysfs exposes it).",
    ("interface", "priority"),
    "sysfs /sys/class/net/<if>/qos/pfc (MLNX_OFED)",
)
TRUST = MetricSpec(
    "fabricd_nic_trust_info",
    "gauge",
    "The NIC's QoS trust mode (pcp or dscp) where sysfs exposes it; value 1.",
    ("interface", "trust"),
    "sysfs /sys/class/net/<if>/qos/trust (MLNX_OFED)",
)
MTU = MetricSpec(
    "fabricd_nic_mtu_bytes", "gauge", "Interface MTU, in bytes.", ("interface",), "sysfs /sys/class/net/<if>/mtu"
)

_PRIO = tuple(str(p) for p in range(8))

Routes = tuple[tuple[tuple[str, ...], int], ...]
"""``(labels, ints index)`` of each sample a :class:`NicConfigLayout` gives one family."""


def _routes(layout: NicConfigLayout) -> tuple[Routes, Routes]:
    """ECN enable and DCQCN parameter samples of one layout, in :func:`read_nic_config`'s order (np, then rp)."""
    ifname = layout.interface
    enabled = tuple(
        ((ifname, point.point, _PRIO[prio]), i) for point in layout.ecn for prio, i in point.enabled if 0 <= prio <= 7
    )
    params = tuple(((ifname, point.point, name), i) for point in layout.ecn for name, i in point.parameters)
    return enabled, params


@dataclass(frozen=True, slots=True)
class _Held:
    """The samples of the last clean read, for the interfaces and devices it found, and when (monotonic s)."""

    found: tuple[tuple[str, ...], tuple[str, ...]]
    at: float
    samples: tuple[tuple[MetricSpec, tuple[Sample, ...]], ...]


class _ConfigFamilies:
    """The families one read fills (created in this order, so a scrape lists them alike either way)."""

    __slots__ = ("ecn", "mtu", "params", "pfc", "tos", "trust")

    def __init__(self, scrape: Scrape) -> None:
        fam = scrape.family
        self.ecn, self.params, self.tos = fam(ECN_ENABLED), fam(DCQCN_PARAMETER), fam(ROCE_TOS)
        self.pfc, self.trust, self.mtu = fam(PFC_ENABLED), fam(TRUST), fam(MTU)


class NicConfigCollector:
    """``nic_config``: lossless configuration read back from sysfs/configfs under a root.

    ``interval_s`` is how long the values of a clean read are exported before the files are read again (0: every
    scrape); ``monotonic`` is the clock it is measured with (tests). ``notify`` forces inotify on or off (default:
    on when the root's ``sys/class/net`` is on a local file system); ``replay`` says the root is a replay tree,
    which is then read on every scrape when inotify is off.
    """

    name = "nic_config"
    metrics: tuple[MetricSpec, ...] = (ECN_ENABLED, DCQCN_PARAMETER, ROCE_TOS, PFC_ENABLED, TRUST, MTU)

    def __init__(
        self,
        root: str | os.PathLike[str] = "/",
        *,
        include: re.Pattern[str] | None = None,
        kept_files: bool = True,
        clock: Clock = time.time_ns,
        interval_s: float = CONFIG_INTERVAL_S,
        monotonic: Callable[[], float] = time.monotonic,
        notify: bool | None = None,
        replay: bool = False,
    ) -> None:
        if not interval_s >= 0:
            raise ValueError(f"config interval must be 0 or more seconds, got {interval_s}")
        self.root = os.fspath(root)
        self.include = include
        self.interval_s = interval_s
        self.files = NicConfigFiles(self.root, Layouts(clock=clock, enabled=kept_files))
        self.notify = notifies(os.path.join(self.root, NET_DIR)) if notify is None else notify
        """Whether writes to the configuration files are learnt from inotify (a replay root on a local file system;
        not sysfs, where the driver changes values without events)."""
        self.replay = replay
        """A replay root: without inotify, its files are read on every scrape (the replay contract: files rewritten
        while fabricd runs are re-read), whatever the interval."""
        self._monotonic = monotonic
        self._held: _Held | None = None
        self._watch: Watch | None = None
        self._routes: dict[str, tuple[NicConfigLayout, tuple[Routes, Routes]]] = {}

    def _interfaces(self, devices: list[str]) -> list[str]:
        names = set()
        net = os.path.join(self.root, "sys", "class", "net")
        for ifname in list_net_interfaces(self.root):
            if os.path.isdir(f"{net}/{ifname}/ecn"):
                names.add(ifname)
        rdma = class_dir(self.root)
        for dev in devices:
            try:
                names.update(os.listdir(f"{rdma}/{dev}/device/net"))
            except OSError:
                continue
        return sorted(n for n in names if self.include is None or self.include.search(n))

    def collect(self, scrape: Scrape) -> None:
        devices = list_rdma_devices(self.root)
        interfaces = self._interfaces(devices)
        found = (tuple(interfaces), tuple(devices))
        now = self._monotonic()
        held = self._held
        if held is not None and held.found == found and now - held.at < self.interval_s and self._unwritten():
            for spec, samples in held.samples:
                scrape.family(spec).samples.extend(samples)
            return
        self._held = None
        watched = self.interval_s > 0 and (self._rewatch(interfaces, devices) if self.notify else not self.replay)
        self._read(scrape, devices, interfaces)
        if watched and not scrape.problems:
            self._held = _Held(found, now, tuple((f.spec, tuple(f.samples)) for f in scrape.families.values()))

    def _unwritten(self) -> bool:
        """Whether nothing under the watched directories changed since they were read (always True without
        inotify, where only the interval counts)."""
        if not self.notify:
            return True
        return self._watch is not None and self._watch.changed() == set()

    def _rewatch(self, interfaces: list[str], devices: list[str]) -> bool:
        """Watch every directory the configuration is read from (and the parents in which the missing ones would
        appear), before reading it, so that a write during the read shows at the next scrape. False when inotify
        cannot be set up (then nothing is held)."""
        if self._watch is not None:
            self._watch.close()
        try:
            self._watch = watch = Watch(DIR_CHANGES)
        except OSError:
            self._watch = None
            return False
        net = os.path.join(self.root, NET_DIR)
        cm = os.path.join(self.root, RDMA_CM_DIR)
        rdma = class_dir(self.root)
        paths = [cm]
        for ifname in interfaces:
            d = f"{net}/{ifname}"
            paths += [
                d,
                f"{d}/qos",
                f"{d}/ecn",
                f"{d}/ecn/roce_np",
                f"{d}/ecn/roce_np/enable",
                f"{d}/ecn/roce_rp",
                f"{d}/ecn/roce_rp/enable",
            ]
        for dev in devices:
            paths += [f"{cm}/{dev}", f"{cm}/{dev}/ports", f"{rdma}/{dev}/ports", f"{rdma}/{dev}/tc"]
            try:
                ports = [p for p in os.listdir(f"{rdma}/{dev}/ports") if p.isdigit()]
            except OSError:
                continue
            paths += [f"{base}/{port}" for port in ports for base in (f"{cm}/{dev}/ports", f"{rdma}/{dev}/tc")]
        top = os.path.normpath(self.root)
        for path in paths:
            at = path
            while not watch.add(path, at) and at != top:  # missing: watch where it would appear
                at = os.path.dirname(at)
        return True

    def _read(self, scrape: Scrape, devices: list[str], interfaces: list[str]) -> None:
        """Read every configuration file now."""
        out = _ConfigFamilies(scrape)
        for ifname in interfaces:
            if not self._collect_kept(ifname, out):
                self._collect_snapshot(scrape, ifname, out)
        self._collect_tos(scrape, devices, out.tos)
        self.files.forget_others(set(interfaces))
        for gone in [n for n in self._routes if n not in interfaces]:
            del self._routes[gone]

    def _collect_snapshot(self, scrape: Scrape, ifname: str, out: _ConfigFamilies) -> None:
        """Add one interface's samples from :func:`read_nic_config` (the slow way), with its problems."""
        cfg = read_nic_config(self.root, ifname)
        for problem in cfg.problems:
            scrape.problem(str(problem))
        for point in cfg.ecn:
            for prio, enabled in point.enabled.items():
                if enabled is not None and 0 <= prio <= 7:
                    out.ecn.samples.append(((ifname, point.point, _PRIO[prio]), int(enabled)))
            for pname, value in point.parameters.items():
                out.params.add((ifname, point.point, pname), value)
        if cfg.pfc_enabled is not None:
            for prio, on in enumerate(cfg.pfc_enabled):
                out.pfc.samples.append(((ifname, _PRIO[prio]), int(on)))
        if cfg.trust is not None:
            out.trust.add((ifname, cfg.trust), 1)
        out.mtu.add((ifname,), cfg.mtu)

    def _collect_tos(self, scrape: Scrape, devices: list[str], tos: Family) -> None:
        """The RoCE ToS (rdma_cm's ``default_roce_tos``) of every port of every included RDMA device."""
        rdma = class_dir(self.root)
        for dev in devices:
            if self.include is not None and not self.include.search(dev):
                continue
            try:
                ports = [p for p in os.listdir(f"{rdma}/{dev}/ports") if p.isdigit()]
            except OSError:
                continue
            for port in sorted(ports, key=int):
                t = read_roce_tos(self.root, dev, int(port))
                for problem in t.problems:
                    scrape.problem(str(problem))
                tos.add((dev, port), t.tos)

    def _collect_kept(self, ifname: str, out: _ConfigFamilies) -> bool:
        """Add one interface's samples from :attr:`files` (the same ones :func:`read_nic_config` gives); False,
        adding nothing, when it must be read the slow way now."""
        values = self.files.read(ifname)
        if values is None:
            return False
        try:
            pfc_flags = values.pfc_enabled()
        except ValueError:
            return False
        layout, ints = values.layout, values.ints
        cached = self._routes.get(ifname)
        if cached is None or cached[0] is not layout:
            cached = self._routes[ifname] = (layout, _routes(layout))
        enabled_routes, param_routes = cached[1]
        out.ecn.samples.extend([(labels, int(ints[i] != 0)) for labels, i in enabled_routes])
        out.params.samples.extend([(labels, ints[i]) for labels, i in param_routes])
        if pfc_flags is not None:
            out.pfc.samples.extend([((ifname, _PRIO[prio]), int(on)) for prio, on in enumerate(pfc_flags)])
        trust_text = values.text(layout.trust)
        if trust_text:
            out.trust.samples.append(((ifname, trust_text), 1))
        if layout.mtu >= 0:
            out.mtu.samples.append(((ifname,), ints[layout.mtu]))
        return True
