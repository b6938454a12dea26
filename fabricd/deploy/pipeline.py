"""The safe push pipeline, per target, with bounded concurrency and rolling batches.

For one switch (:func:`push_one`):

1. connect (host key verified) and read the running config;
2. compare with the intent on what fabricd owns: nothing to do -> ``unchanged``, no session opened;
3. checkpoint (the rollback point, ``fabricd-last``), then load the candidate (EOS: a config session);
4. diff (from the device where it can compute it); ``--dry-run`` stops here and discards;
5. commit, with a confirm timer where the platform has one (EOS ``commit timer``, NVUE ``--confirm``);
6. re-read the running config and verify it against the intent;
7. confirm, or roll back.

A failure after step 5 began (or a dropped session) triggers recovery: reconnect if needed, roll back to the
checkpoint (or abort the pending timed commit), re-read, and check the device is back where it was. Every target gets
a :class:`~fabricd.deploy.result.TargetResult`; one target's failure never aborts the others. With batches, a batch
with a failure stops the rollout and later batches are reported ``skipped``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from fabricd.errors import DriverError, FabricdError, Fix
from fabricd.model import Switch
from fabricd.platforms.base import ConnectionLostError, SwitchDriver
from fabricd.platforms.registry import SwitchReach
from fabricd.platforms.registry import driver_factory as registry_driver_factory

from .result import DriftResult, PushReport, TargetResult, TargetState
from .targets import plan_batches

log = logging.getLogger(__name__)

DriverFactory = Callable[[Switch], SwitchDriver]
ResultCallback = Callable[[TargetResult], None]


@dataclass(frozen=True)
class PushOptions(SwitchReach):
    """How to push, and how to reach the switches (:class:`~fabricd.platforms.registry.SwitchReach`).
    ``confirm_timeout_s``: commit-confirm timer on platforms that have one (0 = plain commit); ``concurrency``:
    switches worked on at once (1-1024); ``replace``: remove owned config the intent lacks."""

    dry_run: bool = False
    concurrency: int = 32
    confirm_timeout_s: int = 120
    replace: bool = True


def default_factory(options: PushOptions) -> DriverFactory:
    """Drivers built from each switch's credential reference (see :mod:`fabricd.platforms.access`)."""
    return registry_driver_factory(options)


def _close(driver: SwitchDriver | None) -> None:
    if driver is not None:
        driver.close()


class _Run:
    """The state of one push to one switch; see the module docstring for the steps."""

    def __init__(self, switch: Switch, candidate: str, options: PushOptions, factory: DriverFactory) -> None:
        self.switch = switch
        self.candidate = candidate
        self.options = options
        self.factory = factory
        self.driver: SwitchDriver | None = None
        self.phase = "connect"
        self.before: str | None = None
        self.touched = False
        self.diff = ""
        self.t0 = time.monotonic()

    def result(self, **kw: object) -> TargetResult:
        data: dict[str, object] = {
            "target": self.switch.name,
            "platform": self.switch.platform.value,
            "phase": self.phase,
            "diff": self.diff,
            "duration_s": round(time.monotonic() - self.t0, 3),
        }
        data.update(kw)
        return TargetResult.model_validate(data)

    def go(self) -> TargetResult:
        try:
            return self._steps()
        except FabricdError as exc:
            return self._failed(exc)
        except Exception as exc:  # a bug or an unexpected library error: keep the other targets going
            log.exception("%s: unexpected error during %s", self.switch.name, self.phase)
            return self._failed(
                DriverError(
                    self.switch.name,
                    self.phase,
                    f"internal error: {type(exc).__name__}: {exc}",
                    hint="this is a fabricd bug; please report it with the log",
                )
            )
        finally:
            _close(self.driver)

    def _steps(self) -> TargetResult:
        opts = self.options
        self.driver = drv = self.factory(self.switch)
        drv.open()
        self.phase = "read"
        self.before = drv.get_config()
        delta = drv.compare(self.before, self.candidate)
        if delta.empty:
            self.phase = "done"
            return self.result(state=TargetState.UNCHANGED, dry_run=opts.dry_run)
        caps = drv.capabilities
        if not opts.dry_run and caps.checkpoint:
            self.phase = "checkpoint"
            drv.checkpoint()
        self.phase = "load"
        drv.load_candidate(self.candidate, replace=opts.replace)
        self.phase = "diff"
        self.diff = drv.diff() or delta.diff
        if opts.dry_run:
            drv.discard()
            self.phase = "done"
            return self.result(state=TargetState.UNCHANGED, dry_run=True)
        self.phase = "commit"
        self.touched = True
        timer = opts.confirm_timeout_s if caps.commit_confirm and opts.confirm_timeout_s > 0 else None
        drv.commit(confirm_in_s=timer)
        self.phase = "verify"
        after = drv.get_config()
        check = drv.compare(after, self.candidate)
        if not check.empty:
            raise DriverError(
                self.switch.name,
                "verify",
                f"after commit the device does not match the intent ({len(check.changes)} differences: "
                f"{'; '.join(check.changes[:3])})",
                hint="the device changed or refused part of the config",
                fixes=(Fix(("diff",), {"device": self.switch.name}, "shows the difference"),),
            )
        self.phase = "confirm"
        drv.confirm()
        self.phase = "done"
        return self.result(changed=True, state=TargetState.CHANGED)

    def _failed(self, exc: FabricdError) -> TargetResult:
        error = exc.words()
        log.warning("%s", error, extra={"target": self.switch.name})
        if not self.touched:
            if self.driver is not None and self.driver.connected and self.phase in ("load", "diff"):
                try:
                    self.driver.discard()
                except FabricdError as exc2:
                    log.info("%s: discard after failure: %s", self.switch.name, exc2.render())
            return self.result(failed=True, error=error, state=TargetState.UNTOUCHED, fixes=list(exc.fixes))
        state, note, fixes = self._recover()
        return self.result(failed=True, error=f"{error}; {note}", state=state, fixes=[*exc.fixes, *fixes])

    def _recover(self) -> tuple[TargetState, str, list[Fix]]:
        """Roll back after a failure that may have changed the device; verify it is back to ``before``."""
        old = self.driver
        token = old.rollback_token if old is not None else None
        drv = old
        self.phase = "rollback"
        try:
            # Always a fresh session: the old one may sit in config mode or mid-reply after a failure.
            _close(drv)
            self.driver = drv = self.factory(self.switch)
            drv.rollback_token = token
            drv.open()
            drv.rollback()
            after = drv.get_config()
        except FabricdError as exc:
            return (
                TargetState.UNKNOWN,
                (
                    f"rollback failed too ({exc.render()}); the device may be partly changed: roll it back when it "
                    "is reachable"
                ),
                [Fix(("rollback",), {"device": self.switch.name}, operands=("INVENTORY",))],
            )
        assert self.before is not None
        was = drv.compare(self.before, self.candidate).changes
        now = drv.compare(after, self.candidate).changes
        if was == now:
            return TargetState.ROLLED_BACK, "rolled back to the config from before the push (verified)", []
        return (
            TargetState.UNKNOWN,
            (f"rolled back, but the result differs from the config before the push ({len(now)} differences)"),
            [Fix(("diff",), {"device": self.switch.name}, "checks it")],
        )


def push_one(
    switch: Switch, candidate: str, options: PushOptions, factory: DriverFactory | None = None
) -> TargetResult:
    """Run the pipeline on one switch; never raises for device problems (they land in the result)."""
    return _Run(switch, candidate, options, factory or default_factory(options)).go()


def push(
    targets: list[Switch],
    candidates: Mapping[str, str],
    options: PushOptions,
    *,
    batch_key: str | None = None,
    on_result: ResultCallback | None = None,
    factory: DriverFactory | None = None,
) -> PushReport:
    """Push to every target, ``options.concurrency`` at a time, batch after batch; results in target order."""
    make = factory or default_factory(options)
    batches = plan_batches(targets, batch_key)
    by_name: dict[str, TargetResult] = {}
    stopped: str | None = None
    workers = max(1, min(options.concurrency, 1024))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fabricd-push") as pool:
        for batch_name, members in batches:
            if stopped is not None:
                for sw in members:
                    res = TargetResult(
                        target=sw.name,
                        platform=sw.platform.value,
                        state=TargetState.SKIPPED,
                        batch=batch_name,
                        error=f"not attempted: batch {stopped!r} failed and stopped the rollout",
                    )
                    by_name[sw.name] = res
                    if on_result:
                        on_result(res)
                continue

            def work(sw: Switch, batch: str = batch_name) -> TargetResult:
                res = push_one(sw, candidates[sw.name], options, make).model_copy(update={"batch": batch})
                if on_result:
                    on_result(res)
                return res

            results = list(pool.map(work, members))
            for res in results:
                by_name[res.target] = res
            if batch_key is not None and any(r.failed for r in results):
                stopped = batch_name
    return PushReport(
        results=[by_name[s.name] for s in targets],
        batches=[b for b, _ in batches],
        stopped_after=stopped,
        dry_run=options.dry_run,
    )


def drift_one(switch: Switch, candidate: str, factory: DriverFactory) -> DriftResult:
    """Compare one switch's running config with the intent (read-only)."""
    drv: SwitchDriver | None = None
    try:
        drv = factory(switch)
        drv.open()
        delta = drv.compare(drv.get_config(), candidate)
        return DriftResult(
            target=switch.name,
            platform=switch.platform.value,
            drift=not delta.empty,
            changes=list(delta.changes),
            diff=delta.diff,
        )
    except FabricdError as exc:
        return DriftResult(target=switch.name, platform=switch.platform.value, failed=True, error=exc.render())
    finally:
        _close(drv)


def drift(
    targets: list[Switch],
    candidates: Mapping[str, str],
    options: PushOptions,
    *,
    factory: DriverFactory | None = None,
    on_result: Callable[[DriftResult], None] | None = None,
) -> list[DriftResult]:
    make = factory or default_factory(options)

    def work(sw: Switch) -> DriftResult:
        res = drift_one(sw, candidates[sw.name], make)
        if on_result:
            on_result(res)
        return res

    with ThreadPoolExecutor(max_workers=max(1, min(options.concurrency, 1024))) as pool:
        return list(pool.map(work, targets))


def rollback_one(switch: Switch, factory: DriverFactory) -> TargetResult:
    """Return one switch to fabricd's last checkpoint (or abort its pending timed commit)."""
    t0 = time.monotonic()
    drv: SwitchDriver | None = None
    phase = "connect"
    try:
        drv = factory(switch)
        drv.open()
        phase = "read"
        before = drv.get_config()
        phase = "rollback"
        drv.rollback()
        after = drv.get_config()
        changed = drv.fingerprint(before) != drv.fingerprint(after)
        return TargetResult(
            target=switch.name,
            platform=switch.platform.value,
            changed=changed,
            phase="done",
            state=TargetState.ROLLED_BACK if changed else TargetState.UNCHANGED,
            duration_s=round(time.monotonic() - t0, 3),
        )
    except FabricdError as exc:
        return TargetResult(
            target=switch.name,
            platform=switch.platform.value,
            failed=True,
            error=exc.render(),
            phase=phase,
            state=TargetState.UNKNOWN if phase == "rollback" else TargetState.UNTOUCHED,
            duration_s=round(time.monotonic() - t0, 3),
        )
    finally:
        _close(drv)


__all__ = [
    "ConnectionLostError",
    "DriverFactory",
    "PushOptions",
    "default_factory",
    "drift",
    "drift_one",
    "push",
    "push_one",
    "rollback_one",
]
