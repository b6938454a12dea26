"""``fabricd audit host|switch``: live state against intent, as checks with codes and fix hints (text, JSON, JUnit).

Exit codes: 0 compliant, 1 findings, 2 bad input (a NIC or file the intent names but the host lacks is a finding,
not bad input).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fabricd.audit.host import audit_host
from fabricd.audit.report import AuditReport, render_junit, render_text
from fabricd.errors import HostBackendError
from fabricd.hosts.factory import close_backends, is_live, open_backends

from .common import ExitCode, InventoryArg, OutputFormat, OutputOpt, emit_json
from .host import HostOpt, NetnsOpt, RootOpt, SkipOpt, _prepare

JunitOpt = Annotated[Path | None, typer.Option("--junit", help="Also write JUnit XML here (one testcase per check).")]


def finish(reports: list[AuditReport], output: OutputFormat, junit: Path | None) -> None:
    """Print, write JUnit, and exit 0 (compliant) or 1 (findings)."""
    if junit is not None:
        try:
            junit.parent.mkdir(parents=True, exist_ok=True)
            junit.write_text(render_junit(reports))
        except OSError as exc:
            raise HostBackendError("write", str(junit), exc.strerror or str(exc), errno=exc.errno,
                                   hint="give a writable --junit path") from exc
    if output == OutputFormat.JSON:
        emit_json(reports[0].to_dict() if len(reports) == 1 else [r.to_dict() for r in reports])
    else:
        for r in reports:
            typer.echo(render_text(r), nl=False)
    if not all(r.compliant for r in reports):
        raise typer.Exit(ExitCode.FINDINGS)


def register(app: typer.Typer) -> None:
    audit_app = typer.Typer(help="Audit hosts and switches against the inventory (for CI).", no_args_is_help=True)
    app.add_typer(audit_app, name="audit")

    @audit_app.command("host")
    def audit_host_cmd(inventory: InventoryArg = None, host: HostOpt = "", root: RootOpt = Path("/"),
                       netns: NetnsOpt = None, skip: SkipOpt = "", junit: JunitOpt = None,
                       output: OutputOpt = OutputFormat.TEXT) -> None:
        """Compare this host with its intent: trust, PFC, ETS, DSCP map, RoCE ToS/mode, CNP, DCQCN enables and
        parameters, MTU (and vs the switch port), VLAN, address, global pause, link, RoCEv2 GID.
        Exit 0 compliant, 1 findings, 2 bad input.

        [bold]Example[/]: fabricd audit host --host gpu1 --junit audit.xml
        [bold]Example[/]: fabricd audit host inventory/lab --host gpu1 --root /tmp/replay --output json
        """
        intent, skips = _prepare(inventory, host, root, skip, netns)
        backends = open_backends(root, netns, skips)
        live = is_live(root, netns)
        sources = {b.backend: (f"netns {netns}" if netns and b.backend.value != "sysfs" else
                               f"root {root}" if b.backend.value == "sysfs" or not live else "this host")
                   for b in backends}
        try:
            report = audit_host(intent, backends, gid_root=root, skip=skips, sources=sources)
        finally:
            close_backends(backends)
        finish([report], output, junit)
