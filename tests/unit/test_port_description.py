"""A port's ``description`` reaches the config of every NOS (issue 24: it was accepted and rendered on none).

The registry is walked, so a new pack whose render drops the description fails here. The NOS oracles check the
lines themselves: tests/conformance runs every shipped inventory, and inventory/examples/mixed-nics.yml and
lossy-roce.yml carry descriptions on SONiC, EOS, NVUE and NX-OS ports.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from fabricd.inventory import load_inventory
from fabricd.nos.registry import SPECS
from fabricd.nos.validate import run_checks
from fabricd.render.render import render_devices
from tests.unit.test_checks import S, lab_docs, write

GOLDEN_RENDER = Path(__file__).resolve().parents[1] / "golden" / "render"


def test_every_platform_renders_the_port_description(tmp_path: Path) -> None:
    """Each registered pack's standard render case (tests/golden/render/<id>/standard), every switch's first port
    described: the description is in every switch's config."""
    seen = set()
    for platform in SPECS:
        case = GOLDEN_RENDER / platform.value / "standard" / "inventory.yml"
        assert case.is_file(), f"{platform}: no standard render case ({case})"
        doc = yaml.safe_load(case.read_text())
        for sw in doc["switches"]:
            sw["ports"][0]["description"] = f"desc-{sw['name']}"
        path = tmp_path / f"{platform}.yml"
        path.write_text(yaml.safe_dump(doc))
        inv = load_inventory(path)
        assert [p.render() for p in run_checks(inv) if "description" in p.path] == []
        for r in render_devices(inv.fabric):
            if r.platform != platform:
                continue  # hosts, and the case's switches of another platform
            text = "\n".join(f.text for f in r.files)
            assert f"desc-{r.device}" in text, (r.platform, r.device)
            seen.add(r.platform)
    assert seen == {p.value for p in SPECS}


def test_nvue_refuses_a_description_with_spaces(tmp_path: Path) -> None:
    """The pinned NVUE grammar takes a one-word description; the others take the line's rest."""
    docs = lab_docs()
    for sw in S(docs):
        sw["ports"][0]["description"] = "to the spine"
    found = [p for p in run_checks(load_inventory(write(tmp_path / "inv", docs))) if p.code == "FAB141"]
    assert found and all(p.path.endswith(".description") for p in found)
    assert {p.path.split("]")[0] for p in found} == {"switches[spine2", "switches[leaf4-nvue"}


def test_nvue_refuses_shell_characters_in_a_description(tmp_path: Path) -> None:
    """`nv set` lines run in bash: a glob or parenthesis in the word would be expanded or be a syntax error."""
    for text, refused in (("to-spine1(e1)", True), ("uplink*", True), ("#1", True), ("to-spine1:Ethernet0", False)):
        docs = lab_docs()
        for sw in S(docs):
            sw["ports"][0]["description"] = text
        found = [
            p
            for p in run_checks(load_inventory(write(tmp_path / text.replace("*", "x").replace("#", "h"), docs)))
            if p.code == "FAB141"
        ]
        assert bool(found) == refused, text
