"""The NOS version ``fabricd capture`` records (each pack's fabricd/nos/<platform>/version.py), read from real
``show version`` outputs in tests/golden/readers/switch_version/<platform>/version--<source>.txt (first line:
the source)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricd.nos.registry import spec_of


def parse_version(platform: str, text: str) -> str | None:
    return spec_of(platform).parse_version(text)

GOLDEN = Path(__file__).parent / "readers" / "switch_version"
EXPECTED = {
    "sonic/version--sonic-utilities-cmdref": "SONiC.HEAD.32-21ea29a",
    "arista_eos/version--anta-unit-test": "4.27.0F",
    "cisco_nxos/version--genieparser-n9k-c9332d-10.4": "10.4(3)",
    "cisco_nxos/version--genieparser-n9k-aci-15.3": "15.3(2b)",
    "cumulus_nvue/version--cl516-readme": "5.16.0",
}
"""Values read by eye from each capture."""


def test_every_version_capture_has_an_expected_value() -> None:
    names = {str(p.relative_to(GOLDEN).with_suffix("")) for p in GOLDEN.rglob("*.txt")}
    assert names == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_version_capture(name: str) -> None:
    path = GOLDEN / f"{name}.txt"
    first, _, text = path.read_text().partition("\n")
    assert first.startswith("# source:")
    assert parse_version(name.split("/", maxsplit=1)[0], text) == EXPECTED[name]


def test_nothing_to_read_is_none() -> None:
    assert parse_version("cisco_nxos", "% Invalid command at '^' marker.") is None
    assert parse_version("arista_eos", '{"modelName": "x"}') is None
