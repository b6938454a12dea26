"""``fabricd demo``: the whole loop on one inventory (the embedded lab fabric by default), bounded and honest.

Stages, in order (:data:`STAGES`); each returns a :class:`StageResult` with its key figures as JSON-able data:

1. ``validate``: every semantic check, the host-to-switch ones counted apart, and the PFC deadlock analysis;
2. ``render``: every switch config (four NOSes) and every host's script and plan, written under the state dir;
3. ``push``: the switch lab over SSH, a push with diffs, an idempotent re-push;
4. ``host``: one host's plan applied into a network namespace (netlink, pyroute2) and a fake mlx5 ``/sys`` tree
   built from real captures (sysfs/configfs), audited before and after;
5. ``export``: mlx5-like replay roots (two inventory hosts, live-updated), the host exporter serving them, the
   watchdog's metrics, and a real Prometheus scraping them every second with the shipped rule pack;
6. ``storm``: a PFC storm injected on the first host's NIC (a stalled receiver sending pause), detected by the
   watchdog (latency against its timing contract), alerted (``FabricPfcStormActive`` in Prometheus), its origin
   named by the root-cause walk, then stopped and restored;
7. ``vm``: verbs traffic through ``validate-fabric`` in the Soft-RoCE VM.

A stage whose prerequisites are missing (not root, no Prometheus, no VM image, a part not in this build) is
``skipped`` with the reason; a stage that ran and did not get the expected result is ``failed``. Nothing here
prints: progress goes to a :class:`DemoObserver`, results are returned.

Everything started is registered on an :class:`contextlib.ExitStack` and stopped by :meth:`Demo.close`, also on
errors and Ctrl-C. With ``keep_running`` the long-lived parts (Prometheus) are detached instead, and
:attr:`DemoReport.services` says where they are and how to stop them.

Each stage is a :class:`~fabricd_lab.demo_context.Stage` object; what they share (the inventory, the cleanup
stack, the parts one stage starts for the next) is the :class:`~fabricd_lab.demo_context.DemoContext`. The
stages are in :mod:`.demo_stages` (validate, render, push, host, vm), :mod:`.demo_export` and
:mod:`.demo_storm`; the stage results, options, host picks and child processes in :mod:`.demo_parts`;
Prometheus in :mod:`.demo_prom`. This module runs the stages in order, cleans up, and keeps the run record.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from typing import Any

from fabricd import settings
from fabricd.errors import FabricdError
from fabricd.inventory import Inventory
from fabricd.model import Fabric

from .demo_context import DemoContext, Stage
from .demo_export import ExportStage
from .demo_parts import (
    RUNNING_FILE,
    DemoObserver,
    DemoOptions,
    DemoReport,
    SilentObserver,
    StageFailedError,
    StageResult,
    StageSkippedError,
    StageStatus,
    host_as_device,
)
from .demo_stages import HostStage, PushStage, RenderStage, ValidateStage, VmStage
from .demo_storm import StormStage

STAGE_TYPES: tuple[type[Stage], ...] = (
    ValidateStage,
    RenderStage,
    PushStage,
    HostStage,
    ExportStage,
    StormStage,
    VmStage,
)
"""The stage objects, in :data:`~fabricd_lab.demo_parts.STAGES` order."""


class Demo:
    """Runs the stages; use as a context manager (or call :meth:`close`) so everything started is stopped."""

    def __init__(self, options: DemoOptions, observer: DemoObserver | None = None) -> None:
        self.options = options
        self.observer: DemoObserver = observer or SilentObserver()
        self.state = options.state or settings.state_dir() / "demo"
        self._stack = contextlib.ExitStack()
        self._owner_pid = os.getpid()
        self.ctx = DemoContext(options, self.observer, self.state, self._stack)
        self.stages: list[Stage] = [cls(self.ctx) for cls in STAGE_TYPES]
        self.report: DemoReport | None = None

    # -- lifecycle ----------------------------------------------------------------------------------------------

    def __enter__(self) -> Demo:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop everything this demo started (in reverse order). Safe to call more than once.

        Only the process that made the demo cleans up: pyroute2 forks helper children to open sockets inside a
        network namespace, and a child stopped by a signal unwinds the parent's frames it inherited, this
        ``close`` included; it must not delete the namespaces and files the parent still uses.
        """
        if os.getpid() != self._owner_pid:
            return
        self._stack.close()

    @property
    def inventory(self) -> Inventory:
        return self.ctx.inventory

    @property
    def fabric(self) -> Fabric:
        return self.ctx.fabric

    # -- the run --------------------------------------------------------------------------------------------------

    def run(self) -> DemoReport:
        fabric = self.fabric  # bad input raises here, before anything starts
        report = DemoReport(fabric=fabric.name, inventory=str(self.options.inventory), started_ts=time.time())
        self.report = report
        self.state.mkdir(parents=True, exist_ok=True)
        for index, stage in enumerate(self.stages, start=1):
            self.observer.stage_started(index, len(self.stages), stage.name, stage.title)
            result = _run_stage(stage)
            report.stages.append(result)
            self.observer.stage_done(result)
            if stage.name == "storm":
                self._save_record(report)
                self._quiet()
        if self.options.keep_running:
            report.services.update(self._keep_services())
        workdir = self.ctx.workdir_path
        report.workdir = str(workdir) if workdir is not None else None
        report.ended_ts = time.time()
        return report

    def _quiet(self) -> None:
        """After the storm: stop the replay writers and the lab traffic (the VM stage wants the CPU)."""
        for gen in self.ctx.gens.values():
            gen.close()
        if self.ctx.traffic is not None:
            self.ctx.traffic.stop()

    def _keep_services(self) -> dict[str, Any]:
        """--keep-running: detach Prometheus and the fabricd processes; record them for `fabricd demo --stop`."""
        out: dict[str, Any] = {}
        kept: list[dict[str, Any]] = []
        prom = self.ctx.prom
        if prom is not None and prom.proc is not None:
            pid = prom.detach()
            out["prometheus"] = {
                "url": prom.url,
                "pid": pid,
                "note": f"alerts {prom.url}/alerts, graphs {prom.url}/graph",
            }
            kept.append({"name": "prometheus", "pid": pid, "marker": str(prom.workdir)})
        for child in self.ctx.children:
            if child.proc.poll() is None:
                pid = child.detach()
                out[child.name] = {"url": child.url, "pid": pid}
                kept.append({"name": child.name, "pid": pid, "marker": f"--listen {child.address}"})
        lab_kept = self.ctx.lab_up and not self.ctx.lab_reused
        if lab_kept:
            from fabricd_lab import daemon

            st = daemon.status()
            if st["running"]:
                first, last = st["devices"][0], st["devices"][-1]
                out["lab"] = {
                    "url": f"ssh://{first['host']}:{first['port']}-{last['port']}",
                    "pid": st["pid"],
                    "note": "`fabricd lab status` lists each switch; `fabricd push`, `fabricd diff` and "
                    "`fabricd lab drive` work on it",
                }
            else:
                lab_kept = False
        if kept or lab_kept:
            self.ctx.keep_workdir = True
            record = {"workdir": str(self.ctx.workdir_path), "processes": kept, "lab": lab_kept}
            (self.state / RUNNING_FILE).write_text(json.dumps(record, indent=1))
            out["stop"] = {
                "command": "fabricd demo --stop",
                "note": "stops these processes"
                + (" and the switch lab (`fabricd lab down`)" if lab_kept else "")
                + " and removes the replay roots",
            }
            out["note"] = (
                "the replay roots stay as the storm left them: their counters no longer move once the demo has exited"
            )
        return out

    # -- the run record -------------------------------------------------------------------------------------------

    def _save_record(self, report: DemoReport) -> None:
        from fabricd_lab.report.prometheus import fetch_panels, query_range
        from fabricd_lab.report.record import ReportError, RunRecord, Series, save_record

        prom = self.ctx.prom
        if prom is None or prom.proc is None or self.ctx.prom_started_ts is None:
            report.run_record_note = "no run record: Prometheus did not run (see the export stage)"
            return
        start, end = self.ctx.prom_started_ts, time.time()
        # irate: the last two 1 s scrapes, so the storm shows as the plateau it is (a 5 s rate would ramp)
        q = "sum by (host, interface, priority, direction) (irate(fabricd_nic_pfc_pause_duration_seconds_total[3s]))"
        try:
            pause = [
                Series(name=s.name, labels=host_as_device(s.labels), points=s.points)
                for s in query_range(prom.url, q, start, end)
            ]
            panels = fetch_panels(prom.url, start, end)
        except ReportError as exc:
            report.run_record_note = f"no run record: {exc.render()}"
            return
        record = RunRecord(
            fabric=self.fabric.name,
            inventory=str(self.options.inventory),
            started_ts=start,
            ended_ts=end,
            pause=pause,
            storm=self.ctx.storm,
            panels=panels,
        )
        path = self.state / "run.json"
        save_record(record, path)
        report.run_record = str(path)


@contextlib.contextmanager
def running(options: DemoOptions, observer: DemoObserver | None = None) -> Iterator[Demo]:
    """``with running(opts) as demo: demo.run()``: everything started is stopped on exit, errors included."""
    demo = Demo(options, observer)
    try:
        yield demo
    finally:
        demo.close()


def _run_stage(stage: Stage) -> StageResult:
    """Run one stage, its skip or failure (raised inside it) turned into its result, timed."""
    name, title = stage.name, stage.title
    t0 = time.monotonic()
    try:
        result = stage.run()
    except StageSkippedError as exc:
        result = StageResult(name, title, StageStatus.SKIPPED, f"skipped: {exc}", {"reason": str(exc)})
    except StageFailedError as exc:
        result = StageResult(name, title, StageStatus.FAILED, f"failed: {exc}", {"error": str(exc), **exc.data})
    except FabricdError as exc:
        result = StageResult(name, title, StageStatus.FAILED, f"failed: {exc.render()}", {"error": exc.render()})
    except OSError as exc:
        result = StageResult(name, title, StageStatus.FAILED, f"failed: {exc}", {"error": str(exc)})
    result.seconds = time.monotonic() - t0
    return result
