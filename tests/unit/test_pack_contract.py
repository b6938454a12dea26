"""The platform pack is the unit of extension (issue 24, part 6): every pack the registry serves has the same
modules and the same contract names, and the things a pack needs outside its folder exist for every pack the
registry has (found by walking the registry, never a list of four: a fifth pack without them fails here)."""

from __future__ import annotations

import importlib
import re
from dataclasses import fields
from pathlib import Path

import pytest

from fabricd.model import Platform
from fabricd.nos.registry import SPECS
from fabricd.nos.roles import all_roles
from fabricd.nos.rules import DeviceRules
from fabricd.nos.spec import PlatformSpec

REPO = Path(__file__).resolve().parents[2]
NOS = REPO / "fabricd" / "nos"
IDS = [p.value for p in SPECS]

CONTRACT: dict[str, set[str]] = {
    "spec": {"SPEC", "AUDIT_HINTS"},
    "rules": {"RULES"},
    "checks": {"CHECKS"},
    "intent": {"SHAPING"},
    "watchdog": set(),
    "show": {"COMMANDS", "OPTIONAL_COMMANDS", "PARSERS"},
    "running": {"parse_running_config"},
    "version": {"VERSION_COMMAND", "parse_version"},
    "driver": set(),
    "patterns": {"DEVICE_TYPE", "ERROR"},
}
"""Module of every pack -> the public names each must define (what the spec and the L2 driver layer read)."""


def test_the_registry_serves_every_pack_folder_and_nothing_else() -> None:
    folders = {p.name for p in NOS.iterdir() if p.is_dir() and (p / "spec.py").is_file()}
    assert folders == set(IDS)
    assert [p.value for p in Platform] == IDS


@pytest.mark.parametrize("pid", IDS)
def test_every_pack_has_the_contract_modules_and_names(pid: str) -> None:
    modules = {p.stem for p in (NOS / pid).glob("*.py")}
    assert set(CONTRACT) | {"__init__"} <= modules, f"{pid} lacks {set(CONTRACT) - modules}"
    for module, names in CONTRACT.items():
        if module in ("driver", "patterns"):
            continue  # L2: imported only through the spec's driver path (test_platform_specs loads it)
        mod = importlib.import_module(f"fabricd.nos.{pid}.{module}")
        assert names <= set(vars(mod)), f"fabricd.nos.{pid}.{module} lacks {names - set(vars(mod))}"
    for module in ("driver", "patterns"):
        text = (NOS / pid / f"{module}.py").read_text()
        for name in CONTRACT[module]:
            assert re.search(rf"^{name}\b", text, re.M), f"fabricd/nos/{pid}/{module}.py defines no {name}"


@pytest.mark.parametrize("pid", IDS)
def test_the_spec_is_the_packs_own(pid: str) -> None:
    spec = SPECS[Platform(pid)]
    module = importlib.import_module(f"fabricd.nos.{pid}.spec")
    assert module.SPEC is spec and spec.templates == pid
    assert spec.driver.startswith(f"fabricd.nos.{pid}.driver:")
    assert spec.rules is importlib.import_module(f"fabricd.nos.{pid}.rules").RULES
    assert isinstance(spec.rules, DeviceRules)
    assert spec.checks == importlib.import_module(f"fabricd.nos.{pid}.checks").CHECKS
    assert spec.title and spec.title != pid


def test_every_spec_field_is_read_somewhere() -> None:
    """PlatformSpec has no field nothing reads (issue 24: checks, limits and title were set and never read)."""
    sources = [p for p in (REPO / "fabricd").rglob("*.py")
               if not (p.parent.parent == NOS and p.name == "spec.py") and p != NOS / "spec.py"]
    text = "\n".join(p.read_text() for p in sources)
    unread = [f.name for f in fields(PlatformSpec) if not re.search(rf"\.{f.name}\b", text)]
    assert unread == []


@pytest.mark.parametrize("pid", IDS)
def test_every_pack_has_what_it_needs_outside_its_folder(pid: str) -> None:
    """Templates, render goldens, a conformance suite, parser roles: a fifth NOS without them fails here."""
    assert (REPO / "templates" / pid / "main.j2").is_file()
    assert list((REPO / "tests" / "golden" / "render" / pid).glob("*/inventory.yml")), f"no render goldens for {pid}"
    assert list((REPO / "tests" / "conformance").glob(f"test_{pid}_*.py")), f"no conformance suite for {pid}"
    assert {r.name for r in all_roles() if r.platform == pid} >= {"running-config", "version"}
