"""Throwaway fifth platform packs for the tests that walk the registry (issue 24, part 6: a fifth NOS without its
goldens, templates or oracle must fail a test, not pass silently).

:func:`fake_pack` registers SONiC's spec under a new id for the length of a ``with`` block. The fake has no folder,
no templates, no goldens, no captures and no conformance oracle, so every check that walks the registry for what a
pack needs must name it.

:func:`write_installed_pack` writes a pack as another distribution ships one: its own package with its templates
inside, registered through the ``fabricd.platforms`` entry point (tests/unit/test_pack_templates.py).
"""

from __future__ import annotations

import dataclasses
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fabricd.model import Platform
from fabricd.nos.registry import SPECS
from fabricd.nos.spec import PlatformSpec

FAKE_ID = "fake_nos"


@contextmanager
def fake_pack(pid: str = FAKE_ID) -> Iterator[PlatformSpec]:
    """SONiC's spec as platform ``pid``, served by the registry inside the block only."""
    spec = dataclasses.replace(SPECS[Platform.SONIC], platform=Platform(pid), title="Fake NOS", templates=pid)
    with SPECS.registered(spec):
        yield spec
    assert pid not in SPECS


INSTALLED_ID = "acme_nos"
"""The id of the pack :func:`write_installed_pack` builds (a distribution of its own, not fabricd)."""

_PACK_INIT = '''"""A pack from another distribution: NVUE's parts as {pid}, its templates in its package."""

import dataclasses

from fabricd.model import Platform
from fabricd.nos.cumulus_nvue.intent import SHAPING, finish
from fabricd.nos.cumulus_nvue.spec import SPEC as NVUE

PID = Platform("{pid}")


def _finish(ctx):
    return finish(ctx).model_copy(update={{"platform": PID}})


SPEC = dataclasses.replace(
    NVUE,
    platform=PID,
    title="Acme NOS",
    suffix="acme",
    templates={templates!r},
    intent=dataclasses.replace(SHAPING, finish=_finish),
)
'''

PACK_TEMPLATES = {
    "main.j2": '# acme: {{ sw.name }} in fabric {{ sw.fabric }}\n{% include "acme_nos/ports.j2" %}\n',
    "ports.j2": "{% for p in sw.ports %}\nport {{ p.name }} mtu {{ p.mtu_bytes }}\n{% endfor %}\n",
}
"""The throwaway pack's own templates: they print the intent's fields, nothing more."""


def write_installed_pack(
    where: Path,
    package: str,
    *,
    templates: dict[str, str] | None = PACK_TEMPLATES,
    as_zip: bool = False,
) -> Path:
    """Write a pack as its own importable package ``package`` with its templates (``None``: no folder) in
    ``package/templates/``, and the ``.dist-info`` that registers it in the ``fabricd.platforms`` entry point group,
    as installing its distribution would; all of it under ``where`` (a folder, or ``where/pack.zip`` with
    ``as_zip``). Returns the ``sys.path`` entry that makes it installed."""
    files = {
        f"{package}/__init__.py": _PACK_INIT.format(pid=INSTALLED_ID, templates=f"{package}:templates"),
        f"{package}_dist-1.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {package}-dist\nVersion: 1\n",
        f"{package}_dist-1.dist-info/entry_points.txt": f"[fabricd.platforms]\n{INSTALLED_ID} = {package}:SPEC\n",
        **{f"{package}/templates/{name}": text for name, text in (templates or {}).items()},
    }
    if as_zip:
        entry = where / "pack.zip"
        with zipfile.ZipFile(entry, "w") as zf:
            for name, text in files.items():
                zf.writestr(name, text)
        return entry
    for name, text in files.items():
        path = where / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return where
