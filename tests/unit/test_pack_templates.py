"""A platform pack from another distribution carries its templates in its own package (``PlatformSpec.templates``
``"<package>:<folder>"``, fabricd/nos/templates.py): the throwaway pack of tests/fake_pack.py is written to
``tmp_path`` as its own importable package with its templates inside, registered through the ``fabricd.platforms``
entry point (a ``.dist-info``, as installing it would write), and rendered; from a folder and from a zip. A pack
whose folder is missing, has no main.j2 or holds a template that computes is refused, naming the pack and the path.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fake_pack import INSTALLED_ID, PACK_TEMPLATES, write_installed_pack
from typer.testing import CliRunner

from fabricd.cli.main import build_app
from fabricd.inventory import load_inventory
from fabricd.model import Platform
from fabricd.model.platform import installed_platforms
from fabricd.nos.registry import SPECS, RefusedPackError, spec_of, switch_intent
from fabricd.nos.templates import PackTemplatesError, pack_templates
from fabricd.render import render_devices

PACKAGE = "acme_pack"
NVUE_CASE = Path(__file__).resolve().parents[1] / "golden" / "render" / "cumulus_nvue" / "standard" / "inventory.yml"

Install = Callable[..., Path]
Runner = Callable[..., tuple[int, str, str]]


def _forget() -> None:
    """Make the registry and the model read the installed packs again."""
    installed_platforms.cache_clear()
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
        del sys.modules[name]


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Install]:
    """``install(**kw)``: the pack written by :func:`write_installed_pack` made installed (its sys.path entry in
    front) and the registry reloaded; all undone after the test."""

    def go(**kw: object) -> Path:
        entry = write_installed_pack(tmp_path / "site", PACKAGE, **kw)  # type: ignore[arg-type]
        monkeypatch.syspath_prepend(str(entry))
        monkeypatch.setattr(SPECS, "_specs", None)
        monkeypatch.setattr(SPECS, "refused", {})
        _forget()
        return entry

    (tmp_path / "site").mkdir()
    yield go
    _forget()


def _inventory(tmp_path: Path) -> Path:
    """The NVUE golden case with its switches on the installed pack's platform."""
    path = tmp_path / "inventory.yml"
    path.write_text(NVUE_CASE.read_text().replace("platform: cumulus_nvue", f"platform: {INSTALLED_ID}"))
    return path


def _expected(intent_name: str, fabric_path: Path) -> str:
    """What the pack's own templates (tests/fake_pack.py PACK_TEMPLATES) print for that switch's intent."""
    intent = switch_intent(load_inventory(fabric_path).fabric, intent_name)
    ports = "".join(f"port {p.name} mtu {p.mtu_bytes}\n" for p in intent.ports)
    return f"# acme: {intent.name} in fabric {intent.fabric}\n{ports}"


@pytest.mark.parametrize("as_zip", [False, True], ids=["folder", "zip"])
def test_an_installed_pack_renders_from_templates_in_its_own_package(
    install: Install, tmp_path: Path, as_zip: bool
) -> None:
    entry = install(as_zip=as_zip)
    spec = spec_of(INSTALLED_ID)
    assert spec.templates == f"{PACKAGE}:templates" and spec.platform is Platform(INSTALLED_ID)
    assert pack_templates(spec).where.startswith(str(entry))  # read where the package is, zip included
    inv = _inventory(tmp_path)
    fabric = load_inventory(inv).fabric
    assert fabric.switches and all(s.platform is Platform(INSTALLED_ID) for s in fabric.switches)
    renders = [r for r in render_devices(fabric) if r.kind == "switch"]
    assert [r.platform for r in renders] == [INSTALLED_ID] * len(fabric.switches)
    for r in renders:
        assert r.primary.relpath == f"switches/{r.device}.acme"
        assert r.primary.text == _expected(r.device, inv)
        assert len(r.primary.text.splitlines()) > 2  # the include printed the ports
    result = CliRunner().invoke(build_app(), ["render", str(inv), "--device", renders[0].device])
    assert result.exit_code == 0, result.stderr
    assert _expected(renders[0].device, inv) in result.stdout


def test_templates_dir_overrides_a_section_of_a_packs_own_templates(install: Install, tmp_path: Path) -> None:
    install()
    over = tmp_path / "over"
    (over / INSTALLED_ID).mkdir(parents=True)
    (over / INSTALLED_ID / "ports.j2").write_text("{% for p in sw.ports %}\nif {{ p.name }}\n{% endfor %}\n")
    fabric = load_inventory(_inventory(tmp_path)).fabric
    first = next(r for r in render_devices(fabric, templates_dir=over) if r.kind == "switch")
    intent = switch_intent(fabric, first.device)
    head = f"# acme: {intent.name} in fabric {intent.fabric}\n"  # main.j2 from the pack, ports.j2 from --templates-dir
    assert first.primary.text == head + "".join(f"if {p.name}\n" for p in intent.ports)


@pytest.mark.parametrize(
    ("templates", "says"),
    [
        (None, "templates folder not found: acme_pack:templates -> "),
        ({"ports.j2": PACK_TEMPLATES["ports.j2"]}, "templates folder has no main.j2: acme_pack:templates -> "),
        ({**PACK_TEMPLATES, "ports.j2": "{{ sw.mtu + 4 }}\n"}, "a template computes"),
    ],
    ids=["no-folder", "no-main", "computes"],
)
def test_a_pack_with_broken_templates_is_refused_naming_pack_and_path(
    install: Install, tmp_path: Path, run_main: Runner, templates: dict[str, str] | None, says: str
) -> None:
    install(templates=templates)
    assert INSTALLED_ID not in [p.value for p in SPECS] and Platform(INSTALLED_ID) not in SPECS  # refused
    with pytest.raises(RefusedPackError) as exc:
        spec_of(INSTALLED_ID)
    text = exc.value.render()
    assert text.startswith(f"platform pack {INSTALLED_ID!r}: {says}") and str(tmp_path / "site") in text
    assert exc.value.hint
    if templates and "main.j2" in templates:
        assert f"{tmp_path / 'site' / PACKAGE / 'templates' / 'ports.j2'}:1: {{{{ sw.mtu + 4 }}}}" in text
    code, _, err = run_main("render", str(_inventory(tmp_path)), "--out", str(tmp_path / "out"))
    assert code == 2 and f"platform pack {INSTALLED_ID!r}: {says}" in " ".join(err.split())
    assert "Traceback" not in err


def test_render_refuses_a_registered_pack_whose_folder_is_missing(install: Install, tmp_path: Path) -> None:
    install()
    moved = dataclasses.replace(spec_of(INSTALLED_ID), templates=f"{PACKAGE}:nowhere")
    fabric = load_inventory(_inventory(tmp_path)).fabric
    with SPECS.overridden(moved), pytest.raises(PackTemplatesError, match="templates folder not found") as exc:
        list(render_devices(fabric))
    assert f"{PACKAGE}:nowhere -> " in str(exc.value) and str(tmp_path / "site" / PACKAGE / "nowhere") in str(exc.value)
