"""Wiring shared by ``fabricd watch`` and ``fabricd serve``: inventory -> watchdog sources, parameters, topology.

- **Hosts.** ``--root DIR`` (a replay root; ``HOST=DIR`` names the inventory host it stands for, repeatable) or, with
  no root, this machine: sysfs at ``/`` and ethtool statistics through the live ETHTOOL_GSTATS ioctl. With an
  inventory, the host's NIC netdevs and the intent's lossless priorities are watched; without one, every interface
  with statistics and every priority that has pause counters.
- **Switches.** Each inventory switch through its platform driver (netmiko over SSH, kept open), polled every
  ``switch_poll_s``, each with its own deadline; a switch that cannot be reached is retried with exponential
  back-off and jitter (:class:`~fabricd.collectors.switch.Backoff`) and shows up in ``/status`` under ``switches``.
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
from typing import TYPE_CHECKING

from fabricd.collectors.switch import Backoff, CommandRunner, SwitchHealth, SwitchPoll, SwitchPoller, SwitchTarget
from fabricd.errors import DriverError, FabricdError, UsageError
from fabricd.inventory import Inventory
from fabricd.model import Fabric
from fabricd.watchdog.params import WatchdogParams, resolve_params
from fabricd.watchdog.rootcause import Topology
from fabricd.watchdog.runner import EventSink, Source, Watchdog
from fabricd.watchdog.sources import Batch, HostSource, SwitchSource

if TYPE_CHECKING:
    from fabricd.collectors.gnmi import GnmiEndpoint, GnmiPoller
    from fabricd.collectors.switch import Poller
    from fabricd.platforms.base import DriverOptions

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
        intent,
        detection_ms=detection_ms,
        restoration_ms=restoration_ms,
        poll_ms=poll_ms,
        full_pause_fraction=full_pause_fraction,
        stuck_after_s=stuck_after_s,
    )


def host_sources(
    fabric: Fabric | None,
    roots: Sequence[RootSpec],
    *,
    host: str | None = None,
    interfaces: Sequence[str] | None = None,
    params: WatchdogParams | None = None,
) -> list[HostSource]:
    """One :class:`HostSource` per root, or one for this machine when there is none; tuned to ``params``."""
    prios = fabric.policy.pfc.priorities if fabric is not None else None
    unnamed = [r for r in roots if r.host is None]
    if len(unnamed) > 1 and host is None:
        raise UsageError(
            f"{len(unnamed)} replay roots without a host name",
            hint="name each one as HOST=DIR (the inventory host it stands for), e.g. gpu1=/tmp/gpu1",
        )
    out: list[HostSource] = []
    specs: list[RootSpec | None] = list(roots) or [None]
    for spec in specs:
        name = (spec.host if spec is not None else None) or host or socket.gethostname()
        if fabric is not None and fabric.hosts and fabric.host(name) is None and (spec is not None or host):
            known = ", ".join(h.name for h in fabric.hosts)
            raise UsageError(
                f"host {name!r} is not in the inventory",
                hint=f"use one of: {known} (as the host, or as a replay root's NAME=DIR)",
            )
        ifaces: list[str] | None = list(interfaces) if interfaces else None
        inv_host = fabric.host(name) if fabric is not None else None
        if ifaces is None and inv_host is not None and inv_host.nics:
            ifaces = [n.netdev for n in inv_host.nics]
        if spec is not None:
            if not spec.path.is_dir():
                raise UsageError(
                    f"{spec.path}: not a directory",
                    option="root",
                    hint="pass a replay root that holds DIR/sys/... and DIR/ethtool/",
                )
            out.append(HostSource(spec.path, name, priorities=prios, interfaces=ifaces, clock=time.monotonic))
        else:
            out.append(_live_host(name, prios, ifaces))
    if params is not None:
        for src in out:
            src.tune(params.detection_s, params.restoration_s, params.poll_s)
    return out


def _live_host(name: str, prios: Iterable[int] | None, ifaces: list[str] | None) -> HostSource:
    """This machine: sysfs at /, ethtool statistics by ioctl (pyroute2, in this network namespace)."""
    from fabricd.sources.ethtool_live import LiveEthtoolSource

    live = LiveEthtoolSource("/sys/class/net")
    # every poll: one GSTATS ioctl per port, values looked up by name (no 750-name dict per read)
    return HostSource(
        "/",
        name,
        priorities=prios,
        interfaces=ifaces if ifaces is not None else live.interfaces(),
        raw_stats=live.values,
        clock=time.monotonic,
    )


class SwitchFleet:
    """Every watched switch behind one :class:`~fabricd.collectors.switch.SwitchPoller` (kept-open sessions,
    bounded concurrency): each poll feeds the watchdog and is kept for the exporter's next scrape, so ``fabricd
    serve`` opens one session per switch for both.

    Each switch runs on its own: one watchdog round waits at most ``wait_s`` (half the poll period by default) for
    the switches it started, each switch's poll has its own deadline (``timeout_s``), and a switch that fails backs
    off (``backoff``). A switch that is slow, hung or down delays only itself; the watchdog is fed only results that
    are new since the last round, so a stale sample never looks like a quiet counter."""

    def __init__(
        self,
        fabric: Fabric,
        names: Sequence[str] | None = None,
        *,
        factory: Callable[[SwitchTarget], CommandRunner] | None = None,
        concurrency: int = 16,
        timeout_s: float = 10.0,
        verify_host_key: bool = True,
        backoff: Backoff | None = None,
        wait_s: float = 0.5,
    ) -> None:
        self.fabric = fabric
        self.targets = switch_targets(fabric, names)
        self.poller, self.gnmi, ssh_names = build_switch_poller(
            fabric,
            self.targets,
            factory or driver_factory(fabric, verify_host_key=verify_host_key),
            concurrency=concurrency,
            timeout_s=timeout_s,
            backoff=backoff,
        )
        self.ssh: Poller | None = self.poller
        if self.gnmi is not None:  # the streams feed the watchdog on their own (:class:`SwitchStreams`)
            from fabricd.collectors.gnmi import CombinedPoller

            self.ssh = self.poller.pollers[0] if isinstance(self.poller, CombinedPoller) and ssh_names else None
        self.wait_s = wait_s
        prios = fabric.policy.pfc.priorities
        self.update_s = {t.name: gnmi_update_s(fabric, t.name) for t in self.targets}
        """Per switch: the update period declared to the detector (its gNMI SAMPLE interval; None over SSH)."""
        self.converters = {
            t.name: SwitchSource(t.name, priorities=prios, update_s=self.update_s[t.name]) for t in self.targets
        }
        self.name = "switches"
        self.streams: SwitchStreams | None = SwitchStreams(self) if self.gnmi is not None else None
        self.last: list[SwitchPoll] = []
        self._last: dict[str, list[SwitchPoll]] = {}
        self._lock = threading.Lock()

    def watch_sources(self, switch_poll_s: float, stream_poll_s: float) -> list[tuple[Source, float]]:
        """The watchdog sources of the fleet with their poll periods: the SSH switches every ``switch_poll_s``
        (each poll is a round of show commands), the gNMI switches every ``stream_poll_s`` (the watchdog's poll:
        reading a stream's latest values costs no round trip, so a storm is judged as soon as the update that shows
        it has arrived, not up to a switch poll later)."""
        out: list[tuple[Source, float]] = []
        if self.ssh is not None:
            out.append((self, switch_poll_s))
        if self.streams is not None:
            out.append((self.streams, stream_poll_s))
        return out

    def poll(self, t: float) -> Batch:
        """One round of the SSH switches (all switches when no gNMI poller is split out): samples of the switches
        that answered since the last round, problems for the ones that are down. Raises (a failed round in
        ``/status``) only when no switch has answered and every one is failing."""
        if self.ssh is None:
            return Batch()
        return self._round("ssh", self.ssh, t)

    def _round(self, part: str, poller: Poller, t: float) -> Batch:
        results = poller.poll(wait_s=self.wait_s)
        order = {tg.name: i for i, tg in enumerate(self.targets)}
        with self._lock:
            self._last[part] = results
            self.last = sorted(
                (r for rs in self._last.values() for r in rs), key=lambda r: order.get(r.target.name, len(order))
            )
        out = Batch()
        for r in results:
            if r.counters is None:
                out.problems.append(f"{r.target.name}: {r.error}")
                continue
            if not r.fresh:
                continue
            b = self.converters[r.target.name].to_batch(r.counters, t)
            out.pause.extend(b.pause)
            out.drops.extend(b.drops)
            out.wd.extend(b.wd)
            out.problems.extend(b.problems)
        if results and all(r.counters is None for r in results) and all(h.up is False for h in poller.health()):
            raise DriverError("switches", "poll", "; ".join(out.problems))
        return out

    def latest(self) -> list[SwitchPoll]:
        with self._lock:
            return list(self.last)

    def health(self) -> list[SwitchHealth]:
        """Each switch's polling health (``/status``)."""
        return self.poller.health()

    def close(self) -> None:
        self.poller.close()


class SwitchStreams:
    """The gNMI switches of a :class:`SwitchFleet` as one watchdog source (``switches:gnmi``): each poll hands the
    detector the switches whose stream sent an update since the last poll, each sample declaring the switch's
    SAMPLE interval as its ``update_s``, so the detector judges pause at the granularity the stream can show
    (docs/alerts.md, "Switch streams"). Polled at the watchdog's poll (the values are already here)."""

    def __init__(self, fleet: SwitchFleet) -> None:
        assert fleet.gnmi is not None
        self.fleet = fleet
        self.gnmi = fleet.gnmi
        self.name = "switches:gnmi"

    def poll(self, t: float) -> Batch:
        return self.fleet._round("gnmi", self.gnmi, t)


def gnmi_update_s(fabric: Fabric, name: str) -> float | None:
    """The update period of a gNMI switch's pause counters: the shortest SAMPLE interval its stream asks for
    (``telemetry.gnmi.sample_interval_s``, else the pack's per-path defaults, never under the NOS's floor). None for
    an SSH switch or a pack without a gNMI mapping (the detector then measures the period)."""
    from fabricd.nos.gnmi_registry import table_for

    switch = fabric.switch(name)
    if switch is None or switch.telemetry.transport != "gnmi":
        return None
    table = table_for(switch.platform)
    if not table.mapped:
        return None
    requested = switch.telemetry.gnmi.sample_interval_s
    intervals = [table.interval(p, requested) for p in table.paths if p.mode == "SAMPLE"]
    return min(intervals, default=None)


def switch_targets(fabric: Fabric, names: Sequence[str] | None = None, *, option: str = "switch") -> list[SwitchTarget]:
    """One :class:`SwitchTarget` (name, platform, port names) per inventory switch, or per switch in ``names`` (in
    that order). A name the inventory lacks is a :class:`UsageError` about the setting ``option`` it came from."""
    wanted = list(names) if names else [s.name for s in fabric.switches]
    unknown = [n for n in wanted if fabric.switch(n) is None]
    if unknown:
        raise UsageError(
            f"{', '.join(unknown)}: no such switch in the inventory",
            option=option,
            hint=f"use one of: {', '.join(s.name for s in fabric.switches)}",
        )
    chosen = [sw for sw in (fabric.switch(n) for n in wanted) if sw is not None]
    headroom = _headroom(fabric, [sw.name for sw in chosen])
    return [
        SwitchTarget(sw.name, sw.platform.value, tuple(p.name for p in sw.ports), headroom.get(sw.name, ()))
        for sw in chosen
    ]


def _headroom(fabric: Fabric, names: Sequence[str]) -> dict[str, tuple[tuple[str, int, int], ...]]:
    """Per switch, ``(port, PG, xoff bytes)`` of every lossless PG from its intent (the headroom watermark's
    yardstick, exported as fabricd_switch_pg_headroom_size_bytes). A switch whose intent cannot be built (an
    inventory `fabricd validate` rejects) gets none, with one warning: the counters are still polled."""
    from fabricd.nos.registry import SwitchIntentBuilder

    builder = SwitchIntentBuilder(fabric)
    out: dict[str, tuple[tuple[str, int, int], ...]] = {}
    for name in names:
        switch = fabric.switch(name)
        if switch is None:
            continue
        try:
            intent = builder.build(switch)
        except (FabricdError, ValueError, KeyError) as exc:
            log.warning(
                "switch %s: no intended headroom to export (%s); validate the inventory",
                name,
                exc,
                extra={"target": name},
            )
            continue
        out[name] = tuple(
            (p.name, prio, p.headroom.xoff_bytes)
            for p in intent.ports
            if p.headroom is not None
            for prio in p.pfc_priorities
        )
    return out


def driver_factory(
    fabric: Fabric, *, verify_host_key: bool = True, options: DriverOptions | None = None
) -> Callable[[SwitchTarget], CommandRunner]:
    """Open a connected platform driver (netmiko over SSH, host key verified unless told not to) for a target.
    ``options`` default to 10 s connect and read timeouts: a watched switch that hangs must not stall a poll."""
    from fabricd.platforms.base import DriverOptions
    from fabricd.platforms.registry import driver_for

    opts = options if options is not None else DriverOptions(read_timeout_s=10.0, conn_timeout_s=10.0)

    def factory(target: SwitchTarget) -> CommandRunner:
        switch = fabric.switch(target.name)
        assert switch is not None
        driver = driver_for(switch, opts, verify_host_key=verify_host_key)
        driver.open()
        return driver

    return factory


TRANSPORTS = ("inventory", "ssh", "gnmi")
"""``--transport``: each switch's ``telemetry.transport`` (inventory), or every switch over one transport."""


def gnmi_endpoint_factory(fabric: Fabric) -> Callable[[SwitchTarget], GnmiEndpoint]:
    """A switch's gNMI address and login from the inventory: ``mgmt.host``, ``telemetry.gnmi.port`` (or the NOS's
    default port), the credentials' password (resolved as for SSH), ``telemetry.gnmi.tls_ca``."""
    from fabricd.collectors.gnmi import GnmiEndpoint, read_ca
    from fabricd.nos.gnmi_registry import table_for
    from fabricd.platforms.access import resolve_access

    def endpoint(target: SwitchTarget) -> GnmiEndpoint:
        switch = fabric.switch(target.name)
        assert switch is not None
        g = switch.telemetry.gnmi
        access = resolve_access(switch)
        return GnmiEndpoint(
            switch.mgmt.host,
            g.port or table_for(switch.platform).port,
            access.username,
            access.password,
            read_ca(g.tls_ca, switch.name),
            g.tls_server_name,
            g.sample_interval_s,
        )

    return endpoint


def build_switch_poller(
    fabric: Fabric,
    targets: Sequence[SwitchTarget],
    ssh_factory: Callable[[SwitchTarget], CommandRunner],
    *,
    transport: str = "inventory",
    concurrency: int = 16,
    timeout_s: float = 30.0,
    backoff: Backoff | None = None,
) -> tuple[Poller, GnmiPoller | None, list[str]]:
    """The poller of ``targets``: SSH for the switches whose transport is ssh, gNMI streams for the others (both
    behind one :class:`~fabricd.collectors.gnmi.CombinedPoller` when the inventory mixes them). Returns the poller,
    the gNMI poller (None without gNMI switches) and the names of the SSH switches. A gNMI switch whose pack has no
    gNMI mapping is a :class:`UsageError` naming the switch."""
    if transport not in TRANSPORTS:
        raise UsageError(f"{transport!r}: expected one of {', '.join(TRANSPORTS)}", option="transport")
    by_name = {s.name: s for s in fabric.switches}

    def wants_gnmi(t: SwitchTarget) -> bool:
        if transport != "inventory":
            return transport == "gnmi"
        sw = by_name.get(t.name)
        return sw is not None and sw.telemetry.transport == "gnmi"

    gnmi_targets = [t for t in targets if wants_gnmi(t)]
    ssh_targets = [t for t in targets if not wants_gnmi(t)]
    pollers: list[Poller] = []
    gnmi = None
    if ssh_targets or not gnmi_targets:
        pollers.append(
            SwitchPoller(ssh_targets, ssh_factory, concurrency=concurrency, timeout_s=timeout_s, backoff=backoff)
        )
    if gnmi_targets:
        from fabricd.collectors.gnmi import GnmiPoller

        gnmi = GnmiPoller(gnmi_targets, gnmi_endpoint_factory(fabric), timeout_s=timeout_s, backoff=backoff)
        pollers.append(gnmi)
    if len(pollers) == 1:
        return pollers[0], gnmi, [t.name for t in ssh_targets]
    from fabricd.collectors.gnmi import CombinedPoller

    return CombinedPoller(pollers, [t.name for t in targets]), gnmi, [t.name for t in ssh_targets]


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
    return Watchdog(
        params, sources, topology=topo, sinks=sinks, policy_priorities=policy_priorities(fabric), periods=periods or {}
    )
