"""EOS's interface MTU, three ways that must agree: the pack's rule (what ``fabricd validate`` refuses, FAB142), the
documented range (EOS User Manual, :data:`eos_avd_oracle.EOS_L3_MTU_DOCUMENTED`, written down apart from the pack)
and the lab's EOS simulator (what ``fabricd push`` meets in the lab), with EOS's own refusal text.

The refusal wording is a virtual EOS's (ipspace/netlab#1890: ``% Max MTU for Ethernet4 is 9194``); that a hardware
switch prints the same sentence with 9214 is fabricd's reading (**unverified**: no hardware capture was found).
"""

from __future__ import annotations

import pytest
from eos_avd_oracle import EOS_L3_MTU_DOCUMENTED, _rules

from fabricd.model import Platform
from fabricd.nos.registry import SPECS
from fabricd_lab.device import DeviceSpec
from fabricd_lab.eos import EosSwitch

RULE = SPECS[Platform.ARISTA_EOS].rules.mtu
EDGES = (67, 68, 576, 1500, 9000, 9213, 9214, 9215, 9216, 10000, 65535, 65536)


def test_the_pack_takes_the_documented_range() -> None:
    assert RULE.routed == EOS_L3_MTU_DOCUMENTED
    assert RULE.l2_values is None, "EOS has no per-mode value list: fabricd renders `mtu` on every port, one range"
    assert "68 to 9214" in RULE.source.ref and RULE.source.verified


def _typed(value: int) -> tuple[str, str]:
    """(EOS's answer, the interface block afterwards) when ``mtu <value>`` is typed on a lab EOS switch."""
    sw = EosSwitch(DeviceSpec("sw1", Platform.ARISTA_EOS, password="x", ports=(("Ethernet1", 400_000_000_000),)))
    sh = sw.open_shell()
    sh.handle("configure terminal")
    sh.handle("interface Ethernet1")
    answer = sh.handle(f"mtu {value}").output
    sh.handle("end")
    return answer, sh.handle("show running-config interfaces Ethernet1").output


@pytest.mark.parametrize("value", EDGES)
def test_the_lab_switch_refuses_what_the_pack_refuses(value: int) -> None:
    answer, block = _typed(value)
    lo, hi = RULE.routed
    if lo <= value <= hi:
        assert answer == "" and f"mtu {value}" in block
        return
    assert f"mtu {value}" not in block, "a refused line changes nothing"
    if hi < value <= 65535:  # the parser takes it; the platform does not
        assert answer == f"% Max MTU for Ethernet1 is {hi}"
    else:
        assert answer == f"% Invalid input (at token 1: '{value}')"


def test_the_avd_oracle_breaks_an_mtu_above_the_documented_range() -> None:
    cfg = {
        "qos": {"map": {}},
        "qos_profiles": [],
        "ethernet_interfaces": [{"name": "Ethernet1", "mtu": 9216}, {"name": "Ethernet2", "mtu": 9214}],
    }
    breaks, _ = _rules(cfg)
    assert breaks == ["interface Ethernet1: mtu 9216 is outside EOS's documented 68-9214"]
