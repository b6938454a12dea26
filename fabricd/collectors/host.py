"""The host exporter's collectors, registered explicitly (node_exporter style)."""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass

from fabricd.sources.kept import Clock

from .core import Collector
from .link import EthtoolText, LinkCollector
from .nic import EthtoolSource, NicCollector, ReplayEthtoolSource
from .nic_config import CONFIG_INTERVAL_S, NicConfigCollector
from .rdma import RdmaCollector

HOST_COLLECTORS: tuple[str, ...] = ("nic", "rdma", "nic_config", "link")
"""Collector names of ``fabricd export host``, in scrape order."""


@dataclass(frozen=True)
class HostReading:
    """How the host collectors read their files.

    ``kept_files`` (default) reads files through kept-open descriptors with their layout cached between scrapes
    (:mod:`fabricd.sources.kept`; every value is still re-read on every scrape); False opens every file on every
    scrape. Both give the same exposition. ``clock`` is the wall clock the layouts compare directory times with.

    ``config_interval`` is how many seconds the NIC configuration gauges keep the values of their last read before
    the files are read again (:mod:`fabricd.collectors.nic_config`; 0: every scrape)."""

    kept_files: bool = True
    clock: Clock = time.time_ns
    config_interval: float = CONFIG_INTERVAL_S


def host_collectors(
    root: str | os.PathLike[str] = "/",
    *,
    replay: bool = False,
    ethtool: EthtoolSource | None = None,
    include: re.Pattern[str] | None = None,
    enabled: tuple[str, ...] = HOST_COLLECTORS,
    include_virtual: bool = False,
    reading: HostReading = HostReading(),
) -> list[Collector]:
    """The host collectors reading ``root``.

    ethtool statistics come from ``ethtool`` when given, else from the replay root's ``ethtool/`` files when
    ``replay``, else from the live ioctl (this process's network namespace; interfaces without a device, such as
    veth, bridges and lo, only with ``include_virtual``).

    ``reading`` says how files are read (kept open or not, the layouts' clock, the configuration gauges' interval:
    :class:`HostReading`).

    The ``link`` collector runs ``ethtool -m``/``--show-fec`` live (module DOM, FEC blocks;
    :mod:`fabricd.sources.ethtool_text`) only on the live host: not ``replay`` and ``root`` is ``/`` (the binary asks
    this kernel, so it must not stand in for another root's files).
    """
    kept_files, clock = reading.kept_files, reading.clock
    ethtool_text: EthtoolText | None = None
    if not replay and os.path.realpath(os.fspath(root)) == "/":
        from fabricd.sources.ethtool_text import EthtoolTextSource

        ethtool_text = EthtoolTextSource()
    if ethtool is None:
        if replay:
            ethtool = ReplayEthtoolSource(root, kept_files=kept_files, clock=clock)
        else:
            from fabricd.sources.ethtool_live import LiveEthtoolSource

            ethtool = LiveEthtoolSource(
                os.path.join(os.fspath(root), "sys", "class", "net"), include_virtual=include_virtual
            )
    available: dict[str, Collector] = {
        "nic": NicCollector(ethtool, include=include),
        "rdma": RdmaCollector(root, include=include, kept_files=kept_files, clock=clock),
        "nic_config": NicConfigCollector(
            root, include=include, kept_files=kept_files, clock=clock, interval_s=reading.config_interval, replay=replay
        ),
        "link": LinkCollector(root, include=include, stats=ethtool.read, text=ethtool_text),
    }
    unknown = [n for n in enabled if n not in available]
    if unknown:
        raise ValueError(f"unknown collector(s) {', '.join(unknown)}; expected some of {', '.join(HOST_COLLECTORS)}")
    return [available[n] for n in HOST_COLLECTORS if n in enabled]
