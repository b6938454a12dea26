"""The host backend contract: read_state -> snapshot, plan (pure), apply with snapshot-and-restore, restore.

A backend owns one kind of host object (netlink links, sysfs/configfs files, DCB objects). It implements four
primitives on a single ``(object, path)`` pair: :meth:`HostBackend.read`, :meth:`HostBackend.satisfied`,
:meth:`HostBackend.write` and :meth:`HostBackend.write_back`; the shared logic here turns them into the
all-or-nothing contract. ``apply`` reads a snapshot of every object it will touch first; on any failure it writes the
snapshot back in reverse order and reports what happened in an :class:`ApplyResult`, so nothing is left
half-applied.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from pydantic import Field, JsonValue

from fabricd.errors import HostBackendError
from fabricd.intent.host import COMMIT_CHECK, Backend, HostIntent, HostPlan, HostStep, desired_plan
from fabricd.model.types import Model

log = logging.getLogger(__name__)


class Reading(Model):
    """One value read from a host: ``present`` False when the object or file does not exist (or cannot be read,
    then ``error`` says why)."""

    object: str
    path: str
    present: bool = True
    value: JsonValue = None
    error: str | None = None


class Snapshot(Model):
    """The values of every (object, path) a backend was asked about, as read before a change."""

    backend: Backend
    host: str
    readings: list[Reading] = Field(default_factory=list)

    def get(self, obj: str, path: str) -> Reading | None:
        return next((r for r in self.readings if r.object == obj and r.path == path), None)


class StepOutcome(Model):
    step: HostStep
    ok: bool
    error: str | None = None


class ApplyResult(Model):
    """What one backend's apply did. ``failed`` is the step that failed (None on success); ``restored`` tells
    whether the snapshot was written back completely after a failure."""

    backend: Backend
    host: str
    snapshot: Snapshot
    applied: list[HostStep] = Field(default_factory=list)
    failed: StepOutcome | None = None
    restored: bool = False
    restore_errors: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.failed is None

    @property
    def changed(self) -> bool:
        return self.ok and bool(self.applied)


class HostBackend(ABC):
    """Base of the netlink, sysfs and dcb backends."""

    backend: Backend

    # -- primitives -----------------------------------------------------------------------------------------

    @abstractmethod
    def read(self, obj: str, path: str) -> Reading:
        """Read one value; never raises for a missing object (``present=False``)."""

    def satisfied(self, step: HostStep, current: Reading) -> bool:
        """Whether ``current`` already meets the step's desired value (equality unless a backend says more)."""
        return current.present and current.value == step.desired

    @abstractmethod
    def write(self, step: HostStep) -> None:
        """Set ``step.object``/``step.path`` to ``step.desired``. Raises HostBackendError, located."""

    @abstractmethod
    def write_back(self, reading: Reading) -> None:
        """Return ``reading.object``/``reading.path`` to the snapshot value (remove it if it was absent)."""

    # -- contract -------------------------------------------------------------------------------------------

    def steps(self, intent: HostIntent, skip: frozenset[str] = frozenset()) -> list[HostStep]:
        """The desired steps of this backend for ``intent`` (current unknown)."""
        return desired_plan(intent, skip).for_backend(self.backend)

    def read_state(self, intent: HostIntent, skip: frozenset[str] = frozenset()) -> Snapshot:
        """Snapshot every (object, path) the intent's steps of this backend touch."""
        seen: set[tuple[str, str]] = set()
        readings = []
        for step in self.steps(intent, skip):
            key = (step.object, step.path)
            if key in seen:
                continue
            seen.add(key)
            readings.append(self.read(step.object, step.path))
        return Snapshot(backend=self.backend, host=intent.host, readings=readings)

    def plan(self, desired: HostIntent, current: Snapshot, skip: frozenset[str] = frozenset()) -> HostPlan:
        """Pure: the steps whose current value (from ``current``) does not meet the desired one."""
        out = []
        for step in self.steps(desired, skip):
            reading = current.get(step.object, step.path) or Reading(object=step.object, path=step.path, present=False)
            if self.applicable(step, reading) and not self.satisfied(step, reading):
                out.append(step.model_copy(update={"current": reading.value if reading.present else None}))
        return HostPlan(host=desired.host, steps=_keep_needed_commits(out))

    def applicable(self, step: HostStep, current: Reading) -> bool:
        """Whether a step applies on this host at all (e.g. an optional file that this driver lacks)."""
        return True

    def snapshot_for(self, plan: HostPlan) -> Snapshot:
        """Read the current value of every (object, path) in the plan (the record taken before applying)."""
        seen: set[tuple[str, str]] = set()
        readings = []
        for step in plan.for_backend(self.backend):
            key = (step.object, step.path)
            if key not in seen:
                seen.add(key)
                readings.append(self.read(step.object, step.path))
        return Snapshot(backend=self.backend, host=plan.host, readings=readings)

    def apply(self, plan: HostPlan, snapshot: Snapshot | None = None) -> ApplyResult:
        """Apply this backend's steps of ``plan``; on failure restore the snapshot (taken first) and report."""
        snap = snapshot if snapshot is not None else self.snapshot_for(plan)
        result = ApplyResult(backend=self.backend, host=plan.host, snapshot=snap)
        applied: list[HostStep] = []
        for step in plan.for_backend(self.backend):
            try:
                log.info(
                    "%s: set %s %s = %s",
                    self.backend.value,
                    step.object,
                    step.path,
                    step.desired,
                    extra={"target": plan.host},
                )
                self.write(step)
            except HostBackendError as exc:
                log.warning("%s: %s failed: %s; restoring the snapshot", self.backend.value, step.path, exc.render())
                touched = [*applied] if self._unchanged(snap, step) else [*applied, step]
                errors = self._restore_touched(snap, touched)
                return result.model_copy(
                    update={
                        "applied": applied,
                        "failed": StepOutcome(step=step, ok=False, error=exc.render()),
                        "restored": not errors,
                        "restore_errors": errors,
                    }
                )
            applied.append(step)
        return result.model_copy(update={"applied": applied})

    def _unchanged(self, snap: Snapshot, step: HostStep) -> bool:
        """Whether a failed step left its object as the snapshot had it (then it needs no write-back)."""
        before = snap.get(step.object, step.path)
        if before is None:
            return False
        now = self.read(step.object, step.path)
        return now.present == before.present and now.value == before.value

    def _restore_touched(self, snap: Snapshot, touched: list[HostStep]) -> list[str]:
        errors: list[str] = []
        done: set[tuple[str, str]] = set()
        for step in reversed(touched):
            key = (step.object, step.path)
            reading = snap.get(*key)
            if key in done or reading is None:
                continue
            done.add(key)
            try:
                self.write_back(reading)
            except HostBackendError as exc:
                errors.append(exc.render())
        return errors

    def restore(self, snapshot: Snapshot) -> list[str]:
        """Write every reading of ``snapshot`` back, last first. Returns the errors (empty = fully restored)."""
        errors: list[str] = []
        for reading in reversed(snapshot.readings):
            if reading.error is not None:
                continue
            try:
                self.write_back(reading)
            except HostBackendError as exc:
                errors.append(exc.render())
        return errors


def _keep_needed_commits(steps: list[HostStep]) -> list[HostStep]:
    """Drop commit steps (bnxt_re ``cc/apply``) whose directory has no other step left: nothing to commit."""
    dirs = {s.path.rpartition("/")[0] for s in steps if s.check != COMMIT_CHECK}
    return [s for s in steps if s.check != COMMIT_CHECK or s.path.rpartition("/")[0] in dirs]


class ReadOnlyBackend(HostBackend):
    """A backend that reads a recorded host (a replay root, a bundle of tool outputs) and refuses every write."""

    read_only: tuple[str, str]
    """(why the write is refused, how to write instead), for the refusal's error."""

    def write(self, step: HostStep) -> None:
        why, hint = self.read_only
        raise HostBackendError("write", f"{step.object} {step.path}", why, hint=hint)

    def write_back(self, reading: Reading) -> None:
        self.write(
            HostStep(backend=self.backend, object=reading.object, path=reading.path, desired=None, check="restore")
        )


@dataclass
class HostApplyReport:
    """Apply across backends in order (netlink, dcb, sysfs). When one fails, the ones before it are restored
    too, so the host is back where it was."""

    host: str
    results: list[ApplyResult] = field(default_factory=list)
    rolled_back: list[Backend] = field(default_factory=list)
    rollback_errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    @property
    def changed(self) -> bool:
        return self.ok and any(r.applied for r in self.results)

    def to_dict(self) -> dict[str, object]:
        return {
            "host": self.host,
            "ok": self.ok,
            "changed": self.changed,
            "results": [r.model_dump(mode="json") for r in self.results],
            "rolled_back": [b.value for b in self.rolled_back],
            "rollback_errors": list(self.rollback_errors),
        }


def apply_all(backends: list[HostBackend], plan: HostPlan) -> HostApplyReport:
    """Apply ``plan`` with each backend in turn; on a failure restore every backend applied before it."""
    report = HostApplyReport(host=plan.host)
    for backend in backends:
        if not plan.for_backend(backend.backend):
            continue
        result = backend.apply(plan)
        report.results.append(result)
        if not result.ok:
            by_kind = {b.backend: b for b in backends}
            for earlier_result in reversed(report.results[:-1]):
                report.rollback_errors += by_kind[earlier_result.backend].restore(earlier_result.snapshot)
                report.rolled_back.append(earlier_result.backend)
            break
    return report
