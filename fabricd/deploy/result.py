"""Per-target results of push, diff and rollback (collected per target: one failure never aborts the rest)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from fabricd.errors import Fix
from fabricd.model import Model


class TargetState(StrEnum):
    """Where a device ended up.

    - ``unchanged``: it already matched the intent (nothing was sent) or the run was a dry run;
    - ``changed``: the change was committed and verified against the intent;
    - ``rolled_back``: something failed after the change started; the device was returned to its config from before
      the push (verified);
    - ``untouched``: something failed before any change was applied; the device is as it was;
    - ``unknown``: a failure left the device in a state fabricd could not verify (see ``error`` for what to do);
    - ``skipped``: not attempted because an earlier batch failed.
    """

    UNCHANGED = "unchanged"
    CHANGED = "changed"
    ROLLED_BACK = "rolled_back"
    UNTOUCHED = "untouched"
    UNKNOWN = "unknown"
    SKIPPED = "skipped"


class TargetResult(Model):
    """The outcome for one switch. ``diff`` is what changed (or would change with ``dry_run``)."""

    target: str
    platform: str
    changed: bool = False
    diff: str = ""
    failed: bool = False
    error: str | None = None
    dry_run: bool = False
    state: TargetState = TargetState.UNCHANGED
    phase: str = Field(
        default="",
        description="last pipeline step reached: connect, read, checkpoint, load, "
        "diff, commit, verify, confirm, rollback, done",
    )
    batch: str | None = None
    duration_s: float = 0.0
    fixes: list[Fix] = Field(
        default_factory=list,
        description="fabricd commands that fix or check a failure, as data (the CLI renders them after the error)",
    )


class PushReport(Model):
    """A whole push: results in target order, the batches in rollout order, and where the rollout stopped."""

    results: list[TargetResult]
    batches: list[str] = Field(default_factory=list)
    stopped_after: str | None = Field(default=None, description="the batch whose failure stopped the rollout")
    dry_run: bool = False

    @property
    def failed(self) -> list[TargetResult]:
        return [r for r in self.results if r.failed]

    @property
    def changed(self) -> list[TargetResult]:
        return [r for r in self.results if r.changed]


class DriftResult(Model):
    """``fabricd diff`` for one switch: whether its running config drifted from the intent, and how."""

    target: str
    platform: str
    drift: bool = False
    changes: list[str] = Field(default_factory=list)
    diff: str = ""
    failed: bool = False
    error: str | None = None
