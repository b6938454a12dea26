"""``fabricd init [--example NAME] DIR``: write a starting inventory (the lab fabric or a shipped example) into an
empty directory, so that a wheel user never has to look for the examples inside site-packages."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from fabricd import settings
from fabricd.errors import FabricdError, UsageError
from fabricd.safepath import write_inside

from .common import OutputFormat, OutputOpt, emit_json, fail, stderr


def _starter(name: str) -> Path:
    starters = settings.starter_inventories()
    if name not in starters:
        raise UsageError(f"--example {name!r}: no such starting inventory", hint=f"choose one of {', '.join(starters)}")
    return starters[name]


def _check_empty(target: Path) -> None:
    """DIR may be missing (it is created) or an empty directory; anything else is refused, never overwritten."""
    if not target.exists() and not target.is_symlink():
        return
    if not target.is_dir():
        raise UsageError(
            f"{target}: exists and is not a directory", hint="give a new or empty directory, e.g. fabricd init ./fabric"
        )
    entries = sorted(p.name for p in target.iterdir())
    if entries:
        shown = ", ".join(entries[:5]) + (f" and {len(entries) - 5} more" if len(entries) > 5 else "")
        raise UsageError(
            f"{target}: directory is not empty (holds {shown})",
            hint="give a new or empty directory; fabricd init never overwrites files",
        )


_NAME_LINE = re.compile(rb"^name:[^\n]*$", re.M)
_NOT_NAME_CHAR = re.compile(r"[^A-Za-z0-9_.:@+-]+")


def fabric_name(directory: Path) -> str:
    """The fabric name ``fabricd init DIR`` writes: DIR's basename, made a valid name (letters, digits and
    ``_ . : @ + -``, starting with a letter or digit, at most 64 characters); ``fabric`` when nothing is left."""
    base = directory.resolve().name if directory.name in ("", ".", "..") else directory.name
    name = _NOT_NAME_CHAR.sub("-", base).replace("..", "-")
    name = name.lstrip("_.:@+-")[:64]
    return name or "fabric"


def write_starter(source: Path, target: Path) -> list[Path]:
    """Copy the inventory ``source`` (one YAML file, or a folder of them) into ``target``; return the files written.

    A one-file starter is written as ``DIR/fabric.yml``. The top-level ``name:`` line is rewritten to
    :func:`fabric_name` of ``target`` (the rest of the file, comments included, is copied as is), so that an edited
    copy is never mistaken for the inventory it came from."""
    if source.is_file():
        files = [("fabric.yml", source)]  # the name that makes DIR the inventory of commands run in it
    else:
        files = [
            (str(p.relative_to(source)), p)
            for p in sorted(source.rglob("*"))
            if p.is_file() and p.suffix in (".yml", ".yaml")
        ]
    line = b"name: " + fabric_name(target).encode()
    return [
        write_inside(target, name, _NAME_LINE.sub(lambda _: line, path.read_bytes(), count=1)) for name, path in files
    ]


def write_replay_roots(target: Path) -> list[Path]:
    """Copy the replay roots fabricd ships (exporters/replay: hosts built from real captures) to ``target/replay``."""
    source = settings.data_dir("exporters") / "replay"
    written = []
    for path in sorted(source.rglob("*")):
        if path.is_file():
            name = Path("replay") / path.relative_to(source)
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            written.append(write_inside(target, str(name), path.read_bytes()))
    return written


def _summary(paths: list[Path], base: Path) -> str:
    """``131 files in 45 folders (gpu1-mlx5: sys/, ethtool/, dcb/, README.md)``: what a replay root holds, not each
    of its paths (``--output json`` lists them)."""
    folders = {p.parent for p in paths}
    roots: dict[str, list[str]] = {}
    for p in paths:
        parts = p.relative_to(base).parts
        top = parts[1] + ("/" if len(parts) > 2 else "") if len(parts) > 1 else ""
        entries = roots.setdefault(parts[0], [])
        if top and top not in entries:
            entries.append(top)
    where = "; ".join(f"{name}: {', '.join(entries)}" for name, entries in roots.items())
    return f"{len(paths)} files in {len(folders)} folders ({where})"


def init_cmd(
    directory: Annotated[
        Path,
        typer.Argument(
            help="Where to write the inventory: a new or empty directory (created if missing).", show_default=False
        ),
    ],
    example: Annotated[
        str,
        typer.Option(
            "--example",
            "-e",
            help="Which inventory: lab (the embedded six-switch, four-NOS lab fabric) or a shipped example: "
            "lossy-roce, mixed-nics, softroce, sonic-only, three-tier, two-lossless-classes.",
        ),
    ] = "lab",
    replay_root: Annotated[
        bool,
        typer.Option(
            "--replay-root",
            help="Also write the shipped replay root, host gpu1 built from real captures, to DIR/replay/gpu1-mlx5: "
            "a --root for export host and audit host on a machine without an RDMA NIC.",
        ),
    ] = False,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Write a starting inventory into an empty directory: the lab fabric, or one of the shipped examples
    (--example).

    Edit the files, then check them with fabricd validate DIR.
    Exit 2 when DIR is not empty or the example is unknown; nothing is overwritten.

    [bold]Example[/]: fabricd init ./fabric
    [bold]Example[/]: fabricd init --example sonic-only ./fabric && fabricd validate ./fabric
    [bold]Example[/]: fabricd init --replay-root ./try && fabricd export host --once --root ./try/replay/gpu1-mlx5
    """
    try:
        source = _starter(example)
        _check_empty(directory)
        written = write_starter(source, directory)
        replay = write_replay_roots(directory) if replay_root else []
    except FabricdError as exc:
        fail(exc, exc.exit_code)
    if output == OutputFormat.JSON:
        emit_json(
            {
                "example": example,
                "name": fabric_name(directory),
                "directory": str(directory),
                "files": [str(p) for p in written + replay],
            }
        )
        return
    for path in written:
        typer.echo(str(path))
    if replay:
        typer.echo(f"{directory / 'replay'}/: {_summary(replay, (directory / 'replay').resolve())}")
    files = "1 file" if len(written) == 1 else f"{len(written)} files"
    if replay:
        files += f"; a replay root of {len(replay)} files in {directory / 'replay' / 'gpu1-mlx5'}"
    stderr().print(
        f"wrote the {example} inventory as fabric {fabric_name(directory)!r} ({files}) to {directory}; "
        f"next: fabricd validate {directory}",
        highlight=False,
        markup=False,
    )


def register(app: typer.Typer) -> None:
    app.command("init")(init_cmd)
