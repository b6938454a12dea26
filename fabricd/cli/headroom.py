"""``fabricd headroom``: SONiC's PFC headroom formula for one port, term by term."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from fabricd.errors import UsageError
from fabricd.intent.headroom import LIGHT_SPEED_IN_CABLE_M_PER_S, PAUSE_QUANTUM_BITS, ROUND_TO_BYTES, headroom
from fabricd.model import Speed

from .common import OutputFormat, OutputOpt, emit_json, stdout


def headroom_terms(speed: Speed, cable_m: float, mtu: int, lossless_mtu: int | None, xon_bytes: int) -> dict[str, Any]:
    """The formula's inputs and terms, in bytes (``bytes_on_cable`` unrounded)."""
    try:
        hr = headroom(speed, cable_m, mtu, lossless_mtu_bytes=lossless_mtu, xon_bytes=xon_bytes)
    except ValueError as exc:
        raise UsageError(f"headroom: {exc}", hint="use --cable-m >= 0 and --mtu > 0") from None
    raw = hr.lossless_mtu_bytes + hr.port_mtu_bytes + hr.bytes_on_cable + hr.peer_response_bytes
    return {
        "speed": speed.value,
        "cable_m": cable_m,
        "port_mtu_bytes": hr.port_mtu_bytes,
        "lossless_mtu_bytes": hr.lossless_mtu_bytes,
        "bytes_on_cable": round(hr.bytes_on_cable, 2),
        "pause_quanta": speed.pause_quanta,
        "peer_response_bytes": hr.peer_response_bytes,
        "xoff_unrounded_bytes": round(raw, 2),
        "xoff_bytes": hr.xoff_bytes,
        "xon_bytes": hr.xon_bytes,
        "size_bytes": hr.size_bytes,
        "formula": "xoff = lossless_mtu + port_mtu + 2*cable*speed/198e6/8 + quanta*512/8, rounded up to 1024; "
        "size = xoff + xon (sonic-swss buffer_headroom_mellanox.lua)",
    }


def headroom_cmd(
    speed: Annotated[Speed, typer.Option("--speed", help="Port speed.", case_sensitive=False)] = Speed.G400,
    cable_m: Annotated[float, typer.Option("--cable-m", min=0, max=100_000, help="Cable length, metres.")] = 5.0,
    mtu: Annotated[int, typer.Option("--mtu", min=576, max=9216, help="Port MTU, bytes.")] = 9216,
    lossless_mtu: Annotated[
        int | None,
        typer.Option(
            "--lossless-mtu",
            min=64,
            max=9216,
            help="Largest lossless packet still arriving after XOFF, bytes (default: the port MTU; SONiC's "
            "LOSSLESS_TRAFFIC_PATTERN uses 1024).",
        ),
    ] = None,
    xon_bytes: Annotated[int, typer.Option("--xon-bytes", min=0, help="xon / pipeline latency, bytes.")] = 19_456,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """PFC headroom of one lossless priority on one port (SONiC's formula): what the switch must absorb
    after it sends XOFF. Shows every term in bytes.

    [bold]Example[/]: fabricd headroom --speed 400G --cable-m 100 --mtu 9216

    [bold]Example[/]: fabricd headroom --speed 100G --cable-m 5 --mtu 9216 --lossless-mtu 1024 --output json
    """
    terms = headroom_terms(speed, cable_m, mtu, lossless_mtu, xon_bytes)
    if output == OutputFormat.JSON:
        emit_json(terms)
        return
    table = Table(title=f"PFC headroom: {speed.value}, {cable_m:g} m cable, MTU {mtu}", title_justify="left")
    table.add_column("term")
    table.add_column("how", style="dim")
    table.add_column("bytes", justify="right")
    c = LIGHT_SPEED_IN_CABLE_M_PER_S
    table.add_row("lossless MTU", "largest lossless packet after XOFF", str(terms["lossless_mtu_bytes"]))
    table.add_row("port MTU", "one frame in flight", str(terms["port_mtu_bytes"]))
    table.add_row(
        "bytes on cable", f"2 x {cable_m:g} m x {speed.bps:.3g} b/s / {c:.3g} m/s / 8", f"{terms['bytes_on_cable']:.2f}"
    )
    table.add_row(
        "peer response",
        f"{speed.pause_quanta} quanta x {PAUSE_QUANTUM_BITS} bit / 8",
        str(terms["peer_response_bytes"]),
    )
    table.add_row("sum", "", f"{terms['xoff_unrounded_bytes']:.2f}")
    table.add_row("[bold]xoff[/]", f"sum rounded up to {ROUND_TO_BYTES}", f"[bold]{terms['xoff_bytes']}[/]")
    table.add_row("xon", "pipeline latency", str(terms["xon_bytes"]))
    table.add_row("[bold]size[/]", "xoff + xon, per lossless priority", f"[bold]{terms['size_bytes']}[/]")
    stdout().print(table)


def register(app: typer.Typer) -> None:
    app.command("headroom")(headroom_cmd)
