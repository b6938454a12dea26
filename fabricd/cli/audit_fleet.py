"""``fabricd audit fleet``: every host's compliance from its agent's series in Prometheus (text, JSON, JUnit)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from fabricd.audit.fleet import Q_SEEN, audit_fleet, prometheus_query
from fabricd.audit.report import AuditReport, Status
from fabricd.errors import UsageError
from fabricd.inventory import load_inventory

from .common import ExitCode, OutputFormat, OutputOpt, emit_json, stderr
from .host_fanout import select_names
from .report import command_hints, write_junit


def _line(report: AuditReport) -> str:
    failed = [c for c in report.checks if c.status == Status.FAIL]
    if not failed:
        return f"{report.target}: compliant"
    if any(c.code == "FLEET-AGENT" for c in failed):
        return f"{report.target}: NO AGENT ({failed[-1].findings[0].message})"
    parts = []
    for c in failed:
        objs = sorted({f.object for f in c.findings})
        parts.append(f"{c.code} {','.join(objs)}" if c.code.startswith("HOST-") else c.findings[0].message)
    return f"{report.target}: {len(failed)} failed check(s): " + "; ".join(parts)


def audit_fleet_cmd(
    inventory: Annotated[
        Path | None,
        typer.Argument(
            envvar="FABRICD_INVENTORY",
            show_default=False,
            help="Inventory whose hosts must all have an agent (omit: the hosts seen within --lookback).",
        ),
    ] = None,
    prometheus: Annotated[
        str,
        typer.Option(
            "--prometheus",
            envvar="FABRICD_PROMETHEUS_URL",
            help="Base URL of the Prometheus that scrapes the agents, e.g. http://prom:9090.",
        ),
    ] = "",
    lookback: Annotated[
        str,
        typer.Option(
            "--lookback", help="A host whose agent reported within this window is expected (PromQL duration)."
        ),
    ] = "1d",
    selector: Annotated[
        str | None,
        typer.Option(
            "--hosts",
            show_default=False,
            help="Only these hosts: names, globs ('gpu*'), group:NAME (with an inventory) or all, comma-separated; "
            "'!NAME' removes (as `host apply --hosts`).",
        ),
    ] = None,
    junit: Annotated[
        Path | None,
        typer.Option("--junit", help="Also write JUnit XML here (a testsuite per host, a testcase per check)."),
    ] = None,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """The fleet in one place: each host's audit checks as its `fabricd agent` last reported them, whether it
    reconciles, and the hosts with no agent at all. Exit 0 all compliant, 1 findings (a drifted host, a stale or
    missing agent), 2 bad input, 3 Prometheus unreachable.

    [bold]Example[/]: fabricd audit fleet /etc/fabricd/inventory --prometheus http://prom:9090 --junit fleet.xml
    [bold]Example[/]: fabricd audit fleet --prometheus http://127.0.0.1:9090 --hosts 'gpu*' --output json
    """
    if not prometheus:
        raise UsageError(
            "audit fleet: --prometheus is missing",
            hint="give the base URL of the Prometheus that scrapes the agents, e.g. --prometheus http://prom:9090",
        )
    if not re.fullmatch(r"\d+[smhdwy]", lookback):
        raise UsageError(f"--lookback {lookback!r}: not a PromQL duration", hint="e.g. 1h, 1d, 7d")
    fabric = load_inventory(inventory).fabric if inventory is not None else None
    hosts = [h.name for h in fabric.hosts] if fabric is not None else None
    query = prometheus_query(prometheus)
    host_filter = None
    if selector is not None:
        if fabric is not None:
            names, groups = hosts or [], {h.name: h.groups for h in fabric.hosts}
        else:  # no inventory: the hosts Prometheus knows
            names = sorted(
                {labels["host"] for labels, _, _ in query(Q_SEEN.format(lookback=lookback)) if labels.get("host")}
            )
            groups = None
        wanted = set(select_names(names, selector, groups))
        host_filter = wanted.__contains__
    result = audit_fleet(query, hosts, lookback=lookback, host_filter=host_filter)
    reports = [command_hints(r, keep_fixes=output == OutputFormat.JSON) for r in result.reports]
    if junit is not None:
        write_junit(junit, reports)
    if output == OutputFormat.JSON:
        emit_json(
            {
                "summary": result.summary(),
                "absent": result.absent,
                "stale": result.stale,
                "noncompliant": result.noncompliant,
                "unknown": result.unknown,
                "hosts": [r.to_dict() for r in reports],
            }
        )
    else:
        lines = [_line(r) for r in reports]
        typer.echo("\n".join(lines) + ("\n" if lines else ""), nl=False)
        s = result.summary()
        stderr().print(
            f"{s['hosts']} host(s): {s['compliant']} compliant, {s['noncompliant']} drifted, "
            f"{s['absent']} without an agent, {s['stale']} stale",
            highlight=False,
        )
    if not result.reports:
        stderr().print(
            "[yellow]warning:[/] no hosts: no agent series in Prometheus and no inventory given", highlight=False
        )
    if not result.compliant:
        raise typer.Exit(ExitCode.FINDINGS)


def register_fleet(audit_app: typer.Typer) -> None:
    audit_app.command("fleet")(audit_fleet_cmd)
