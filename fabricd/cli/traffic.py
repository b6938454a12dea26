"""``fabricd traffic server | client | selftest``: the integrated RC verbs traffic generator (pyverbs)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.table import Table

from fabricd.errors import UsageError
from fabricd.traffic.engine import DEFAULT_POOL_BYTES, LocalRdma, Server, ServerSession, run_client
from fabricd.traffic.spec import (
    DEFAULT_ACK_TIMEOUT,
    DEFAULT_PORT,
    DEFAULT_TOS,
    LAB_ACK_TIMEOUT,
    SWEEP_SIZES,
    Mode,
    Op,
    OpResult,
    RoceVersion,
    SessionResult,
    TrafficSpec,
)

from .common import ExitCode, OutputFormat, OutputOpt, emit_json, stderr, stdout
from .options import QpsOpt

traffic_app = typer.Typer(
    name="traffic",
    help="RC verbs traffic (pyverbs): WRITE, WRITE_WITH_IMM, SEND/RECV, READ, atomics; bandwidth and latency.",
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)

OP_CHOICES = {op.value: [op] for op in Op} | {
    "atomic": [Op.FETCH_ADD, Op.CMP_SWAP],
    "all": list(Op),
}

PortOpt = Annotated[int, typer.Option("--port", min=0, max=65535, help="TCP port of the out-of-band channel.")]
DeviceOpt = Annotated[
    str | None,
    typer.Option("--device", help="RDMA device (e.g. rxe0, mlx5_0). Default: the one holding the address's GID."),
]
GidOpt = Annotated[
    int | None,
    typer.Option(
        "--gid-index", min=0, help="GID index (needs --device). Default: chosen by RoCE version and IP address."
    ),
]
RoceOpt = Annotated[RoceVersion, typer.Option("--roce", help="RoCE version of the GID.")]
PoolOpt = Annotated[
    int, typer.Option("--pool-mib", min=1, max=65536, help="Registered memory pool (MR) per side, MiB.")
]
RootOpt = Annotated[Path, typer.Option("--root", help="sysfs root for GID lookup (tests use a replay tree).")]


def _ops(values: list[str]) -> list[Op]:
    out: list[Op] = []
    for v in values:
        if v not in OP_CHOICES:
            raise UsageError(f"unknown --op {v!r}", hint=f"use one of: {', '.join(OP_CHOICES)}")
        out += [op for op in OP_CHOICES[v] if op not in out]
    return out


def _progress(quiet: bool) -> Any:
    err = stderr()
    t0 = time.monotonic()

    def say(msg: str) -> None:
        if not quiet:
            err.print(f"[dim]\\[{time.monotonic() - t0:6.1f}s][/] {msg}", highlight=False)

    return say


def _results_table(results: list[OpResult]) -> Table:
    table = Table(show_lines=False)
    for col in ("op", "size B", "QPs", "msgs", "Gb/s", "msg/s", "latency µs (p50/avg/p99)", "verify"):
        table.add_column(col, justify="right" if col not in ("op", "verify") else "left")
    for r in results:
        lat = f"{r.latency.p50_us}/{r.latency.avg_us}/{r.latency.p99_us} {r.latency.kind}" if r.latency else "-"
        ver = "-" if r.verify is None else ("[green]ok[/]" if r.verify.ok else f"[red]FAIL[/] {r.verify.detail}")
        if r.verify is not None and r.verify.ok:
            ver += f" ({r.verify.checked})"
        table.add_row(
            r.op.value, str(r.size), str(r.qps), str(r.messages), f"{r.gbit_s:.3f}", f"{r.msg_rate:.0f}", lat, ver
        )
    return table


@traffic_app.command("server")
def server_cmd(
    bind: Annotated[str, typer.Option("--bind", help="Address to listen on (its GID is used).")] = "0.0.0.0",
    port: PortOpt = DEFAULT_PORT,
    device: DeviceOpt = None,
    gid_index: GidOpt = None,
    roce: RoceOpt = RoceVersion.V2,
    pool_mib: PoolOpt = DEFAULT_POOL_BYTES >> 20,
    once: Annotated[bool, typer.Option("--once", help="Exit after one client session.")] = False,
    accept_timeout: Annotated[
        float | None,
        typer.Option("--accept-timeout", min=1, help="With --once: give up when no client connects within N seconds."),
    ] = None,
    root: RootOpt = Path("/"),
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Serve traffic clients (one at a time). The MR pool is registered once and reused by every session.

    With --output json, prints one JSON object per session. Exit 1 when a --once session failed its checks.

    [bold]Example[/]: fabricd traffic server --bind 10.100.0.13
    """
    srv = Server(
        bind=bind,
        port=port,
        local=LocalRdma(
            device=device, gid_index=gid_index, roce_version=roce, pool_bytes=pool_mib << 20, root=str(root)
        ),
    )
    err = stderr()
    err.print(f"listening on {bind}:{srv.port} (pool {pool_mib} MiB)", highlight=False)

    def report(s: ServerSession) -> None:
        data = {"client": s.client, "ok": s.ok, "error": s.error, "phases": s.phases}
        if output == OutputFormat.JSON:
            sys.stdout.write(json.dumps(data) + "\n")
            sys.stdout.flush()
        else:
            status = "ok" if s.ok else f"FAILED: {s.error or 'payload check'}"
            phases = ", ".join(
                f"{p['op']} {p['size']}B x{sum(p['counts'])}{'' if p['verify']['ok'] else ' (verify FAILED)'}"
                for p in s.phases
            )
            stdout().print(f"session from {s.client}: {status}; {phases or 'no phases'}", highlight=False)

    try:
        sessions = srv.serve(once=once, on_session=report, accept_timeout_s=accept_timeout if once else None)
    finally:
        srv.close()
    if once and sessions and not sessions[0].ok:
        raise typer.Exit(ExitCode.FINDINGS if sessions[0].error is None else ExitCode.TARGETS_FAILED)


@traffic_app.command("client")
def client_cmd(
    peer: Annotated[str, typer.Option("--peer", help="The server's RDMA address.")],
    op: Annotated[
        list[str] | None,
        typer.Option(
            "--op", help="write, write_imm, send, read, fetch_add, cmp_swap, atomic (both) or all. Repeatable."
        ),
    ] = None,
    size: Annotated[list[int] | None, typer.Option("--size", "-s", min=1, help="Message bytes. Repeatable.")] = None,
    sweep: Annotated[bool, typer.Option("--sweep", help=f"Sizes {', '.join(map(str, SWEEP_SIZES))}.")] = False,
    qps: Annotated[int, typer.Option("--qps", "-q", min=1, max=64, help="RC QPs.")] = 1,
    depth: Annotated[int, typer.Option("--depth", "-t", min=1, max=4096, help="Outstanding WRs per QP.")] = 64,
    post_list: Annotated[int, typer.Option("--post-list", min=1, max=256, help="WRs per post call.")] = 16,
    signal_every: Annotated[int, typer.Option("--signal-every", min=1, max=256, help="A completion every N WRs.")] = 16,
    duration: Annotated[float | None, typer.Option("--duration", "-D", min=0.001, help="Seconds per op/size.")] = None,
    iterations: Annotated[int | None, typer.Option("--iterations", "-n", min=1, help="Messages per QP.")] = None,
    mode: Annotated[Mode, typer.Option("--mode", help="bw (bandwidth) or lat (ping-pong latency).")] = Mode.BW,
    tos: Annotated[
        int | None, typer.Option("--tos", min=0, max=255, help="IPv4 ToS / GRH traffic class. Default: the intent's.")
    ] = None,
    inventory: Annotated[
        Path | None,
        typer.Option("--inventory", envvar="FABRICD_INVENTORY", help="Inventory whose qos.roce gives the ToS."),
    ] = None,
    no_verify: Annotated[bool, typer.Option("--no-verify", help="Skip payload verification.")] = False,
    ack_timeout: Annotated[
        int, typer.Option("--ack-timeout", min=1, max=31, help="Local ACK timeout 4.096 µs x 2^N (14 = 67 ms).")
    ] = DEFAULT_ACK_TIMEOUT,
    port: PortOpt = DEFAULT_PORT,
    device: DeviceOpt = None,
    gid_index: GidOpt = None,
    roce: RoceOpt = RoceVersion.V2,
    pool_mib: PoolOpt = DEFAULT_POOL_BYTES >> 20,
    connect_timeout: Annotated[
        float, typer.Option("--connect-timeout", min=0.1, help="Seconds to keep retrying the server.")
    ] = 15.0,
    spec_json: Annotated[
        str | None, typer.Option("--spec-json", hidden=True, help="A full TrafficSpec as JSON (used by selftest).")
    ] = None,
    root: RootOpt = Path("/"),
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Run RC traffic against a 'fabricd traffic server' and print bandwidth, message rate, latency and the payload
    check. Exit 0 ok, 1 payload mismatch, 2 bad input, 3 peer unreachable or verbs failure.

    [bold]Example[/]: fabricd traffic client --peer 10.100.0.13 --op write --size 65536 --qps 4 --duration 5
    [bold]Example[/]: fabricd traffic client --peer 10.100.0.13 --op send --mode lat --size 2 --iterations 1000
    """
    if spec_json is not None:
        try:
            spec = TrafficSpec.model_validate_json(spec_json)
        except ValidationError as exc:
            raise UsageError(f"--spec-json is not a valid traffic spec: {exc.errors()[0]['msg']}") from exc
    else:
        if tos is None:
            tos = DEFAULT_TOS
            if inventory is not None:
                from fabricd.inventory import load_inventory  # lazily: keeps the lab VM's start-up short

                tos = load_inventory(inventory).fabric.policy.qos.roce.effective_tos
        try:
            spec = TrafficSpec(
                ops=_ops(op or ["write"]),
                mode=mode,
                sizes=list(SWEEP_SIZES) if sweep else (size or [65536]),
                qps=qps,
                depth=depth if mode == Mode.BW else 1,
                post_list=post_list if mode == Mode.BW else 1,
                signal_every=signal_every if mode == Mode.BW else 1,
                duration_s=None if iterations is not None and duration is None else (duration or 5.0),
                iterations=iterations,
                tos=tos,
                verify=not no_verify,
                ack_timeout=ack_timeout,
            )
        except ValidationError as exc:
            first = exc.errors()[0]
            raise UsageError(
                f"invalid traffic options: {first['msg'].removeprefix('Value error, ')}",
                hint="see 'fabricd traffic client --help'",
            ) from exc
    local = LocalRdma(device=device, gid_index=gid_index, roce_version=roce, pool_bytes=pool_mib << 20, root=str(root))
    result = run_client(
        peer,
        spec,
        port=port,
        local=local,
        connect_timeout_s=connect_timeout,
        progress=_progress(output == OutputFormat.JSON),
    )
    _print_session(result, output)
    if not result.ok:
        raise typer.Exit(ExitCode.FINDINGS)


def _print_session(result: SessionResult, output: OutputFormat) -> None:
    if output == OutputFormat.JSON:
        emit_json(result.model_dump(mode="json"))
        return
    out = stdout()
    out.print(
        f"{result.device} port {result.port} GID[{result.gid_index}] {result.gid} -> {result.peer} "
        f"({result.peer_gid}), ToS {result.tos}",
        highlight=False,
    )
    out.print(_results_table(result.results))


@traffic_app.command("selftest")
def selftest_cmd(
    op: Annotated[
        list[str] | None,
        typer.Option(
            "--op", help="write, send, read, atomic, write_imm, fetch_add, cmp_swap or all (default). Repeatable."
        ),
    ] = None,
    name: Annotated[str, typer.Option("--name", envvar="FABRICD_VM_NAME", help="Lab instance.")] = "lab",
    size: Annotated[int, typer.Option("--size", min=1, help="Message bytes (atomics use 8).")] = 65536,
    qps: QpsOpt = 2,
    iterations: Annotated[int, typer.Option("--iterations", "-n", min=1, help="Messages per QP per op.")] = 128,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Run a server on lab VM a and a client on lab VM b (from this host, no login) for each op, verify every payload.
    Needs fabricd-lab and 'fabricd lab vm up'. Exit 0 when every op moved its data intact.

    [bold]Example[/]: fabricd traffic selftest
    [bold]Example[/]: fabricd traffic selftest --op write --op atomic --output json
    """
    from fabricd.traffic.pair import run_pair
    from fabricd.traffic.plugins import require_pool

    inst = require_pool(name)
    a, b = inst.endpoints[:2]
    spec = TrafficSpec(
        ops=_ops(op or ["all"]),
        sizes=[size],
        qps=qps,
        iterations=iterations,
        duration_s=None,
        tos=DEFAULT_TOS,
        ack_timeout=LAB_ACK_TIMEOUT if inst.accel == "tcg" else DEFAULT_ACK_TIMEOUT,
    )
    run = run_pair(inst.runner("a"), inst.runner("b"), a.address, spec)
    data = {
        "ok": run.ok,
        "server": f"{a.host} ({a.address})",
        "client": f"{b.host} ({b.address})",
        "error": run.error,
        "session": run.client.model_dump(mode="json") if run.client else None,
        "server_session": run.server,
    }
    if output == OutputFormat.JSON:
        emit_json(data)
    else:
        out = stdout()
        out.print(f"selftest: server {data['server']}, client {data['client']}", highlight=False)
        if run.client is not None:
            out.print(_results_table(run.client.results))
        if run.error:
            stderr().print(f"[bold red]error:[/] {run.error}", highlight=False)
        out.print("[green]PASS[/]" if run.ok else "[red]FAIL[/]")
    if not run.ok:
        raise typer.Exit(ExitCode.TARGETS_FAILED if run.client is None else ExitCode.FINDINGS)


def register(app: typer.Typer) -> None:
    app.add_typer(traffic_app, name="traffic")


def standalone() -> None:
    """``python -m fabricd.cli.traffic``: only the traffic commands, with the same error handling as ``fabricd``.

    The lab VM runs this (``fabricd-traffic``): importing every command module costs ~20 s under TCG.
    """
    from .common import run_guarded

    run_guarded(lambda: traffic_app(prog_name="fabricd traffic"))


if __name__ == "__main__":
    standalone()
