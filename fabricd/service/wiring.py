"""Wiring shared by ``fabricd watch`` and ``fabricd serve``: inventory -> watchdog sources, parameters, topology.

- **Hosts.** ``--root DIR`` (a replay root; ``HOST=DIR`` names the inventory host it stands for, repeatable) or, with
  no root, this machine: sysfs at ``/`` and ethtool statistics through the live ETHTOOL_GSTATS ioctl. With an
  inventory, the host's NIC netdevs and the intent's lossless priorities are watched; without one, every interface
  with statistics and every priority that has pause counters.
- **Switches.** Each inventory switch through its platform driver (netmiko over SSH, kept open), polled every
  ``switch_poll_s``; a switch that cannot be reached is retried with back-off and shows up in ``/status``.
- **Parameters.** Flags win over the intent's ``policy.pfc.watchdog``; then fabricd's defaults.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from fabricd.errors import DriverError, UsageError
from fabricd.inventory import Inventory
from fabricd.model import Fabric, Switch
from fabricd.watchdog.params import WatchdogParams, resolve_params
from fabricd.watchdog.rootcause import Topology
from fabricd.watchdog.runner import EventSink, Source, Watchdog
from fabricd.watchdog.sources import HostSource, SwitchSource, switch_parsers

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RootSpec:
    """One ``--root`` argument: the directory and the inventory host it stands for (None: ``--host`` or this
    machine's hostname)."""

    path: Path
    host: str | None = None

    @classmethod
    def parse(cls, text: str) -> RootSpec:
        name, sep, path = text.partition("=")
        if sep and name and "/" not in name:
            return cls(Path(path), name)
        return cls(Path(text))


def policy_priorities(fabric: Fabric | None) -> list[tuple[int, str]]:
    """(priority, role) pairs of the intent: lossless (PFC on), roce (RoCE data), cnp (congestion notifications)."""
    if fabric is None:
        return []
    pol = fabric.policy
    out = [(p, "lossless") for p in pol.pfc.priorities]
    out.append((pol.qos.roce.priority, "roce"))
    out.append((pol.qos.cnp.priority, "cnp"))
    return out


def params_for(
    fabric: Fabric | None,
    *,
    detection_ms: float | None,
    restoration_ms: float | None,
    poll_ms: float | None,
    full_pause_fraction: float = 0.8,
    stuck_after_s: float = 60.0,
) -> WatchdogParams:
    intent = fabric.policy.pfc.watchdog if fabric is not None else None
    return resolve_params(
        intent, detection_ms=detection_ms, restoration_ms=restoration_ms, poll_ms=poll_ms,
        full_pause_fraction=full_pause_fraction, stuck_after_s=stuck_after_s,
    )


def host_sources(
    fabric: Fabric | None,
    roots: Sequence[RootSpec],
    *,
    host: str | None = None,
    interfaces: Sequence[str] | None = None,
) -> list[HostSource]:
    """One :class:`HostSource` per root, or one for this machine when there is none."""
    prios = fabric.policy.pfc.priorities if fabric is not None else None
    unnamed = [r for r in roots if r.host is None]
    if len(unnamed) > 1 and host is None:
        raise UsageError(
            f"{len(unnamed)} --root directories without a host name",
            hint="name each one as HOST=DIR (the inventory host it stands for), e.g. --root gpu1=/tmp/gpu1",
        )
    out: list[HostSource] = []
    specs: list[RootSpec | None] = list(roots) or [None]
    for spec in specs:
        name = (spec.host if spec is not None else None) or host or socket.gethostname()
        if fabric is not None and fabric.hosts and fabric.host(name) is None and (spec is not None or host):
            known = ", ".join(h.name for h in fabric.hosts)
            raise UsageError(f"host {name!r} is not in the inventory",
                             hint=f"use one of: {known} (--host NAME or --root NAME=DIR)")
        ifaces: list[str] | None = list(interfaces) if interfaces else None
        inv_host = fabric.host(name) if fabric is not None else None
        if ifaces is None and inv_host is not None and inv_host.nics:
            ifaces = [n.netdev for n in inv_host.nics]
        if spec is not None:
            if not spec.path.is_dir():
                raise UsageError(f"--root {spec.path}: not a directory",
                                 hint="pass a replay root laid out as CONTRACTS.md says (DIR/ethtool, DIR/sys/...)")
            out.append(HostSource(spec.path, name, priorities=prios, interfaces=ifaces))
            continue
        out.append(_live_host(name, prios, ifaces))
    return out


def _live_host(name: str, prios: Iterable[int] | None, ifaces: list[str] | None) -> HostSource:
    """This machine: sysfs at /, ethtool statistics by ioctl (pyroute2, in this network namespace)."""
    from fabricd.collectors.ethtool_live import LiveEthtoolSource

    live = LiveEthtoolSource("/sys/class/net")

    def raw(iface: str) -> dict[str, int] | None:
        stats = live.read(iface)
        return dict(stats.raw) if stats.raw else None

    return HostSource("/", name, priorities=prios, interfaces=ifaces if ifaces is not None else live.interfaces(),
                      raw_stats=raw)


class SessionRunner:
    """Runs show commands over one kept-open driver session; reconnects with back-off (1 s doubling to 30 s)."""

    def __init__(self, switch: Switch, connect: Callable[[Switch], object]) -> None:
        self.switch = switch
        self._connect = connect
        self._driver: object | None = None
        self._retry_at = 0.0
        self._backoff = 1.0
        self._lock = threading.Lock()

    def __call__(self, command: str) -> str:
        with self._lock:
            driver = self._ensure()
            try:
                out: dict[str, str] = driver.run([command])  # type: ignore[attr-defined]
            except Exception:
                self._drop()
                raise
            return out.get(command, "")

    def _ensure(self) -> object:
        if self._driver is not None:
            return self._driver
        now = time.monotonic()
        if now < self._retry_at:
            raise DriverError(self.switch.name, "connect",
                              f"not connected; next attempt in {self._retry_at - now:.1f} s")
        try:
            self._driver = self._connect(self.switch)
        except Exception:
            self._retry_at = now + self._backoff
            self._backoff = min(self._backoff * 2, 30.0)
            raise
        self._backoff = 1.0
        return self._driver

    def _drop(self) -> None:
        driver, self._driver = self._driver, None
        self._retry_at = time.monotonic() + self._backoff
        if driver is not None:
            try:
                driver.close()  # type: ignore[attr-defined]
            except Exception:
                log.debug("closing %s failed", self.switch.name, exc_info=True)

    def close(self) -> None:
        with self._lock:
            self._drop()


def connect_switch(switch: Switch) -> object:
    """Open a platform driver session to ``switch`` (credentials and host keys as ``fabricd push`` resolves them)."""
    from fabricd.platforms.access import resolve_access
    from fabricd.platforms.base import DriverOptions
    from fabricd.platforms.registry import make_driver

    driver = make_driver(switch, resolve_access(switch), DriverOptions(read_timeout_s=10.0, conn_timeout_s=10.0))
    driver.open()
    return driver


def switch_sources(
    fabric: Fabric,
    *,
    names: Sequence[str] | None = None,
    connect: Callable[[Switch], object] = connect_switch,
) -> tuple[list[SwitchSource], list[SessionRunner]]:
    """A :class:`SwitchSource` per inventory switch (or per named one) with a kept-open session runner."""
    prios = fabric.policy.pfc.priorities
    wanted = list(names) if names else [s.name for s in fabric.switches]
    unknown = [n for n in wanted if fabric.switch(n) is None]
    if unknown:
        raise UsageError(f"unknown switch(es): {', '.join(unknown)}",
                         hint=f"use names from the inventory: {', '.join(s.name for s in fabric.switches)}")
    sources: list[SwitchSource] = []
    runners: list[SessionRunner] = []
    for name in wanted:
        sw = fabric.switch(name)
        assert sw is not None
        if switch_parsers(sw.platform.value) is None:
            log.warning("no show-output parsers for %s (%s) yet; not watching it", sw.name, sw.platform.value)
            continue
        runner = SessionRunner(sw, connect)
        runners.append(runner)
        sources.append(SwitchSource(sw.name, sw.platform.value, runner, priorities=prios))
    return sources, runners


def build_watchdog(
    inventory: Inventory | None,
    params: WatchdogParams,
    sources: Sequence[Source],
    *,
    sinks: Iterable[EventSink] = (),
    periods: dict[str, float] | None = None,
) -> Watchdog:
    fabric = inventory.fabric if inventory is not None else None
    topo = Topology.from_fabric(fabric) if fabric is not None else Topology()
    return Watchdog(params, sources, topology=topo, sinks=sinks, policy_priorities=policy_priorities(fabric),
                    periods=periods or {})
