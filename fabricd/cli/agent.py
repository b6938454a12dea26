"""``fabricd agent``: the per-host reconcile loop (audit or enforce) with its /metrics endpoint."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from fabricd import settings
from fabricd.collectors.httplimits import ConnLimits
from fabricd.collectors.server import listen_option
from fabricd.collectors.webconfig import load_web_config
from fabricd.errors import UsageError
from fabricd.service.agent import DEFAULT_AGENT_LISTEN, Agent, AgentOptions, Mode, default_cache_dir
from fabricd.service.intent_source import DEFAULT_DEADLINE_S, DEFAULT_MAX_BYTES, is_url

from .common import (
    ExitCode,
    OutputFormat,
    OutputOpt,
    check_root,
    emit_json,
    inventory_path,
    serve_in_foreground,
    stderr,
    stdout,
)
from .export import HeaderTimeoutOpt, MaxConnectionsOpt, conn_limits
from .host import HostOpt, NetnsOpt, RootOpt, SkipOpt, parse_skip
from .options import ServiceDurationOpt, ServiceWebConfigOpt

MODES: tuple[Mode, ...] = ("audit", "enforce")


def agent_cmd(
    source: Annotated[
        str | None,
        typer.Argument(
            envvar="FABRICD_INTENT",
            show_default=False,
            help="Inventory file or directory, or an https:// URL of a single-file inventory (CA-verified, "
            "re-fetched with If-None-Match). Default: the embedded lab fabric.",
        ),
    ] = None,
    host: HostOpt = "",
    mode: Annotated[
        str,
        typer.Option(
            "--mode",
            envvar="FABRICD_AGENT_MODE",
            help="audit: report only, never write; enforce: apply the plan when the host drifts.",
        ),
    ] = "audit",
    interval: Annotated[
        float,
        typer.Option(
            "--interval",
            min=1.0,
            envvar="FABRICD_AGENT_INTERVAL",
            help="Seconds between periodic reconciles (also on start and when a NIC/RDMA device appears).",
        ),
    ] = 300.0,
    root: RootOpt = Path("/"),
    netns: NetnsOpt = None,
    skip: SkipOpt = "",
    ca_file: Annotated[
        Path | None,
        typer.Option(
            "--ca-file",
            envvar="FABRICD_CA_FILE",
            show_default=False,
            help="PEM CA bundle that signs the intent server (default: the system trust store).",
        ),
    ] = None,
    intent_timeout: Annotated[
        float,
        typer.Option(
            "--intent-timeout",
            min=1.0,
            envvar="FABRICD_INTENT_TIMEOUT",
            help="Overall deadline of one https intent fetch, seconds (connect to last byte; a server that stalls "
            "or trickles is cut off there and the last good intent is kept).",
        ),
    ] = DEFAULT_DEADLINE_S,
    intent_max_bytes: Annotated[
        int,
        typer.Option(
            "--intent-max-bytes",
            min=1,
            envvar="FABRICD_INTENT_MAX_BYTES",
            help="Largest https intent body accepted, bytes.",
        ),
    ] = DEFAULT_MAX_BYTES,
    intent_sha256: Annotated[
        str | None,
        typer.Option(
            "--intent-sha256",
            envvar="FABRICD_INTENT_SHA256",
            show_default=False,
            help="Pin the intent file's SHA-256 (hex, as sha256sum prints it): any other content is refused, "
            "whoever serves it (TLS protects the channel; this protects the content).",
        ),
    ] = None,
    listen: Annotated[
        str,
        typer.Option(
            "--listen",
            envvar="FABRICD_AGENT_LISTEN",
            help="Address for /metrics, /healthz, /status and /events (loopback by default).",
        ),
    ] = DEFAULT_AGENT_LISTEN,
    web_config: ServiceWebConfigOpt = None,
    max_connections: MaxConnectionsOpt = ConnLimits.max_connections,
    header_timeout: HeaderTimeoutOpt = ConnLimits.header_timeout_s,
    watch_devices: Annotated[
        bool,
        typer.Option(
            "--watch-devices/--no-watch-devices",
            help="Reconcile when a NIC netdev or RDMA device appears again "
            "(netlink link events, /sys/class/infiniband).",
        ),
    ] = True,
    once: Annotated[
        bool, typer.Option("--once", help="One reconcile, print it, exit: 0 compliant or applied, 1 drift, 3 failed.")
    ] = False,
    duration: ServiceDurationOpt = None,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Keep this host's RoCE settings as the intent says. Reconciles at start, when a NIC or RDMA device
    appears again (driver reload, hot-plug), and every --interval seconds. --mode audit reports only;
    --mode enforce applies (snapshot, restore on failure) under the host's apply lock, which `fabricd host
    apply` takes too. Exports compliance per NIC and check, reconciles, applies and failures on /metrics.

    [bold]Example[/]: fabricd agent /etc/fabricd/inventory --host gpu1 --mode enforce --interval 300
    [bold]Example[/]: fabricd agent https://intent.example/fabric.yml --ca-file /etc/fabricd/ca.pem --host gpu1
    [bold]Example[/]: fabricd agent --host gpu1 --once --output json
    """
    if not host:
        raise UsageError("--host is required", hint="name the host as in the inventory, e.g. --host gpu1")
    if mode not in MODES:
        raise UsageError(f"--mode: unknown mode {mode!r}", hint="expected audit or enforce")
    check_root(root)
    src = (
        source
        if source is not None
        else str(inventory_path(None, writes="agent --mode enforce" if mode == "enforce" else None))
    )
    if is_url(src) and not src.startswith("https://"):
        raise UsageError(
            f"{src}: only https:// URLs are accepted",
            hint="serve the inventory over HTTPS (the intent decides what is written to the NIC)",
        )
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.INFO if not once else logging.WARNING,
            format="%(levelname)s: %(name)s: %(message)s",
            stream=sys.stderr,
        )
    options = AgentOptions(
        host=host,
        source=src,
        mode=mode,
        interval_s=interval,
        root=str(root),
        netns=netns,
        skip=parse_skip(skip),
        ca_file=ca_file,
        cache_dir=default_cache_dir(settings.state_dir(), host),
        intent_deadline_s=intent_timeout,
        intent_max_bytes=intent_max_bytes,
        intent_sha256=intent_sha256,
        listen=listen_option(listen, DEFAULT_AGENT_LISTEN),
        web=load_web_config(web_config) if web_config is not None else None,
        watch_devices=watch_devices,
        limits=conn_limits(max_connections, header_timeout),
    )
    agent = Agent(options)
    if once:
        rec = agent.reconcile("manual", "--once")
        if output == OutputFormat.JSON:
            emit_json(rec.as_dict() | {"host": host, "mode": mode})
        else:
            stdout().print(
                f"{host}: {rec.result}" + (f" ({rec.applied_steps} step(s) applied)" if rec.applied_steps else ""),
                highlight=False,
            )
            for check in sorted(rec.as_dict()["failed_checks"]):
                stdout().print(f"  FAIL {check}", highlight=False)
        if rec.error:
            stderr().print(f"[bold red]error:[/] {rec.error}", highlight=False)
        elif agent.source.last_error:  # the reconcile ran on the last good (cached) intent
            stderr().print(
                f"[yellow]warning:[/] {escape(agent.source.last_error)}; used the last good intent (cached)",
                highlight=False,
            )
        raise typer.Exit(
            {"compliant": ExitCode.OK, "applied": ExitCode.OK, "drift": ExitCode.FINDINGS}.get(
                rec.result, ExitCode.TARGETS_FAILED
            )
        )
    serve_in_foreground(
        agent,
        name="agent",
        listen=listen,
        bind_host=options.listen[0],
        duration=duration,
        output=output,
        banner=lambda url: f"fabricd agent {host} ({mode}) on {url}; intent {src}; every {interval:g} s",
    )


def register(app: typer.Typer) -> None:
    app.command("agent")(agent_cmd)
