"""Host link health over real captures: ``ethtool -m`` (SFP and QSFP28) and ``ethtool -I --show-fec`` text
(tests/golden/readers/host/, first line names the source), and the ``link`` collector on a replay root built from
them plus a sysfs ``carrier_changes`` file (the kernel ABI: Documentation/ABI/testing/sysfs-class-net)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from fabricd.collectors.core import Registry
from fabricd.collectors.link import LinkCollector
from fabricd.readers.module import parse_ethtool_fec, parse_ethtool_module
from fabricd.readers.textparse import TextParseError

HOST = Path(__file__).parent / "readers" / "host"


def capture(name: str) -> str:
    first, _, rest = (HOST / name).read_text().partition("\n")
    assert first.startswith("# source:"), name
    return rest


def test_sfp_dom() -> None:
    got = {
        (o.quantity, o.lane): o.value
        for o in parse_ethtool_module(capture("ethtool-m-sfp-ge-bx-ixgbe-patch.txt"), "eth4")
    }
    assert got == {
        ("bias_amperes", 1): pytest.approx(0.01765),
        ("tx_power_dbm", 1): -6.71,
        ("rx_power_dbm", 1): -5.62,
        ("temperature_celsius", None): 47.3,
        ("voltage_volts", None): 3.2576,
    }  # thresholds and alarm flags are not readings


def test_qsfp_dom_per_lane() -> None:
    got = parse_ethtool_module(capture("ethtool-m-qsfp28-sff8636-netdev-patch.txt"), "swp13")
    rx = {o.lane: o.value for o in got if o.quantity == "rx_power_dbm"}
    tx = {o.lane: o.value for o in got if o.quantity == "tx_power_dbm"}
    assert rx == {1: -0.34, 2: -0.40, 3: -0.36, 4: -0.60} and tx == {1: -1.17, 2: -1.16, 3: -1.14, 4: -1.11}


def test_no_light_and_bad_text() -> None:
    (dark,) = parse_ethtool_module(" Rcvr signal avg optical power(Channel 2)  : 0.0000 mW / -inf dBm\n", "x")
    assert dark.lane == 2 and dark.value == -math.inf
    with pytest.raises(TextParseError, match="ethtool -m x:1: no module identifier and no reading"):
        parse_ethtool_module("Cannot get module EEPROM information: Operation not supported\n", "x")
    with pytest.raises(TextParseError, match="Module voltage: not a reading"):
        parse_ethtool_module("Module voltage : lots\n", "x")


def test_fec() -> None:
    state = parse_ethtool_fec(capture("ethtool-show-fec-ice-cover-letter.txt"), "eth0")
    assert (state.active, state.configured) == ("RS", "Auto RS BaseR")
    assert {s.name: s.value for s in state.stats} == {"fec_corrected_codewords": 0, "fec_uncorrectable_codewords": 0}
    with pytest.raises(TextParseError, match="no FEC encoding line"):
        parse_ethtool_fec("netlink error: Operation not supported\n", "eth0")


def test_link_collector_on_a_replay_root(tmp_path: Path) -> None:
    net = tmp_path / "sys" / "class" / "net"
    (net / "ens1f0np0" / "device").mkdir(parents=True)
    (net / "ens1f0np0" / "carrier_changes").write_text("7\n")
    (net / "veth0").mkdir()
    (net / "veth0" / "carrier_changes").write_text("3\n")  # no device: not a NIC
    tool = tmp_path / "ethtool"
    tool.mkdir()
    (tool / "ens1f0np0.module").write_text(capture("ethtool-m-qsfp28-sff8636-netdev-patch.txt"))
    (tool / "ens1f0np0.fec").write_text(capture("ethtool-show-fec-ice-cover-letter.txt"))
    (tool / "ens1f1np1.module").write_text("Cannot get module EEPROM information: Operation not supported\n")
    text = Registry([LinkCollector(tmp_path)]).exposition()
    assert 'fabricd_nic_carrier_changes_total{interface="ens1f0np0"} 7' in text
    assert "veth0" not in text
    assert 'fabricd_nic_optic_rx_power_dbm{interface="ens1f0np0",lane="4"} -0.6' in text
    assert 'fabricd_nic_fec_mode_info{interface="ens1f0np0",mode="RS"} 1' in text
    assert 'fabricd_nic_fec_uncorrectable_codewords_total{interface="ens1f0np0"} 0' in text
    assert 'fabricd_scrape_collector_success{collector="link"} 0' in text  # ens1f1np1.module does not parse


def test_link_collector_reads_fec_from_ethtool_stats(tmp_path: Path) -> None:
    """Live-host FEC: an interface without an ``.fec`` file gets its FEC series from its driver's ``ethtool -S``
    names (the same source the nic collector reads; a replay root's ``.stats`` here). The names are the drivers' own
    (bnxt_ethtool.c bnxt_rx_port_stats_ext_arr[], mlx5 en_stats.c pport_phy_statistical_stats_desc[]; the ethq
    captures in tests/golden/readers/ethtool print them at 0); the non-zero values are written for the test. An
    interface with an ``.fec`` file keeps that file's values (one sample, not two)."""
    from fabricd.collectors.nic import ReplayEthtoolSource

    net = tmp_path / "sys" / "class" / "net"
    tool = tmp_path / "ethtool"
    tool.mkdir()
    for ifname in ("bnxt0", "mlx0", "ice0"):
        (net / ifname / "device").mkdir(parents=True)
    (tool / "bnxt0.info").write_text("driver: bnxt_en\nversion: 6.8.0\n")
    (tool / "bnxt0.stats").write_text(
        "NIC statistics:\n     rx_fec_corrected_blocks: 1200\n"
        "     rx_fec_uncorrectable_blocks: 3\n     rx_corrected_bits: 98765\n"
        "     rx_pause_frames: 0\n"
    )
    (tool / "mlx0.info").write_text("driver: mlx5_core\nversion: 24.04\n")
    (tool / "mlx0.stats").write_text("NIC statistics:\n     rx_corrected_bits_phy: 4242\n     rx_err_lane_0_phy: 9\n")
    (tool / "ice0.info").write_text("driver: bnxt_en\n")
    (tool / "ice0.stats").write_text("NIC statistics:\n     rx_fec_uncorrectable_blocks: 77\n")
    (tool / "ice0.fec").write_text(capture("ethtool-show-fec-ice-cover-letter.txt"))
    source = ReplayEthtoolSource(tmp_path)
    text = Registry([LinkCollector(tmp_path, stats=source.read)]).exposition()
    assert 'fabricd_nic_fec_corrected_codewords_total{interface="bnxt0"} 1200' in text
    assert 'fabricd_nic_fec_uncorrectable_codewords_total{interface="bnxt0"} 3' in text
    assert 'fabricd_nic_fec_corrected_bits_total{interface="bnxt0"} 98765' in text
    assert 'fabricd_nic_fec_corrected_bits_total{interface="mlx0"} 4242' in text
    assert 'fabricd_nic_fec_corrected_codewords_total{interface="mlx0"}' not in text  # mlx5 -S has no codewords
    assert 'fabricd_nic_fec_uncorrectable_codewords_total{interface="ice0"} 0' in text  # the .fec file's value
    assert 'interface="ice0"} 77' not in text
    assert 'fabricd_scrape_collector_success{collector="link"} 1' in text
    without = Registry([LinkCollector(tmp_path)]).exposition()
    assert 'fabricd_nic_fec_corrected_bits_total{interface="bnxt0"}' not in without  # FEC only from .fec files


def fake_ethtool(tmp_path: Path, module: str, fec: str) -> tuple[Path, Path]:
    """An ``ethtool`` executable that prints the real captures (``-m``: ``module``, ``-I --show-fec``: ``fec``) for
    ``eth0`` and fails like the real one for any other interface, logging each call. A stand-in for the binary: this
    machine has no NIC with a pluggable module (``ethtool -m`` answers "Operation not supported" on every device
    here), so the live path cannot meet a real module; the text it prints is real."""
    (tmp_path / "module.txt").write_text(capture(module))
    (tmp_path / "fec.txt").write_text(capture(fec))
    calls = tmp_path / "calls.log"
    tool = tmp_path / "ethtool"
    tool.write_text(f"""#!/bin/sh
echo "$*" >> {calls}
last=""; for a in "$@"; do last="$a"; done
[ "$last" = eth0 ] || {{ echo "netlink error: Operation not supported" >&2; exit 1; }}
case "$1" in
  -m) cat {tmp_path / "module.txt"} ;;
  -I) cat {tmp_path / "fec.txt"} ;;
  *) exit 1 ;;
esac
""")
    tool.chmod(0o755)
    return tool, calls


@pytest.mark.integration  # runs an executable: not in the unit tier
def test_live_link_collector_reads_module_dom_and_ice_fec(tmp_path: Path) -> None:
    """A live host (no ``ethtool/`` replay files): the ``link`` collector runs ``ethtool -m`` and ``ethtool -I
    --show-fec`` for each NIC and exports the QSFP28's DOM per lane and ice's FEC blocks (E810 counts them nowhere
    else); an interface that refuses has no series and is no problem. Before this change a live host had no DOM and
    no ice FEC series."""
    from fabricd.sources.ethtool_text import EthtoolTextSource

    tool, calls = fake_ethtool(
        tmp_path, "ethtool-m-qsfp28-sff8636-netdev-patch.txt", "ethtool-show-fec-ice-cover-letter.txt"
    )
    net = tmp_path / "root" / "sys" / "class" / "net"
    for name in ("eth0", "eth1"):
        (net / name / "device").mkdir(parents=True)
    collector = LinkCollector(tmp_path / "root", text=EthtoolTextSource(str(tool)))
    text = Registry([collector]).exposition()
    assert 'fabricd_scrape_collector_success{collector="link"} 1' in text
    for lane, dbm in ((1, -0.34), (2, -0.4), (3, -0.36), (4, -0.6)):
        assert f'fabricd_nic_optic_rx_power_dbm{{interface="eth0",lane="{lane}"}} {dbm}' in text
    assert 'fabricd_nic_optic_tx_power_dbm{interface="eth0",lane="4"} -1.11' in text
    assert 'fabricd_nic_fec_mode_info{interface="eth0",mode="RS"} 1' in text
    assert 'fabricd_nic_fec_corrected_codewords_total{interface="eth0"} 0' in text
    assert 'fabricd_nic_fec_uncorrectable_codewords_total{interface="eth0"} 0' in text
    assert 'interface="eth1"' not in text
    Registry([collector]).exposition()  # a second scrape within interval_s reuses the outputs
    assert calls.read_text().splitlines() == ["-m eth0", "-I --show-fec eth0", "-m eth1", "-I --show-fec eth1"]


@pytest.mark.integration  # runs the ethtool binary: not in the unit tier
def test_live_text_source_on_this_machine() -> None:
    """The real ``ethtool`` binary on a real interface without a module (``lo``): None, never an error, and asked
    again only after ``retry_s``."""
    import shutil

    from fabricd.sources.ethtool_text import EthtoolTextSource

    if shutil.which("ethtool") is None:
        pytest.skip("no ethtool binary")
    now = [0.0]
    source = EthtoolTextSource(clock=lambda: now[0], retry_s=60.0)
    assert source.module("lo") is None and source.fec("lo") is None
    assert EthtoolTextSource(binary="/nonexistent/ethtool").module("lo") is None
