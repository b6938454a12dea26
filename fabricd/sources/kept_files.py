"""The readers' kept-open twins: a root's ethtool, RDMA and netdev configuration files read through descriptors kept
open between scrapes (:mod:`fabricd.sources.kept`), with each file layout cached while its directories are unchanged
and every value re-read on every call.

Each class gives exactly what its pure reader would (:func:`fabricd.readers.ethtool.read_ethtool` with
``full=False``, :func:`fabricd.readers.rdma.read_rdma_device`, :func:`fabricd.readers.nic_config.read_nic_config`),
or None when the reader is the way to read it now; the collectors then take the reader, which stays the only path
for problems. The layouts and value types are the readers' (pure, frozen); what keeps descriptors and caches is here
(L2), so ``fabricd.readers`` stays "text and files in, snapshots out".
"""

from __future__ import annotations

import os
from collections.abc import Callable

from fabricd.readers.ethtool import StatsLayout, stats_layout
from fabricd.readers.nic_config import NET_DIR, NicConfigLayout, NicConfigValues, PointLayout
from fabricd.readers.rdma import (
    DeviceLayout,
    PortLayout,
    RdmaValues,
    class_dir,
    meanings,
    merge_counters_ext,
    saturable,
    unmapped,
)

from .kept import KeptFiles, LayoutBuilder, Layouts


class EthtoolFiles:
    """``DIR/ethtool/<if>.stats`` and ``.info`` of a replay root, re-read on every call through kept-open
    descriptors (:mod:`fabricd.sources.kept`), with each text's :class:`StatsLayout` cached while the ``ethtool``
    directory is unchanged.

    :meth:`counters` gives the same counters, in the same order, as :func:`read_ethtool` with ``full=False``, or
    None when that is the way to read this interface now (no layout yet, a racy or changed directory, a text whose
    names changed, a value that is not a plain number, a file that vanished).
    """

    def __init__(self, root: str | os.PathLike[str], layouts: Layouts[str, StatsLayout | None] | None = None) -> None:
        self.base = os.path.join(os.fspath(root), "ethtool")
        self.layouts: Layouts[str, StatsLayout | None] = layouts if layouts is not None else Layouts()
        self._last: dict[str, tuple[StatsLayout, bytes, list[int]]] = {}
        """Per interface, the layout, text and values of the last parse: a text read again byte for byte is not
        parsed again (a capture replayed as is; a live-driven tree changes its counters and is parsed every time)."""

    def counters(self, interface: str) -> tuple[StatsLayout, list[int]] | None:
        """``(layout, values)``: ``values[i]`` is the value of ``layout.selection[i]``."""
        layouts = self.layouts
        if not layouts.enabled:
            return None
        now = layouts.clock()
        entry = layouts.get(interface, now)
        if entry is None:
            entry = self._build(interface)
            if entry is None:
                return None
        kept, layout = entry
        if layout is None:  # this text has no layout (irregular); read it the slow way until it changes
            return None
        data = kept.read()
        if data is None:
            layouts.drop(interface)
            return None
        info = data[1] if len(data) == 2 else None
        last = self._last.get(interface)
        if last is not None and last[0] is layout and last[1] == data[0] and info == layout.info_bytes:
            return layout, last[2]  # the same bytes as last time: the same values (only the parse is saved)
        values = layout.values(data[0]) if info == layout.info_bytes else None
        if values is None:
            self._last.pop(interface, None)
            layouts.drop(interface)
            return None
        self._last[interface] = (layout, data[0], values)
        return layout, values

    def forget_others(self, interfaces: set[str]) -> None:
        """Close the layouts of interfaces not in ``interfaces`` and forget their last texts."""
        self.layouts.keep_only(interfaces)
        for gone in [n for n in self._last if n not in interfaces]:
            del self._last[gone]

    def _build(self, interface: str) -> tuple[KeptFiles, StatsLayout | None] | None:
        builder = self.layouts.builder()
        if not builder.watch(self.base):
            return None
        stats_path = f"{self.base}/{interface}.stats"
        info_path = f"{self.base}/{interface}.info"
        builder.add(stats_path)
        if builder.exists(info_path):
            builder.add(info_path)
        kept = builder.build(self.layouts.budget)
        if kept is None:
            return None
        data = kept.read()
        if data is None:
            kept.close()
            return None
        layout = stats_layout(data[1] if len(data) == 2 else None, data[0])
        if layout is None:
            kept.close()  # remember "no layout" until the directory changes: this text is read the slow way
            kept = builder.stamps_only()
        self.layouts.put(interface, kept, layout)
        return kept, layout


_PORT_TEXTS = ("state", "phys_state", "rate", "link_layer")
_DEVICE_TEXTS = ("fw_ver", "board_id", "hca_type", "node_guid", "node_type")


class RdmaFiles:
    """RDMA devices of a root read through kept-open descriptors (:mod:`fabricd.sources.kept`): each device's file
    layout is cached while its directories are unchanged, every file is re-read on every call.

    :meth:`read` gives exactly what :func:`read_rdma_device` would read, or None when that is the way to read the
    device now (no layout yet, a racy or changed directory, a failed read, a value that is not a plain integer
    such as ``N/A (no PMA)``).
    """

    def __init__(self, root: str | os.PathLike[str], layouts: Layouts[str, DeviceLayout] | None = None) -> None:
        self.base = class_dir(root)
        self.layouts: Layouts[str, DeviceLayout] = layouts if layouts is not None else Layouts()

    def read(self, device: str) -> RdmaValues | None:
        layouts = self.layouts
        if not layouts.enabled:
            return None
        entry = layouts.get(device, layouts.clock()) or self._build(device)
        if entry is None:
            return None
        kept, layout = entry
        data = kept.read()
        if data is None:
            layouts.drop(device)
            return None
        n = layout.ints
        try:
            ints = list(map(int, data[:n]))
        except ValueError:  # N/A or a broken value: read_rdma_device says what it means
            return None
        try:
            netdevs = tuple(sorted(os.listdir(f"{self.base}/{device}/device/net")))
        except FileNotFoundError:
            netdevs = ()
        except OSError:
            return None
        texts = [d.decode("utf-8", "replace").strip() for d in data[n:]]
        return RdmaValues(layout, ints, texts, netdevs)

    def forget_others(self, devices: set[str]) -> None:
        """Close the layouts of devices not in ``devices`` (removed since)."""
        self.layouts.keep_only(devices)

    def _build(self, device: str) -> tuple[KeptFiles, DeviceLayout] | None:
        b = self.layouts.builder()
        dev_dir = f"{self.base}/{device}"
        ints: list[str] = []
        texts: list[str] = []

        def counter_dir(path: str) -> dict[str, int] | None:
            if not b.exists(path):
                return {}
            listed = b.scandir(path)
            if listed is None or listed[1]:  # sub-directories: read_rdma_device reports them
                return None
            out = {}
            for name in listed[0]:
                out[name] = len(ints)
                ints.append(f"{path}/{name}")
            return out

        def attribute(path: str) -> int:
            if not b.exists(path):
                return -1
            texts.append(path)
            return len(texts) - 1

        if not b.watch(dev_dir):
            return None
        port_names = b.listdir(f"{dev_dir}/ports")
        if port_names is None or counter_dir(f"{dev_dir}/hw_counters") is None:
            return None
        ports: list[tuple[int, dict[str, int], dict[str, int], dict[str, int], list[int]]] = []
        for name in port_names:
            if not name.isdigit():
                continue
            pdir = f"{dev_dir}/ports/{int(name)}"
            if not b.watch(pdir):
                return None
            attrs = [attribute(f"{pdir}/{a}") for a in _PORT_TEXTS]
            counters, ext, hw = (counter_dir(f"{pdir}/{sub}") for sub in ("counters", "counters_ext", "hw_counters"))
            if counters is None or ext is None or hw is None:
                return None
            ports.append((int(name), counters, ext, hw, attrs))
        dev_attrs = [attribute(f"{dev_dir}/{a}") for a in _DEVICE_TEXTS]
        n = len(ints)
        b.files.extend(ints)
        b.files.extend(texts)
        port_layouts = []
        for port, counters, ext, hw, attrs in sorted(ports, key=lambda p: p[0]):
            replaced = merge_counters_ext(counters, ext)
            port_layouts.append(
                PortLayout(
                    port,
                    attrs[0],
                    attrs[1],
                    attrs[2],
                    attrs[3],
                    meanings=tuple((key, i, scale) for key, (i, scale) in meanings(counters, hw).items()),
                    unmapped=tuple(unmapped(hw).items()),
                    saturable=tuple(saturable(counters, replaced)),
                )
            )
        layout = DeviceLayout(
            device,
            dev_attrs[0],
            dev_attrs[1],
            dev_attrs[2],
            dev_attrs[3],
            dev_attrs[4],
            ports=tuple(port_layouts),
            ints=n,
        )
        kept = b.build(self.layouts.budget)
        if kept is None:
            return None
        self.layouts.put(device, kept, layout)
        return kept, layout


class NicConfigFiles:
    """Netdev configuration files of a root read through kept-open descriptors (:mod:`fabricd.sources.kept`): the
    layout of each interface is cached while its directories are unchanged, every file is re-read on every call.

    :meth:`read` gives what :func:`read_nic_config` would read, or None when that is the way to read the interface
    now (no layout yet, a racy or changed directory, a failed read, a value that is not a plain integer).
    """

    def __init__(self, root: str | os.PathLike[str], layouts: Layouts[str, NicConfigLayout] | None = None) -> None:
        self.base = os.path.join(os.fspath(root), NET_DIR)
        self.layouts: Layouts[str, NicConfigLayout] = layouts if layouts is not None else Layouts()

    def read(self, interface: str) -> NicConfigValues | None:
        layouts = self.layouts
        if not layouts.enabled:
            return None
        entry = layouts.get(interface, layouts.clock()) or self._build(interface)
        if entry is None:
            return None
        kept, layout = entry
        data = kept.read()
        if data is None:
            layouts.drop(interface)
            return None
        n = layout.ints
        try:
            ints = list(map(int, data[:n]))
        except ValueError:  # read_nic_config says what is wrong
            return None
        return NicConfigValues(layout, ints, [d.decode("utf-8", "replace").strip() for d in data[n:]])

    def forget_others(self, interfaces: set[str]) -> None:
        """Close the layouts of interfaces not in ``interfaces``."""
        self.layouts.keep_only(interfaces)

    def _build(self, interface: str) -> tuple[KeptFiles, NicConfigLayout] | None:
        b = self.layouts.builder()
        idir = f"{self.base}/{interface}"
        ints: list[str] = []
        texts: list[str] = []

        def number(path: str) -> int:
            ints.append(path)
            return len(ints) - 1

        def text(path: str) -> int:
            if not b.exists(path):
                return -1
            texts.append(path)
            return len(texts) - 1

        if not b.watch(idir):
            return None
        points = _ecn_points(b, f"{idir}/ecn", number)
        if points is None:
            return None
        mtu = number(f"{idir}/mtu") if b.exists(f"{idir}/mtu") else -1
        trust = pfc = -1
        if b.exists(f"{idir}/qos"):
            if not b.watch(f"{idir}/qos"):
                return None
            trust, pfc = text(f"{idir}/qos/trust"), text(f"{idir}/qos/pfc")
        operstate = text(f"{idir}/operstate")
        b.files.extend(ints)
        b.files.extend(texts)
        kept = b.build(self.layouts.budget)
        if kept is None:
            return None
        layout = NicConfigLayout(interface, tuple(points), mtu, trust, pfc, operstate, len(ints))
        self.layouts.put(interface, kept, layout)
        return kept, layout


def _ecn_points(b: LayoutBuilder, ecn_dir: str, number: Callable[[str], int]) -> list[PointLayout] | None:
    """The layout of ``ecn/roce_np`` and ``ecn/roce_rp`` (per-priority enables, then parameters); None when the tree
    is not the usual shape (read_nic_config then reads it and says what is odd)."""
    points: list[PointLayout] = []
    if not b.exists(ecn_dir):
        return points
    if not b.watch(ecn_dir):
        return None
    for point in ("np", "rp"):
        pdir = f"{ecn_dir}/roce_{point}"
        if not b.exists(pdir):
            continue
        listed = b.scandir(pdir)
        if listed is None or "enable" in listed[0]:
            return None
        enabled: list[tuple[int, int]] = []
        if "enable" in listed[1]:
            prios = b.scandir(f"{pdir}/enable")
            if prios is None or prios[1] or not all(p.isdigit() and p == str(int(p)) for p in prios[0]):
                return None  # odd names: read_nic_config handles them
            enabled = sorted((int(p), number(f"{pdir}/enable/{p}")) for p in prios[0])
        params = tuple((name, number(f"{pdir}/{name}")) for name in listed[0])
        if enabled or params:
            points.append(PointLayout(point, tuple(enabled), params))
    return points
