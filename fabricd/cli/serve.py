"""``fabricd serve``: host exporter, switch poller, watchdog, drift audit and a JSON status API in one service."""

from __future__ import annotations

import logging
import sys
from typing import Annotated

import typer

from fabricd.collectors.httplimits import ConnLimits
from fabricd.collectors.nic_config import CONFIG_INTERVAL_S
from fabricd.collectors.server import listen_option
from fabricd.collectors.switch import Backoff
from fabricd.collectors.webconfig import load_web_config
from fabricd.inventory import load_inventory
from fabricd.service.api import DEFAULT_LISTEN
from fabricd.service.serve import ServeOptions, Service
from fabricd.service.wiring import RootSpec

from .common import (
    InventoryArg,
    OutputFormat,
    OutputOpt,
    inventory_path,
    serve_in_foreground,
    webhook_urls,
)
from .deploy_common import InsecureOpt
from .export import HeaderTimeoutOpt, MaxConnectionsOpt, conn_limits
from .options import (
    FullPauseFractionOpt,
    ServiceDurationOpt,
    ServiceWebConfigOpt,
    ThisHostOpt,
    WatchdogFlags,
)
from .shard_opts import ShardFromHostnameOpt, ShardOpt, resolve_shard
from .shard_opts import select as select_shard


def serve_cmd(
    inventory: InventoryArg = None,
    listen: Annotated[
        str,
        typer.Option(
            "--listen",
            envvar="FABRICD_SERVE_LISTEN",
            help="Address for /metrics, /healthz, /status and /events (loopback by default).",
        ),
    ] = DEFAULT_LISTEN,
    web_config: ServiceWebConfigOpt = None,
    max_connections: MaxConnectionsOpt = ConnLimits.max_connections,
    header_timeout: HeaderTimeoutOpt = ConnLimits.header_timeout_s,
    root: Annotated[
        list[str] | None,
        typer.Option(
            "--root",
            envvar="FABRICD_ROOT",
            help="Replay root to read instead of this host; HOST=DIR names the inventory host (repeatable; the "
            "first one is exported, all are watched).",
        ),
    ] = None,
    host: ThisHostOpt = None,
    switches: Annotated[
        bool, typer.Option("--switches/--no-switches", help="Poll the inventory's switches (exporter and watchdog).")
    ] = True,
    switch: Annotated[
        list[str] | None, typer.Option("--switch", help="Poll only these inventory switches (repeatable).")
    ] = None,
    switch_poll_ms: Annotated[
        float, typer.Option("--switch-poll-ms", min=10, help="How often each switch is polled, ms.")
    ] = 1000,
    switch_timeout_s: Annotated[
        float,
        typer.Option(
            "--switch-timeout-s",
            min=0.1,
            help="Deadline of one switch's poll, s; a switch past it is reported down without delaying the others.",
        ),
    ] = 10.0,
    switch_backoff_max_s: Annotated[
        float,
        typer.Option(
            "--switch-backoff-max-s",
            min=0.1,
            help="Longest wait between attempts to a failing switch, s (the wait doubles from 1 s, with jitter).",
        ),
    ] = 60.0,
    poll_ms: Annotated[
        float | None, typer.Option("--poll-ms", min=1, help="Host watchdog sampling period, ms. Default: the intent's.")
    ] = None,
    detection_ms: Annotated[
        float | None,
        typer.Option("--detection-ms", min=1, help="Continuous pause that makes a storm, ms. Default: the intent's."),
    ] = None,
    restoration_ms: Annotated[
        float | None,
        typer.Option("--restoration-ms", min=1, help="Pause-free time that ends it, ms. Default: the intent's."),
    ] = None,
    full_pause_fraction: FullPauseFractionOpt = 0.8,
    stuck_after_s: Annotated[
        float,
        typer.Option("--stuck-after-s", min=0.1, help="Switch watchdog detected without restoring this long = stuck."),
    ] = 60.0,
    drift_interval_s: Annotated[
        float,
        typer.Option(
            "--drift-interval-s", min=1.0, help="How often hosts and switches are audited against the intent."
        ),
    ] = 300.0,
    drift: Annotated[bool, typer.Option("--drift/--no-drift", help="Run the periodic drift audit.")] = True,
    config_interval: Annotated[
        float,
        typer.Option(
            "--config-interval",
            min=0.0,
            help="Seconds between two reads of this host's NIC configuration files for the exported gauges (a "
            "replay root on a local file system is read again as soon as a file is written); 0 reads them on "
            "every scrape. On MLNX_OFED each ecn/ file read is a firmware command.",
        ),
    ] = CONFIG_INTERVAL_S,
    webhook: Annotated[
        list[str] | None,
        typer.Option("--webhook", help="POST watchdog events there in Alertmanager's webhook format (repeatable)."),
    ] = None,
    insecure: InsecureOpt = False,
    duration: ServiceDurationOpt = None,
    shard: ShardOpt = None,
    shard_from_hostname: ShardFromHostnameOpt = None,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Run fabricd as a service: host exporter, switch poller, PFC storm watchdog, drift audit, and
    /metrics, /healthz, /status, /events on one loopback port. Stops cleanly on SIGTERM.

    With --output json, the final /status is printed on exit.

    With --shard K/N (or --shard-from-hostname N) it polls only the switches whose Prometheus hashmod of the
    name is K, so N replicas split the fabric (docs/metrics.md, Sharding).

    [bold]Example[/]: fabricd serve inventory/lab --host gpu1
    [bold]Example[/]: fabricd serve inventory/lab --root gpu1=/srv/replay/gpu1 --webhook http://127.0.0.1:5001/
    [bold]Example[/]: curl -s 127.0.0.1:9862/status   (while it runs)
    """
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(name)s: %(message)s", stream=sys.stderr)
    address = listen_option(listen, DEFAULT_LISTEN)
    replica = resolve_shard(shard, shard_from_hostname)
    inv = load_inventory(inventory_path(inventory))
    if replica is not None and (switches or switch):
        switch = select_shard(replica, switch or [s.name for s in inv.fabric.switches])
        switches = bool(switch)  # a replica whose shard holds no switch polls none (not all)
    params = WatchdogFlags.of(locals()).params(inv.fabric)
    options = ServeOptions(
        listen=address,
        web=load_web_config(web_config) if web_config is not None else None,
        roots=[RootSpec.parse(r) for r in (root or [])],
        host=host,
        switches=switches or bool(switch),
        switch_names=switch,
        switch_poll_s=switch_poll_ms / 1000.0,
        verify_host_key=not insecure,
        switch_timeout_s=switch_timeout_s,
        switch_backoff=Backoff(ceiling_s=switch_backoff_max_s),
        drift_interval_s=drift_interval_s,
        drift=drift,
        webhooks=webhook_urls(webhook),
        params=params,
        config_interval_s=config_interval,
        limits=conn_limits(max_connections, header_timeout),
    )
    service = Service(inv, options)
    serve_in_foreground(
        service,
        name="serve",
        listen=listen,
        bind_host=address[0],
        duration=duration,
        output=output,
        banner=lambda url: (
            f"fabricd serve on {url} (/metrics /healthz /status /events); watching "
            f"{', '.join(s.name for s in service.watchdog.sources)}; detection {params.detection_ms} ms, "
            f"restoration {params.restoration_ms} ms, poll {params.poll_ms} ms"
        ),
    )


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_cmd)
