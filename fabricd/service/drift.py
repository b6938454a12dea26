"""Periodic drift audit for ``fabricd serve``: is each host and switch still configured as the intent says?

- **Hosts**: :func:`fabricd.audit.host.audit_host` over the host backends of the watched root (a replay root's
  sysfs, or this machine's netlink/DCB/sysfs); drift = at least one failed check.
- **Switches**: the push pipeline's read-only drift check (:func:`fabricd.deploy.pipeline.drift_one`: running
  config vs the rendered candidate) over the platform driver.

Results become ``fabricd_config_drift{device}`` (1 drifted, 0 compliant; absent while the audit of that device
fails, reported instead as ``fabricd_config_audit_success{device} 0``) and ``fabricd_config_drift_findings{device}``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fabricd.audit.report import Status
from fabricd.collectors.core import MetricSpec, Scrape
from fabricd.errors import FabricdError
from fabricd.intent.host import host_intent
from fabricd.model import Fabric
from fabricd.usecases import host as host_use

log = logging.getLogger(__name__)

SRC = "fabricd serve drift audit (audit host / diff against the inventory)"
DRIFT = MetricSpec(
    "fabricd_config_drift",
    "gauge",
    "1 when the device's configuration differs from the intent (fabricd audit host / fabricd diff), "
    "0 when it matches; absent while its audit fails.",
    ("device",),
    SRC,
)
FINDINGS = MetricSpec(
    "fabricd_config_drift_findings",
    "gauge",
    "Failed checks (hosts) or changed config lines (switches) in the last drift audit.",
    ("device",),
    SRC,
)
AUDIT_OK = MetricSpec(
    "fabricd_config_audit_success",
    "gauge",
    "1 when the last drift audit of the device ran, 0 when it could not (unreachable, unreadable).",
    ("device",),
    SRC,
)
AUDIT_TS = MetricSpec(
    "fabricd_config_audit_timestamp_seconds",
    "gauge",
    "When the device was last audited, seconds since the epoch.",
    ("device",),
    SRC,
)


@dataclass(frozen=True)
class DriftState:
    """The last drift audit of one device. ``drift`` None when the audit failed (``error`` says why)."""

    device: str
    kind: str
    drift: bool | None
    findings: int
    checked_ts: float
    error: str | None = None


SwitchDrift = Callable[[str], DriftState]


def switch_drift_checker(fabric: Fabric, *, verify_host_key: bool = True) -> SwitchDrift:
    """A checker that renders the switch's candidate and compares it with its running config (read-only)."""
    from fabricd.deploy.pipeline import PushOptions, default_factory, drift_one
    from fabricd.deploy.targets import render_candidates

    factory = default_factory(PushOptions(verify_host_key=verify_host_key))

    def check(name: str) -> DriftState:
        switch = fabric.switch(name)
        assert switch is not None
        try:
            candidate = render_candidates(fabric, [switch])[name]
        except FabricdError as exc:
            return DriftState(name, "switch", None, 0, time.time(), exc.render())
        res = drift_one(switch, candidate, factory)
        if res.failed:
            return DriftState(name, "switch", None, 0, time.time(), res.error)
        return DriftState(name, "switch", res.drift, len(res.changes), time.time())

    return check


class DriftAuditor:
    """Audits ``hosts`` (name, root) and ``switches`` every ``interval_s`` on its own thread."""

    def __init__(
        self,
        fabric: Fabric,
        hosts: Sequence[tuple[str, str | os.PathLike[str]]],
        switches: Sequence[str] = (),
        *,
        switch_check: SwitchDrift | None = None,
        interval_s: float = 300.0,
    ) -> None:
        self.fabric = fabric
        self.hosts = [(name, os.fspath(root)) for name, root in hosts if fabric.host(name) is not None]
        self.switches = list(switches) if switch_check is not None else []
        self.switch_check = switch_check
        self.interval_s = interval_s
        self.states: dict[str, DriftState] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def audit_host(self, name: str, root: str) -> DriftState:
        try:
            report = host_use.audit_host(host_use.HostTarget(host_intent(self.fabric, name), root=root))
        except (FabricdError, OSError, KeyError) as exc:
            text = exc.render() if isinstance(exc, FabricdError) else str(exc)
            return DriftState(name, "host", None, 0, time.time(), text)
        failed = [c for c in report.checks if c.status == Status.FAIL]
        return DriftState(name, "host", bool(failed), sum(len(c.findings) for c in failed), time.time())

    def run_once(self) -> list[DriftState]:
        out = [self.audit_host(name, root) for name, root in self.hosts]
        if self.switch_check is not None:
            out.extend(self.switch_check(name) for name in self.switches)
        with self._lock:
            for st in out:
                self.states[st.device] = st
        for st in out:
            if st.error:
                log.warning("drift audit of %s failed: %s", st.device, st.error, extra={"target": st.device})
        return out

    def _loop(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                self.run_once()
            except Exception:  # the audit must never take the service down
                log.exception("drift audit failed")
            if stop.wait(self.interval_s):
                return

    def start(self, stop: threading.Event) -> None:
        self._thread = threading.Thread(target=self._loop, args=(stop,), name="drift-audit", daemon=True)
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def snapshot(self) -> list[DriftState]:
        with self._lock:
            return sorted(self.states.values(), key=lambda s: s.device)


class DriftCollector:
    """``drift``: the auditor's last results."""

    name = "drift"
    metrics: tuple[MetricSpec, ...] = (DRIFT, FINDINGS, AUDIT_OK, AUDIT_TS)

    def __init__(self, auditor: DriftAuditor) -> None:
        self.auditor = auditor

    def collect(self, scrape: Scrape) -> None:
        for st in self.auditor.snapshot():
            labels = (st.device,)
            scrape.family(AUDIT_OK).add(labels, 0 if st.drift is None else 1)
            scrape.family(AUDIT_TS).add(labels, round(st.checked_ts, 3))
            if st.drift is not None:
                scrape.family(DRIFT).add(labels, 1 if st.drift else 0)
                scrape.family(FINDINGS).add(labels, st.findings)
