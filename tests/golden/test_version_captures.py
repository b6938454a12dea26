"""The NOS version ``fabricd capture`` records (each pack's fabricd/nos/<platform>/version.py), read from real
``show version`` outputs in tests/golden/readers/switch_version/<platform>/version--<source>.txt (first line:
the source). Each capture's version, read by eye, sits beside it in ``version--<source>.facts.json``
(``{"version": "..."}``); the parser is the one the pack's version role links the capture to
(tests/golden/capture_links.py), so nothing here lists a platform or a capture."""

from __future__ import annotations

from pathlib import Path

import pytest
from capture_links import NO_PARSER, capture_text, facts, facts_path, orphan_facts, parsers_of, unlinked

from fabricd.nos.registry import spec_of


def parse_version(platform: str, text: str) -> str | None:
    return spec_of(platform).parse_version(text)


GOLDEN = Path(__file__).parent / "readers" / "switch_version"
CAPTURES = sorted(GOLDEN.rglob("*.txt"))


def test_every_version_capture_has_a_parser_and_an_expected_value() -> None:
    assert len(CAPTURES) >= 5, "the walk finds the version captures"
    missing = unlinked(CAPTURES)
    assert not missing, NO_PARSER.format(missing)
    unread = [str(facts_path(p).relative_to(GOLDEN)) for p in CAPTURES if not facts(p).get("version")]
    assert not unread, f'write the version read by eye from each capture, {{"version": "..."}}, in {unread}'
    assert not orphan_facts(), f"facts files without their capture (<stem>.txt): {orphan_facts()}"


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: str(p.relative_to(GOLDEN).with_suffix("")))
def test_version_capture(path: Path) -> None:
    (parser,) = parsers_of(path)
    assert parser is spec_of(path.parent.name).parse_version, "the capture's folder names its pack"
    assert parser(capture_text(path)) == facts(path)["version"]


def test_nothing_to_read_is_none() -> None:
    assert parse_version("cisco_nxos", "% Invalid command at '^' marker.") is None
    assert parse_version("arista_eos", '{"modelName": "x"}') is None
