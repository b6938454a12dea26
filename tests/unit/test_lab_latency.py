"""The lab's optional per-command latency: its text form, its profiles and which lines count as commits."""

from __future__ import annotations

import pytest

from fabricd.errors import UsageError
from fabricd.model import Platform
from fabricd_lab.latency import PROFILES, Latency, parse_latency


def test_parse_any_subset_and_round_trip() -> None:
    lat = parse_latency("rtt_ms=40, commit_ms=2500")
    assert lat == Latency(rtt_s=0.04, commit_s=2.5)
    assert parse_latency(lat.to_text()) == lat
    assert not parse_latency("") and bool(lat)


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_profiles_parse_and_say_unverified(name: str) -> None:
    assert name.endswith("-unverified")
    assert parse_latency(name).commit_s >= 1.0


@pytest.mark.parametrize("bad", ["rtt=5", "rtt_ms", "rtt_ms=fast", "commit_ms=-1", "commit_ms=700000"])
def test_bad_text_is_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_latency(bad)
    assert "NAME=MS" in str(info.value) or "ms" in str(info.value)


@pytest.mark.parametrize(
    ("platform", "line", "kind"),
    [
        (Platform.ARISTA_EOS, "commit timer 00:05:00", "commit"),
        (Platform.ARISTA_EOS, "configure session fabricd-1 commit", "commit"),
        (Platform.ARISTA_EOS, "show session-config diffs", "show"),
        (Platform.ARISTA_EOS, "qos map dscp 26 to traffic-class 3", "command"),
        (Platform.CISCO_NXOS, "copy running-config startup-config", "commit"),
        (Platform.SONIC, "sudo config apply-patch /tmp/p.json", "commit"),
        (Platform.CUMULUS_NVUE, "nv config apply --confirm 300s -y", "commit"),
        (Platform.CUMULUS_NVUE, "nv set qos pfc default-global switch-priority 3", "command"),
    ],
)
def test_line_kinds(platform: Platform, line: str, kind: str) -> None:
    lat = Latency(command_s=1.0, show_s=2.0, commit_s=3.0)
    assert lat.processing(platform, line) == {"command": 1.0, "show": 2.0, "commit": 3.0}[kind]
