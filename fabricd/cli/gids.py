"""``fabricd gids``: the show_gids equivalent (device, port, index, GID, IPv4, RoCE version, netdev) from sysfs."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from fabricd.errors import UsageError
from fabricd.readers.rdma import list_rdma_devices, read_gids

from .common import OutputFormat, OutputOpt, check_root, emit_json, stdout

LINK_LOCAL_ZERO = "fe80:0000:0000:0000:0000:0000:0000:0000"


def _ports(root: Path, dev: str) -> list[int]:
    pdir = root / "sys/class/infiniband" / dev / "ports"
    return sorted(int(p.name) for p in pdir.iterdir() if p.name.isdigit()) if pdir.is_dir() else []


def _ipv4(gid: str) -> str | None:
    """The IPv4 address of an IPv4-mapped GID (::ffff:a.b.c.d), as show_gids prints it."""
    try:
        addr = ipaddress.IPv6Address(gid)
    except ValueError:
        return None
    return str(addr.ipv4_mapped) if addr.ipv4_mapped is not None else None


def _version(gid_type: str | None) -> str:
    """``RoCE v2`` -> ``v2``, ``IB/RoCE v1`` -> ``v1`` (show_gids: grep -o "[Vv].*")."""
    if not gid_type:
        return ""
    i = gid_type.lower().find("v")
    return gid_type[i:].strip() if i >= 0 else gid_type.strip()


def list_gids(root: Path, devices: list[str] | None = None) -> list[dict[str, object]]:
    """Populated GIDs of every RDMA device and port under ``root`` (zero and blank link-local GIDs skipped)."""
    rows: list[dict[str, object]] = []
    for dev in devices or list_rdma_devices(root):
        for port in _ports(root, dev):
            for e in read_gids(root, dev, port):
                if e.gid == LINK_LOCAL_ZERO:
                    continue
                rows.append({"device": dev, "port": port, "index": e.index, "gid": e.gid, "ipv4": _ipv4(e.gid),
                             "version": _version(e.type), "type": e.type, "netdev": e.ndev})
    return rows


def render_show_gids(rows: list[dict[str, object]]) -> str:
    """Text in mlnx-tools show_gids' own layout (tab separated, with its header and n_gids_found)."""
    lines = ["DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV",
             "---\t----\t-----\t---\t\t\t\t\t------------  \t---\t---"]
    for r in rows:
        ip = f"{r['ipv4']}  " if r["ipv4"] else "\t"
        ndev = r["netdev"] or ""
        lines.append(f"{r['device']}\t{r['port']}\t{r['index']}\t{r['gid']}\t{ip}\t{r['version']}\t{ndev}")
    lines.append(f"n_gids_found={len(rows)}")
    return "\n".join(lines) + "\n"


def register(app: typer.Typer) -> None:
    @app.command("gids")
    def gids_cmd(
        device: Annotated[list[str] | None, typer.Argument(help="RDMA devices (default: all).",
                                                           show_default=False)] = None,
        root: Annotated[Path, typer.Option("--root", envvar="FABRICD_ROOT", help="Root of /sys. Default /.")]
        = Path("/"),
        show_gids: Annotated[bool, typer.Option("--show-gids", help="Print in show_gids' exact text layout.")]
        = False,
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
            raise UsageError(f"no RDMA device {', '.join(unknown)} under {root / 'sys/class/infiniband'}",
                             hint=f"expected one of: {', '.join(known)}" if known
                             else "there is none there (`fabricd doctor` says what RDMA needs)")
        rows = list_gids(root, device)
        if output == OutputFormat.JSON:
            emit_json(rows)
        elif show_gids:
            typer.echo(render_show_gids(rows), nl=False)
        else:
            table = Table(title="RDMA GIDs")
            for col in ("device", "port", "index", "GID", "IPv4", "ver", "netdev"):
                table.add_column(col)
            for r in rows:
                table.add_row(str(r["device"]), str(r["port"]), str(r["index"]), str(r["gid"]), str(r["ipv4"] or ""),
                              str(r["version"]), str(r["netdev"] or ""))
            stdout().print(table)
            stdout().print(f"n_gids_found={len(rows)}")
