"""Buffer watermarks through the switch collector: SONiC watermarkstat outputs (real captures) become the pg/queue
watermark gauges, a switch without multicast queues is nothing to report, an unknown shape is a located failure, and
the inventory's intended headroom rides on the target (service.wiring.switch_targets) into its own gauge."""

from __future__ import annotations

from pathlib import Path

from fabricd import settings
from fabricd.collectors.core import Registry
from fabricd.collectors.switch import SwitchCollector, SwitchPoller, SwitchTarget, parse_outputs
from fabricd.inventory import load_inventory
from fabricd.nos.registry import switch_intent
from fabricd.service.wiring import switch_targets

CAPTURES = Path(__file__).resolve().parents[1] / "golden" / "readers" / "switch" / "sonic"


def capture(name: str) -> str:
    return (CAPTURES / name).read_text().split("\n", 1)[1]


class Session:
    def __init__(self, outputs: dict[str, str]) -> None:
        self.outputs = outputs

    def run(self, commands: list[str]) -> dict[str, str]:
        return {c: self.outputs.get(c, "") for c in commands}

    def close(self) -> None:
        pass


BASE = {"show pfc counters": "", "show queue counters": "", "show pfcwd stats": ""}


def test_watermarks_and_intended_headroom_are_exported() -> None:
    outputs = {
        **BASE,
        "show priority-group watermark headroom": capture("pg_watermark_headroom--sonic-utilities-test.txt"),
        "show queue watermark unicast": capture("queue_watermark_unicast--sonic-utilities-test.txt"),
    }
    target = SwitchTarget("leaf1", "sonic", (), (("Ethernet4", 3, 79_872),))
    poller = SwitchPoller([target], lambda t: Session(outputs), clock=lambda: 0.0, wall=lambda: 0.0)
    try:
        text = Registry([SwitchCollector(poller)], clock=lambda: 0.0).exposition()
    finally:
        poller.close()
    assert (
        'fabricd_switch_pg_watermark_bytes{switch="leaf1",interface="Ethernet4",priority_group="3",kind="headroom"} 403'
    ) in text
    assert (
        'fabricd_switch_queue_watermark_bytes{switch="leaf1",interface="Ethernet0",queue="0",type="unicast"} 2057328'
    ) in text
    assert (
        'fabricd_switch_pg_headroom_size_bytes{switch="leaf1",interface="Ethernet4",priority_group="3"} 79872' in text
    )
    assert 'fabricd_switch_up{switch="leaf1"} 1' in text


def test_no_multicast_queues_is_nothing_to_report_and_an_unknown_shape_is_a_failure() -> None:
    target = SwitchTarget("leaf1", "sonic")
    # sonic-utilities tests/wm_input/wm_test_vectors.py show_queue_wm_multicast_neg_output (watermarkstat's own words)
    none = (
        "Object map from the COUNTERS_DB is empty because the multicast queues are not configured in the CONFIG_DB!\n"
    )
    ok = parse_outputs(target, {**BASE, "show queue watermark multicast": none})
    assert not ok.problems and not ok.watermarks
    # the headroom command answered with another command's table: a problem naming the switch and the command
    wrong = parse_outputs(
        target, {**BASE, "show priority-group watermark headroom": capture("show-queue-counters-td3-issue6290.txt")}
    )
    assert any("leaf1" in p and "show priority-group watermark headroom" in p for p in wrong.problems), wrong.problems


def test_switch_targets_carry_the_intended_headroom_of_lossless_pgs() -> None:
    fabric = load_inventory(settings.default_inventory()).fabric
    [target] = switch_targets(fabric, ["leaf1-sonic"])
    intent = switch_intent(fabric, "leaf1-sonic")
    want = {
        (p.name, prio, p.headroom.xoff_bytes)
        for p in intent.ports
        if p.headroom is not None
        for prio in p.pfc_priorities
    }
    assert want and set(target.headroom) == want
    assert all(pg == 3 for _, pg, _ in target.headroom)  # the lab policy's one lossless priority
