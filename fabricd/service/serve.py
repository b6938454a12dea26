"""``fabricd serve``: the long-running service.

One process runs, on its own threads:

- the **host exporter**: the host collectors (NIC, RDMA, NIC config) of this machine or of one replay root;
- the **switch poller**: every inventory switch over a kept-open driver session, every ``switch_poll_s``, each with
  its own deadline (``switch_timeout_s``) and exponential back-off while it fails (``switch_backoff``), so one bad
  switch never slows the others; each poll feeds the watchdog and is what the next scrape exports (one session per
  switch serves both);
- the **watchdog**: host sources every ``poll``, the SSH switch poll, the gNMI switches' streams every ``poll``
  (each sample declaring the stream's SAMPLE interval), events to the webhook sinks and ``/events``;
- the **drift audit**: hosts and switches against the intent every ``drift_interval_s``;
- the **HTTP endpoint**: ``/metrics`` and the JSON status API (:mod:`fabricd.service.api`) on 127.0.0.1.

``stop()`` (SIGTERM in the CLI) stops the threads at their next wait, closes the switch sessions, flushes the
webhooks and closes the listener.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fabricd import __version__
from fabricd.collectors.core import Registry, Scrape
from fabricd.collectors.host import HostReading, host_collectors
from fabricd.collectors.httplimits import ConnLimits
from fabricd.collectors.nic_config import CONFIG_INTERVAL_S
from fabricd.collectors.switch import Backoff, CommandRunner, SwitchCollector, SwitchTarget
from fabricd.collectors.watchdog import WatchdogCollector
from fabricd.collectors.webconfig import WebConfig
from fabricd.collectors.webhook import WebhookCollector
from fabricd.inventory import Inventory
from fabricd.watchdog.params import WatchdogParams
from fabricd.watchdog.runner import Source, Watchdog
from fabricd.watchdog.sources import HostSource
from fabricd.watchdog.webhook import WebhookSink, receiver_names, redacted_url

from .api import ApiServer, ServiceHandlers
from .drift import DriftAuditor, DriftCollector, SwitchDrift, switch_drift_checker
from .wiring import RootSpec, SwitchFleet, build_watchdog, host_sources

log = logging.getLogger(__name__)


@dataclass
class ServeOptions:
    """Everything ``fabricd serve`` takes besides the inventory (see the CLI for each option's meaning)."""

    listen: tuple[str, int] = ("127.0.0.1", 9862)
    web: WebConfig | None = None
    roots: Sequence[RootSpec] = ()
    host: str | None = None
    switches: bool = True
    switch_names: Sequence[str] | None = None
    switch_poll_s: float = 1.0
    switch_timeout_s: float = 10.0
    switch_backoff: Backoff = field(default_factory=Backoff)
    verify_host_key: bool = True
    drift_interval_s: float = 300.0
    drift: bool = True
    webhooks: Sequence[str] = ()
    export_host: bool = True
    config_interval_s: float = CONFIG_INTERVAL_S
    params: WatchdogParams = field(default_factory=WatchdogParams)
    limits: ConnLimits | None = None
    """The HTTP endpoint's bounds (connections, deadlines, requests in flight); None: the defaults."""


class _FleetCollector:
    """``switch``: the switch poller's latest results (the watchdog's poll), not a new poll per scrape."""

    name = "switch"
    metrics = SwitchCollector.metrics

    def __init__(self, fleet: SwitchFleet) -> None:
        self.fleet = fleet

    def collect(self, scrape: Scrape) -> None:
        results = self.fleet.latest()
        for r in results:
            SwitchCollector.emit(scrape, r)
        failed = [r for r in results if r.counters is None]
        if failed:
            scrape.problem(
                f"{len(failed)} switch(es) failed: " + ", ".join(f"{r.target.name} ({r.error})" for r in failed)
            )


class Service:
    """The service's parts, built from an inventory; :meth:`start` runs them, :meth:`stop` ends them."""

    def __init__(
        self,
        inventory: Inventory | None,
        options: ServeOptions,
        *,
        switch_factory: Callable[[SwitchTarget], CommandRunner] | None = None,
    ) -> None:
        """``switch_factory`` opens a switch session (default: the platform driver over SSH)."""
        self.inventory = inventory
        self.options = options
        fabric = inventory.fabric if inventory is not None else None
        self.hosts: list[HostSource] = host_sources(
            fabric, list(options.roots), host=options.host, params=options.params
        )
        sources: list[Source] = list(self.hosts)
        periods: dict[str, float] = {}
        self.fleet: SwitchFleet | None = None
        if fabric is not None and options.switches and fabric.switches:
            self.fleet = SwitchFleet(
                fabric,
                options.switch_names,
                verify_host_key=options.verify_host_key,
                factory=switch_factory,
                timeout_s=options.switch_timeout_s,
                backoff=options.switch_backoff,
                wait_s=min(options.switch_poll_s / 2, options.switch_timeout_s),
            )
            for src, period in self.fleet.watch_sources(options.switch_poll_s, options.params.poll_s):
                sources.append(src)
                periods[src.name] = period
        self.webhooks = [
            WebhookSink(url, receiver=name)
            for url, name in zip(options.webhooks, receiver_names(options.webhooks), strict=True)
        ]
        self.watchdog: Watchdog = build_watchdog(
            inventory, options.params, sources, sinks=list(self.webhooks), periods=periods
        )
        self.auditor: DriftAuditor | None = None
        if fabric is not None and options.drift:
            switch_check: SwitchDrift | None = None
            names: list[str] = []
            if self.fleet is not None:
                switch_check = switch_drift_checker(fabric, verify_host_key=options.verify_host_key)
                names = [t.name for t in self.fleet.targets]
            self.auditor = DriftAuditor(
                fabric,
                [(h.device, h.root) for h in self.hosts],
                names,
                switch_check=switch_check,
                interval_s=options.drift_interval_s,
            )
        self.registry = Registry()
        if options.export_host and self.hosts:
            first = self.hosts[0]
            for c in host_collectors(
                first.root,
                replay=first.raw_stats is None and first.root != "/",
                reading=HostReading(config_interval=options.config_interval_s),
            ):
                self.registry.register(c)
        if self.fleet is not None:
            self.registry.register(_FleetCollector(self.fleet))
        self.registry.register(WatchdogCollector(self.watchdog))
        if self.auditor is not None:
            self.registry.register(DriftCollector(self.auditor))
        if self.webhooks:
            self.registry.register(WebhookCollector(self.webhooks))
        self._scrape_lock = threading.Lock()
        self._stop = threading.Event()
        self.server: ApiServer | None = None
        self._server_thread: threading.Thread | None = None
        self.started_ts: float | None = None

    # -- endpoints ----------------------------------------------------------------------------------------------

    def metrics(self) -> str:
        with self._scrape_lock:  # collectors keep state between scrapes (counter resets)
            return self.registry.exposition()

    def health(self) -> tuple[bool, list[str]]:
        reasons: list[str] = []
        now = time.time()
        for st in self.watchdog.source_status():
            period = self.watchdog.periods.get(st.name, self.watchdog.params.poll_s)
            limit = max(10 * period, 5.0)
            if st.last_ok_wall is None:
                if self.started_ts is not None and now - self.started_ts > limit:
                    reasons.append(f"{st.name}: no successful poll yet ({st.last_error})")
            elif now - st.last_ok_wall > limit:
                reasons.append(f"{st.name}: last successful poll {now - st.last_ok_wall:.1f} s ago ({st.last_error})")
        if self._stop.is_set():
            reasons.append("stopping")
        return not reasons, reasons

    def status(self) -> dict[str, Any]:
        wd = self.watchdog
        p = wd.params
        now = time.time()
        return {
            "version": __version__,
            "started": self.started_ts,
            "uptime_s": round(now - self.started_ts, 3) if self.started_ts else 0.0,
            "watchdog": {
                "detection_ms": p.detection_ms,
                "restoration_ms": p.restoration_ms,
                "poll_ms": p.poll_ms,
                "poll_overruns": wd.poll_overruns,
            },
            "sources": [
                {
                    "name": s.name,
                    "polls": s.polls,
                    "failures": s.failures,
                    "overruns": s.overruns,
                    "last_error": s.last_error,
                    "last_poll_ms": None if s.last_poll_s is None else round(s.last_poll_s * 1000, 3),
                    "last_ok": s.last_ok_wall,
                }
                for s in wd.source_status()
            ],
            "active_storms": [
                {
                    "scope": c.scope,
                    "device": c.device,
                    "interface": c.interface,
                    "priority": c.priority,
                    "direction": c.direction,
                }
                for c in wd.channel_stats()
                if c.active
            ],
            "origins": [
                {
                    "device": o.device,
                    "interface": o.interface,
                    "priority": o.priority,
                    "scope": o.scope.value,
                    "kind": o.kind.value,
                    "affected": o.affected,
                }
                for o in wd.origin_stats()
            ],
            "drift": [
                {
                    "device": d.device,
                    "kind": d.kind,
                    "drift": d.drift,
                    "findings": d.findings,
                    "checked": d.checked_ts,
                    "error": d.error,
                }
                for d in (self.auditor.snapshot() if self.auditor is not None else [])
            ],
            "switches": [
                {
                    "name": h.name,
                    "up": h.up,
                    "attempts": h.attempts,
                    "polls": h.polls,
                    "failures": h.failures,
                    "overruns": h.overruns,
                    "consecutive_failures": h.consecutive_failures,
                    "last_error": h.last_error,
                    "last_success": h.last_success_wall,
                    "retry_in_s": None if h.retry_in_s is None else round(h.retry_in_s, 3),
                }
                for h in (self.fleet.health() if self.fleet is not None else [])
            ],
            "webhooks": [
                {
                    "url": redacted_url(w.url),
                    "receiver": w.receiver,
                    "queued": w.queued,
                    "sent": w.sent,
                    "failed": w.failed,
                    "dropped": dict(w.dropped),
                    "retries": w.retried,
                    "queue_length": w.queue_length,
                }
                for w in self.webhooks
            ],
        }

    def events(self, since: float) -> list[dict[str, Any]]:
        return [e.as_dict() for e in self.watchdog.events_since(since)]

    # -- life cycle ---------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Bind the listener (raises OSError when the address is taken) and start every thread."""
        self.server = ApiServer(
            self.options.listen,
            ServiceHandlers(self.metrics, self.health, self.status, self.events),
            self.options.web,
            self.options.limits,
        )
        self.started_ts = time.time()
        self.watchdog.start(self._stop)
        if self.auditor is not None:
            self.auditor.start(self._stop)
        self._server_thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.2}, name="api", daemon=True
        )
        self._server_thread.start()
        log.info("fabricd serve on %s", self.server.base_url)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until :meth:`stop` is called (True) or ``timeout`` seconds pass (False)."""
        return self._stop.wait(timeout)

    def stop(self) -> None:
        """Stop every thread, close sessions and the listener; flush webhooks. Idempotent."""
        self._stop.set()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
        self.watchdog.join(10.0)
        if self.auditor is not None:
            self.auditor.join(10.0)
        if self.fleet is not None:
            self.fleet.close()
        for h in self.hosts:
            h.close()
        for w in self.webhooks:
            w.close(5.0)
        if self._server_thread is not None:
            self._server_thread.join(5.0)
