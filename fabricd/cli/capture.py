"""``fabricd capture``: record every read-only command fabricd reads on switches into a replay folder (secrets
scrubbed, NOS version and capture time in a manifest). docs/captures.md describes the folder and how a capture
becomes a test case.

Exit codes: 0 every device captured, 2 bad input, 3 some devices failed (the others were written).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from fabricd.capture import CaptureOptions, capture_all, driver_factory
from fabricd.deploy.targets import select_targets
from fabricd.inventory import load_inventory
from fabricd.model import Fabric

from .common import ExitCode, InventoryArg, OutputFormat, OutputOpt, emit_json, inventory_path, stdout
from .deploy_common import (
    ConcurrencyOpt,
    DeviceOpt,
    GroupOpt,
    InsecureOpt,
    KnownHostsOpt,
    ReadTimeoutOpt,
    SessionLogOpt,
    SshFlags,
    progress_bar,
    switch_reach,
)

if TYPE_CHECKING:
    from fabricd.capture import CaptureResult
    from fabricd.capture.gnmi import GnmiCaptureResult

    _Captured = CaptureResult | GnmiCaptureResult  # one device's result, over SSH or over gNMI

OutOpt = Annotated[
    Path,
    typer.Option(
        "--out",
        help="Replay folder to write (DIR/<device>/ and "
        "DIR/manifest.json; an earlier capture of the same device is replaced).",
    ),
]


def _results_table(title: str, middle: tuple[str, str], rows: Sequence[tuple[_Captured, tuple[str, str]]]) -> Table:
    """One row per device: device, platform, status, the kind's own two columns, redactions, error."""
    table = Table(title=title)
    for col in ("device", "platform", "status", *middle, "redacted", "error"):
        table.add_column(col, overflow="fold")
    for r, cells in rows:
        table.add_row(
            r.device,
            r.platform,
            "[green]captured[/]" if r.ok else "[red]failed[/]",
            *cells,
            str(r.redactions),
            escape(r.error or ""),
        )
    return table


def _report(
    out: Path, results: Sequence[_Captured], table: Table, output: OutputFormat, *, footer: str | None = None
) -> None:
    """The results as JSON (``--output json``) or as the table and its footer; exit 3 when a device failed."""
    failed = sum(not r.ok for r in results)
    if output != OutputFormat.TEXT:
        emit_json({"out": str(out), "results": [r.to_json() for r in results], "failed": failed})
    else:
        console = stdout()
        console.print(table)
        if footer is not None:
            console.print(footer, highlight=False, soft_wrap=True)
    if failed:
        raise typer.Exit(ExitCode.TARGETS_FAILED)


def _capture_gnmi(fabric: Fabric, names: list[str], out: Path, timeout_s: float, output: OutputFormat) -> None:
    from fabricd.capture.gnmi import capture_gnmi
    from fabricd.service.wiring import gnmi_endpoint_factory, switch_targets

    results = capture_gnmi(
        switch_targets(fabric, names, option="device"), out, gnmi_endpoint_factory(fabric), timeout_s=timeout_s
    )
    table = _results_table(
        f"fabricd capture --gnmi -> {escape(str(out))}",
        ("groups", "notifications"),
        [(r, (str(r.groups), str(r.notifications))) for r in results],
    )
    _report(out, results, table, output)


def capture_cmd(
    out: OutOpt,
    inventory: InventoryArg = None,
    device: DeviceOpt = None,
    group: GroupOpt = None,
    concurrency: ConcurrencyOpt = 8,
    known_hosts: KnownHostsOpt = None,
    insecure: InsecureOpt = False,
    read_timeout: ReadTimeoutOpt = 60.0,
    session_log: SessionLogOpt = None,
    gnmi: Annotated[
        bool,
        typer.Option(
            "--gnmi",
            help="Capture over gNMI instead: Capabilities and one Subscribe ONCE of every path the "
            "switch's pack streams (fabricd/nos/<id>/gnmi.py), into DIR/<device>/gnmi/, values "
            "scrubbed; TLS and login from the inventory's telemetry.gnmi and credentials.",
        ),
    ] = False,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Capture switches for replay and bug reports: run every read-only command fabricd reads (the exporter's
    show commands, optional ones included, the audit's running-config read, a version command), scrub
    passwords, hashes, keys and SNMP communities, and write one file per command with a manifest (NOS version,
    capture time). Without --device, every switch of the inventory, in parallel. Nothing is changed on the
    devices; host keys are verified. `fabricd export switches --replay DIR` and `fabricd audit switch --replay
    DIR` read the folder. Exit 0 all captured, 3 some devices failed.

    [bold]Example[/]: fabricd capture --device leaf3-nxos --out /tmp/cap
    [bold]Example[/]: fabricd capture inventory/lab --out /tmp/cap --concurrency 16
    """
    fabric = load_inventory(inventory_path(inventory)).fabric
    switches = select_targets(fabric, device or (), group or ())
    if gnmi:
        _capture_gnmi(fabric, [s.name for s in switches], out, read_timeout, output)
        return
    opts = switch_reach(CaptureOptions, SshFlags.of(locals()))
    text = output == OutputFormat.TEXT
    with progress_bar("capturing", len(switches), enabled=text and len(switches) > 1) as tick:
        results = capture_all(switches, out, driver_factory(opts), concurrency=concurrency, on_result=tick)
    table = _results_table(
        f"fabricd capture -> {escape(str(out))}",
        ("NOS version", "commands"),
        [(r, (escape(r.nos_version or "-"), str(r.commands))) for r in results],
    )
    ok = sum(r.ok for r in results)
    _report(
        out,
        results,
        table,
        output,
        footer=f"{ok} of {len(results)} switches captured into {out}; replay with `fabricd export switches "
        f"--replay {out}` or `fabricd audit switch --replay {out}`",
    )


def register(app: typer.Typer) -> None:
    app.command("capture")(capture_cmd)
