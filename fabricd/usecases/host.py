"""Plan, apply and audit one host against its intent: the use case behind ``host plan``, ``host apply``,
``audit host`` and the agent's reconcile (audit, and in enforce mode apply).

Each call opens the host backends (netlink, DCB, sysfs; :func:`fabricd.hosts.factory.open_backends`) for its own
use and closes them before it returns. An apply takes the host's apply lock (:class:`fabricd.hosts.lock.ApplyLock`,
:class:`~fabricd.hosts.lock.LockBusy` when another applier holds it past ``lock_wait_s``), snapshots what it will
touch and restores it on failure (:func:`fabricd.hosts.base.apply_all`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from fabricd import settings
from fabricd.audit import host as host_audit
from fabricd.audit.report import AuditReport
from fabricd.errors import FabricdError
from fabricd.hosts.base import HostApplyReport, HostBackend, Snapshot, apply_all
from fabricd.hosts.factory import close_backends, is_live, open_backends
from fabricd.hosts.lock import ApplyLock
from fabricd.intent.host import Backend, HostIntent, HostPlan
from fabricd.safepath import inside, write_inside


@dataclass(frozen=True)
class HostTarget:
    """Which host, and where its state is read and written."""

    intent: HostIntent
    root: str | os.PathLike[str] = "/"
    """Root of /sys (a fake or replay tree in tests); ``/`` is this host."""
    netns: str | None = None
    """Network namespace for netlink and DCB (None: the caller's)."""
    skip: frozenset[str] = frozenset()
    """Parts left alone: vlan, pause, netlink, dcb, sysfs."""


@dataclass(frozen=True)
class HostApplyRequest:
    """One apply: the target, who applies (written into the apply lock) and how long to wait for the lock."""

    target: HostTarget
    holder: str
    """Who holds the apply lock while this apply runs (another applier sees it)."""
    lock_wait_s: float = 30.0
    save_snapshot: bool = True
    """Save the snapshot under the state directory (``snapshot_dir``) so a later restore can bring it back."""
    audit_after: bool = False
    """Audit the host again under the lock after applying (what it looks like after this apply)."""
    confirm: Callable[[HostPlan], bool] | None = field(default=None, compare=False)
    """Called with the plan (when it has steps) before anything is written; False: stop, nothing is applied."""


@dataclass(frozen=True)
class HostApplyResult:
    """What an apply did. ``report`` is None when nothing was applied (no steps, or not confirmed)."""

    plan: HostPlan
    report: HostApplyReport | None = None
    snapshot: Path | None = None
    audit: AuditReport | None = None
    confirmed: bool = True

    @property
    def ok(self) -> bool:
        return self.report is None or self.report.ok

    @property
    def applied_steps(self) -> int:
        return sum(len(r.applied) for r in self.report.results) if self.report is not None else 0


def snapshot_dir(host: str) -> Path:
    """Where apply saves a host's snapshots (``last.json`` is the newest)."""
    return inside(settings.state_dir() / "hosts", host)


def save_snapshots(host: str, snaps: list[Snapshot]) -> Path:
    """Write ``snaps`` as a timestamped file and as ``last.json`` under :func:`snapshot_dir`; the timestamped path."""
    folder = snapshot_dir(host)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%S")
        body = json.dumps(
            {"host": host, "taken": stamp, "snapshots": [s.model_dump(mode="json") for s in snaps]}, indent=2
        )
        path = write_inside(folder, f"snapshot-{stamp}.json", body)
        write_inside(folder, "last.json", body)
    except OSError as exc:
        raise FabricdError(
            f"cannot save the snapshot under {folder}: {exc.strerror}",
            hint="set FABRICD_STATE_DIR to a writable directory",
        ) from exc
    return path


def _plan(target: HostTarget, backends: list[HostBackend], *, prerequisites: bool = True) -> HostPlan:
    steps = []
    for b in backends:
        snap = b.read_state(target.intent, target.skip)
        steps += b.plan(target.intent, snap, target.skip).steps
    prereqs = [p for n in target.intent.nics for p in n.prerequisites] if prerequisites else []
    return HostPlan(host=target.intent.host, steps=steps, prerequisites=prereqs)


@contextmanager
def _backends(target: HostTarget) -> Iterator[list[HostBackend]]:
    """The target's host backends, open for the length of one use case and closed after it."""
    backends = open_backends(target.root, target.netns, target.skip)
    try:
        yield backends
    finally:
        close_backends(backends)


def plan_host(target: HostTarget) -> HostPlan:
    """What an apply would change (nothing is written), with the NICs' prerequisites apply does not set."""
    with _backends(target) as backends:
        return _plan(target, backends)


def sources_of(target: HostTarget, backends: list[HostBackend]) -> dict[Backend, str]:
    """Where each backend reads from, for the audit report's notes."""
    live = is_live(target.root, target.netns)
    return {
        b.backend: (
            f"netns {target.netns}"
            if target.netns and b.backend != Backend.SYSFS
            else f"root {target.root}"
            if b.backend == Backend.SYSFS or not live
            else "this host"
        )
        for b in backends
    }


def _audit(target: HostTarget, backends: list[HostBackend]) -> AuditReport:
    return host_audit.audit_host(
        target.intent, backends, gid_root=target.root, skip=target.skip, sources=sources_of(target, backends)
    )


def audit_host(target: HostTarget) -> AuditReport:
    """Compare the host with its intent (nothing is written)."""
    with _backends(target) as backends:
        return _audit(target, backends)


def apply_host(request: HostApplyRequest) -> HostApplyResult:
    """Plan, then (confirmed, with steps) apply under the host's apply lock: snapshot first, restore on failure.

    Raises :class:`~fabricd.hosts.lock.LockBusy` when the lock stays held past ``lock_wait_s``.
    """
    target = request.target
    with _backends(target) as backends:
        plan = _plan(target, backends)
        if not plan.steps:
            return HostApplyResult(plan=plan)
        if request.confirm is not None and not request.confirm(plan):
            return HostApplyResult(plan=plan, confirmed=False)
        with ApplyLock(target.intent.host, request.holder, wait_s=request.lock_wait_s):  # one applier at a time
            saved = None
            if request.save_snapshot:
                saved = save_snapshots(target.intent.host, [b.snapshot_for(plan) for b in backends])
            report = apply_all(backends, plan)
            after = _audit(target, backends) if request.audit_after else None
        return HostApplyResult(plan=plan, report=report, snapshot=saved, audit=after)
