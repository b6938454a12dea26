"""``fabricd validate-fabric [INVENTORY]``: traffic between host pairs plus counter-delta assertions.

Commands reach the hosts over SSH (``--via ssh``) or through a running runner pool that another distribution plugs
in (:mod:`fabricd.traffic.plugins`): fabricd-lab's Soft-RoCE VMs (``fabricd lab vm up``) play two inventory hosts.
A pair with a host no runner reaches is reported as not run (exit 3).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from fabricd.errors import UsageError
from fabricd.intent.host import vlan_netdev_name
from fabricd.inventory import load_inventory
from fabricd.model import Fabric, Host
from fabricd.model.checks import CheckResult, Finding, Status
from fabricd.model.topology import split_endpoint
from fabricd.traffic.matrix import Matrix
from fabricd.traffic.remote import Runner
from fabricd.traffic.spec import DEFAULT_ACK_TIMEOUT, LAB_ACK_TIMEOUT, Op, TrafficSpec
from fabricd.traffic.validate import Endpoint, PairReport, validate_pair

from .common import (
    ExitCode,
    InventoryArg,
    OutputFormat,
    OutputOpt,
    emit_json,
    inventory_path,
    stderr,
    stdout,
    with_fixes,
)
from .host_fanout import (
    ConnectTimeoutOpt,
    HostInsecureOpt,
    HostKnownHostsOpt,
    IdentityOpt,
    RemoteFabricdOpt,
    SshUserOpt,
    ssh_runners,
)
from .options import QpsOpt
from .report import command_hints, write_junit
from .validate_matrix import ValidatePair, pair_json, run_matrix_cli


def _nic(host: Host) -> Any:
    return next((n for n in host.nics if n.rdma_device and n.ip is not None), None)


def _leaf(host: Host) -> str | None:
    nic = _nic(host)
    if nic is None or not nic.peer:
        return None
    try:
        return split_endpoint(nic.peer)[0]
    except ValueError:
        return None


def default_pairs(fabric: Fabric) -> list[tuple[str, str]]:
    """Each RDMA host as client towards the next RDMA host on another leaf (or the next one when all share a leaf),
    skipping pairs already covered in the other direction."""
    hosts = [h for h in fabric.hosts if _nic(h) is not None]
    pairs: list[tuple[str, str]] = []
    covered: set[frozenset[str]] = set()
    for i, h in enumerate(hosts):
        rest = hosts[i + 1 :] + hosts[:i]
        other = next((o for o in rest if _leaf(o) != _leaf(h) or _leaf(h) is None), rest[0] if rest else None)
        if other is None or frozenset((h.name, other.name)) in covered:
            continue
        covered.add(frozenset((h.name, other.name)))
        pairs.append((h.name, other.name))
    return pairs


def endpoint_of(host: Host) -> Endpoint:
    nic = _nic(host)
    assert nic is not None and nic.ip is not None and nic.rdma_device is not None
    vlan_dev = vlan_netdev_name(nic.netdev, nic.vlan) if nic.vlan is not None else None
    return Endpoint(
        host=host.name,
        rdma_device=nic.rdma_device,
        rdma_port=nic.rdma_port,
        netdev=nic.netdev,
        ip_netdev=vlan_dev or nic.netdev,
        address=str(nic.ip.ip),
    )


def _runners(fabric: Fabric, inventory: Path, name: str) -> tuple[dict[str, Runner], str, str | None]:
    """Runners for the hosts a running runner pool plays (the lab VMs of fabricd-lab, after checking they play them
    as this inventory says), why other hosts have none, and the pool's accelerator (None without a pool)."""
    from fabricd.traffic.plugins import running_pool

    pool, why = running_pool(name)
    if pool is None:
        return {}, why, None
    runners: dict[str, Runner] = {}
    for ep in pool.endpoints:
        host = fabric.host(ep.host)
        nic = _nic(host) if host is not None else None
        if host is None or nic is None or str(nic.ip) != ep.ip or nic.rdma_device != ep.rdma_device:
            raise UsageError(
                f"runner {ep.role} plays {ep.host} as {ep.ip} on {ep.rdma_device} (from {pool.inventory}), "
                f"which {inventory} does not describe the same way",
                hint=f"run 'fabricd lab vm down' and 'fabricd lab vm up {inventory}'",
            )
        runners[ep.host] = pool.runner(ep.role)
    return (
        runners,
        f"not reachable through the running pool (it plays {', '.join(runners)}); run the pairs on "
        "real hosts with --via ssh",
        pool.accel,
    )


def validate_fabric(
    inventory: InventoryArg = None,
    pair: Annotated[
        list[str] | None,
        typer.Option(
            "--pair", help="CLIENT:SERVER host names (repeatable). Default: each host to one on another leaf."
        ),
    ] = None,
    name: Annotated[str, typer.Option("--name", envvar="FABRICD_VM_NAME", help="Lab VM instance.")] = "lab",
    size: Annotated[int, typer.Option("--size", min=1, help="RDMA WRITE message bytes.")] = 65536,
    iterations: Annotated[int, typer.Option("--iterations", "-n", min=1, help="Messages per QP.")] = 256,
    qps: QpsOpt = 1,
    depth: Annotated[int, typer.Option("--depth", min=1, max=4096, help="Outstanding WRs per QP.")] = 1,
    ack_timeout: Annotated[
        int | None,
        typer.Option(
            "--ack-timeout",
            min=1,
            max=31,
            help="Local ACK timeout 4.096 µs x 2^N. Default: 14 (67 ms); 20 (4.3 s) "
            "when the endpoints are TCG lab VMs, whose descheduled vCPUs delay ACKs.",
        ),
    ] = None,
    junit: Annotated[Path | None, typer.Option("--junit", help="Also write JUnit XML here.")] = None,
    matrix: Annotated[
        str | None,
        typer.Option(
            "--matrix",
            show_default=False,
            help="Traffic matrix over every RDMA host: pairs, all-pairs (circle method: N-1 rounds of N/2 pairs), "
            "ring or incast:K; each pair judged against --bar, a degraded host named within two extra rounds.",
        ),
    ] = None,
    bar: Annotated[
        float, typer.Option("--bar", min=0.01, max=1.0, help="With --matrix: pass at this share of the slower link.")
    ] = 0.9,
    bar_gbps: Annotated[
        float | None,
        typer.Option(
            "--bar-gbps",
            min=0.001,
            show_default=False,
            help="With --matrix: pass at this many Gb/s instead (e.g. for Soft-RoCE lab VMs).",
        ),
    ] = None,
    baseline: Annotated[
        str,
        typer.Option(
            "--baseline",
            help="With --matrix: auto (compare with this fabric revision's baseline, save one when "
            "there is none and all pass), save, compare or off.",
        ),
    ] = "auto",
    via: Annotated[
        str,
        typer.Option(
            "--via",
            help="How traffic commands reach the hosts: lab (the Soft-RoCE lab VMs) or ssh (each host's "
            "inventory mgmt address; fabricd installed there).",
        ),
    ] = "lab",
    ssh_user: SshUserOpt = None,
    identity: IdentityOpt = None,
    known_hosts: HostKnownHostsOpt = None,
    insecure: HostInsecureOpt = False,
    remote_fabricd: RemoteFabricdOpt = "fabricd",
    connect_timeout: ConnectTimeoutOpt = 10.0,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Run RDMA WRITEs between host pairs with the intent's ToS, snapshot counters before and after, and assert
    the deltas: bytes ~ payload, no out-of-sequence, no drops, the intent's DSCP on the wire, bytes on the
    intended priority. Checks a NIC cannot support (rxe: PFC, ECN, per-priority counters) are reported as not
    checkable, with what they need. Exit 0 ok, 1 findings, 2 bad input, 3 some pairs did not run.

    [bold]Example[/]: fabricd validate-fabric ./vms   (after 'fabricd lab vm up ./vms')
    [bold]Example[/]: fabricd validate-fabric --pair gpu1:gpu3 --junit validate.xml
    [bold]Example[/]: fabricd validate-fabric --matrix all-pairs --bar 0.9 --junit matrix.xml
    """
    path = inventory_path(inventory)
    fabric = load_inventory(path).fabric
    parsed = None
    if matrix is not None:
        try:
            parsed = Matrix.parse(matrix)
        except ValueError as exc:
            raise UsageError(f"--matrix: {exc}", hint="e.g. --matrix all-pairs or --matrix incast:4") from None
        if pair:
            raise UsageError("--matrix and --pair exclude each other", hint="give one of them")
        if baseline not in ("auto", "save", "compare", "off"):
            raise UsageError(f"--baseline {baseline!r}", hint="expected auto, save, compare or off")
    pairs = _given_pairs(fabric, pair or []) or default_pairs(fabric)
    if not pairs:
        raise UsageError(
            "the inventory has fewer than two hosts with an RDMA NIC and an address",
            hint="add hosts, or start from `fabricd init --example softroce DIR`",
        )
    if via == "ssh":
        runners, why_not, accel = ssh_runners(
            fabric,
            ssh_user=ssh_user,
            identity=identity,
            known_hosts=known_hosts,
            insecure=insecure,
            remote_fabricd=remote_fabricd,
            connect_timeout=connect_timeout,
        )
    elif via == "lab":
        runners, why_not, accel = _runners(fabric, path, name)
    else:
        raise UsageError(f"--via {via!r}", hint="expected lab or ssh")
    try:
        spec = _write_spec(
            fabric, accel, size=size, iterations=iterations, qps=qps, depth=depth, ack_timeout=ack_timeout
        )
        one = _pair_runner(fabric, runners, why_not, spec)
        if parsed is None:
            _run_pairs(pairs, one, spec, runners, output=output, junit=junit)
        else:
            hosts = [h.name for h in fabric.hosts if _nic(h) is not None]
            run_matrix_cli(
                fabric, hosts, parsed, one, bar=bar, bar_gbps=bar_gbps, baseline=baseline, output=output, junit=junit
            )
    finally:
        for r in runners.values():
            close = getattr(r, "close", None)
            if close is not None:
                close()


def register(app: typer.Typer) -> None:
    app.command("validate-fabric")(validate_fabric)


def _given_pairs(fabric: Fabric, given: list[str]) -> list[tuple[str, str]]:
    """--pair CLIENT:SERVER values as (client, server), each host an inventory host with an RDMA NIC and an address."""
    wanted: list[tuple[str, str]] = []
    for p in given:
        c, sep, s = p.partition(":")
        if not sep or not c or not s or c == s:
            raise UsageError(f"--pair {p!r} is not CLIENT:SERVER", hint="e.g. --pair gpu1:gpu3")
        for h in (c, s):
            host = fabric.host(h)
            if host is None or _nic(host) is None:
                raise UsageError(
                    f"--pair {p}: {h!r} is not an inventory host with an RDMA NIC and an address",
                    hint="see 'fabricd show' for the hosts",
                )
        wanted.append((c, s))
    return wanted


def _write_spec(
    fabric: Fabric, accel: str | None, *, size: int, iterations: int, qps: int, depth: int, ack_timeout: int | None
) -> TrafficSpec:
    """The RDMA WRITE every pair runs: --size, --iterations, --qps, --depth and --ack-timeout (by default a longer
    one where the endpoints are TCG lab VMs), at the intent's RoCE ToS."""
    if ack_timeout is None:
        ack_timeout = LAB_ACK_TIMEOUT if accel == "tcg" else DEFAULT_ACK_TIMEOUT
    return TrafficSpec(
        ops=[Op.WRITE],
        sizes=[size],
        qps=qps,
        depth=depth,
        post_list=1,
        signal_every=1,
        iterations=iterations,
        duration_s=None,
        warmup=False,
        tos=fabric.policy.qos.roce.effective_tos,
        ack_timeout=ack_timeout,
    )


def _pair_runner(fabric: Fabric, runners: dict[str, Runner], why_not: str, spec: TrafficSpec) -> ValidatePair:
    """Runs one pair (client, server) and judges it; a pair with a host no runner reaches is not run (``why_not``)."""

    def one(client: str, server: str) -> PairReport:
        if client not in runners or server not in runners:
            missing = [h for h in (client, server) if h not in runners]
            return PairReport.not_run(client, server, f"{', '.join(missing)}: {why_not}")
        c_host, s_host = fabric.host(client), fabric.host(server)
        assert c_host is not None and s_host is not None
        return validate_pair(
            endpoint_of(c_host),
            endpoint_of(s_host),
            runners[client],
            runners[server],
            policy=fabric.policy,
            spec=spec,
        )

    return one


def _run_pairs(
    pairs: list[tuple[str, str]],
    one: ValidatePair,
    spec: TrafficSpec,
    runners: dict[str, Runner],
    *,
    output: OutputFormat,
    junit: Path | None,
) -> None:
    """--pair (or the default pairs): each run in turn, then the report; exit 3 when a pair did not run, else 1 on
    findings."""
    reports: list[PairReport] = []
    err = stderr()
    for client, server in pairs:
        if client in runners and server in runners:
            err.print(
                f"{client} -> {server}: WRITE {spec.sizes[0]} B x {spec.iterations} x {spec.qps} QP(s), depth "
                f"{spec.depth}, ToS {spec.tos}, ACK timeout {4.096 * 2**spec.ack_timeout / 1000:.0f} ms",
                highlight=False,
            )
        reports.append(one(client, server))
    if junit is not None:
        write_junit(junit, [command_hints(r.report, keep_fixes=False) for r in reports])
    if output == OutputFormat.JSON:
        emit_json({"ok": all(r.ok for r in reports), "tos": spec.tos, "pairs": [pair_json(r) for r in reports]})
    else:
        _print_text(reports)
    if any(not r.ran for r in reports):
        raise typer.Exit(ExitCode.TARGETS_FAILED)
    if not all(r.ok for r in reports):
        raise typer.Exit(ExitCode.FINDINGS)


def _print_text(reports: list[PairReport]) -> None:
    out = stdout()
    for r in reports:
        state = "[green]ok[/]" if r.ok else ("[red]NOT RUN[/]" if not r.ran else "[red]FINDINGS[/]")
        out.print(f"{r.client} -> {r.server}: {state}" + (f" ({r.error})" if r.error else ""), highlight=False)
        if not r.ran:
            continue
        table = Table(show_lines=False)
        for col in ("check", "", "detail"):
            table.add_column(col, overflow="fold")
        for c in r.checks:
            table.add_row(c.code, _MARK[c.status], _detail(c))
        out.print(table)


_MARK = {
    Status.PASS: "[green]pass[/]",
    Status.FAIL: "[red]FAIL[/]",
    Status.WARN: "[yellow]warn[/]",
    Status.SKIP: "[yellow]not checkable[/]",
}


def _detail(c: CheckResult) -> str:
    """What the check saw, or why it was skipped and what it needs (its note); a failure's findings with
    expected, got and the hint."""
    if c.findings:
        return escape("; ".join(_finding_text(f) for f in c.findings))
    return escape(c.note or "")


def _finding_text(f: Finding) -> str:
    hint = with_fixes(f.hint, f.fixes)
    return f"{f.message} (expected {f.expected}, got {f.got})" + (f"; {hint}" if hint else "")
