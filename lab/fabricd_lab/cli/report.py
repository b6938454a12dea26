"""``fabricd report``: the storm timeline, dashboard and topology pictures of a run, as PNG files."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from fabricd import settings
from fabricd.cli.common import InventoryArg, OutputFormat, OutputOpt, emit_json, inventory_path, stdout
from fabricd.errors import UsageError
from fabricd.inventory import load_inventory
from fabricd_lab.report.pictures import all_pictures
from fabricd_lab.report.prometheus import fetch_panels, query_range
from fabricd_lab.report.record import ReportError, RunRecord, load_record, save_record

PAUSE_QUERY = "sum by (interface, priority, direction) (rate(fabricd_nic_pfc_pause_duration_seconds_total[5s]))"


def default_run_file() -> Path:
    """Where ``fabricd demo`` saves its last run."""
    return settings.state_dir() / "demo" / "run.json"


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report(
        inventory: InventoryArg = None,
        out: Annotated[Path, typer.Option("--out", help="Folder for the PNG files.")] = Path("fabricd-report"),
        run: Annotated[
            Path | None, typer.Option("--run", help="A saved run (default: the last `fabricd demo`).")
        ] = None,
        prometheus: Annotated[
            str | None,
            typer.Option(
                "--prometheus",
                envvar="FABRICD_PROMETHEUS_URL",
                help="Read the panels from this Prometheus instead of a saved run.",
            ),
        ] = None,
        since_s: Annotated[float, typer.Option("--since", help="With --prometheus: seconds of history.")] = 300.0,
        save: Annotated[Path | None, typer.Option("--save", help="Also save the run record here.")] = None,
        output: OutputOpt = OutputFormat.TEXT,
    ) -> None:
        """Draw a run's pictures: storm-timeline.png, dashboard.png and topology.png.

        [bold]Example[/]: fabricd report --out ./pictures   (from the last `fabricd demo` run)
        [bold]Example[/]: fabricd report --prometheus http://127.0.0.1:9090 --since 600 --out /tmp/pics  (any fabric)
        """
        fabric = load_inventory(inventory_path(inventory)).fabric
        if prometheus:
            end = time.time()
            start = end - since_s
            record = RunRecord(
                fabric=fabric.name,
                started_ts=start,
                ended_ts=end,
                pause=query_range(prometheus, PAUSE_QUERY, start, end),
                panels=fetch_panels(prometheus, start, end),
            )
        else:
            path = run or default_run_file()
            if not path.exists():
                raise ReportError(
                    f"{path}: no saved run", hint="run `fabricd demo` first, or pass --run FILE or --prometheus URL"
                )
            record = load_record(path)
        if save:
            try:
                save_record(record, save)
            except OSError as exc:
                raise UsageError(
                    f"--save {save}: cannot write {exc.filename}: {exc.strerror or exc}",
                    hint="give a file path in a directory you can write to",
                ) from exc
        try:
            paths = all_pictures(record, fabric, out)
        except OSError as exc:
            raise UsageError(
                f"--out {out}: cannot write {exc.filename}: {exc.strerror or exc}",
                hint="give a directory you can write to (it is created if missing)",
            ) from exc
        if output == OutputFormat.JSON:
            emit_json({"pictures": [str(p) for p in paths], "fabric": record.fabric})
        else:
            for p in paths:
                stdout().print(f"wrote {p} ({p.stat().st_size // 1024} KiB)")
