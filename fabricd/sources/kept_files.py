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
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

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

from .kept import FdBudget, KeptFiles, LayoutBuilder, Layouts

_L = TypeVar("_L")


class _KeptReader(ABC, Generic[_L]):
    """What the three twins share: each key's layout cached in :attr:`layouts` (built by ``_build`` when there is
    none fresh), and closing the layouts of keys gone from a scrape."""

    layouts: Layouts[str, _L]

    @abstractmethod
    def _build(self, key: str) -> tuple[KeptFiles, _L] | None:
        """The key's kept files and layout, built now; None when they cannot be built now."""

    def _entry(self, key: str) -> tuple[KeptFiles, _L] | None:
        """The key's fresh ``(kept files, layout)``, else one built now; None when kept files are off or the layout
        cannot be built now."""
        layouts = self.layouts
        if not layouts.enabled:
            return None
        return layouts.get(key, layouts.clock()) or self._build(key)

    def forget_others(self, keys: set[str]) -> None:
        """Close the layouts of keys not in ``keys`` (removed since)."""
        self.layouts.keep_only(keys)


class _IntsFirst(Protocol):
    @property
    def ints(self) -> int: ...


_N = TypeVar("_N", bound=_IntsFirst)


class _NumbersThenTexts(_KeptReader[_N]):
    """A twin whose layout lists its number files first (``layout.ints`` of them), then its text files."""

    def _values(self, key: str) -> tuple[_N, list[int], list[str]] | None:
        """The layout, the numbers and the stripped texts, every file re-read; None when the reader is the way to
        read the key now (a vanished file drops the layout; a value that is not a plain integer keeps it)."""
        entry = self._entry(key)
        if entry is None:
            return None
        kept, layout = entry
        data = kept.read()
        if data is None:
            self.layouts.drop(key)
            return None
        n = layout.ints
        try:
            ints = list(map(int, data[:n]))
        except ValueError:  # N/A or a broken value: the reader says what it means
            return None
        return layout, ints, [d.decode("utf-8", "replace").strip() for d in data[n:]]


class _Files:
    """The files of a layout being built: number files and text files in two lists, each file known by its index
    in its list; :meth:`build` keeps them open, numbers first."""

    def __init__(self, builder: LayoutBuilder) -> None:
        self.builder = builder
        self.ints: list[str] = []
        self.texts: list[str] = []

    def number(self, path: str) -> int:
        self.ints.append(path)
        return len(self.ints) - 1

    def text(self, path: str) -> int:
        """The index of a text file, -1 when it does not exist."""
        if not self.builder.exists(path):
            return -1
        self.texts.append(path)
        return len(self.texts) - 1

    def build(self, budget: FdBudget | None) -> KeptFiles | None:
        self.builder.files.extend(self.ints)
        self.builder.files.extend(self.texts)
        return self.builder.build(budget)


class EthtoolFiles(_KeptReader[StatsLayout | None]):
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
        entry = self._entry(interface)
        if entry is None:
            return None
        kept, layout = entry
        if layout is None:  # this text has no layout (irregular); read it the slow way until it changes
            return None
        data = kept.read()
        if data is None:
            self.layouts.drop(interface)
            return None
        info = data[1] if len(data) == 2 else None
        last = self._last.get(interface)
        if last is not None and last[0] is layout and last[1] == data[0] and info == layout.info_bytes:
            return layout, last[2]  # the same bytes as last time: the same values (only the parse is saved)
        values = layout.values(data[0]) if info == layout.info_bytes else None
        if values is None:
            self._last.pop(interface, None)
            self.layouts.drop(interface)
            return None
        self._last[interface] = (layout, data[0], values)
        return layout, values

    def forget_others(self, keys: set[str]) -> None:
        """Close the layouts of interfaces not in ``keys`` and forget their last texts."""
        super().forget_others(keys)
        for gone in [n for n in self._last if n not in keys]:
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


class RdmaFiles(_NumbersThenTexts[DeviceLayout]):
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
        values = self._values(device)
        if values is None:
            return None
        try:
            netdevs = tuple(sorted(os.listdir(f"{self.base}/{device}/device/net")))
        except FileNotFoundError:
            netdevs = ()
        except OSError:
            return None
        return RdmaValues(*values, netdevs)

    def _build(self, device: str) -> tuple[KeptFiles, DeviceLayout] | None:
        b = self.layouts.builder()
        files = _Files(b)
        dev_dir = f"{self.base}/{device}"

        def counter_dir(path: str) -> dict[str, int] | None:
            if not b.exists(path):
                return {}
            listed = b.scandir(path)
            if listed is None or listed[1]:  # sub-directories: read_rdma_device reports them
                return None
            return {name: files.number(f"{path}/{name}") for name in listed[0]}

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
            attrs = [files.text(f"{pdir}/{a}") for a in _PORT_TEXTS]
            counters, ext, hw = (counter_dir(f"{pdir}/{sub}") for sub in ("counters", "counters_ext", "hw_counters"))
            if counters is None or ext is None or hw is None:
                return None
            ports.append((int(name), counters, ext, hw, attrs))
        dev_attrs = [files.text(f"{dev_dir}/{a}") for a in _DEVICE_TEXTS]
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
            ints=len(files.ints),
        )
        kept = files.build(self.layouts.budget)
        if kept is None:
            return None
        self.layouts.put(device, kept, layout)
        return kept, layout


class NicConfigFiles(_NumbersThenTexts[NicConfigLayout]):
    """Netdev configuration files of a root read through kept-open descriptors (:mod:`fabricd.sources.kept`): the
    layout of each interface is cached while its directories are unchanged, every file is re-read on every call.

    :meth:`read` gives what :func:`read_nic_config` would read, or None when that is the way to read the interface
    now (no layout yet, a racy or changed directory, a failed read, a value that is not a plain integer).
    """

    def __init__(self, root: str | os.PathLike[str], layouts: Layouts[str, NicConfigLayout] | None = None) -> None:
        self.base = os.path.join(os.fspath(root), NET_DIR)
        self.layouts: Layouts[str, NicConfigLayout] = layouts if layouts is not None else Layouts()

    def read(self, interface: str) -> NicConfigValues | None:
        values = self._values(interface)
        return None if values is None else NicConfigValues(*values)

    def _build(self, interface: str) -> tuple[KeptFiles, NicConfigLayout] | None:
        b = self.layouts.builder()
        files = _Files(b)
        idir = f"{self.base}/{interface}"
        if not b.watch(idir):
            return None
        points = _ecn_points(b, f"{idir}/ecn", files.number)
        if points is None:
            return None
        mtu = files.number(f"{idir}/mtu") if b.exists(f"{idir}/mtu") else -1
        trust = pfc = -1
        if b.exists(f"{idir}/qos"):
            if not b.watch(f"{idir}/qos"):
                return None
            trust, pfc = files.text(f"{idir}/qos/trust"), files.text(f"{idir}/qos/pfc")
        operstate = files.text(f"{idir}/operstate")
        kept = files.build(self.layouts.budget)
        if kept is None:
            return None
        layout = NicConfigLayout(interface, tuple(points), mtu, trust, pfc, operstate, len(files.ints))
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
