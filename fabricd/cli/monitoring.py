"""``fabricd monitoring bundle --out DIR``: write what a Prometheus beside fabricd needs (alert and recording rules
with their promtool tests, the Grafana dashboard, a scrape snippet and a whole example prometheus.yml, an
Alertmanager example, the metric reference) to a folder, from the files the package ships. A wheel user never has
to look inside site-packages."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fabricd import settings
from fabricd.errors import FabricdError, UsageError
from fabricd.safepath import inside, write_inside

from .common import OutputFormat, OutputOpt, emit_json, fail, stderr, stdout

BUNDLE: tuple[tuple[str, str], ...] = (
    ("rules/fabricd.rules.yml", "alert and recording rules (load in rule_files)"),
    ("rules/fabricd-fleet.rules.yml", "fleet rules for `fabricd agent` (load beside the main pack)"),
    ("rules/tests/", "promtool unit tests: cd rules/tests && promtool test rules *.yml"),
    ("dashboards/fabricd-fabric.json", "Grafana dashboard (import it; datasource: your Prometheus)"),
    ("scrape-fabricd.yml", "scrape jobs for export host, export switches, serve and agent, to paste"),
    ("prometheus.yml", "a whole example Prometheus config using the rest (promtool check config prometheus.yml)"),
    ("alertmanager.yml", "an example Alertmanager route for fabricd's severities"),
    ("METRICS.md", "every metric fabricd exports, with its labels and HELP"),
    ("fabricd-serve.service", "systemd unit for `fabricd serve`"),
    ("agent/", "`fabricd agent` on every host: systemd unit, Containerfile, Kubernetes DaemonSet"),
    ("switches/", "`fabricd export switches` sharded over N replicas: Kubernetes StatefulSet (--shard-from-hostname)"),
)
"""What the bundle holds, relative to DIR (a trailing / is a folder copied whole), and what each is for."""

README = """# fabricd monitoring bundle

Written by `fabricd monitoring bundle --out DIR` (fabricd {version}); the alert runbooks are `fabricd docs alerts`,
the metrics `fabricd docs metrics`.

{table}

Load it:

1. Copy `rules/` where Prometheus reads rule files and list `rules/fabricd.rules.yml` (and
   `rules/fabricd-fleet.rules.yml` with `fabricd agent`) under `rule_files:`.
2. Paste the jobs of `scrape-fabricd.yml` under `scrape_configs:` with your targets. Keep their
   `fabricd_component` label: FabricExporterDown and the dashboard know fabricd's exporters by it (and by the
   fabricd metrics a target exported), not by the job name.
3. `promtool check config prometheus.yml`, then `cd rules/tests && promtool test rules *.yml`.
4. Import `dashboards/fabricd-fabric.json` into Grafana.
"""


def _sources() -> list[tuple[str, Path]]:
    """(path in the bundle, shipped file) for every file of :data:`BUNDLE`."""
    base = settings.data_dir("exporters")
    out: list[tuple[str, Path]] = []
    for rel, _ in BUNDLE:
        src = base / rel
        if rel.endswith("/"):
            out += [(str(Path(rel) / p.relative_to(src)), p) for p in sorted(src.rglob("*")) if p.is_file()]
        elif src.is_file():
            out.append((rel, src))
        else:
            raise FabricdError(
                f"the shipped file exporters/{rel} is missing from this fabricd installation",
                hint="reinstall fabricd (docs/install.md); the wheel ships exporters/ as package data",
            )
    return out


def write_bundle(out: Path, *, force: bool = False) -> list[Path]:
    """Write the bundle to ``out`` (created); refuse to replace a file unless ``force``. Returns the files."""
    from fabricd import __version__

    files = _sources()
    if not force:
        existing = [rel for rel, _ in files if (out / rel).exists()] + (
            ["README.md"] if (out / "README.md").exists() else []
        )
        if existing:
            shown = ", ".join(existing[:3]) + (f" and {len(existing) - 3} more" if len(existing) > 3 else "")
            raise UsageError(
                f"--out {out}: would replace {shown}",
                hint="give a new or empty folder, or --force to overwrite the bundle's files",
            )
    table = "\n".join(f"- `{rel}`: {what}" for rel, what in BUNDLE)
    contents = [
        *((rel, src.read_bytes()) for rel, src in files),
        ("README.md", README.format(version=__version__, table=table).encode()),
    ]
    written = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        for rel, data in contents:
            inside(out, str(Path(rel).parent)).mkdir(parents=True, exist_ok=True)
            written.append(write_inside(out, rel, data))
    except OSError as exc:
        raise UsageError(
            f"--out {out}: cannot write ({exc.strerror or exc})", hint="give a folder you can write to"
        ) from None
    return written


def bundle_cmd(
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            help="Folder to write (created; files are never replaced without --force).",
            show_default=False,
        ),
    ],
    force: Annotated[bool, typer.Option("--force", help="Overwrite the bundle's files in --out.")] = False,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Write the monitoring bundle to a folder: alert and recording rules with their promtool tests, the
    Grafana dashboard, a scrape snippet for export host, export switches, serve and agent, a whole example
    prometheus.yml, an Alertmanager example and the metric reference.

    Exit 2 when --out holds one of the bundle's files (give --force to overwrite them).

    [bold]Example[/]: fabricd monitoring bundle --out /etc/prometheus/fabricd
    [bold]Example[/]: fabricd monitoring bundle --out ./mon && cd mon && promtool check config prometheus.yml
    """
    try:
        written = write_bundle(out, force=force)
    except FabricdError as exc:
        fail(exc, exc.exit_code)
    if output == OutputFormat.JSON:
        emit_json({"out": str(out), "files": [str(p) for p in written]})
        return
    for rel, what in BUNDLE:
        stdout().print(f"{out / rel}  {what}", highlight=False, markup=False)
    stderr().print(
        f"wrote {len(written)} files to {out}; how to load them: {out / 'README.md'}", highlight=False, markup=False
    )


def register(app: typer.Typer) -> None:
    monitoring_app = typer.Typer(
        help="What Prometheus, Alertmanager and Grafana need beside fabricd's exporters.", no_args_is_help=True
    )
    app.add_typer(monitoring_app, name="monitoring")

    monitoring_app.command("bundle")(bundle_cmd)
