"""``ethtool -m`` printing the module EEPROM as a hex dump (``Offset Values`` / ``0x0000: 11 07 ...``) instead of
decoding it: an ethtool older than the module's management interface, a driver whose identifier read fails, or
``ethtool -m <if> hex on``. fabricd decodes the DOM the dumped bytes hold (fabricd/readers/module_eeprom.py); what they
cannot give is said, never exported as 0, and the host's other ports and counters still export.

Real captures (tests/golden/readers/host/ethtool-m-hex-*.txt, first line names the source): an SFF-8636 QSFP28
(mlxsw cover letter, 256 and 640 bytes; ethtool's own decode of the 640-byte dump's thresholds is printed in the
same letter and checked here against fabricd's unit conversions), a QSFP28 DAC on the ice driver whose identifier
read came back zero, an SFF-8472 SFP+ AOC with its A2h page (``hex on``), and an mlx5 failed page read (not EEPROM).
No public hex dump of a CMIS (QSFP-DD/OSFP) module or of an SFP advertising diagnostics was found: those tests build
the bytes from the specs (said at each), in the row format the real dumps show; that decoding is unverified.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import pytest

from fabricd.collectors.core import Registry
from fabricd.collectors.link import LinkCollector
from fabricd.readers.module import parse_ethtool_module, read_ethtool_module
from fabricd.readers.module_eeprom import celsius, dbm, hex_dump, u16
from fabricd.readers.textparse import content_lines

HOST = Path(__file__).parent / "readers" / "host"


def capture(name: str) -> str:
    first, _, rest = (HOST / name).read_text().partition("\n")
    assert first.startswith("# source:"), name
    return rest


def dump(data: dict[int, int], length: int = 128) -> str:
    """Bytes in ethtool's ``dump_hex`` layout (``Offset\\t\\tValues``, 16 bytes a row), as the real captures show it."""
    rows = ["Offset\t\tValues", "------\t\t------"]
    for base in range(0, length, 16):
        rows.append(f"0x{base:04x}:\t\t" + " ".join(f"{data.get(base + i, 0):02x}" for i in range(16)))
    return "\n".join(rows) + "\n"


def by_key(text: str, interface: str = "eth0") -> dict[tuple[str, int | None], float | None]:
    return {(o.quantity, o.lane): o.value for o in read_ethtool_module(text, interface).readings}


def test_sff8636_hex_dump_of_a_qsfp28() -> None:
    """SFF-8636 lower page: temperature bytes 22-23 (0x2a90 = 42.5625 degC), Vcc 26-27 (0x82ae = 3.3454 V); the lane
    monitors (34-57) are zero in this dump, so, as ethtool prints them for a module with a valid temperature, 0 mA
    and no light (-inf dBm) on each of the four lanes."""
    dom = read_ethtool_module(capture("ethtool-m-hex-qsfp28-sff8636-mlxsw-256.txt"), "sfp42")
    got = by_key(capture("ethtool-m-hex-qsfp28-sff8636-mlxsw-256.txt"), "sfp42")
    assert got[("temperature_celsius", None)] == 42.5625
    assert got[("voltage_volts", None)] == pytest.approx(3.3454)
    for lane in (1, 2, 3, 4):
        assert got[("rx_power_dbm", lane)] == -math.inf and got[("tx_power_dbm", lane)] == -math.inf
        assert got[("bias_amperes", lane)] == 0.0
    assert len(got) == 14
    assert (dom.identifier, dom.missing) == ("0x11 (QSFP28)", None)
    assert dom.note == "ethtool -m sfp42: hex dump of a 0x11 (QSFP28) module: decoded by fabricd"
    assert {o.interface for o in dom.readings} == {"sfp42"}


def test_unit_conversions_match_ethtools_decode_of_the_same_bytes() -> None:
    """The 640-byte dump's page 03h (from 0x0200) holds the thresholds ethtool printed in the same letter once it
    could read them: fabricd's conversions of those bytes give ethtool's numbers."""
    data = hex_dump(content_lines(capture("ethtool-m-hex-qsfp28-sff8636-mlxsw-640.txt")))
    assert data is not None and len(data) == 640

    def at(offset: int) -> int:
        value = u16(data, 0x200 + offset - 128)
        assert value is not None
        return value

    assert [celsius(at(o)) for o in (128, 130, 132, 134)] == [80.0, -10.0, 70.0, 0.0]  # degrees C, as printed
    assert [at(o) / 10000 for o in (144, 146)] == [3.5, 3.1]  # Module voltage high/low alarm threshold, V
    assert [at(o) * 2 / 1000 for o in (184, 186, 188, 190)] == [8.5, 5.492, 8.0, 6.0]  # Laser bias, mA
    assert [dbm(at(o)) for o in (192, 194, 196, 198)] == [5.40, -11.40, 2.40, -8.40]  # Laser output power, dBm
    assert by_key(capture("ethtool-m-hex-qsfp28-sff8636-mlxsw-640.txt"))[
        ("temperature_celsius", None)
    ] == pytest.approx(39.47, abs=0.01)  # 0x2779


def test_a_dac_without_monitors_reads_nothing_and_says_so() -> None:
    """The ice capture: a QSFP28 copper DAC whose lower page is zero. SFF-8636 has no "monitors implemented" bit;
    like ethtool, a temperature of 0x0000 means none: no reading at all (never 0 degC, 0 V), nothing missing."""
    dom = read_ethtool_module(capture("ethtool-m-hex-qsfp28-dac-ice-zeroed.txt"), "enp65s0f0np0")
    assert dom.readings == () and dom.missing is None
    assert dom.identifier == "0x11 (QSFP28)" and dom.note is not None and "no valid temperature" in dom.note


def test_sfp_hex_dump_without_diagnostics_advertised() -> None:
    """The MikroTik AOC's A0h byte 92 is 0x00: no digital diagnostics implemented, so its A2h bytes are not read
    (ethtool's own decode of the same module, in the same mail, prints no DOM line either)."""
    dom = read_ethtool_module(capture("ethtool-m-hex-sfp-aoc-mikrotik-a0-a2.txt"), "enp6s0f2")
    assert dom.readings == () and dom.missing is None
    assert dom.note is not None and "A0h byte 92 bit 6 clear" in dom.note


def test_sfp_hex_dump_with_internally_calibrated_diagnostics() -> None:
    """Unverified form: no public hex dump of an SFP that advertises diagnostics was found. The real MikroTik dump
    with its A0h byte 92 set to 0x68 (SFF-8472 "Diagnostic Monitoring Type": implemented, internally calibrated,
    average power) decodes its real A2h bytes 96-105: 0x20e6 degC/256, 0x7f00 x 100 uV, 0x0cb0 x 2 uA, 0x1e54 and
    0x0de4 x 0.1 uW."""
    data = hex_dump(content_lines(capture("ethtool-m-hex-sfp-aoc-mikrotik-a0-a2.txt")))
    assert data is not None
    data[92] = 0x68
    got = by_key(dump(data, 512))
    assert got == {
        ("temperature_celsius", None): 8422 / 256,
        ("voltage_volts", None): 3.2512,
        ("bias_amperes", 1): pytest.approx(0.006496),
        ("tx_power_dbm", 1): -1.10,
        ("rx_power_dbm", 1): -4.49,
    }
    data[92] = 0x58  # externally calibrated (bit 4): constants not applied, so nothing is read, and it says so
    dom = read_ethtool_module(dump(data, 512), "eth0")
    assert dom.readings == () and dom.missing == "all" and dom.note is not None and "external" in dom.note


def _cmis(identifier: int, flat: bool = False) -> dict[int, int]:
    """A CMIS lower page built from the spec (unverified: no public hex dump of a CMIS module was found): byte 0
    the SFF-8024 identifier, byte 2 bit 7 flat memory, bytes 14-15 TempMonValue 0x1e80 (30.5 degC), 16-17
    VccMonValue 0x80e8 (33000 x 100 uV = 3.3 V)."""
    return {0: identifier, 1: 0x40, 2: 0x80 if flat else 0x00, 14: 0x1E, 15: 0x80, 16: 0x80, 17: 0xE8}


@pytest.mark.parametrize(("identifier", "name", "version"), [(0x18, "QSFP-DD", "5.16"), (0x19, "OSFP", "5.17")])
def test_cmis_hex_dump_reads_the_module_monitors_and_leaves_lanes_missing(
    identifier: int, name: str, version: str
) -> None:
    """An ethtool older than its CMIS decoding dumps the lower page in hex. Temperature and voltage are there; the
    lane monitors are on page 11h, which no dump holds: no lane reading (never 0), ``missing`` lanes, and the note
    names the module and the ethtool release whose NEWS adds its diagnostics."""
    dom = read_ethtool_module(dump(_cmis(identifier)), "eth0")
    assert {(o.quantity, o.lane): o.value for o in dom.readings} == {
        ("temperature_celsius", None): 30.5,
        ("voltage_volts", None): 3.3,
    }
    assert (dom.identifier, dom.missing) == (f"0x{identifier:02x} ({name})", "lanes")
    assert dom.note is not None
    assert f"ethtool too old to decode CMIS; upgrade ethtool to >= {version}" in dom.note
    assert dom.note.startswith("ethtool -m eth0: hex dump of a ")


def test_cmis_flat_memory_cable_has_no_diagnostics_to_miss() -> None:
    """Flat memory (byte 2 bit 7, a passive cable): no diagnostics, as ethtool's cmis_show_dom treats it."""
    dom = read_ethtool_module(dump(_cmis(0x18, flat=True)), "eth0")
    assert dom.readings == () and dom.missing is None and "flat memory" in (dom.note or "")


def test_not_eeprom_and_partial_dumps_are_results_not_failures() -> None:
    """The mlx5 failed page read (real): netlink warnings, then a buffer that is not EEPROM (identifier 0x00)."""
    dom = read_ethtool_module(capture("ethtool-m-hex-mlx5-failed-page-read.txt"), "eth2")
    assert dom.readings == () and dom.missing == "all"
    assert dom.identifier == "0x00 (unknown to fabricd)" and "read may have failed" in (dom.note or "")
    partial = read_ethtool_module("Offset\t\tValues\n------\t\t------\n0x0090:\t\t00 00 01 a0 4d 65 6c 6c\n", "x")
    assert partial.identifier is None and partial.missing == "all"
    assert parse_ethtool_module(capture("ethtool-m-hex-qsfp28-sff8636-mlxsw-256.txt"))[0].quantity == (
        "temperature_celsius"
    )


def test_link_collector_exports_a_hex_dumped_host(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A replay root with three modules: a CMIS QSFP-DD that an old ethtool dumped in hex (built from the spec,
    unverified), the real SFF-8636 hex dump, and the real decoded QSFP28 text. Before hex dumps were read, the first
    two were problems and the collector's success 0; now every port exports what it has, the CMIS port has no lane
    series and one ``fabricd_nic_optic_undecoded_info`` naming it, and success stays 1."""
    tool = tmp_path / "ethtool"
    tool.mkdir()
    (tool / "eth0.module").write_text(dump(_cmis(0x18)))
    (tool / "eth1.module").write_text(capture("ethtool-m-hex-qsfp28-sff8636-mlxsw-256.txt"))
    (tool / "eth2.module").write_text(capture("ethtool-m-qsfp28-sff8636-netdev-patch.txt"))
    (tool / "eth2.fec").write_text("Active FEC encoding: RS\n")
    registry = Registry([LinkCollector(tmp_path)])
    with caplog.at_level(logging.INFO, logger="fabricd.collectors.link"):
        text = registry.exposition()
        registry.exposition()
    notes = [r.getMessage() for r in caplog.records if r.name == "fabricd.collectors.link"]
    assert len(notes) == 2, notes  # eth0's and eth1's, once each over two scrapes
    assert notes[0].startswith(f"{tool / 'eth0.module'}: ethtool -m eth0: hex dump of a 0x18 (QSFP-DD) module: ")
    assert "ethtool too old to decode CMIS; upgrade ethtool to >= 5.16" in notes[0]
    assert 'fabricd_scrape_collector_success{collector="link"} 1' in text
    assert 'fabricd_nic_optic_temperature_celsius{interface="eth0"} 30.5' in text
    assert 'fabricd_nic_optic_voltage_volts{interface="eth0"} 3.3' in text
    assert 'fabricd_nic_optic_rx_power_dbm{interface="eth0"' not in text  # lanes missing, not 0
    assert 'fabricd_nic_optic_undecoded_info{interface="eth0",identifier="0x18 (QSFP-DD)",missing="lanes"} 1' in text
    assert 'fabricd_nic_optic_temperature_celsius{interface="eth1"} 42.5625' in text
    assert 'fabricd_nic_optic_bias_amperes{interface="eth1",lane="4"} 0' in text
    assert 'undecoded_info{interface="eth1"' not in text
    assert 'fabricd_nic_optic_rx_power_dbm{interface="eth2",lane="4"} -0.6' in text
    assert 'fabricd_nic_fec_mode_info{interface="eth2",mode="RS"} 1' in text
