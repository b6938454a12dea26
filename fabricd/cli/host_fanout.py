"""``--hosts SELECTOR`` for ``fabricd host apply`` and ``fabricd audit host``: the same command on many hosts over
SSH (fabricd.deploy.hostfanout), with a progress bar, per-host results and a failure budget."""

from __future__ import annotations

import fnmatch
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from fabricd.audit.report import AuditReport
from fabricd.deploy.hostfanout import (
    Command,
    FanoutOptions,
    FanoutReport,
    HostRun,
    RunState,
    fanout,
    ssh_target,
)
from fabricd.errors import HostBackendError, UsageError
from fabricd.inventory import load_inventory
from fabricd.model import Fabric
from fabricd.model.topology import Host
from fabricd.traffic.remote import Runner

from .common import ExitCode, FlagGroup, OutputFormat, emit_json, inventory_path, stderr, stdout
from .deploy_common import InsecureOpt, progress_bar
from .report import render_junit

HostsOpt = Annotated[
    str | None,
    typer.Option(
        "--hosts",
        envvar="FABRICD_HOSTS",
        show_default=False,
        help="Run on these inventory hosts over SSH instead of this one: names, globs ('gpu*'), group:NAME or all, "
        "comma-separated; '!NAME' removes.",
    ),
]
SshUserOpt = Annotated[
    str | None,
    typer.Option(
        "--ssh-user",
        envvar="FABRICD_SSH_USER",
        show_default=False,
        help="SSH user on the hosts (default: your user name).",
    ),
]
IdentityOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--identity",
        "-i",
        envvar="FABRICD_SSH_IDENTITY",
        show_default=False,
        help="SSH private key (repeatable). Default: ssh-agent and ~/.ssh/id_*.",
    ),
]
HostKnownHostsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--known-hosts",
        envvar="FABRICD_KNOWN_HOSTS",
        show_default=False,
        help="known_hosts file to verify host keys with (repeatable); ~/.ssh/known_hosts is also read.",
    ),
]
# the host-key opt-out is the one every SSH command takes (deploy_common.InsecureOpt): it warns on every run
HostInsecureOpt = InsecureOpt
FanConcurrencyOpt = Annotated[
    int,
    typer.Option(
        "--concurrency",
        "-c",
        min=1,
        max=1024,
        envvar="FABRICD_CONCURRENCY",
        help="Hosts worked on at the same time (with --hosts).",
    ),
]
MaxFailuresOpt = Annotated[
    int | None,
    typer.Option(
        "--max-failures",
        min=0,
        show_default=False,
        help="With --hosts: stop starting hosts once more than this many have failed (the rest are skipped). "
        "Default: 0 for apply (stop at the first failure), no budget for audit.",
    ),
]
RemoteInventoryOpt = Annotated[
    str,
    typer.Option(
        "--remote-inventory", envvar="FABRICD_REMOTE_INVENTORY", help="With --hosts: the inventory's path on the hosts."
    ),
]
_OVER_SSH = "Over SSH (--hosts, or validate-fabric --via ssh): "
RemoteFabricdOpt = Annotated[
    str,
    typer.Option(
        "--remote-fabricd", envvar="FABRICD_REMOTE_FABRICD", help=_OVER_SSH + "the fabricd command on the hosts."
    ),
]
ConnectTimeoutOpt = Annotated[
    float, typer.Option("--connect-timeout", min=0.5, help=_OVER_SSH + "seconds to wait for each SSH connection.")
]


@dataclass(frozen=True)
class FanoutFlags(FlagGroup):
    """The --hosts flags of `host apply` and `audit host` but the selector itself, under the parameter names both
    give them (``FanoutFlags.of(locals())``)."""

    ssh_user: str | None
    identity: list[Path] | None
    known_hosts: list[Path] | None
    insecure: bool
    concurrency: int
    max_failures: int | None
    remote_inventory: str
    remote_fabricd: str
    connect_timeout: float


def select_names(names: Sequence[str], selector: str, groups: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """Names matching a ``--hosts`` selector: a comma list of names, globs (``gpu*``), ``group:NAME`` (needs
    ``groups``, name -> its groups) or ``all``; a term prefixed with ``!`` removes. Input order. UsageError when a
    term matches nothing."""
    terms = [t.strip() for t in selector.split(",") if t.strip()]
    if not terms:
        raise UsageError("--hosts: empty selector", hint="e.g. --hosts 'gpu*', --hosts group:gpu, --hosts all")
    chosen: set[str] = set()
    for term in terms:
        negate = term.startswith("!")
        body = term[1:] if negate else term
        if body == "all":
            matched = set(names)
        elif body.startswith("group:"):
            if groups is None:
                raise UsageError(f"--hosts {body}: groups need the inventory", hint="give the INVENTORY argument")
            group = body.removeprefix("group:")
            matched = {n for n in names if group in groups.get(n, ())}
        else:
            matched = {n for n in names if fnmatch.fnmatchcase(n, body)}
        if not matched and not negate:
            known = sorted({g for gs in (groups or {}).values() for g in gs})
            raise UsageError(
                f"--hosts: {body!r} matches no inventory host",
                hint=f"hosts: {', '.join(names[:8])}{' ...' if len(names) > 8 else ''}; "
                f"groups: {', '.join(known) or 'none'}",
            )
        chosen = chosen - matched if negate else chosen | matched
    return [n for n in names if n in chosen]


def select_hosts(fabric: Fabric, selector: str) -> list[Host]:
    """Inventory hosts matching a ``--hosts`` selector (:func:`select_names`), inventory order."""
    chosen = set(select_names([h.name for h in fabric.hosts], selector, {h.name: h.groups for h in fabric.hosts}))
    return [h for h in fabric.hosts if h.name in chosen]


def remote_command(opts: FanoutOptions, verb: Sequence[str], extra: Sequence[str] = ()) -> Command:
    """The shell command run on each host: ``fabricd <verb> <inventory> --host NAME --output json <extra>``."""

    def build(host: str) -> str:
        argv = [opts.remote_fabricd, *verb, opts.remote_inventory, "--host", host, "--output", "json", *extra]
        return shlex.join(argv)

    return build


def run_fanout(
    kind: str,
    inventory: Path | None,
    selector: str,
    flags: FanoutFlags,
    *,
    skip: str,
    output: OutputFormat,
    junit: Path | None = None,
) -> None:
    """Run ``host apply`` (kind ``apply``) or ``audit host`` (kind ``audit``) on the selected hosts; print and exit:
    0 all ok/compliant, 1 findings (audit), 3 some hosts failed or were skipped."""
    fabric = load_inventory(inventory_path(inventory, writes="host apply" if kind == "apply" else None)).fabric
    hosts = select_hosts(fabric, selector)
    for p in flags.identity or []:
        if not p.is_file():
            raise UsageError(f"--identity {p}: no such file", hint="give the path of an SSH private key")
    max_failures = 0 if kind == "apply" and flags.max_failures is None else flags.max_failures
    opts = FanoutOptions(
        username=flags.ssh_user,
        identity_files=tuple(flags.identity or ()),
        known_hosts=tuple(flags.known_hosts or ()),
        verify_host_key=not flags.insecure,
        concurrency=flags.concurrency,
        max_failures=max_failures,
        connect_timeout_s=flags.connect_timeout,
        remote_fabricd=flags.remote_fabricd,
        remote_inventory=flags.remote_inventory,
    )
    extra = ["--skip", skip] if skip else []
    verb = ["host", "apply"] if kind == "apply" else ["audit", "host"]
    command = remote_command(opts, verb, [*extra, "--yes"] if kind == "apply" else extra)
    err = stderr()
    if flags.insecure:
        err.print("[yellow]warning:[/] host keys are not verified (--insecure-no-host-key-check)", highlight=False)
    label = f"{' '.join(verb)} on {len(hosts)} host(s)"
    with progress_bar(label, len(hosts), enabled=sys.stderr.isatty()) as advance:
        report = fanout([ssh_target(h) for h in hosts], command, opts, advance)
    audits = _audit_reports(report) if kind == "audit" else []
    if junit is not None:
        try:
            junit.parent.mkdir(parents=True, exist_ok=True)
            junit.write_text(render_junit(audits))
        except OSError as exc:
            raise HostBackendError(
                "write", str(junit), exc.strerror or str(exc), errno=exc.errno, hint="give a writable --junit path"
            ) from exc
    if output == OutputFormat.JSON:
        emit_json(
            {
                "summary": report.summary(),
                "budget_spent": report.budget_spent,
                "hosts": [r.to_dict() for r in report.runs],
            }
        )
    else:
        stdout().print(_table(report, label))
    s = report.summary()
    err.print(
        f"{s['hosts']} host(s): {s['ok']} ok, {s['findings']} with findings, {s['failed']} failed, "
        f"{s['skipped']} skipped" + (" (failure budget spent)" if report.budget_spent else ""),
        highlight=False,
    )
    for r in report.runs:
        if r.state == RunState.FAILED:
            err.print(f"[bold red]error:[/] {escape(r.host)}: {escape(r.error or '')}", highlight=False)
    if report.count(RunState.FAILED) or report.count(RunState.SKIPPED):
        raise typer.Exit(ExitCode.TARGETS_FAILED)
    if report.count(RunState.FINDINGS):
        raise typer.Exit(ExitCode.FINDINGS)


def _audit_reports(report: FanoutReport) -> list[AuditReport]:
    out = []
    for r in report.runs:
        if isinstance(r.data, dict) and "checks" in r.data:
            data = {k: v for k, v in r.data.items() if k in ("kind", "target", "checks")}
            for check in data["checks"] if isinstance(data["checks"], list) else []:
                for finding in check.get("findings", []) if isinstance(check, dict) else []:
                    if isinstance(finding, dict):
                        finding.pop("fixes", None)  # the remote CLI rendered them into the hint already
            out.append(AuditReport.model_validate(data))
    return out


def _table(report: FanoutReport, title: str) -> Table:
    table = Table(title=f"fabricd {title}")
    for col in ("host", "result", "detail", "time"):
        table.add_column(col, overflow="fold", justify="right" if col == "time" else "left")
    style = {RunState.OK: "green", RunState.FINDINGS: "yellow", RunState.FAILED: "bold red", RunState.SKIPPED: "dim"}
    for r in report.runs:
        table.add_row(r.host, f"[{style[r.state]}]{r.state.value}[/]", escape(_detail(r)), f"{r.duration_s:.2f}s")
    return table


def _detail(r: HostRun) -> str:
    if r.error:
        return r.error
    data = r.data
    if isinstance(data, dict) and "checks" in data:
        failed = [c["code"] for c in data["checks"] if c.get("status") == "fail"]
        return "compliant" if not failed else "failing: " + ", ".join(failed)
    if isinstance(data, dict) and "results" in data:
        steps = sum(len(x.get("applied", [])) for x in data["results"])
        return f"{steps} step(s) applied"
    return "nothing to do" if r.state == RunState.OK else ""


def ssh_runners(
    fabric: Fabric,
    *,
    ssh_user: str | None,
    identity: list[Path] | None,
    known_hosts: list[Path] | None,
    insecure: bool,
    remote_fabricd: str,
    connect_timeout: float,
) -> tuple[dict[str, Runner], str, str | None]:
    """validate-fabric --via ssh: an SSH runner for every inventory host with an RDMA NIC and an address."""
    from fabricd.deploy.ssh_runner import SshRunner

    for p in identity or []:
        if not p.is_file():
            raise UsageError(f"--identity {p}: no such file", hint="give the path of an SSH private key")
    opts = FanoutOptions(
        username=ssh_user,
        identity_files=tuple(identity or ()),
        known_hosts=tuple(known_hosts or ()),
        verify_host_key=not insecure,
        connect_timeout_s=connect_timeout,
        remote_fabricd=remote_fabricd,
    )
    runners: dict[str, Runner] = {}
    for h in fabric.hosts:
        if any(n.rdma_device and n.ip is not None for n in h.nics):
            runners[h.name] = SshRunner(ssh_target(h), opts)
    return runners, "no RDMA NIC with an address in the inventory", None
