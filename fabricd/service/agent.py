"""``fabricd agent``: keep this host's RoCE settings as the intent says, and export how it went.

A reconcile is: read the intent (:mod:`fabricd.service.intent_source`), audit the host
(:func:`fabricd.usecases.host.audit_host`), and in ``enforce`` mode apply the plan with the use case ``fabricd host
apply`` runs too (:func:`fabricd.usecases.host.apply_host`: snapshot and restore on failure, under the host's apply
lock), then audit again. In ``audit`` mode nothing is
written: the agent never fights a person who is changing the host by hand. Reconciles run

- at start,
- when a watched NIC netdev or RDMA device appears again (driver reload, hot-plug; :mod:`fabricd.hosts.events`),
- every ``interval_s`` seconds,

one at a time on one thread; triggers that arrive while one runs are merged into the next.

Exported (``/metrics``): compliance per NIC and check, last (successful) reconcile, reconciles by trigger and
result, applies and apply failures, drift seen, lock contention, intent fetches. See :data:`AGENT_METRICS`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from fabricd import __version__
from fabricd.audit.report import AuditReport, Status
from fabricd.collectors.core import MetricSpec, Registry, Scrape
from fabricd.collectors.httplimits import ConnLimits
from fabricd.collectors.webconfig import WebConfig
from fabricd.errors import FabricdError
from fabricd.hosts.events import DeviceWatcher
from fabricd.hosts.lock import LockBusy
from fabricd.intent.host import HostIntent
from fabricd.usecases import host as host_use
from fabricd.usecases.host import HostTarget

from .api import ApiServer, ServiceHandlers
from .intent_source import DEFAULT_DEADLINE_S, DEFAULT_MAX_BYTES, IntentSource

log = logging.getLogger(__name__)

Mode = Literal["audit", "enforce"]
DEFAULT_AGENT_LISTEN = "127.0.0.1:9863"

SRC = "fabricd agent reconcile loop"
CHECK_COMPLIANT = MetricSpec(
    "fabricd_host_check_compliant",
    "gauge",
    "1 when the NIC passes the audit check in the agent's last reconcile, 0 when it fails; absent when the check "
    "was skipped (no source) or the reconcile failed.",
    ("host", "interface", "check"),
    SRC,
)
HOST_COMPLIANT = MetricSpec(
    "fabricd_host_compliant",
    "gauge",
    "1 when every audit check of the host passed in the agent's last reconcile, 0 otherwise; absent before the "
    "first reconcile that could read the host.",
    ("host",),
    SRC,
)
AGENT_INFO = MetricSpec(
    "fabricd_agent_info",
    "gauge",
    "Always 1 while the agent runs: its host, mode (audit|enforce) and version.",
    ("host", "mode", "version"),
    SRC,
)
INTERVAL = MetricSpec(
    "fabricd_agent_reconcile_interval_seconds",
    "gauge",
    "The agent's periodic reconcile interval, in seconds.",
    ("host",),
    SRC,
)
LAST_RUN = MetricSpec(
    "fabricd_agent_last_reconcile_timestamp_seconds",
    "gauge",
    "When the last reconcile ended (success or not), seconds since the epoch.",
    ("host",),
    SRC,
)
LAST_OK = MetricSpec(
    "fabricd_agent_last_success_timestamp_seconds",
    "gauge",
    "When the last successful reconcile ended (the host was read and, in enforce mode, any apply succeeded), "
    "seconds since the epoch.",
    ("host",),
    SRC,
)
RECONCILES = MetricSpec(
    "fabricd_agent_reconciles_total",
    "counter",
    "Reconciles since the agent started, by trigger (start|interval|device|manual) and result "
    "(compliant|applied|drift|failed).",
    ("host", "trigger", "result"),
    SRC,
)
DRIFTS = MetricSpec(
    "fabricd_agent_drift_detected_total",
    "counter",
    "Reconciles that found the host out of its intent (before any apply).",
    ("host",),
    SRC,
)
APPLIES = MetricSpec("fabricd_agent_applies_total", "counter", "Applies the agent ran (enforce mode).", ("host",), SRC)
APPLY_FAILURES = MetricSpec(
    "fabricd_agent_apply_failures_total",
    "counter",
    "Applies that failed (the snapshot was restored), or could not start because another applier held the lock.",
    ("host", "reason"),
    SRC,
)
INTENT_FAILURES = MetricSpec(
    "fabricd_agent_intent_failures_total",
    "counter",
    "Reads or fetches of the intent that failed (the last good intent was used when there was one).",
    ("host",),
    SRC,
)
INTENT_OK = MetricSpec(
    "fabricd_agent_intent_ok",
    "gauge",
    "1 when the agent's last read or fetch of its intent succeeded (a good body, or 304 for the last good one); 0 "
    "while it fails and the agent runs on its last good intent, or has none. Absent before the first read.",
    ("host",),
    SRC,
)
INTENT_LAST_OK = MetricSpec(
    "fabricd_agent_intent_last_success_timestamp_seconds",
    "gauge",
    "When the agent last read or fetched its intent successfully, seconds since the epoch (absent before the first "
    "success in this process; a start from the cached copy is not a success).",
    ("host",),
    SRC,
)
AGENT_METRICS: tuple[MetricSpec, ...] = (
    CHECK_COMPLIANT,
    HOST_COMPLIANT,
    AGENT_INFO,
    INTERVAL,
    LAST_RUN,
    LAST_OK,
    RECONCILES,
    DRIFTS,
    APPLIES,
    APPLY_FAILURES,
    INTENT_FAILURES,
    INTENT_OK,
    INTENT_LAST_OK,
)
TRIGGERS = ("start", "interval", "device", "manual")
RESULTS = ("compliant", "applied", "drift", "failed")


@dataclass
class AgentOptions:
    host: str
    source: str
    mode: Mode = "audit"
    interval_s: float = 300.0
    root: str = "/"
    netns: str | None = None
    skip: frozenset[str] = frozenset()
    ca_file: Path | None = None
    cache_dir: Path | None = None
    intent_deadline_s: float = DEFAULT_DEADLINE_S
    """Overall deadline of one intent fetch (https), seconds."""
    intent_max_bytes: int = DEFAULT_MAX_BYTES
    """Largest intent body accepted (https), bytes."""
    intent_sha256: str | None = None
    """Pinned SHA-256 of the intent file (hex); any other body is refused."""
    listen: tuple[str, int] = ("127.0.0.1", 9863)
    web: WebConfig | None = None
    limits: ConnLimits | None = None
    """The HTTP endpoint's bounds (connections, deadlines, requests in flight); None: the defaults."""
    watch_devices: bool = True
    lock_wait_s: float = 10.0
    settle_s: float = 0.5
    """After a device event, wait this long for more (a driver reload brings several devices) before reconciling."""


@dataclass
class Reconcile:
    """One reconcile's outcome."""

    trigger: str
    reason: str
    started: float
    ended: float = 0.0
    result: str = "failed"
    drift_before: int = 0
    applied_steps: int = 0
    error: str | None = None
    report: AuditReport | None = None

    def as_dict(self) -> dict[str, Any]:
        """Every field but the report, which is summarised as the codes of its failed checks."""
        return {
            **{f.name: getattr(self, f.name) for f in fields(self) if f.name != "report"},
            "failed_checks": sorted({c.code for c in self.report.checks if c.status == Status.FAIL})
            if self.report
            else [],
        }


@dataclass
class _Counters:
    reconciles: dict[tuple[str, str], int] = field(default_factory=dict)
    drifts: int = 0
    applies: int = 0
    apply_failures: dict[str, int] = field(default_factory=dict)


def compliance(intent: HostIntent, report: AuditReport) -> dict[tuple[str, str], bool]:
    """(interface, check) -> compliant, for every NIC of the intent and every check that ran.

    A finding names an interface, VLAN netdev or RDMA device: it counts against the NIC that owns it.
    """
    owner: dict[str, str] = {}
    for nic in intent.nics:
        for name in (nic.netdev, nic.vlan_netdev, nic.ip_netdev, nic.rdma_device):
            if name:
                owner.setdefault(name, nic.netdev)
    out: dict[tuple[str, str], bool] = {}
    for check in report.checks:
        if check.status == Status.SKIP:
            continue
        bad = {owner.get(f.object, f.object) for f in check.findings}
        if check.status == Status.FAIL and not bad:
            bad = {n.netdev for n in intent.nics}
        for nic in intent.nics:
            out[(nic.netdev, check.code)] = nic.netdev not in bad
    return out


class Agent:
    """The reconcile loop, its device watcher and its HTTP endpoint."""

    def __init__(self, options: AgentOptions) -> None:
        self.options = options
        self.source = IntentSource(
            options.source,
            options.host,
            ca_file=options.ca_file,
            cache_dir=options.cache_dir,
            deadline_s=options.intent_deadline_s,
            max_body_bytes=options.intent_max_bytes,
            sha256=options.intent_sha256,
        )
        self.counters = _Counters()
        self.history: deque[Reconcile] = deque(maxlen=200)
        self.last: Reconcile | None = None
        self.last_ok_ts: float | None = None
        self.intent: HostIntent | None = None
        self._compliance: dict[tuple[str, str], bool] = {}
        self._compliant: bool | None = None
        self._lock = threading.Lock()
        self._wake = threading.Condition()
        self._pending: tuple[str, str] | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.watcher: DeviceWatcher | None = None
        self.server: ApiServer | None = None
        self._server_thread: threading.Thread | None = None
        self.registry = Registry([_AgentCollector(self)])
        self.started_ts: float | None = None

    # -- reconcile ----------------------------------------------------------------------------------------------

    def _target(self, intent: HostIntent) -> HostTarget:
        return HostTarget(intent, root=self.options.root, netns=self.options.netns, skip=self.options.skip)

    def reconcile(self, trigger: str = "manual", reason: str = "") -> Reconcile:
        """Run one reconcile now (on the caller's thread) and record it."""
        rec = Reconcile(trigger=trigger, reason=reason or trigger, started=time.time())
        intent: HostIntent | None = None
        try:
            # after a device event, repair with the intent in hand: the periodic reconcile fetches (a slow intent
            # server would otherwise hold up the repair of a driver reload for the whole fetch deadline)
            intent = self.source.load(refresh=trigger != "device")
            if self.watcher is not None:
                self.watcher.update(
                    [n.netdev for n in intent.nics], [n.rdma_device for n in intent.nics if n.rdma_device]
                )
            report = host_use.audit_host(self._target(intent))
            rec.report = report
            rec.drift_before = sum(1 for c in report.checks if c.status == Status.FAIL)
            rec.result = "compliant" if report.compliant else "drift"
            if not report.compliant and self.options.mode == "enforce":
                self._enforce(intent, rec)
        except FabricdError as exc:
            rec.result, rec.error = "failed", exc.render()
        except Exception as exc:  # the loop must survive anything a backend raises
            log.exception("reconcile failed")
            rec.result, rec.error = "failed", f"{type(exc).__name__}: {exc}"
        rec.ended = time.time()
        self._record(intent, rec)
        return rec

    def _enforce(self, intent: HostIntent, rec: Reconcile) -> None:
        """Apply the plan through the same use case as ``host apply`` (under the host's apply lock), then audit
        again under the lock. Drift the plan cannot fix (a missing NIC, link down at the peer, no GID yet) applies
        nothing."""
        try:
            result = host_use.apply_host(
                host_use.HostApplyRequest(
                    self._target(intent),
                    holder=f"fabricd agent ({self.options.mode})",
                    lock_wait_s=self.options.lock_wait_s,
                    save_snapshot=False,
                    audit_after=True,
                )
            )
        except LockBusy as exc:
            self._count_failure("lock_busy")
            rec.result, rec.error = "failed", exc.render()
            return
        if result.report is None:
            return
        self.counters.applies += 1
        if result.audit is not None:
            rec.report = result.audit
        rec.applied_steps = result.applied_steps
        if not result.report.ok:
            self._count_failure("apply_error")
            failed = next(r.failed for r in result.report.results if r.failed)
            rec.result, rec.error = "failed", failed.error
            return
        rec.result = "applied" if rec.report is not None and rec.report.compliant else "drift"

    def _count_failure(self, reason: str) -> None:
        self.counters.apply_failures[reason] = self.counters.apply_failures.get(reason, 0) + 1

    def _record(self, intent: HostIntent | None, rec: Reconcile) -> None:
        with self._lock:
            key = (rec.trigger, rec.result)
            self.counters.reconciles[key] = self.counters.reconciles.get(key, 0) + 1
            if rec.drift_before:
                self.counters.drifts += 1
            self.last = rec
            self.history.append(rec)
            if intent is not None:
                self.intent = intent
            if rec.report is not None and intent is not None:
                self._compliance = compliance(intent, rec.report)
                self._compliant = rec.report.compliant
            elif rec.error is not None:
                self._compliance = {}
                self._compliant = None
            if rec.result != "failed":
                self.last_ok_ts = rec.ended
        level = logging.WARNING if rec.result in ("failed", "drift") else logging.INFO
        log.log(
            level,
            "reconcile (%s: %s): %s%s",
            rec.trigger,
            rec.reason,
            rec.result,
            f": {rec.error}" if rec.error else "",
            extra={"target": self.options.host},
        )

    # -- triggers and loop ----------------------------------------------------------------------------------

    def trigger(self, trigger: str, reason: str) -> None:
        """Ask for a reconcile as soon as the current one (if any) ends."""
        with self._wake:
            if self._pending is None or self._pending[0] == "interval":
                self._pending = (trigger, reason)
            self._wake.notify()

    def _device_event(self, reason: str) -> None:
        self.trigger("device", reason)

    def _loop(self) -> None:
        next_periodic = time.monotonic() + self.options.interval_s
        self.reconcile("start", "agent started")
        while not self._stop.is_set():
            with self._wake:
                while self._pending is None and not self._stop.is_set():
                    left = next_periodic - time.monotonic()
                    if left <= 0:
                        self._pending = ("interval", f"every {self.options.interval_s:g} s")
                        break
                    self._wake.wait(min(left, 1.0))
                pending, self._pending = self._pending, None
            if self._stop.is_set() or pending is None:
                return
            if pending[0] == "device" and self._stop.wait(self.options.settle_s):
                return
            if pending[0] == "interval":
                next_periodic = time.monotonic() + self.options.interval_s
            self.reconcile(*pending)

    # -- endpoints ----------------------------------------------------------------------------------------------

    def metrics(self) -> str:
        return self.registry.exposition()

    def health(self) -> tuple[bool, list[str]]:
        reasons = []
        now = time.time()
        limit = 2 * self.options.interval_s + 60
        if self.last_ok_ts is None:
            if self.started_ts is not None and now - self.started_ts > limit:
                reasons.append("no successful reconcile yet" + (f" ({self.last.error})" if self.last else ""))
        elif now - self.last_ok_ts > limit:
            reasons.append(f"last successful reconcile {now - self.last_ok_ts:.0f} s ago")
        intent_error = self.source.last_error
        if intent_error is not None:  # until a good read or fetch, even while the last good intent is in use
            reasons.append(
                f"intent source failing ({intent_error})"
                + ("; reconciling with the last good intent" if self.intent is not None else "")
            )
        return not reasons, reasons

    def status(self) -> dict[str, Any]:
        with self._lock:
            return {
                "version": __version__,
                "host": self.options.host,
                "mode": self.options.mode,
                "source": self.options.source,
                "interval_s": self.options.interval_s,
                "started": self.started_ts,
                "last_success": self.last_ok_ts,
                "compliant": self._compliant,
                "intent_error": self.source.last_error,
                "intent_failures": self.source.stats.failed,
                "intent_last_success": self.source.stats.last_ok_ts,
                "last": self.last.as_dict() if self.last else None,
                "noncompliant": sorted(f"{i}:{c}" for (i, c), ok in self._compliance.items() if not ok),
            }

    def events(self, since: float) -> list[dict[str, Any]]:
        with self._lock:
            return [r.as_dict() for r in self.history if r.ended > since]

    # -- life cycle ---------------------------------------------------------------------------------------------

    def start(self, *, serve: bool = True) -> None:
        """Bind the listener (OSError when taken), open the event socket, and start reconciling."""
        if serve:
            self.server = ApiServer(
                self.options.listen,
                ServiceHandlers(self.metrics, self.health, self.status, self.events),
                self.options.web,
                self.options.limits,
            )
            self._server_thread = threading.Thread(
                target=self.server.serve_forever, kwargs={"poll_interval": 0.2}, name="agent-api", daemon=True
            )
            self._server_thread.start()
        self.started_ts = time.time()
        if self.options.watch_devices:
            self.watcher = DeviceWatcher([], [], self._device_event, netns=self.options.netns, root=self.options.root)
            try:
                first = self.source.load()
                self.watcher.update(
                    [n.netdev for n in first.nics], [n.rdma_device for n in first.nics if n.rdma_device]
                )
            except FabricdError:
                pass  # the first reconcile reports it
            self.watcher.start(self._stop)
        self._thread = threading.Thread(target=self._loop, name="reconcile", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._wake:
            self._wake.notify_all()
        if self._thread is not None:
            self._thread.join(60.0)
        if self.watcher is not None:
            self.watcher.join(5.0)
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
        if self._server_thread is not None:
            self._server_thread.join(5.0)

    def wait(self, timeout: float | None = None) -> bool:
        return self._stop.wait(timeout)


class _AgentCollector:
    name = "agent"
    metrics = AGENT_METRICS

    def __init__(self, agent: Agent) -> None:
        self.agent = agent

    def collect(self, scrape: Scrape) -> None:
        a = self.agent
        host = a.options.host
        h = (host,)
        with a._lock:
            scrape.family(AGENT_INFO).add((host, a.options.mode, __version__), 1)
            scrape.family(INTERVAL).add(h, a.options.interval_s)
            for (iface, check), ok in sorted(a._compliance.items()):
                scrape.family(CHECK_COMPLIANT).add((host, iface, check), 1 if ok else 0)
            if a._compliant is not None:
                scrape.family(HOST_COMPLIANT).add(h, 1 if a._compliant else 0)
            if a.last is not None:
                scrape.family(LAST_RUN).add(h, round(a.last.ended, 3))
            if a.last_ok_ts is not None:
                scrape.family(LAST_OK).add(h, round(a.last_ok_ts, 3))
            c = a.counters
            for trig in TRIGGERS:
                for res in RESULTS:
                    scrape.family(RECONCILES).add((host, trig, res), c.reconciles.get((trig, res), 0))
            scrape.family(DRIFTS).add(h, c.drifts)
            scrape.family(APPLIES).add(h, c.applies)
            for reason in ("apply_error", "lock_busy"):
                scrape.family(APPLY_FAILURES).add((host, reason), c.apply_failures.get(reason, 0))
            stats = a.source.stats
            scrape.family(INTENT_FAILURES).add(h, stats.failed)
            if stats.last_ok_ts is not None or stats.failed:
                scrape.family(INTENT_OK).add(h, 0 if a.source.last_error is not None else 1)
            if stats.last_ok_ts is not None:
                scrape.family(INTENT_LAST_OK).add(h, round(stats.last_ok_ts, 3))
            if a.last is not None and a.last.result == "failed":
                scrape.problem(f"last reconcile failed: {a.last.error}")


def default_cache_dir(state_dir: Path, host: str) -> Path:
    return state_dir / "agent" / host
