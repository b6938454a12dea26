"""The platform pack is the unit of extension (issue 24, part 6): every pack the registry serves has the same
modules and the same contract names, its spec is built from them, and the things a pack needs outside its folder
exist for every pack the registry has (found by walking the registry, never a list of four: a fifth pack without
them fails here, as the throwaway pack of tests/fake_pack.py shows)."""

from __future__ import annotations

import dataclasses
import importlib
import re
from dataclasses import fields
from pathlib import Path

import pytest
from fake_pack import FAKE_ID, fake_pack

from fabricd.model import Platform
from fabricd.model.platform import known_platforms
from fabricd.nos.registry import BUILTIN, SPECS
from fabricd.nos.roles import all_roles
from fabricd.nos.rules import DeviceRules
from fabricd.nos.spec import PlatformSpec
from fabricd.nos.templates import PackTemplatesError, pack_templates

REPO = Path(__file__).resolve().parents[2]
NOS = REPO / "fabricd" / "nos"
IDS = [p.value for p in SPECS]

CONTRACT: dict[str, set[str]] = {
    "spec": {"SPEC", "AUDIT_HINTS"},
    "rules": {"RULES"},
    "checks": {"CHECKS"},
    "intent": {"SHAPING", "finish"},
    "watchdog": {"CODEC"},
    "show": {"PLATFORM", "COMMANDS", "OPTIONAL_COMMANDS", "PARSERS"},
    "running": {"PLATFORM", "parse_running_config"},
    "version": {"VERSION_COMMAND", "parse_version"},
    "lldp": {"LLDP_COMMAND"},
    "gnmi": {"TABLE"},
    "roles": {"ROLES"},
    "driver": set(),
    "patterns": {"DEVICE_TYPE", "ERROR", "RUNNING_CONFIG_MARK", "RUNNING_CONFIG_RULE"},
}
"""Module of every pack -> the public names each must define (what the spec and the L2 driver layer read). A pack
may hold more modules of its own (EOS ``ecn.py``, NVUE ``grammar.py``, SONiC ``watermark.py``, ``linkhealth.py``)."""

SPEC_FROM: dict[str, tuple[str, str]] = {
    "rules": ("rules", "RULES"),
    "checks": ("checks", "CHECKS"),
    "intent": ("intent", "SHAPING"),
    "watchdog": ("watchdog", "CODEC"),
    "gnmi": ("gnmi", "TABLE"),
    "roles": ("roles", "ROLES"),
    "parse_running_config": ("running", "parse_running_config"),
    "version_command": ("version", "VERSION_COMMAND"),
    "parse_version": ("version", "parse_version"),
}
"""Spec field -> the contract module and name it is (so a spec cannot quietly take another pack's part)."""


def package_of(spec: PlatformSpec) -> str:
    """The pack's package (``fabricd.nos.<id>`` for the built-in packs; an installed pack's own elsewhere)."""
    return spec.show.module.rpartition(".")[0]


def folder_of(spec: PlatformSpec) -> Path:
    return Path(importlib.import_module(package_of(spec)).__path__[0])


def _defines(path: Path, name: str) -> bool:
    return re.search(rf"^(def |class )?{name}\b", path.read_text(), re.M) is not None


def test_the_registry_serves_every_pack_folder_and_nothing_else() -> None:
    folders = {p.name for p in NOS.iterdir() if p.is_dir() and (p / "spec.py").is_file()}
    in_tree = {s.platform.value for s in SPECS.values() if package_of(s).startswith("fabricd.nos.")}
    assert folders == in_tree
    assert [s.platform for s in BUILTIN] == list(Platform.BUILTIN) == IDS[: len(BUILTIN)]


def test_the_model_knows_every_registered_id() -> None:
    """An inventory's platform is checked by the model (L0, no pack imported) against the same ids."""
    assert list(known_platforms()) == IDS


@pytest.mark.parametrize("pid", IDS)
def test_every_pack_has_the_contract_modules_and_names(pid: str) -> None:
    spec = SPECS[Platform(pid)]
    package, folder = package_of(spec), folder_of(spec)
    modules = {p.stem for p in folder.glob("*.py")}
    assert set(CONTRACT) | {"__init__"} <= modules, f"{pid} lacks {set(CONTRACT) - modules}"
    for module, names in CONTRACT.items():
        if module in ("driver", "patterns"):
            continue  # L2: imported only through the spec's driver path (test_platform_specs loads it)
        mod = importlib.import_module(f"{package}.{module}")
        assert names <= set(vars(mod)), f"{package}.{module} lacks {names - set(vars(mod))}"
    for module in ("driver", "patterns"):
        for name in CONTRACT[module]:
            assert _defines(folder / f"{module}.py", name), f"{folder}/{module}.py defines no {name}"


@pytest.mark.parametrize("pid", IDS)
def test_the_spec_is_built_from_the_packs_own_modules(pid: str) -> None:
    spec = SPECS[Platform(pid)]
    package = package_of(spec)
    module = importlib.import_module(f"{package}.spec")
    assert module.SPEC is spec and spec.platform is Platform(pid)
    assert spec.templates in (pid, f"{package}:templates")  # templates/<id>/, or its own package's templates/
    assert spec.driver.startswith(f"{package}.driver:")
    for field, (mod, name) in SPEC_FROM.items():
        assert getattr(spec, field) is getattr(importlib.import_module(f"{package}.{mod}"), name), field
    assert isinstance(spec.rules, DeviceRules)
    assert spec.show.module == f"{package}.show" and spec.audit_hints is module.AUDIT_HINTS
    assert spec.intent.model.model_fields["platform"].default is spec.platform
    assert spec.gnmi is not None and spec.gnmi.platform is spec.platform
    assert spec.title and spec.title != pid


def test_every_spec_field_is_read_somewhere() -> None:
    """PlatformSpec has no field nothing reads (issue 24: checks, limits and title were set and never read)."""
    sources = [
        p
        for p in (REPO / "fabricd").rglob("*.py")
        if not (p.parent.parent == NOS and p.name == "spec.py") and p != NOS / "spec.py"
    ]
    text = "\n".join(p.read_text() for p in sources)
    unread = [f.name for f in fields(PlatformSpec) if not re.search(rf"\.{f.name}\b", text)]
    assert unread == []


def missing_outside(spec: PlatformSpec) -> list[str]:
    """What a registered pack lacks outside its folder: its templates, render goldens, conformance suite and
    running-config/version parser roles with captures."""
    pid = spec.platform.value
    missing = []
    try:
        pack_templates(spec)
    except PackTemplatesError:
        missing.append(f"{spec.templates}/main.j2" if ":" in spec.templates else f"templates/{spec.templates}/main.j2")
    if not list((REPO / "tests" / "golden" / "render" / pid).glob("*/inventory.yml")):
        missing.append(f"render goldens (tests/golden/render/{pid}/)")
    if not list((REPO / "tests" / "conformance").glob(f"test_{pid}_*.py")):
        missing.append(f"a conformance suite (tests/conformance/test_{pid}_*.py)")
    roles = {r.name for r in all_roles() if r.platform == pid}
    missing += [f"the {name} parser role" for name in ("running-config", "version") if name not in roles]
    for folder in ("switch_config", "readers/switch", "readers/switch_version"):
        if not (REPO / "tests" / "golden" / folder / pid).is_dir():
            missing.append(f"captures (tests/golden/{folder}/{pid}/)")
    return missing


@pytest.mark.parametrize("pid", IDS)
def test_every_pack_has_what_it_needs_outside_its_folder(pid: str) -> None:
    """Templates, render goldens, a conformance suite, parser roles, captures: a fifth NOS without them fails."""
    assert missing_outside(SPECS[Platform(pid)]) == []


def test_a_fifth_pack_without_goldens_fails() -> None:
    """The walk is not a list of four: a pack registered without its templates, goldens and suite is named."""
    with fake_pack() as spec:
        assert FAKE_ID in [p.value for p in SPECS]
        got = missing_outside(spec)
    assert f"render goldens (tests/golden/render/{FAKE_ID}/)" in got
    assert f"templates/{FAKE_ID}/main.j2" in got
    assert f"a conformance suite (tests/conformance/test_{FAKE_ID}_*.py)" in got
    assert FAKE_ID not in [p.value for p in SPECS]


def test_a_registered_pack_cannot_replace_another() -> None:
    again = dataclasses.replace(SPECS[Platform.SONIC])
    with pytest.raises(ValueError, match="already registered"), SPECS.registered(again):
        pass
