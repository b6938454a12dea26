"""The Jinja2 environment that prints intents: StrictUndefined, an optional override directory searched first.

Templates live in ``templates/<platform>/`` (shipped as ``fabricd/_data/templates`` in the wheel; found with
:func:`fabricd.settings.data_dir`), and a pack whose ``PlatformSpec.templates`` is ``"<package>:<folder>"`` serves
``<id>/...`` from that folder of its own package (read with importlib.resources: a wheel or a zip serves it;
:mod:`fabricd.nos.templates`). ``--templates-dir DIR`` puts ``DIR`` in front of both, so a user overrides one
section (``DIR/arista_eos/interfaces.j2``) and keeps the rest. Templates are dumb: loops, and ifs on booleans or on
whether a value is set; every value they print was decided in :mod:`fabricd.intent`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import jinja2
from jinja2.loaders import split_template_path

from fabricd import settings
from fabricd.errors import RenderError
from fabricd.nos.registry import SPECS
from fabricd.nos.templates import PackTemplates, PackTemplatesError, pack_templates


def template_dirs(templates_dir: Path | None = None) -> list[Path]:
    """Directories searched for templates, first match wins: the override (if any), then the shipped set."""
    shipped = settings.data_dir("templates")
    return [templates_dir, shipped] if templates_dir is not None else [shipped]


class PackLoader(jinja2.BaseLoader):
    """A pack's own templates folder (an importlib.resources Traversable: a directory, a wheel's install, a zip),
    serving the names below its namespace (behind a :class:`jinja2.PrefixLoader`)."""

    def __init__(self, pack: PackTemplates) -> None:
        self.pack = pack

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        path = self.pack.root.joinpath(*split_template_path(template))  # refuses ".." (TemplateNotFound)
        if not path.is_file():
            raise jinja2.TemplateNotFound(template)
        return path.read_text(encoding="utf-8"), str(path), lambda: True


def searched(loader: jinja2.BaseLoader | None) -> list[str]:
    """Where ``loader`` looks for templates, in order (for a not-found message)."""
    if isinstance(loader, jinja2.ChoiceLoader):
        return [where for sub in loader.loaders for where in searched(sub)]
    if isinstance(loader, jinja2.PrefixLoader):
        return [where for sub in loader.mapping.values() for where in searched(sub)]
    if isinstance(loader, jinja2.FileSystemLoader):
        return [str(p) for p in loader.searchpath]
    return [loader.pack.where] if isinstance(loader, PackLoader) else []


def own_packs() -> tuple[PackTemplates, ...]:
    """The registered packs that carry their templates in their own package (a pack whose folder is missing is left
    out here: rendering one of its switches says why, :func:`fabricd.render.render.render_switch_intent`)."""
    packs = []
    for spec in SPECS.values():
        if ":" in spec.templates:
            try:
                packs.append(pack_templates(spec))
            except PackTemplatesError:
                continue
    return tuple(packs)


@lru_cache(maxsize=8)
def _environment(dirs: tuple[str, ...], packs: tuple[PackTemplates, ...]) -> jinja2.Environment:
    *override, shipped = dirs
    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader(override)] if override else []
    loaders.append(jinja2.FileSystemLoader(shipped))  # fabricd's own names first: no pack shadows them
    if packs:
        loaders.append(jinja2.PrefixLoader({p.namespace: PackLoader(p) for p in packs}))
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # configs and shell, not HTML
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        auto_reload=False,  # templates do not change during a run; skip the per-render mtime check
        cache_size=-1,
    )


def environment(templates_dir: Path | None = None) -> jinja2.Environment:
    """The (cached) environment for ``templates_dir`` and the registered packs. Raises RenderError if the override
    does not exist."""
    if templates_dir is not None and not templates_dir.is_dir():
        raise RenderError(
            f"templates directory {templates_dir} does not exist",
            hint="pass a directory laid out like templates/ (<platform>/main.j2 and section templates)",
        )
    return _environment(tuple(str(d) for d in template_dirs(templates_dir)), own_packs())
