"""``fabricd demo``: the whole loop on the embedded lab fabric, narrated stage by stage (fabricd_lab.demo)."""

from __future__ import annotations

import logging
import os
import signal
import time
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.rule import Rule
from rich.table import Table

from fabricd import settings
from fabricd.cli.common import (
    RULE_WIDTH,
    ExitCode,
    InventoryArg,
    OutputFormat,
    OutputOpt,
    emit_json,
    stderr,
    stdout,
)
from fabricd_lab.demo import Demo
from fabricd_lab.demo_parts import DemoOptions, DemoReport, StageResult, StageStatus, stop_kept

_MARK = {
    StageStatus.OK: "[bold green]ok[/]",
    StageStatus.SKIPPED: "[yellow]skipped[/]",
    StageStatus.FAILED: "[bold red]FAILED[/]",
}


def _clock(ts: float | None) -> str:
    return datetime.fromtimestamp(ts).strftime("%H:%M:%S.%f")[:-3] if ts else "-"


def _validate_view(d: dict[str, Any]) -> list[Any]:
    hs = d["host_switch"]
    lines = [
        f"{d['switches']} switches, {d['hosts']} hosts, {d['links']} links; {d['checks']} checks: "
        f"[bold]{d['errors']}[/] errors, {d['warnings']} warnings",
        f"host-to-switch checks ({', '.join(hs['checks'])}) on {hs['nics']} NICs: [bold]{hs['errors']}[/] "
        f"errors, {hs['warnings']} warnings",
        "PFC deadlock: "
        + (
            f"{d['deadlock']['cycles']} cycle(s)"
            if d["deadlock"].get("cycles")
            else "no cyclic buffer dependency"
            if d["deadlock"]["applicable"]
            else "not applicable"
        ),
    ]
    for p in d["problems"][:5]:
        lines.append(f"[yellow]{p['severity']}[/] {escape(p['text'])} [{p['code']}]")
    if len(d["problems"]) > 5:
        lines.append(f"... {len(d['problems']) - 5} more (`fabricd validate`)")
    return lines


def _render_view(d: dict[str, Any]) -> list[Any]:
    table = Table(title=f"rendered into {d['out']}", title_justify="left")
    for col, just in (
        ("device", "left"),
        ("platform", "left"),
        ("files", "left"),
        ("lines", "right"),
        ("warnings", "right"),
    ):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for r in d["rows"]:
        table.add_row(
            r["device"],
            r["platform"],
            ", ".join(Path(f).name for f in r["files"]),
            str(r["lines"]),
            f"[yellow]{r['warnings']}[/]" if r["warnings"] else "0",
        )
    noses = f"{len(d['nos'])} NOS{'es' if len(d['nos']) != 1 else ''}"
    return [
        table,
        f"{noses}: {', '.join(d['nos'])}; warnings are values a platform cannot express exactly "
        "(`fabricd render` lists them)",
    ]


def _push_view(d: dict[str, Any]) -> list[Any]:
    lab = d["lab"]
    out: list[Any] = [
        ("lab (already running): " if lab["reused"] else "fabricd lab up: ")
        + ", ".join(f"{x['name']} ({x['platform']}) {x['address']}" for x in lab["devices"])
    ]
    style = {"+": "green", "-": "red"}
    for name, diff in d["diffs"].items():
        if not diff["lines"]:
            continue
        out.append(f"[bold]diff {name}[/] (+{diff['added']} -{diff['removed']})")
        signs = diff.get("head_signs") or [line[:1] for line in diff["head"]]
        for line, sign in zip(diff["head"], signs, strict=False):
            color = style.get(sign)
            out.append(f"  [{color}]{escape(line)}[/]" if color else f"  {escape(line)}")
        if diff["lines"] > len(diff["head"]):
            out.append(
                f"  [dim]... {diff['lines'] - len(diff['head'])} more lines (`fabricd push --dry-run` "
                "shows them all)[/]"
            )
    table = Table(title="fabricd push, then the same push again", title_justify="left")
    for col, just in (("device", "left"), ("platform", "left"), ("push", "left"), ("s", "right"), ("re-push", "left")):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for r in d["rows"]:
        table.add_row(
            r["target"],
            r["platform"],
            r["state"] + (f" ({escape(r['error'])})" if r["error"] else ""),
            f"{r['seconds']:.2f}",
            r["repush_state"],
        )
    out.append(table)
    return out


def _host_view(d: dict[str, Any]) -> list[Any]:
    b, a = d["before"], d["after"]
    lines: list[Any] = [
        f"before: {b['findings']} findings ({', '.join(b['failed_checks']) or 'none'})",
        f"plan: {d['plan']['steps']} steps ({', '.join(f'{k} {v}' for k, v in d['plan']['by_backend'].items())}); "
        f"applied {d['apply']['applied']}"
        + (f", rolled back {d['apply']['rolled_back']}" if d["apply"]["rolled_back"] else ""),
        f"skipped parts: {', '.join(d['skipped_parts'])}: {d['skip_reason']}",
    ]
    table = Table(title=f"fabricd audit host {d['host']} (after apply)", title_justify="left")
    for col in ("check", "title", "status", "note"):
        table.add_column(col, overflow="fold")
    style = {"pass": "green", "skip": "dim", "fail": "bold red"}
    for c in a["checks"]:
        table.add_row(
            c["code"],
            c["title"],
            f"[{style.get(c['status'], 'bold')}]{c['status']}[/]",
            escape(c["note"] or "; ".join(c["findings"])),
        )
    lines += [
        table,
        f"after: {'compliant' if a['compliant'] else str(a['findings']) + ' findings'}; "
        f"a second plan has {d['replan_steps']} steps (idempotent)",
    ]
    return lines


def _number(value: float, unit: str) -> str:
    if unit in ("bytes/s", "bytes"):
        for div, name in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if abs(value) >= div:
                return f"{value / div:.2f} {name}{unit}"
    if value == int(value):
        return f"{int(value)} {unit}".strip()
    return f"{value:.3g} {unit}".strip()


def _export_view(d: dict[str, Any]) -> list[Any]:
    targets = Table(title=f"{d['prometheus']['version']} at {d['prometheus']['url']}: targets", title_justify="left")
    for col in ("job", "instance", "labels", "health"):
        targets.add_column(col)
    for t in d["targets"]:
        extra = {k: v for k, v in t["labels"].items() if k not in ("job", "instance")}
        targets.add_row(
            t["job"],
            t["instance"],
            " ".join(f"{k}={v}" for k, v in extra.items()),
            "[green]up[/]" if t["health"] == "up" else f"[red]{t['health']}[/]",
        )
    counters = Table(title="key counters, read back from Prometheus (PromQL)", title_justify="left")
    for col, just in (("counter", "left"), ("where", "left"), ("value", "right")):
        counters.add_column(col, justify=just)  # type: ignore[arg-type]
    for c in d["counters"]:
        counters.add_row(c["what"], c["where"], _number(c["value"], c["unit"]))
    return [targets, counters, f"{d['series']} fabricd series in Prometheus"]


def _storm_view(d: dict[str, Any]) -> list[Any]:
    inj = d["injected"]
    t0 = inj["ts"]
    c = d["contract_ms"]
    table = Table(
        title=f"storm timeline: {inj['device']} {inj['interface']} priority {inj['priority']} "
        f"(sends pause: a stalled receiver)",
        title_justify="left",
    )
    for col, just in (("time", "left"), ("+ms", "right"), ("what", "left")):
        table.add_column(col, justify=just)  # type: ignore[arg-type]

    def row(ts: float | None, what: str) -> None:
        if ts is not None:
            table.add_row(_clock(ts), f"{(ts - t0) * 1000:.0f}", what)

    row(t0, "storm injected (replay tree: tx pause duration grows 1 s/s)")
    if "detected_ts" in d:
        load = "/".join(f"{x:.1f}" for x in d.get("load_average", ()))
        verdict = "[green]within[/]" if d["within_contract"] else f"[yellow]late, at load average {load}, beyond[/]"
        row(
            d["detected_ts"],
            f"watchdog: storm_detected, latency {d['detection_latency_ms']:.0f} ms ({verdict} "
            f"the contract {c['min']:g}-{c['max']:g} ms, + {c['tolerance_ms']:g} ms for the "
            "replay writer's tick)",
        )
    alert = d.get("alert")
    if alert:
        row(alert["seen_ts"], f"Prometheus: {alert['name']} {alert['state']} ({escape(alert['summary'])})")
    row(d.get("stopped_ts"), "storm stopped (the receiver drains again)")
    if "restored_ts" in d:
        row(d["restored_ts"], f"watchdog: storm_restored ({d['restoration_latency_ms']:.0f} ms after the stop)")
    out: list[Any] = [table]
    if d.get("spread"):
        spread = Table(
            title="the storm's spread, as fabricd serve saw it (switches polled every second)", title_justify="left"
        )
        for col, just in (
            ("paused port", "left"),
            ("dir", "left"),
            ("detected after", "right"),
            ("origin named at detection", "left"),
        ):
            spread.add_column(col, justify=just)  # type: ignore[arg-type]
        for sp in d["spread"]:
            spread.add_row(
                sp["port"],
                sp["direction"],
                f"{sp['latency_ms']:.0f} ms" if sp["detected"] else "[red]not seen[/]",
                f"{sp['origin']} ({sp['origin_kind']})" if sp["origin"] else "-",
            )
        out.append(spread)
        out.append(
            "root cause over all active storms (fabricd serve /status): "
            + ", ".join(
                f"[bold]{o['device']}:{o['interface']}[/] ({o['kind']}, {o['affected']} storms lead to it)"
                for o in d.get("origins", [])
            )
        )
    origin = d.get("origin") or {}
    if origin.get("port"):
        path = " <- ".join(origin.get("path") or [])
        out.append(
            f"origin (root of the pause tree): [bold]{origin['port']}[/] ({origin['kind']})"
            + (f"; walked {path}" if path and len(origin.get("path") or []) > 1 else "")
        )
    if d.get("paused_ports"):
        out.append(f"ports in storm at detection: {', '.join(d['paused_ports'])}")
    if "alert_resolved" in d:
        out.append(
            "alert resolved in Prometheus after the restore"
            if d["alert_resolved"]
            else "[yellow]alert still active in Prometheus when the demo moved on[/]"
        )
    return out


def _vm_view(d: dict[str, Any]) -> list[Any]:
    table = Table(
        title=f"fabricd validate-fabric --pair {d['pair']} (Soft-RoCE, {d['accel'].upper()}, ToS {d['tos']})",
        title_justify="left",
    )
    for col in ("check", "result", "detail"):
        table.add_column(col, overflow="fold")
    style = {"pass": "[green]pass[/]", "fail": "[bold red]FAIL[/]", "skip": "[yellow]not checkable[/]"}
    for c in d["checks"]:
        table.add_row(c["code"], style.get(c["status"], c["status"]), escape(c["detail"] or ""))
    return [f"VMs up in {d['boot_s']:.0f} s ({escape(d['accel_reason'])})", table]


VIEWS = {
    "validate": _validate_view,
    "render": _render_view,
    "push": _push_view,
    "host": _host_view,
    "export": _export_view,
    "storm": _storm_view,
    "vm": _vm_view,
}


class Narrator:
    """Prints each stage as it runs: a rule, notes, the key result, a status line (text mode, stdout)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.t0 = time.monotonic()

    def stage_started(self, index: int, total: int, name: str, title: str) -> None:
        self.console.print()
        self.console.print(Rule(f"[bold]{index}/{total}  {escape(title)}[/]", align="left"), width=RULE_WIDTH)

    def note(self, stage: str, text: str) -> None:
        self.console.print(f"[dim]{time.monotonic() - self.t0:6.1f}s[/]  {escape(text)}", highlight=False)

    def stage_done(self, result: StageResult) -> None:
        view = VIEWS.get(result.name)
        if view is not None and result.status is StageStatus.OK:
            for item in view(result.data):
                self.console.print(item, highlight=False)
        self.console.print(
            f"{_MARK[result.status]} ({result.seconds:.1f} s): {escape(result.summary)}", highlight=False
        )


class _Quiet:
    """``--output json``: one progress line per stage on stderr, the report on stdout at the end."""

    def __init__(self) -> None:
        self.err = stderr()

    def stage_started(self, index: int, total: int, name: str, title: str) -> None:
        self.err.print(f"[dim]fabricd demo {index}/{total} {name}...[/]", highlight=False)

    def note(self, stage: str, text: str) -> None:
        return None

    def stage_done(self, result: StageResult) -> None:
        self.err.print(
            f"[dim]fabricd demo {result.name}: {result.status.value} ({result.seconds:.1f} s)[/]", highlight=False
        )


def _summary(console: Console, report: DemoReport, keep_running: bool) -> None:
    console.print()
    console.print(Rule("[bold]summary[/]", align="left"), width=RULE_WIDTH)
    table = Table()
    for col, just in (("#", "right"), ("stage", "left"), ("result", "left"), ("s", "right"), ("key result", "left")):
        table.add_column(col, justify=just, overflow="fold")  # type: ignore[arg-type]
    for i, s in enumerate(report.stages, start=1):
        table.add_row(str(i), s.name, _MARK[s.status], f"{s.seconds:.1f}", escape(s.summary))
    console.print(table)
    wall = report.ended_ts - report.started_ts
    counts = {st: sum(1 for s in report.stages if s.status is st) for st in StageStatus}
    console.print(
        f"{counts[StageStatus.OK]} ok, {counts[StageStatus.SKIPPED]} skipped, "
        f"{counts[StageStatus.FAILED]} failed in {wall:.0f} s",
        highlight=False,
    )
    if report.run_record:
        console.print(
            f"run saved to {report.run_record}; draw its pictures with [bold]fabricd report --out DIR[/]",
            highlight=False,
        )
    elif report.run_record_note:
        console.print(report.run_record_note, highlight=False)
    if keep_running:
        services = {k: v for k, v in report.services.items() if isinstance(v, dict) and "pid" in v}
        if services:
            console.print("[bold]left running[/] (--keep-running):")
            for name, svc in services.items():
                console.print(
                    f"  {name}: {svc['url']} (pid {svc['pid']})" + (f"; {svc['note']}" if svc.get("note") else ""),
                    highlight=False,
                )
            stop = report.services["stop"]
            console.print(f"stop them with [bold]{stop['command']}[/] ({stop['note']})", highlight=False)
            if report.services.get("note"):
                console.print(str(report.services["note"]), highlight=False)
        else:
            console.print("--keep-running: nothing was left running (no stage started a long-lived service)")
    else:
        console.print("everything the demo started has been stopped")


class _LogCatcher(logging.Handler):
    """Keeps fabricd's log warnings of the run (printed after the summary instead of between the tables)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        line = f"{record.name}: {record.getMessage()}"
        if line not in self.lines:
            self.lines.append(line)


def _sigterm_as_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def register(app: typer.Typer) -> None:
    @app.command("demo")
    def demo_cmd(
        inventory: InventoryArg = None,
        keep_running: Annotated[
            bool,
            typer.Option(
                "--keep-running",
                help="Leave the switch lab, fabricd serve and Prometheus up and print their URLs and how to stop them.",
            ),
        ] = False,
        no_vm: Annotated[bool, typer.Option("--no-vm", help="Skip the Soft-RoCE VM stage (verbs traffic).")] = False,
        stop: Annotated[
            bool, typer.Option("--stop", help="Stop what an earlier `fabricd demo --keep-running` left up, then exit.")
        ] = False,
        host: Annotated[
            str | None,
            typer.Option(
                "--host",
                help="Inventory host to apply, audit and storm (default: the first with an RDMA NIC).",
                show_default=False,
            ),
        ] = None,
        output: OutputOpt = OutputFormat.TEXT,
    ) -> None:
        """Run the whole loop on the embedded lab fabric (or INVENTORY), one narrated step per stage: validate,
        render for four NOSes and the hosts, push to simulated switches over SSH, apply and audit a host in a
        network namespace, export counters into a real Prometheus, inject a PFC storm and watch it detected,
        alerted, traced to its origin and restored, and (when the VM can run) verbs traffic through
        validate-fabric. A stage that cannot run here says why and is skipped.

        Ends with a summary; saves the run to $FABRICD_STATE_DIR/demo/run.json for `fabricd report`, and stops
        everything it started (also on Ctrl-C) unless --keep-running. Needs root for the host stage and
        /usr/bin/prometheus for the export and storm stages (`fabricd doctor` checks both).
        Exit 0 when no stage failed, 3 when one did.

        [bold]Example[/]: sudo fabricd demo
        [bold]Example[/]: fabricd demo --no-vm --output json > demo.json
        [bold]Example[/]: fabricd demo --keep-running && fabricd report --out pictures/ && fabricd demo --stop
        """
        if stop:
            lines = stop_kept(settings.state_dir() / "demo")
            if output == OutputFormat.JSON:
                emit_json({"stopped": lines})
            else:
                for line in lines or ["nothing to stop: no `fabricd demo --keep-running` is recorded"]:
                    stdout().print(escape(line), highlight=False)
            return
        path = inventory if inventory is not None else settings.lab_inventory()
        options = DemoOptions(
            inventory=path, keep_running=keep_running, vm=not no_vm, host=host, state=settings.state_dir() / "demo"
        )
        console = stdout()
        text = output == OutputFormat.TEXT
        if text:
            console.print(
                f"[bold]fabricd demo[/]: the whole loop on {escape(str(path))} (state in {escape(str(options.state))})",
                highlight=False,
            )
        owner = os.getpid()
        catcher = _LogCatcher()
        fabricd_log = logging.getLogger("fabricd")
        fabricd_log.addHandler(catcher)
        old = signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
        try:
            with Demo(options, Narrator(console) if text else _Quiet()) as demo:
                report = demo.run()
        except BaseException:
            if os.getpid() != owner:
                # a library's forked helper (pyroute2 opens netns sockets in a child) unwinding our frames after a
                # signal: leave at once, without printing or cleaning up what the parent still uses
                os._exit(0)
            raise
        finally:
            if os.getpid() == owner:
                signal.signal(signal.SIGTERM, old)
                fabricd_log.removeHandler(catcher)
        if text:
            _summary(console, report, keep_running)
            if catcher.lines:
                console.print(f"[dim]{len(catcher.lines)} warning(s) logged during the run:[/]")
                for line in catcher.lines[:10]:
                    console.print(f"[dim]  {escape(line)}[/]", highlight=False)
        else:
            emit_json(report.as_dict() | {"log_warnings": catcher.lines})
        if not report.ok:
            raise typer.Exit(ExitCode.TARGETS_FAILED)
