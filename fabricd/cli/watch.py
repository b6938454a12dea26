"""``fabricd watch``: the in-process PFC storm and drop watchdog, printing events as they happen."""

from __future__ import annotations

import json
import signal
import sys
import threading
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from fabricd.inventory import Inventory, load_inventory
from fabricd.service.wiring import RootSpec, SwitchFleet, build_watchdog, host_sources
from fabricd.watchdog.runner import EventSink, Source
from fabricd.watchdog.sources import HostSource
from fabricd.watchdog.types import Event, EventKind
from fabricd.watchdog.webhook import WebhookSink, receiver_names

from .common import ExitCode, OutputFormat, OutputOpt, stderr, webhook_urls
from .deploy_common import InsecureOpt
from .options import FullPauseFractionOpt, ThisHostOpt, WatchdogFlags

FINDINGS = (EventKind.STORM_DETECTED, EventKind.LOSSLESS_DROP, EventKind.WATCHDOG_STUCK)


def format_event(ev: Event) -> str:
    """One human line for an event (``--output text``)."""
    when = datetime.fromtimestamp(ev.ts).strftime("%H:%M:%S.%f")[:-3]
    where = f"{ev.scope.value} {ev.device} {ev.interface}"
    prio = f" prio {ev.priority}" if ev.priority is not None else ""
    dirn = f" {ev.direction.value}" if ev.direction is not None else ""
    text = f"{when}  {ev.event.value:<15} {where}{prio}{dirn}"
    if ev.event is EventKind.STORM_DETECTED:
        text += f"  paused {ev.paused_ms:.0f} ms" if ev.paused_ms is not None else ""
        if ev.origin:
            text += f"  origin {ev.origin} ({ev.origin_kind})"
    elif ev.event is EventKind.STORM_RESTORED and ev.storm_duration_s is not None:
        text += f"  after {ev.storm_duration_s:.3f} s"
    elif ev.event is EventKind.LOSSLESS_DROP:
        text += f"  {ev.count} dropped ({ev.reason})"
    elif ev.event is EventKind.WATCHDOG_STUCK:
        text += f"  detected {ev.detected} restored {ev.restored} for {ev.stuck_s:.0f} s"
    return text


class _Printer:
    """Writes each event to stdout at once (JSON lines or text) and remembers whether any was a finding."""

    def __init__(self, output: OutputFormat) -> None:
        self.output = output
        self.findings = 0
        self.events = 0
        self._lock = threading.Lock()

    def __call__(self, ev: Event) -> None:
        line = json.dumps(ev.as_dict()) if self.output is OutputFormat.JSON else format_event(ev)
        with self._lock:
            self.events += 1
            if ev.event in FINDINGS:
                self.findings += 1
            sys.stdout.write(line + "\n")
            sys.stdout.flush()


def install_stop_handlers(stop: threading.Event) -> None:
    """SIGTERM and SIGINT end the run cleanly (threads stop at their next wait)."""

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def watch_cmd(
    inventory: Annotated[
        Path | None,
        typer.Argument(
            envvar="FABRICD_INVENTORY",
            show_default=False,
            help="Inventory file or directory: watch the intent's lossless priorities on the named host's NICs "
            "(and, with --switches, the switches), and name storm origins from its topology. Without one, "
            "every priority that has pause counters is watched.",
        ),
    ] = None,
    root: Annotated[
        list[str] | None,
        typer.Option(
            "--root",
            envvar="FABRICD_ROOT",
            help="Replay root to read instead of this host (a host's sys/ and ethtool/ files); HOST=DIR names the "
            "inventory host it stands for. Repeatable.",
        ),
    ] = None,
    host: ThisHostOpt = None,
    interface: Annotated[
        list[str] | None,
        typer.Option("--interface", "-i", help="Only these interfaces (repeatable). Default: the host's NICs."),
    ] = None,
    switches: Annotated[
        bool, typer.Option("--switches/--no-switches", help="Also poll the inventory's switches over SSH.")
    ] = False,
    switch: Annotated[
        list[str] | None,
        typer.Option("--switch", help="Poll only these inventory switches (repeatable; implies --switches)."),
    ] = None,
    poll_ms: Annotated[
        float | None,
        typer.Option("--poll-ms", min=1, help="Sampling period, ms. Default: policy.pfc.watchdog.poll_ms, else 100."),
    ] = None,
    detection_ms: Annotated[
        float | None,
        typer.Option(
            "--detection-ms", min=1, help="Continuous pause that makes a storm, ms. Default: the intent's, else 200."
        ),
    ] = None,
    restoration_ms: Annotated[
        float | None,
        typer.Option(
            "--restoration-ms", min=1, help="Pause-free time that ends it, ms. Default: the intent's, else detection."
        ),
    ] = None,
    insecure: InsecureOpt = False,
    switch_poll_ms: Annotated[
        float, typer.Option("--switch-poll-ms", min=10, help="Sampling period of switch sessions, ms.")
    ] = 1000,
    full_pause_fraction: FullPauseFractionOpt = 0.8,
    stuck_after_s: Annotated[
        float,
        typer.Option(
            "--stuck-after-s",
            min=0.1,
            help="A switch watchdog that has not restored a storm after this long is stuck (Meta's check).",
        ),
    ] = 60.0,
    webhook: Annotated[
        list[str] | None,
        typer.Option("--webhook", help="POST each event there in Alertmanager's webhook format (repeatable)."),
    ] = None,
    duration: Annotated[
        float | None,
        typer.Option("--duration", min=0.0, help="Stop after this many seconds (default: until SIGTERM or Ctrl-C)."),
    ] = None,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Watch for PFC storms, lossless drops and stuck switch watchdogs; print each event as it happens.

    Timing contract (SONiC's): a storm is reported between detection and detection + poll after it starts,
    and restored between restoration and restoration + poll after it ends. Exit code 1 when a storm, drop
    or stuck watchdog was seen, 0 when not.

    [bold]Example[/]: fabricd watch --root /tmp/replay --detection-ms 200 --poll-ms 50 --output json
    [bold]Example[/]: fabricd watch inventory/lab --host gpu1 --webhook http://127.0.0.1:5001/
    [bold]Example[/]: fabricd watch inventory/lab --root gpu1=/srv/replay/gpu1 --switches --duration 60
    """
    err = stderr()
    hook_urls = webhook_urls(webhook)
    inv: Inventory | None = load_inventory(inventory) if inventory is not None else None
    fabric = inv.fabric if inv is not None else None
    params = WatchdogFlags.of(locals()).params(fabric)
    roots = [RootSpec.parse(r) for r in (root or [])]
    sources: list[Source] = list(host_sources(fabric, roots, host=host, interfaces=interface, params=params))
    fleet: SwitchFleet | None = None
    periods: dict[str, float] = {}
    if (switches or switch) and fabric is not None:
        fleet = SwitchFleet(fabric, switch, verify_host_key=not insecure, wait_s=switch_poll_ms / 2000.0)
        for src, period in fleet.watch_sources(switch_poll_ms / 1000.0, params.poll_s):
            sources.append(src)
            periods[src.name] = period
    elif (switches or switch) and fabric is None:
        err.print("[yellow]warning:[/] --switches needs an inventory; watching hosts only")
    printer = _Printer(output)
    sinks: list[EventSink] = [printer]
    hooks = [WebhookSink(url, receiver=name) for url, name in zip(hook_urls, receiver_names(hook_urls), strict=True)]
    sinks.extend(hooks)
    wd = build_watchdog(inv, params, sources, sinks=sinks, periods=periods)
    err.print(
        f"fabricd watch: {', '.join(s.name for s in sources)}; detection {params.detection_ms} ms, "
        f"restoration {params.restoration_ms} ms, poll {params.poll_ms} ms",
        highlight=False,
    )
    stop = threading.Event()
    install_stop_handlers(stop)
    try:
        wd.run(stop, duration)
    finally:
        stop.set()
        wd.join(5.0)
        for hook in hooks:
            hook.close()
        if fleet is not None:
            fleet.close()
        for src in sources:
            if isinstance(src, HostSource):
                src.close()
    statuses = wd.source_status()
    err.print(
        f"fabricd watch: {sum(s.polls for s in statuses)} polls ({sum(s.deadline_reads for s in statuses)} "
        f"deadline reads), {wd.poll_overruns} overruns, "
        f"{printer.events} events ({printer.findings} findings)",
        highlight=False,
    )
    failed = [s for s in statuses if s.polls and s.failures == s.polls]
    for s in failed:
        err.print(f"[red]error:[/] {s.name}: every poll failed; last error: {s.last_error}", highlight=False)
    if failed and len(failed) == len(sources):
        raise typer.Exit(ExitCode.TARGETS_FAILED)
    raise typer.Exit(ExitCode.FINDINGS if printer.findings else ExitCode.OK)


def register(app: typer.Typer) -> None:
    app.command("watch")(watch_cmd)
