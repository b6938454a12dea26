"""``--fault DEVICE:KIND[=ARG]`` parsing and the per-device fault plan."""

from __future__ import annotations

import pytest

from fabricd.errors import UsageError
from fabricd_lab.faults import Fault, FaultKind, FaultPlan, parse_fault


def test_parse_every_kind() -> None:
    want = Fault("leaf2-eos", FaultKind.DISCONNECT_AFTER_LINES, "12")
    assert parse_fault("leaf2-eos:disconnect-after-lines=12") == want
    assert parse_fault("s:reject-line=^mtu 9216$").arg == "^mtu 9216$"
    assert parse_fault("s:reject-line=a=b").arg == "a=b"
    assert parse_fault("s:commit-fails").kind is FaultKind.COMMIT_FAILS
    assert parse_fault("s:slow-ms=250").arg == "250"
    assert str(parse_fault("s:auth-fail")) == "s:auth-fail"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("leaf2-eos", "expected DEVICE:KIND"),
        ("leaf2-eos:explode", "unknown kind 'explode'"),
        ("s:slow-ms", "needs an argument"),
        ("s:commit-fails=1", "takes no argument"),
        ("s:slow-ms=fast", "expects a whole number"),
        ("s:slow-ms=99999", "expects 1..60000"),
        ("s:disconnect-after-lines=0", "expects 1..1000000"),
        ("s:reject-line=(", "not a valid regular expression"),
    ],
)
def test_bad_faults_are_usage_errors(text: str, words: str) -> None:
    with pytest.raises(UsageError) as info:
        parse_fault(text)
    assert words in info.value.message


def test_plan() -> None:
    plan = FaultPlan(
        (
            parse_fault("s:reject-line=random-detect"),
            parse_fault("s:slow-ms=20"),
            parse_fault("s:disconnect-after-lines=5"),
        )
    )
    assert plan.rejects("random-detect ecn minimum-threshold 1 kbytes") and not plan.rejects("mtu 9216")
    assert plan.slow_s == 0.02 and not plan.auth_fails and not plan.commit_fails
    assert plan.disconnect_after == 5
    plan.disconnect_fired = True
    assert plan.disconnect_after is None
    assert FaultPlan().disconnect_after is None and FaultPlan().slow_s == 0.0


def test_swap_cables_fault() -> None:
    fault = parse_fault("leaf1-sonic:swap-cables=Ethernet0,Ethernet8")
    assert fault == Fault("leaf1-sonic", FaultKind.SWAP_CABLES, "Ethernet0,Ethernet8")
    for bad in ("s:swap-cables", "s:swap-cables=Ethernet0", "s:swap-cables=Ethernet0,Ethernet0", "s:swap-cables=,x"):
        with pytest.raises(UsageError):
            parse_fault(bad)


def test_degrade_optic_fault_drives_the_link_model() -> None:
    from fabricd_lab.cabling import link_model

    fault = parse_fault("leaf1-sonic:degrade-optic=Ethernet0")
    assert fault == Fault("leaf1-sonic", FaultKind.DEGRADE_OPTIC, "Ethernet0")
    with pytest.raises(UsageError):
        parse_fault("leaf1-sonic:degrade-optic")
    model = link_model(["Ethernet0", "Ethernet8"], [fault], started=100.0)
    assert model.rx_dbm("Ethernet0", 1, 100.0) == model.rx_dbm("Ethernet8", 1, 130.0) == -2.0
    assert model.rx_dbm("Ethernet0", 1, 120.0) == -12.0  # 0.5 dB a second
    assert model.pre_fec_ber("Ethernet0", 120.0) > 1e-5 > model.pre_fec_ber("Ethernet8", 120.0)
    assert model.uncorrectable("Ethernet0", 130.0) > 0 == model.uncorrectable("Ethernet8", 130.0)
    assert model.corrected("Ethernet8", 100.0) == model.corrected("Ethernet8", 500.0)  # healthy ports stay put


def test_flap_and_degrade_show_in_the_sonic_flap_table_and_the_nvue_phy_detail() -> None:
    """The lab's ``show interfaces flap`` (SONiC) and ``nv show interface <port> link phy-detail`` (NVUE) are read by
    fabricd's own parsers (the shapes of their real captures) and move with the flap and degrade-optic faults."""
    from fabricd.nos.cumulus_nvue.linkhealth import parse_nv_show_interface_link_phy_detail
    from fabricd.nos.sonic.linkhealth import parse_show_interfaces_flap
    from fabricd_lab.cabling import link_model, nvue_link_phy_detail, sonic_interfaces_flap

    sonic = link_model(["Ethernet0", "Ethernet8"], [parse_fault("leaf1-sonic:flap=Ethernet0")], started=100.0)
    flaps = {s.interface: s.value for s in parse_show_interfaces_flap(sonic_interfaces_flap(sonic, 109.0)).link}
    assert flaps == {"Ethernet0": 8, "Ethernet8": 0}  # four down-up cycles in 9 s; the steady port prints Never

    nvue = link_model(["swp1", "swp2"], [parse_fault("spine2:degrade-optic=swp1")], started=100.0)

    def phy(port: str, now: float) -> dict[str, float | None]:
        text = nvue_link_phy_detail(nvue, port, now)
        return {s.name: s.value for s in parse_nv_show_interface_link_phy_detail(text, port).link}

    start, later, steady = phy("swp1", 100.0), phy("swp1", 120.0), phy("swp2", 120.0)
    assert start["pre_fec_ber"] == steady["pre_fec_ber"] == 1e-9
    assert (later["pre_fec_ber"] or 0) > 1e-5  # past FabricPreFecBerHigh's threshold
    assert (later["fec_corrected_codewords"] or 0) > (start["fec_corrected_codewords"] or 0)
    assert steady["post_fec_ber"] == 15e-255 and (phy("swp1", 130.0)["post_fec_ber"] or 0) > 1e-254


PORTS = {
    "arista_eos": ["Ethernet1", "Ethernet2"],
    "cisco_nxos": ["Ethernet1/1", "Ethernet1/2"],
    "cumulus_nvue": ["swp1", "swp2"],
    "sonic": ["Ethernet0", "Ethernet8"],
}


def _outputs(platform: str, role: str, model: object, now: float) -> dict[str, str]:
    """The simulator's text for ``role`` (``transceiver`` or ``fec``), by the port a per-port command names ("" for
    a whole-switch command)."""
    from fabricd_lab import cabling

    m = model
    assert isinstance(m, cabling.LinkModel)
    if platform == "cumulus_nvue":
        render = cabling.nvue_transceiver if role == "transceiver" else cabling.nvue_link_phy_detail
        return {port: render(m, port, now) for port in m.ports}
    whole = {
        ("arista_eos", "transceiver"): cabling.eos_transceiver,
        ("arista_eos", "fec"): cabling.eos_phy_detail_json,
        ("cisco_nxos", "transceiver"): cabling.nxos_transceiver_details,
        ("sonic", "transceiver"): cabling.sonic_transceiver_dom,
        ("sonic", "fec"): cabling.sonic_fec_stats,
    }
    return {"": whole[(platform, role)](m, now)}


@pytest.mark.parametrize("platform", sorted(PORTS))
def test_degrade_optic_shows_on_every_nos(platform: str) -> None:
    """Each simulator's transceiver output, read by that platform's own parser (the shape of its real capture), has
    the degrading port's received power falling and the healthy port's steady; the FEC outputs (SONiC, EOS, NVUE;
    NX-OS has none) have its pre-FEC BER rising."""
    from fabricd.model import Platform
    from fabricd.nos.registry import SPECS
    from fabricd_lab.cabling import link_model

    ports = PORTS[platform]
    model = link_model(ports, [parse_fault(f"x:degrade-optic={ports[0]}")], started=100.0)
    parsers = SPECS[Platform(platform)].show.parsers

    def read(role: str, now: float) -> dict[tuple[str, str], float | None]:
        out: dict[tuple[str, str], float | None] = {}
        for port, text in _outputs(platform, role, model, now).items():
            parsed = parsers[role](text, port) if port else parsers[role](text)
            assert not parsed.problems, parsed.problems
            out |= {(o.interface, "rx"): o.value for o in parsed.optics if o.quantity == "rx_power_dbm" and o.lane == 1}
            out |= {(s.interface, s.name): s.value for s in parsed.link}
        return out

    start, later = read("transceiver", 100.0), read("transceiver", 120.0)
    assert start[(ports[0], "rx")] == start[(ports[1], "rx")] == later[(ports[1], "rx")] == -2.0
    assert later[(ports[0], "rx")] == -12.0
    if platform != "cisco_nxos":
        ber = read("fec", 120.0)
        assert (ber[(ports[0], "pre_fec_ber")] or 0) > 1e-5 > (ber[(ports[1], "pre_fec_ber")] or 0)
