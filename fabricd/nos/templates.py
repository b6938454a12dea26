"""Where a platform pack's templates are, and what they may hold.

``PlatformSpec.templates`` is one of:

- a folder name under fabricd's own ``templates/`` (the built-in packs: ``templates/<id>/``, shipped in the wheel as
  ``fabricd/_data/templates``, found with :func:`fabricd.settings.data_dir`); its template names start with that
  name;
- ``"<package>:<folder>"``: a folder inside the pack's own package, read with :mod:`importlib.resources`, so a pack
  from another distribution serves its templates from wherever it is installed (a wheel, a zip); its template names
  start with the platform id (``<id>/main.j2``, ``{% include "<id>/<section>.j2" %}``).

Either way ``--templates-dir DIR`` overrides a section with ``DIR/<namespace>/<section>.j2`` (fabricd.render.env).
A folder that is missing or has no ``main.j2`` is a :class:`PackTemplatesError` naming the pack and the path: the
registry refuses an installed pack with one, and render refuses to render with one.

Templates only print what intent/ decided: :func:`template_logic` names whatever a template computes. tests/unit
holds the shipped templates and every registered pack's to it, and the registry holds an installed pack's templates
to it when it loads the pack (fabricd's tests never see those).
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from importlib.resources import files
from importlib.resources.abc import Traversable
from typing import TYPE_CHECKING

from fabricd import settings
from fabricd.errors import RenderError

if TYPE_CHECKING:
    from .spec import PlatformSpec

MAIN = "main.j2"

_ATTR = r"[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*"
_PRINT = re.compile(_ATTR)
_BLOCKS = (
    re.compile(rf"for [a-z_]+ in {_ATTR}"),
    re.compile(rf"if (not )?{_ATTR}( or (not )?{_ATTR})*"),
    re.compile(rf"elif (not )?{_ATTR}"),
    re.compile(r"else|endif|endfor"),
    re.compile(r'include "[a-z_]+/[a-z_]+\.j2"'),
    re.compile(rf"set [a-z_]+ = {_ATTR}"),
)
"""What a template may say: print a field (``{{ a.b }}``), loop over one, test flags or whether a value is set,
include a section, name a field. No filters, arithmetic, comparisons or calls: intent/ decides every value."""

_COMMENT = re.compile(r"\{#.*?#\}", re.S)
_TAG = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}|\{%-?\s*(.*?)\s*-?%\}", re.S)


class PackTemplatesError(RenderError):
    """A pack's templates folder is missing, has no ``main.j2``, or holds a template that computes."""


@dataclass(frozen=True)
class PackTemplates:
    """A pack's templates: ``namespace`` (template names start with ``<namespace>/``), ``root`` (the folder) and
    ``own`` (True: inside the pack's package; False: in fabricd's ``templates/``). Equal when the folder is."""

    platform: str
    namespace: str
    where: str
    own: bool
    root: Traversable = field(compare=False)

    @property
    def main(self) -> str:
        """The template render starts from."""
        return f"{self.namespace}/{MAIN}"

    def sources(self) -> list[Traversable]:
        """The folder's templates (``*.j2``), by name."""
        return sorted((p for p in self.root.iterdir() if p.name.endswith(".j2")), key=lambda p: p.name)


def _refused(platform: str, what: str, where: str, hint: str) -> PackTemplatesError:
    return PackTemplatesError(f"platform pack {platform!r}: {what}: {where}", hint=hint)


def _own_root(platform: str, templates: str) -> Traversable:
    package, _, folder = templates.partition(":")
    parts = folder.split("/")
    form = "PlatformSpec.templates is a folder under templates/ or '<package>:<folder>' (e.g. 'acme_nos:templates')"
    if not package or not folder or any(p in ("", ".", "..") for p in parts):
        raise _refused(platform, "PlatformSpec.templates names no folder inside a package", repr(templates), form)
    try:
        return files(importlib.import_module(package)).joinpath(*parts)
    except ImportError as exc:
        raise _refused(platform, f"templates package {package!r} cannot be imported", str(exc), form) from None
    except TypeError:  # a module, not a package: it has no folders
        raise _refused(
            platform, "PlatformSpec.templates names a module, not a package", repr(templates), form
        ) from None


def pack_templates(spec: PlatformSpec) -> PackTemplates:
    """Where ``spec``'s templates are. Raises :class:`PackTemplatesError` when the folder is missing or has no
    ``main.j2``."""
    platform, templates = spec.platform.value, spec.templates
    own = ":" in templates
    root = _own_root(platform, templates) if own else settings.data_dir("templates") / templates
    pack = PackTemplates(platform, platform if own else templates, str(root), own, root)
    where = f"{templates} -> {root}" if own else str(root)
    ship = (
        f"ship the folder in the pack's package (package data) with {MAIN} and one template per section"
        if own
        else f"copy the pack's templates into fabricd's templates/{templates}/, or set PlatformSpec.templates to "
        "'<package>:<folder>' (a folder inside the pack's own package)"
    )
    if not root.is_dir():
        raise _refused(platform, "templates folder not found", where, ship)
    if not root.joinpath(MAIN).is_file():
        raise _refused(platform, f"templates folder has no {MAIN}", where, f"add {MAIN} (it includes the sections)")
    return pack


def template_logic(text: str) -> list[tuple[int, str]]:
    """What template ``text`` computes, as ``(line, tag)`` pairs (empty: it only prints)."""
    text = _COMMENT.sub(lambda m: "\n" * m.group().count("\n"), text)
    found = []
    for m in _TAG.finditer(text):
        printed, block = m.group(1), m.group(2)
        ok = _PRINT.fullmatch(printed) if printed is not None else any(b.fullmatch(block) for b in _BLOCKS)
        if not ok:
            found.append((text.count("\n", 0, m.start()) + 1, m.group()))
    return found


def logic_in(pack: PackTemplates) -> list[str]:
    """Every tag of ``pack``'s templates that computes, as ``<file>:<line>: <tag>`` (empty: they only print)."""
    return [
        f"{source}:{line}: {tag}"
        for source in pack.sources()
        for line, tag in template_logic(source.read_text(encoding="utf-8"))
    ]


def check_logic_free(pack: PackTemplates) -> None:
    """Raises :class:`PackTemplatesError` naming the first tag of ``pack``'s templates that computes."""
    found = logic_in(pack)
    if found:
        raise _refused(
            pack.platform,
            f"a template computes ({len(found)} tag(s)); expected only printed fields, loops, tests of flags or set "
            "values, includes",
            found[0],
            "templates print what intent/ decided: compute the value in the pack's intent.py and print its field",
        )
