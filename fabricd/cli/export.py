"""``fabricd export host|switches|ib``: the Prometheus exporters (NIC, RDMA and NIC-config counters of this host; PFC,
queue, ECN and watchdog counters of the inventory's switches; port counters of an InfiniBand fabric)."""

from __future__ import annotations

import logging
import re
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

from fabricd.collectors.core import Family, MetricSpec, Registry, render
from fabricd.collectors.host import HOST_COLLECTORS, HostReading, host_collectors
from fabricd.collectors.httplimits import ConnLimits
from fabricd.collectors.nic_config import CONFIG_INTERVAL_S
from fabricd.collectors.server import DEFAULT_LISTEN, ExporterServer, bind_error, listen_option
from fabricd.collectors.webconfig import WebConfig, load_web_config
from fabricd.errors import UsageError
from fabricd.inventory.shard import Shard

if TYPE_CHECKING:
    from fabricd.collectors.switch import SwitchTarget

from .common import InventoryArg, OutputFormat, OutputOpt, check_root, emit_json, inventory_path, stderr
from .deploy_common import InsecureOpt
from .shard_opts import ShardFromHostnameOpt, ShardOpt, resolve_shard
from .shard_opts import select as select_shard

log = logging.getLogger(__name__)

ListenOpt = Annotated[
    str,
    typer.Option(
        "--listen",
        envvar="FABRICD_LISTEN",
        help="Address and port to serve /metrics on (loopback by default; anything else should use --web-config).",
    ),
]
WebConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--web-config",
        envvar="FABRICD_WEB_CONFIG",
        help="exporter-toolkit web config (YAML): tls_server_config and basic_auth_users (bcrypt).",
        show_default=False,
    ),
]
MaxConnectionsOpt = Annotated[
    int,
    typer.Option(
        "--max-connections",
        envvar="FABRICD_MAX_CONNECTIONS",
        min=1,
        help="HTTP connections open at once; past it the longest-idle one is closed, or the new one gets "
        "503 (lowered to the open-file limit minus 64).",
    ),
]
HeaderTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--header-timeout",
        envvar="FABRICD_HEADER_TIMEOUT",
        min=0.1,
        help="Seconds a client may take to send a request's line and headers before it is disconnected.",
    ),
]


def conn_limits(max_connections: int, header_timeout: float) -> ConnLimits:
    """The HTTP endpoint's bounds from ``--max-connections`` and ``--header-timeout``."""
    return ConnLimits(max_connections=max_connections, header_timeout_s=header_timeout)


def families_json(families: list[Family]) -> list[dict[str, object]]:
    """Samples as JSON rows: ``{"name", "type", "labels", "value"}``."""
    return [
        {
            "name": f.spec.name,
            "type": f.spec.type,
            "labels": dict(zip(f.spec.labels, labels, strict=True)),
            "value": value,
        }
        for f in families
        for labels, value in f.samples
    ]


def print_scrape(families: list[Family], output: OutputFormat) -> None:
    """One scrape to stdout (``--once``): the Prometheus text exposition, or JSON rows with ``--output json``."""
    if output == OutputFormat.JSON:
        emit_json(families_json(families))
    else:
        sys.stdout.write(render(families))
        sys.stdout.flush()


def metric_groups() -> list[tuple[str, str, tuple[MetricSpec, ...]]]:
    """Every metric group METRICS.md lists: the collectors', the service's drift audit and the agent's."""
    from fabricd.collectors.docs import GROUPS
    from fabricd.collectors.webhook import WebhookCollector
    from fabricd.service.agent import AGENT_METRICS
    from fabricd.service.drift import DriftCollector

    groups = list(GROUPS)
    groups.insert(
        len(groups) - 1,
        ("drift", "`fabricd serve`: periodic drift audit of switches and hosts against intent", DriftCollector.metrics),
    )
    groups.insert(
        len(groups) - 1,
        (
            "webhook",
            "`fabricd serve --webhook`: delivery of the watchdog's notifications, per receiver",
            WebhookCollector.metrics,
        ),
    )
    groups.insert(
        len(groups) - 1,
        (
            "agent",
            "`fabricd agent`: per-host reconcile (compliance per NIC and check, reconciles, applies)",
            AGENT_METRICS,
        ),
    )
    return groups


def _include(pattern: str | None) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise UsageError(
            f"--include {pattern!r}: not a regular expression ({exc})",
            hint="give a Python regex such as '^(eth|ens|mlx5_)'",
        ) from exc


def _collectors_opt(value: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in value.split(",") if n.strip())
    unknown = [n for n in names if n not in HOST_COLLECTORS]
    if unknown or not names:
        raise UsageError(
            f"--collectors {value!r}: unknown collector(s) {', '.join(unknown) or '(none given)'}",
            hint=f"choose from {','.join(HOST_COLLECTORS)}",
        )
    return names


def _logging() -> None:
    """Warnings (a collector's problems, a switch that failed) go to stderr unless logging is already set up."""
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s", stream=sys.stderr)


def _shard_of(replica: Shard | None, targets: list[SwitchTarget]) -> list[SwitchTarget]:
    """The targets of this replica's shard (all of them without --shard), in their order."""
    mine = set(select_shard(replica, [t.name for t in targets]))
    return [t for t in targets if t.name in mine]


def _web(path: Path | None) -> WebConfig | None:
    return load_web_config(path) if path is not None else None


def serve(registry: Registry, listen: str, web: WebConfig | None, what: str, limits: ConnLimits | None = None) -> None:
    """Serve ``registry`` on ``listen`` until SIGTERM/SIGINT. Raises :class:`UsageError` on a bad address or one
    that cannot be bound. Commands load on first use (cli/main.py), so this process holds only the exporter's
    own modules: no second, slimmer process is needed."""
    host, port = listen_option(listen)
    try:
        server = ExporterServer((host, port), registry.exposition, web, limits)
    except OSError as exc:
        raise bind_error(listen, exc) from exc
    err = stderr()
    if server.exposed:
        err.print(
            f"warning: serving {what} on {host} without TLS or authentication; give --web-config to protect it",
            highlight=False,
            markup=False,
        )
    err.print(f"fabricd {what} exporter on {server.url} (stop with Ctrl-C or SIGTERM)", highlight=False, markup=False)

    def _stop(signum: int, frame: FrameType | None) -> None:
        threading.Thread(target=server.shutdown, daemon=True).start()

    old = {s: signal.signal(s, _stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        server.server_close()


def host_cmd(
    root: Annotated[
        Path | None,
        typer.Option(
            "--root",
            envvar="FABRICD_ROOT",
            show_default=False,
            help="Replay root to read instead of this host: DIR/sys/class/{net,infiniband}, "
            "DIR/sys/kernel/config/rdma_cm, DIR/ethtool/<if>.stats|.info.",
        ),
    ] = None,
    listen: ListenOpt = DEFAULT_LISTEN,
    once: Annotated[bool, typer.Option("--once", help="Print one scrape to stdout and exit (textfile style).")] = False,
    web_config: WebConfigOpt = None,
    max_connections: MaxConnectionsOpt = ConnLimits.max_connections,
    header_timeout: HeaderTimeoutOpt = ConnLimits.header_timeout_s,
    include: Annotated[
        str | None,
        typer.Option(
            "--include", help="Only interfaces/RDMA devices whose name matches this regex.", show_default=False
        ),
    ] = None,
    collectors: Annotated[
        str, typer.Option("--collectors", help=f"Comma-separated collectors to run ({','.join(HOST_COLLECTORS)}).")
    ] = ",".join(HOST_COLLECTORS),
    include_virtual: Annotated[
        bool,
        typer.Option(
            "--include-virtual", help="Live host: also read ethtool stats of virtual netdevs (veth, bridge, lo)."
        ),
    ] = False,
    config_interval: Annotated[
        float,
        typer.Option(
            "--config-interval",
            min=0.0,
            help="Seconds between two reads of the NIC configuration files (ECN/DCQCN, ToS, trust, PFC, MTU); "
            "scrapes in between export the last values. 0 reads them on every scrape. On MLNX_OFED each "
            "ecn/ file read is a firmware command.",
        ),
    ] = CONFIG_INTERVAL_S,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Export this host's NIC, RDMA and NIC-config counters to Prometheus: per-priority PFC pause frames and
    pause time, per-priority traffic, discards, RoCE hw_counters (CNP, ECN, out-of-sequence, timeouts) and the
    ECN/DCQCN/ToS configuration, normalised across drivers (mlx5, mlx4, bnxt_en, ice, i40e, ixgbe, rxe).

    With --once it prints one scrape (Prometheus text format, or JSON rows with --output json) and exits 0;
    otherwise it serves /metrics until stopped.

    [bold]Example[/]: fabricd export host
    [bold]Example[/]: fabricd export host --root /tmp/capture --once
    [bold]Example[/]: fabricd export host --listen 0.0.0.0:9860 --web-config web.yml
    """
    _logging()
    base = root if root is not None else Path("/")
    if root is not None:
        check_root(root, "give the replay directory that holds sys/ and ethtool/ (`fabricd export host --help`)")
    web = _web(web_config)
    registry = Registry(
        host_collectors(
            base,
            replay=root is not None,
            include=_include(include),
            enabled=_collectors_opt(collectors),
            include_virtual=include_virtual,
            # one scrape: building layouts would not pay
            reading=HostReading(kept_files=not once, config_interval=config_interval),
        )
    )
    if once:
        print_scrape(registry.scrape(), output)
        return
    serve(registry, listen, web, "host", conn_limits(max_connections, header_timeout))


def metrics_doc_cmd(
    write: Annotated[bool, typer.Option("--write", help="Rewrite exporters/METRICS.md instead of printing.")] = False,
) -> None:
    """Print (or --write) exporters/METRICS.md, generated from the collectors' metric specs.

    [bold]Example[/]: fabricd export metrics-doc --write
    """
    from fabricd import settings
    from fabricd.collectors.docs import metrics_markdown

    text = metrics_markdown(metric_groups())
    if write:
        path = settings.data_dir("exporters") / "METRICS.md"
        path.write_text(text)
        stderr().print(f"wrote {path}", highlight=False)
    else:
        sys.stdout.write(text)


def switches_cmd(
    inventory: InventoryArg = None,
    listen: Annotated[
        str, typer.Option("--listen", envvar="FABRICD_SWITCH_LISTEN", help="Address and port to serve /metrics on.")
    ] = "127.0.0.1:9861",
    once: Annotated[bool, typer.Option("--once", help="Poll once, print the exposition and exit.")] = False,
    web_config: WebConfigOpt = None,
    max_connections: MaxConnectionsOpt = ConnLimits.max_connections,
    header_timeout: HeaderTimeoutOpt = ConnLimits.header_timeout_s,
    device: Annotated[
        list[str] | None, typer.Option("--device", help="Only these switches (repeatable).", show_default=False)
    ] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, max=256, help="Switches polled at once.")] = 16,
    timeout_s: Annotated[float, typer.Option("--timeout", min=1.0, help="Seconds one switch's poll may take.")] = 30.0,
    scrape_wait_s: Annotated[
        float,
        typer.Option(
            "--scrape-wait",
            min=0.1,
            help="Serving: seconds one scrape waits for the switches (keep it under Prometheus' scrape_timeout, 10 s "
            "by default). A switch still polling is exported from its last answer, whose age "
            "fabricd_switch_last_success_timestamp_seconds shows, and read at a later scrape.",
        ),
    ] = 8.0,
    insecure: InsecureOpt = False,
    transport: Annotated[
        str,
        typer.Option(
            "--transport",
            envvar="FABRICD_SWITCH_TRANSPORT",
            help="inventory: each switch's telemetry.transport (ssh by default); ssh or gnmi: every switch over that "
            "transport (gnmi streams Subscribe SAMPLE/ON_CHANGE over TLS; docs/metrics.md says which counters "
            "each NOS streams).",
        ),
    ] = "inventory",
    replay: Annotated[
        Path | None,
        typer.Option(
            "--replay",
            envvar="FABRICD_SWITCH_REPLAY",
            show_default=False,
            help="Read a `fabricd capture` folder instead of dialling the switches (its devices, or --device).",
        ),
    ] = None,
    shard: ShardOpt = None,
    shard_from_hostname: ShardFromHostnameOpt = None,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Export the PFC, queue, ECN and PFC-watchdog counters of the inventory's switches to Prometheus. Each
    switch is polled through its platform driver over an SSH session kept open between scrapes, with bounded
    concurrency; a switch that fails shows fabricd_switch_up 0 and the others are still exported.

    Exit codes with --once: 0 all switches answered, 3 some failed (their fabricd_switch_up is 0).

    With --replay DIR the switches and their outputs come from a `fabricd capture` folder (the inventory is
    not read): the same parsers, the same metrics, no SSH.

    With --shard K/N (or --shard-from-hostname N in a StatefulSet) this replica polls only the switches whose
    Prometheus hashmod of the name is K; N replicas export every switch once (docs/metrics.md, Sharding).

    [bold]Example[/]: fabricd lab up && fabricd export switches --once
    [bold]Example[/]: fabricd export switches inventory/lab --listen 127.0.0.1:9861
    [bold]Example[/]: fabricd export switches --replay /tmp/cap --once
    [bold]Example[/]: fabricd export switches inventory/lab --shard 0/2
    """
    from fabricd.collectors.gnmi import GnmiStreamCollector
    from fabricd.collectors.switch import Poller, SwitchCollector, SwitchPoller
    from fabricd.inventory import load_inventory
    from fabricd.platforms.base import DriverOptions
    from fabricd.service.wiring import build_switch_poller, driver_factory, switch_targets

    _logging()
    web = _web(web_config)
    replica = resolve_shard(shard, shard_from_hostname)
    if replay is not None:
        from fabricd.collectors.switch import replay_targets

        targets, factory = replay_targets(replay, device)
        targets = _shard_of(replica, targets)
        poller: Poller = SwitchPoller(targets, factory, concurrency=concurrency, timeout_s=timeout_s)
        transport_series = None  # a capture is read, not dialled: no transport to report
    else:
        inv = load_inventory(inventory_path(inventory))
        targets = switch_targets(inv.fabric, device, option="device")
        factory = driver_factory(inv.fabric, verify_host_key=not insecure, options=DriverOptions())
        targets = _shard_of(replica, targets)
        poller, gnmi, ssh_names = build_switch_poller(
            inv.fabric, targets, factory, transport=transport, concurrency=concurrency, timeout_s=timeout_s
        )
        transport_series = GnmiStreamCollector(gnmi, ssh_names)
    registry = Registry(
        [
            SwitchCollector(poller, wait_s=None if once else scrape_wait_s),
            *([transport_series] if transport_series is not None else []),
        ]
    )
    try:
        if once:
            families = registry.scrape()
            print_scrape(families, output)
            failed = [
                labels[0]
                for f in families
                if f.spec.name == "fabricd_switch_up"
                for labels, value in f.samples
                if value == 0
            ]
            if failed:
                stderr().print(f"switches that failed: {', '.join(failed)} (see the log above)", highlight=False)
                raise typer.Exit(3)
            return
        serve(registry, listen, web, "switch", conn_limits(max_connections, header_timeout))
    finally:
        poller.close()


def ib_cmd(
    replay: Annotated[
        Path | None,
        typer.Option(
            "--replay",
            envvar="FABRICD_IB_REPLAY",
            show_default=False,
            help="Read captured outputs instead of running the commands: DIR/ibnetdiscover.txt (ibnetdiscover "
            "--ports) and DIR/perfquery/*.txt (blocks found by their Lid/port header).",
        ),
    ] = None,
    listen: Annotated[
        str, typer.Option("--listen", envvar="FABRICD_IB_LISTEN", help="Address and port to serve /metrics on.")
    ] = "127.0.0.1:9864",
    once: Annotated[bool, typer.Option("--once", help="Read the fabric once, print the exposition and exit.")] = False,
    web_config: WebConfigOpt = None,
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency",
            min=1,
            max=256,
            envvar="FABRICD_IB_CONCURRENCY",
            help="perfquery calls at once (each is one MAD round trip from this host's HCA).",
        ),
    ] = 8,
    timeout_s: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=0.1,
            help="Seconds one perfquery call may take; past it the call is killed and the "
            "port is fabricd_ib_port_up 0.",
        ),
    ] = 5.0,
    discover_timeout_s: Annotated[
        float, typer.Option("--discover-timeout", min=1.0, help="Seconds ibnetdiscover may take.")
    ] = 60.0,
    discover_interval_s: Annotated[
        float,
        typer.Option(
            "--discover-interval",
            min=0.0,
            help="Seconds between two ibnetdiscover runs (it walks the whole subnet); scrapes in between read the "
            "ports of the last report. 0: on every scrape.",
        ),
    ] = 300.0,
    ibnetdiscover: Annotated[
        str,
        typer.Option(
            "--ibnetdiscover",
            envvar="FABRICD_IBNETDISCOVER",
            help="The discovery command (split like a shell would, run without one).",
        ),
    ] = "ibnetdiscover --ports",
    perfquery: Annotated[
        str,
        typer.Option(
            "--perfquery",
            envvar="FABRICD_PERFQUERY",
            help="The per-port command; {lid} and {port} are filled in (e.g. 'perfquery -C mlx5_0 -x {lid} {port}', "
            "or 'sudo perfquery -x {lid} {port}').",
        ),
    ] = "perfquery -x {lid} {port}",
    all_ports: Annotated[
        bool,
        typer.Option("--all-ports", help="Also read ports without a link (ibnetdiscover lists them with no peer)."),
    ] = False,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Export the port counters of a whole InfiniBand fabric: the ports from `ibnetdiscover --ports`, each
    read with `perfquery -x <lid> <port>` (infiniband-diags) with bounded concurrency and a deadline per call,
    under the host RDMA series' vocabulary (fabricd_ib_port_* with node, guid, lid and port labels).

    Exit codes with --once: 0 every port read, 3 some failed (their fabricd_ib_port_up is 0), 2 the commands
    are not installed.

    [bold]Example[/]: fabricd export ib --once
    [bold]Example[/]: fabricd export ib --replay /srv/ib-capture --once
    [bold]Example[/]: fabricd export ib --perfquery 'perfquery -C mlx5_0 -x {lid} {port}' --listen 0.0.0.0:9864
    """
    import shutil

    from fabricd.collectors.ib import CommandSource, IbCollector, IbSource, ReplaySource, command_argv, missing_tool

    _logging()
    web = _web(web_config)
    source: IbSource
    if replay is not None:
        if not (replay / "ibnetdiscover.txt").is_file():
            raise UsageError(
                f"--replay {replay}: no ibnetdiscover.txt there",
                hint="a replay folder holds ibnetdiscover.txt (ibnetdiscover --ports) and "
                "perfquery/*.txt (`fabricd docs metrics`, InfiniBand)",
            )
        source = ReplaySource(replay)
    else:
        try:
            disc, pq = command_argv(ibnetdiscover), command_argv(perfquery)
        except ValueError as exc:
            raise UsageError(f"--ibnetdiscover/--perfquery: {exc}", hint="give a command line") from exc
        for setting, argv in (("ibnetdiscover", disc), ("perfquery", pq)):
            if shutil.which(argv[0]) is None:
                raise missing_tool(argv, setting)
        source = CommandSource(disc, pq, timeout_s=timeout_s, discover_timeout_s=discover_timeout_s)
    collector = IbCollector(
        source, concurrency=concurrency, discover_interval_s=discover_interval_s, all_ports=all_ports
    )
    registry = Registry([collector])
    try:
        if once:
            families = registry.scrape()
            print_scrape(families, output)
            failed = [
                labels
                for f in families
                if f.spec.name == "fabricd_ib_port_up"
                for labels, value in f.samples
                if value == 0
            ]
            ok = [v for f in families if f.spec.name == "fabricd_scrape_collector_success" for _, v in f.samples]
            if failed or ok != [1]:
                err = stderr()
                for line in collector.failures[:50]:
                    err.print(f"  {line}", highlight=False, markup=False)
                more = len(collector.failures) - 50
                err.print(
                    f"{len(failed)} port(s) could not be read" + (f" ({more} more not shown)" if more > 0 else ""),
                    highlight=False,
                    markup=False,
                )
                raise typer.Exit(3)
            return
        serve(registry, listen, web, "InfiniBand")
    finally:
        collector.close()


def register(app: typer.Typer) -> None:
    export_app = typer.Typer(
        help="Prometheus exporters: this host's NIC/RDMA counters, or the fabric's switches.", no_args_is_help=True
    )
    app.add_typer(export_app, name="export")
    register_ib(export_app)

    export_app.command("host")(host_cmd)

    export_app.command("metrics-doc", hidden=True)(metrics_doc_cmd)

    export_app.command("switches")(switches_cmd)


def register_ib(export_app: typer.Typer) -> None:
    """``fabricd export ib``: the InfiniBand fabric exporter (ibnetdiscover + perfquery)."""

    export_app.command("ib")(ib_cmd)
