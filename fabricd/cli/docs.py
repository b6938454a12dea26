"""``fabricd docs [PAGE]``: the guides (docs/*.md) ship inside the package, so hints can name a page that a user who
installed the wheel can read: ``fabricd docs nics``."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path
from typing import Annotated

import typer

from fabricd import settings
from fabricd.errors import UsageError

from .common import OutputFormat, OutputOpt, emit_json, fail, stderr, stdout


def pages() -> dict[str, Path]:
    """Every shipped guide by name (file stem, lower case): ``nics`` -> docs/nics.md."""
    folder = settings.data_dir("docs")
    if not folder.is_dir():
        return {}
    return {p.stem.lower(): p for p in sorted(folder.glob("*.md"), key=lambda q: q.stem.lower())}


ALIASES = {
    "exporters": "metrics",
    "exporter": "metrics",
    "prometheus": "metrics",
    "monitoring": "metrics",
    "rules": "alerts",
    "alerting": "alerts",
    "runbooks": "alerts",
    "grafana": "metrics",
    "installation": "install",
    "setup": "install",
    "audit": "ci-audit",
    "lab": "switch-lab",
    "push": "switch-lab",
}
"""Words a user tries that name no page, mapped to the page that answers them (``exporters`` -> metrics)."""


def find_page(found: dict[str, Path], page: str) -> tuple[str | None, list[str]]:
    """The page ``page`` names (exactly, by alias, or as the only close match), and the close matches."""
    key = page.lower().removesuffix(".md")
    if key in found:
        return key, []
    if ALIASES.get(key) in found:
        return ALIASES[key], []
    words = {**{name: name for name in found}, **{a: p for a, p in ALIASES.items() if p in found}}
    close = list(dict.fromkeys(words[w] for w in difflib.get_close_matches(key, list(words), n=3, cutoff=0.75)))
    return (close[0] if len(close) == 1 else None), close


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return path.stem


def docs_cmd(
    page: Annotated[
        str | None,
        typer.Argument(help="Guide to print (e.g. nics, checks, contracts); omit to list them.", show_default=False),
    ] = None,
    path: Annotated[bool, typer.Option("--path", help="Print where the page is instead of its text.")] = False,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Read the guides that ship with fabricd: list them, or print one as Markdown.

    Hints name pages this way (`fabricd docs nics`), so they work from an installed wheel too.

    [bold]Example[/]: fabricd docs

    [bold]Example[/]: fabricd docs contracts | less
    """
    found = pages()
    if page is None:
        if output == OutputFormat.JSON:
            emit_json([{"page": name, "title": _title(p), "path": str(p)} for name, p in found.items()])
            return
        table = "\n".join(f"{name:<14} {_title(p)}" for name, p in found.items())
        stdout().print(table, highlight=False, markup=False)
        return
    key, close = find_page(found, page)
    if key is None:
        maybe = f"did you mean {' or '.join(close)}? " if close else ""
        fail(
            UsageError(
                f"docs {page!r}: no such page",
                hint=f"{maybe}the pages: {', '.join(found) or '(none)'} (`fabricd docs` lists them with their titles)",
            )
        )
    if key != page.lower().removesuffix(".md"):
        stderr().print(f"docs {page}: showing {key} ({_title(found[key])})", highlight=False, markup=False)
    if path:
        typer.echo(str(found[key]))
        return
    sys.stdout.write(found[key].read_text(encoding="utf-8"))
    sys.stdout.flush()


def register(app: typer.Typer) -> None:
    app.command("docs")(docs_cmd)
