"""``fabricd gids``: the show_gids equivalent (device, port, index, GID, IPv4, RoCE version, netdev) from sysfs."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from fabricd.errors import UsageError
from fabricd.readers.gids import GidRow, list_gids
from fabricd.readers.rdma import list_rdma_devices

from .common import OutputFormat, OutputOpt, check_root, emit_json, stdout


def render_show_gids(rows: list[GidRow]) -> str:
    """Text in mlnx-tools show_gids' own layout (tab separated, with its header and n_gids_found)."""
    lines = [
        "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV",
        "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---",
    ]
    for r in rows:
        ip = f"{r.ipv4}  " if r.ipv4 else "\t"
        lines.append(f"{r.device}\t{r.port}\t{r.index}\t{r.gid}\t{ip}\t{r.version}\t{r.netdev or ''}")
    lines.append(f"n_gids_found={len(rows)}")
    return "\n".join(lines) + "\n"


def gids_cmd(
    device: Annotated[list[str] | None, typer.Argument(help="RDMA devices (default: all).", show_default=False)] = None,
    root: Annotated[Path, typer.Option("--root", envvar="FABRICD_ROOT", help="Root of /sys. Default /.")] = Path("/"),
    show_gids: Annotated[bool, typer.Option("--show-gids", help="Print in show_gids' exact text layout.")] = False,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """List the GID table of every RDMA port: device, port, index, GID, IPv4, RoCE version and netdev (the
    show_gids equivalent). Pick the RoCE v2 GID of your RDMA address for perftest -x / NCCL_IB_GID_INDEX.

    [bold]Example[/]: fabricd gids
    [bold]Example[/]: fabricd gids mlx5_0 --output json
    """
    check_root(root, "give the directory that holds sys/")
    known = list_rdma_devices(root)
    unknown = [d for d in device or [] if d not in known]
    if unknown:
        raise UsageError(
            f"no RDMA device {', '.join(unknown)} under {root / 'sys/class/infiniband'}",
            hint=f"expected one of: {', '.join(known)}"
            if known
            else "there is none there (`fabricd doctor` says what RDMA needs)",
        )
    rows = list_gids(root, device)
    if output == OutputFormat.JSON:
        emit_json([asdict(r) for r in rows])
    elif show_gids:
        typer.echo(render_show_gids(rows), nl=False)
    else:
        table = Table(title="RDMA GIDs")
        for col in ("device", "port", "index", "GID", "IPv4", "ver", "netdev"):
            table.add_column(col)
        for r in rows:
            table.add_row(r.device, str(r.port), str(r.index), r.gid, r.ipv4 or "", r.version, r.netdev or "")
        stdout().print(table)
        stdout().print(f"n_gids_found={len(rows)}")


def register(app: typer.Typer) -> None:
    app.command("gids")(gids_cmd)
