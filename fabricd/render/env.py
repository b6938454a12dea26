"""The Jinja2 environment that prints intents: StrictUndefined, an optional override directory searched first.

Templates live in ``templates/<platform>/`` (shipped as ``fabricd/_data/templates`` in the wheel; found with
:func:`fabricd.settings.data_dir`). ``--templates-dir DIR`` puts ``DIR`` in front, so a user overrides one section
(``DIR/arista_eos/interfaces.j2``) and keeps the rest. Templates are dumb: loops, and ifs on booleans or on
whether a value is set; every value they print was decided in :mod:`fabricd.intent`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2

from fabricd import settings
from fabricd.errors import RenderError


def template_dirs(templates_dir: Path | None = None) -> list[Path]:
    """Directories searched for templates, first match wins: the override (if any), then the shipped set."""
    shipped = settings.data_dir("templates")
    return [templates_dir, shipped] if templates_dir is not None else [shipped]


@lru_cache(maxsize=8)
def _environment(dirs: tuple[str, ...]) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(list(dirs)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # configs and shell, not HTML
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,  # templates do not change during a run; skip the per-render mtime check
        cache_size=-1,
    )


def environment(templates_dir: Path | None = None) -> jinja2.Environment:
    """The (cached) environment for ``templates_dir``. Raises RenderError if the override does not exist."""
    if templates_dir is not None and not templates_dir.is_dir():
        raise RenderError(
            f"templates directory {templates_dir} does not exist",
            hint="pass a directory laid out like templates/ (<platform>/main.j2 and section templates)",
        )
    return _environment(tuple(str(d) for d in template_dirs(templates_dir)))
