"""Issue 26 part 5: every reader, switch and host, given an output with content that it reads nothing from, says so
with a location: a host reader raises :class:`TextParseError` naming the line, a switch show parser returns a
problem (the collector turns it into ``fabricd_scrape_collector_success 0``, tests/unit/test_switch_empty_parse.py),
a running-config parser a problem naming the line. Never an empty result that looks like "nothing to report".

The readers are every text parser of the parser-role registry (the same walk as test_framing.py); the outputs are
text that is not the reader's format: prose with numbers, a CLI's refusal, and real captures of other formats.
Version parsers are left out: they answer "version unknown" (None), which ``fabricd capture`` records as such.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabricd.nos.roles import Role, all_roles
from fabricd.readers.switch.config_model import LosslessConfig
from fabricd.readers.switch.empty import parsed_nothing
from fabricd.readers.switch.model import SwitchCounters
from fabricd.readers.textparse import TextParseError

GOLDEN = Path(__file__).parent

FOREIGN: dict[str, str] = {
    "prose with numbers": "The quick brown fox 12 jumps over\nthe lazy dog 34 times, 56 ways\n",
    "a CLI refusal": "% Invalid input detected at '^' marker.\n",
    "perfquery": "readers/perfquery/perfquery-l-x-hca-treydock.txt",
    "dcb ets": "readers/host_text/dcb-ets-show-full-pg-bw-netdev-patch.txt",
    "NX-OS show interface": "readers/switch/cisco_nxos/show-int-crc-fcs-and-crc-nxosv-genieparser.txt",
    "SONiC show pfc counters": "readers/switch/sonic/show-pfc-counters-ntc.txt",
}


def _text(value: str) -> str:
    if not value.startswith("readers/"):
        return value
    return (GOLDEN / value).read_text().partition("\n")[2]


def _readers() -> list[tuple[Role, Any]]:
    from test_framing import text_parser

    out = []
    seen: set[Any] = set()
    for role in all_roles():
        fn = text_parser(role)
        if fn is None or role.name == "version" or fn in seen:
            continue
        seen.add(fn)
        out.append((role, fn))
    return out


READERS = _readers()


def _own(role: Role, name: str) -> bool:
    """The foreign text is (close to) the reader's own format."""
    own = {
        "perfquery": "host/perfquery",
        "dcb ets": "host/dcb-ets-text",
        "NX-OS show interface": "cisco_nxos/interface",
        "SONiC show pfc counters": "sonic/pfc",
    }
    return own.get(name) == role.id


@pytest.mark.parametrize(("role", "fn"), READERS, ids=[r.id for r, _ in READERS])
@pytest.mark.parametrize("name", sorted(FOREIGN))
def test_content_that_reads_as_nothing_is_a_located_error(role: Role, fn: Any, name: str) -> None:
    if _own(role, name):
        pytest.skip("the reader's own format")
    text = _text(FOREIGN[name])
    args = (text, "Ethernet0") if role.id == "sonic/interfaces-counters-detailed" else (text,)
    try:
        got = fn(*args)
    except TextParseError as exc:
        assert exc.line >= 1 and f":{exc.line}:" in str(exc), exc
        return
    if isinstance(got, SwitchCounters):
        assert parsed_nothing(text, got) or got.problems, f"{role.id} read {name} as an empty answer: {got}"
        if not any((got.pfc, got.queues, got.pfcwd, got.pfcwd_config, got.interfaces, got.drops)):
            assert got.problems, f"{role.id}: nothing read from {name} and no problem"
        return
    if isinstance(got, LosslessConfig):
        assert got.problems, f"{role.id}: nothing read from {name} and no problem"
        return
    pytest.fail(f"{role.id} returned {type(got).__name__} for {name} without an error: {got!r:.200}")


def test_every_reader_kind_is_covered() -> None:
    ids = {r.id for r, _ in READERS}
    assert {
        "sonic/pfc",
        "cisco_nxos/interface",
        "cumulus_nvue/counters-errors",
        "arista_eos/running-config",
        "host/ethtool-i",
        "host/perfquery",
        "host/rdma-statistic",
        "host/dcb-app-text",
        "host/show_gids-text",
    } <= ids
