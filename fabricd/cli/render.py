"""``fabricd render``: per-device switch configs, host scripts and host plans from one inventory."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from fabricd.errors import InventoryError, Problem, UsageError
from fabricd.inventory import load_inventory
from fabricd.nos.validate import run_checks
from fabricd.render.render import DeviceRender, render_devices, write_render

from .common import InventoryArg, OutputFormat, OutputOpt, TemplatesDirOpt, emit_json, inventory_path, stderr, stdout
from .deploy_common import progress_bar

DEVICE_ROWS_MAX = 60
"""Above this many devices the text summary groups rows per platform (``--output json`` lists every device)."""


def _device_json(r: DeviceRender, out: Path | None) -> dict[str, Any]:
    return {
        "device": r.device,
        "kind": r.kind,
        "platform": r.platform,
        "files": [
            {"path": str(out / f.relpath) if out else f.relpath, "lines": f.lines, "bytes": f.size_bytes}
            for f in r.files
        ],
        "warnings": [w.model_dump(mode="json") for w in r.warnings],
    }


def _summary_table(renders: list[DeviceRender], out: Path) -> Table:
    if len(renders) <= DEVICE_ROWS_MAX:
        table = Table(title=f"fabricd render -> {out}")
        for col, justify in (
            ("device", "left"),
            ("platform", "left"),
            ("output", "left"),
            ("lines", "right"),
            ("bytes", "right"),
            ("warnings", "right"),
        ):
            table.add_column(col, justify=justify)  # type: ignore[arg-type]
        for r in renders:
            table.add_row(
                r.device,
                r.platform,
                "\n".join(f.relpath for f in r.files),
                "\n".join(str(f.lines) for f in r.files),
                "\n".join(str(f.size_bytes) for f in r.files),
                f"[yellow]{len(r.warnings)}[/]" if r.warnings else "0",
            )
        return table
    table = Table(title=f"fabricd render -> {out} ({len(renders)} devices; --output json lists each)")
    for col in ("platform", "devices", "files", "lines", "bytes", "warnings"):
        table.add_column(col, justify="left" if col == "platform" else "right")
    groups: dict[str, list[DeviceRender]] = {}
    for r in renders:
        groups.setdefault(r.platform, []).append(r)
    for platform, rs in groups.items():
        table.add_row(
            platform,
            str(len(rs)),
            str(sum(len(r.files) for r in rs)),
            str(sum(f.lines for r in rs for f in r.files)),
            str(sum(f.size_bytes for r in rs for f in r.files)),
            str(sum(len(r.warnings) for r in rs)),
        )
    return table


def _warnings_table(renders: list[DeviceRender], limit: int = 40) -> Table | None:
    rows = [w for r in renders for w in r.warnings]
    if not rows:
        return None
    table = Table(title="cannot express exactly (rendered the closest value)", title_style="yellow")
    for col in ("device", "field", "intended", "rendered", "why"):
        table.add_column(col, overflow="fold")
    for w in rows[:limit]:
        table.add_row(*(escape(x) for x in (w.device, w.field, w.intended, w.rendered, w.reason)))
    if len(rows) > limit:
        table.caption = f"{len(rows) - limit} more; --output json lists all"
    return table


def render(
    inventory: InventoryArg = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-O",
            help="Write DIR/switches/<name>.<cfg|json|cli|nvue> and DIR/hosts/<name>.sh + .plan.json.",
            show_default=False,
        ),
    ] = None,
    device: Annotated[
        str | None,
        typer.Option(
            "--device",
            "-d",
            help="Only this switch or host. Without --out, print its config to "
            "stdout (SONiC: the config_db JSON; host: the shell script).",
            show_default=False,
        ),
    ] = None,
    templates_dir: TemplatesDirOpt = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Render even when the semantic checks of `fabricd validate` find errors "
            "(they are then printed as warnings).",
        ),
    ] = False,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Render RoCE-ready configs for every switch (SONiC, Arista EOS, Cisco NX-OS, Cumulus NVUE) and host.

    SONiC gets <name>.json (CONFIG_DB, for `config load`) and <name>.cli (the same state as `config` and
    `sonic-cfggen` lines). Values a platform cannot express exactly are listed as warnings (exit code stays 0).
    The inventory must pass the checks of `fabricd validate` first (exit 2 with every problem), unless --force.

    [bold]Example[/]: fabricd render --out build/
    [bold]Example[/]: fabricd render inventory/lab --device leaf2-eos
    [bold]Example[/]: fabricd render --out build/ --templates-dir my-templates/ --output json
    """
    if out is None and device is None:
        raise UsageError(
            "nothing to do: give --out DIR (all devices) or --device NAME (print one)",
            hint="e.g. `fabricd render --out build/` or `fabricd render --device leaf1-sonic`",
        )
    loaded = load_inventory(inventory_path(inventory))
    errors = [p for p in run_checks(loaded) if p.severity == "error"]
    if errors and not force:
        raise InventoryError(
            [
                *errors,
                Problem(
                    "not rendered: the inventory has the errors above",
                    code="RND001",
                    hint="fix them (`fabricd validate` explains each) or pass --force to render anyway",
                ),
            ]
        )
    for problem in errors:
        stderr().print(f"[yellow]warning:[/] {escape(problem.render())}", highlight=False)
    fabric = loaded.fabric
    if out is None:
        assert device is not None
        (r,) = list(render_devices(fabric, templates_dir=templates_dir, device=device))
        if output == OutputFormat.JSON:
            data = _device_json(r, None)
            data["text"] = {f.relpath: f.text for f in r.files}
            emit_json(data)
        else:
            stdout().file.write(r.primary.text)
            err = stderr()
            for w in r.warnings:
                err.print(f"[yellow]warning:[/] {escape(w.render())}", highlight=False)
        return

    total = 1 if device is not None else len(fabric.switches) + len(fabric.hosts)
    renders: list[DeviceRender] = []
    with progress_bar("rendering", total, enabled=output != OutputFormat.JSON) as tick:
        for r in render_devices(fabric, templates_dir=templates_dir, device=device):
            try:
                write_render(r, out)
            except OSError as exc:
                raise UsageError(
                    f"--out {out}: cannot write {exc.filename}: {exc.strerror or exc}",
                    hint="give a directory you can write to (it is created if missing)",
                ) from exc
            renders.append(r)
            tick(r)
    if output == OutputFormat.JSON:
        emit_json(
            {
                "out": str(out),
                "devices": [_device_json(r, out) for r in renders],
                "totals": {
                    "devices": len(renders),
                    "files": sum(len(r.files) for r in renders),
                    "warnings": sum(len(r.warnings) for r in renders),
                },
            }
        )
        return
    console = stdout()
    console.print(_summary_table(renders, out))
    warnings = _warnings_table(renders)
    if warnings is not None:
        console.print(warnings)


def register(app: typer.Typer) -> None:
    app.command("render")(render)
