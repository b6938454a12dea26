"""Which switches stream over gNMI and which are polled over SSH (inventory ``telemetry.transport`` or
``--transport``), the located refusal for a NOS whose pack has no gNMI mapping, and the combined poller's order.
No switch is dialled: the pollers are built, never started.

Every NOS is mapped (SONiC, EOS, NX-OS, Cumulus), so a switch of any of them may stream."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fabricd.cli.common import render_error
from fabricd.collectors.gnmi import Clocks, CombinedPoller, GnmiEndpoint, GnmiPoller, _Stream
from fabricd.collectors.switch import SwitchHealth, SwitchPoll, SwitchPoller, SwitchTarget
from fabricd.errors import UsageError
from fabricd.inventory import load_inventory
from fabricd.model import Fabric, Platform
from fabricd.nos.registry import SPECS
from fabricd.platforms.secrets import Secret
from fabricd.service.wiring import build_switch_poller, switch_targets

REPO = Path(__file__).resolve().parents[2]


def _fabric(gnmi: tuple[str, ...] = ()) -> Fabric:
    fabric = load_inventory(REPO / "inventory" / "lab").fabric
    switches = [
        s.model_copy(update={"telemetry": s.telemetry.model_copy(update={"transport": "gnmi"})})
        if s.name in gnmi
        else s
        for s in fabric.switches
    ]
    return fabric.model_copy(update={"switches": switches})


def _never(target: SwitchTarget) -> object:
    raise AssertionError(f"{target.name} was dialled")


def test_ssh_is_the_default() -> None:
    fabric = _fabric()
    poller, gnmi, ssh = build_switch_poller(fabric, switch_targets(fabric), _never)  # type: ignore[arg-type]
    assert isinstance(poller, SwitchPoller) and gnmi is None and ssh == [s.name for s in fabric.switches]
    poller.close()


def test_inventory_transport_splits_the_fleet_and_keeps_its_order() -> None:
    fabric = _fabric(gnmi=("spine1", "leaf1-sonic"))
    targets = switch_targets(fabric)
    poller, gnmi, ssh = build_switch_poller(fabric, targets, _never)  # type: ignore[arg-type]
    assert isinstance(poller, CombinedPoller) and isinstance(gnmi, GnmiPoller)
    assert [t.name for t in gnmi.targets] == ["spine1", "leaf1-sonic"]
    assert "spine1" not in ssh and "leaf2-eos" in ssh
    assert [h.name for h in poller.health()] == [t.name for t in targets]
    poller.close()


def test_a_nos_without_a_gnmi_mapping_is_refused_by_name() -> None:
    """Every pack maps its table now; EOS's table with its mapping taken away stands for a future pack that records
    its paths before it maps them (the registry serves that variant for this test only)."""
    spec = SPECS[Platform.ARISTA_EOS]
    assert spec.gnmi is not None
    unmapped = dataclasses.replace(spec, gnmi=dataclasses.replace(spec.gnmi, to_counters=None))
    fabric = _fabric()
    with (
        SPECS.overridden(unmapped),
        pytest.raises(UsageError, match=r"switch leaf2-eos: telemetry.transport gnmi: .*arista_eos.*nos/arista_eos/"),
    ):
        build_switch_poller(
            fabric,
            switch_targets(fabric, ["leaf2-eos"]),
            _never,  # type: ignore[arg-type]
            transport="gnmi",
        )
    with pytest.raises(UsageError) as err:
        build_switch_poller(fabric, switch_targets(fabric), _never, transport="http")  # type: ignore[arg-type]
    assert render_error(err.value) == "--transport 'http': expected one of inventory, ssh, gnmi"


class _Fixed:
    def __init__(self, names: list[str]) -> None:
        self.names = names

    def poll(self, wait_s: float | None = None) -> list[SwitchPoll]:
        return [SwitchPoll(SwitchTarget(n, "sonic"), None, "x", 0.0) for n in self.names]

    def health(self) -> list[SwitchHealth]:
        return [SwitchHealth(n, None, 0, 0, 0, 0, 0, None, None, None) for n in self.names]

    def close(self) -> None:
        self.names = []


def test_combined_poller_answers_in_inventory_order() -> None:
    combined = CombinedPoller([_Fixed(["b", "d"]), _Fixed(["c", "a"])], ["a", "b", "c", "d"])
    assert [r.target.name for r in combined.poll()] == ["a", "b", "c", "d"]
    assert [h.name for h in combined.health()] == ["a", "b", "c", "d"]


def test_every_nos_may_stream() -> None:
    """Every registered platform (a pack from an entry point too, not only the lab's four) streams over gNMI: a
    switch of each is added to the lab fabric."""
    fabric = _fabric()
    first = fabric.switches[0]
    extra = [
        first.model_copy(update={"name": f"stream-{platform}", "platform": platform})
        for platform in SPECS
        if all(s.platform != platform for s in fabric.switches)
    ]
    fabric = fabric.model_copy(update={"switches": [*fabric.switches, *extra]})
    poller, gnmi, ssh = build_switch_poller(
        fabric,
        switch_targets(fabric),
        _never,  # type: ignore[arg-type]
        transport="gnmi",
    )
    assert isinstance(gnmi, GnmiPoller) and ssh == []
    assert {t.platform for t in gnmi.targets} == {p.value for p in SPECS}
    poller.close()


def test_stale_is_the_switch_silence_not_this_process_lag() -> None:
    """A SAMPLE path is stale after 2x its interval of the switch's silence; time this process's loop could not run
    (a scrape converting 500 switches under the GIL, a starved CPU) is not the switch's silence. No switch is
    dialled: the poller's judgement is called on a stream of its own state."""
    now = [100.0]
    target = SwitchTarget("spine1", "sonic")
    poller = GnmiPoller([target], _never, clocks=Clocks(monotonic=lambda: now[0]))  # type: ignore[arg-type]
    st = poller._state["spine1"]
    paths = st.table.groups()["counters"]
    stream = _Stream(target, st, None, None, "counters", paths, GnmiEndpoint("127.0.0.1", 1, "u", Secret("p")))
    for key in stream.sample:
        st.last_update[key], st.lag_at_update[key] = 100.0, 0.0
    now[0] = 103.0  # ports (1 s) silent for 3 s
    assert poller._stale(stream, now[0], 100.0, 0.0) is not None
    poller._lag = 1.5  # 1.5 s of it this loop was blocked: 1.5 s of silence, under 2 s
    assert poller._stale(stream, now[0], 100.0, 0.0) is None
    poller._lag, poller._lag_due = 0.0, 101.0  # blocked since 101 and the lag ticker has not run yet
    assert poller._stale(stream, now[0], 100.0, 0.0) is None
    poller._lag_due = 102.5
    found = poller._stale(stream, now[0], 100.0, 0.0)
    assert found is not None and found[0] == "COUNTERS_DB/COUNTERS/Ethernet*" and found[1] == 2.5
