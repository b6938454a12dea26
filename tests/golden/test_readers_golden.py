"""Golden tests of every reader over the real captures in tests/golden/readers/ (copied from ../shared/fixtures with a
first line naming the source). Each capture has an expected normalised JSON next to it; regenerate them with
``pytest tests/golden/test_readers_golden.py --update-goldens`` and review the diff."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from capture_links import NO_PARSER, bound, check_rows, facts, facts_path, orphan_facts, parsers_of, unlinked

from fabricd.readers.ethtool import EthtoolStats, normalise, parse_ethtool_stats
from fabricd.readers.ibnetdiscover import parse_ibnetdiscover_ports
from fabricd.readers.perfquery import parse_perfquery
from fabricd.readers.rdma import RdmaDevice, read_rdma
from fabricd.readers.switch.model import SwitchCounters, merge

GOLDEN = Path(__file__).parent / "readers"


def capture(path: Path) -> str:
    """The capture without its first ``# source:`` line."""
    text = path.read_text()
    first, _, rest = text.partition("\n")
    assert first.startswith("# source:"), f"{path} must start with a '# source:' line"
    return rest


def check(expected_path: Path, data: Any, update: bool) -> None:
    got = json.dumps(data, indent=1, sort_keys=True, default=str) + "\n"
    if update:
        expected_path.write_text(got)
        return
    assert expected_path.exists(), f"missing golden {expected_path}; run pytest --update-goldens and review it"
    assert json.loads(got) == json.loads(expected_path.read_text()), f"{expected_path} differs"


# -- ethtool -------------------------------------------------------------------------------------------------------

CAPTURE_PREFIXES = {"mlx5": "mlx5_core", "mlx4": "mlx4_en", "mlxsw": "mlxsw_spectrum"}
"""Captures named by a short prefix; every other ethtool capture is named ``<driver>-*.txt`` (``bnxt_en-ethq.txt``),
so a new NIC family's capture needs no line here."""


def capture_driver(path: Path) -> str | None:
    """The driver whose map reads an ethtool capture: its name's prefix (None: ``ethtool-S-*``, a switch port with no
    driver map, nothing normalised)."""
    from fabricd.readers.ethtool_maps import DRIVER_NAMES  # not at the top: keeps the import block as others edit it

    if path.name.startswith("ethtool-S-"):
        return None
    prefix = path.name.split("-", 1)[0]
    driver = CAPTURE_PREFIXES.get(prefix, prefix)
    assert driver in DRIVER_NAMES, f"{path.name}: name an ethtool capture <driver>-<what>.txt"
    return driver


def ethtool_json(stats: EthtoolStats) -> dict[str, Any]:
    return {
        "driver": stats.driver,
        "raw_count": len(stats.raw),
        "counters": [
            {
                "counter": c.key.counter,
                "direction": c.key.direction,
                "priority": c.key.priority,
                "qualifier": c.key.qualifier,
                "value": c.value,
                "source": c.source,
            }
            for c in stats.counters
        ],
    }


@pytest.mark.parametrize("path", sorted((GOLDEN / "ethtool").glob("*.txt")), ids=lambda p: p.stem)
def test_ethtool_golden(path: Path, update_goldens: bool) -> None:
    driver = capture_driver(path)
    raw = parse_ethtool_stats(capture(path))
    assert raw, "every capture has name: value lines"
    stats = normalise(path.stem, raw, driver)
    check(path.with_suffix(".json"), ethtool_json(stats), update_goldens)
    # the same names classify identically with the driver unknown (maps do not collide)
    assert ethtool_json(normalise(path.stem, raw, None))["counters"] == ethtool_json(stats)["counters"]


def test_ethtool_key_facts() -> None:
    """Spot checks of normalisation against values read by eye from the captures."""
    mlx4 = normalise("eth1", parse_ethtool_stats(capture(GOLDEN / "ethtool/mlx4-grep-prio3-pfc-notes.txt")), "mlx4_en")
    assert mlx4.get("pause_frames", "rx", 3) == 14812
    assert mlx4.get("pause_duration_us", "tx", 3) == 47848
    assert mlx4.get("pause_frames", "tx", 3) == 0  # the line has trailing spaces
    mlx5 = normalise(
        "eth03",
        parse_ethtool_stats(capture(GOLDEN / "ethtool/mlx5-cx4lx-grep-pause-pci-globalpause-notes.txt")),
        "mlx5_core",
    )
    assert mlx5.get("link_pause_duration_us", "tx") == 555665182
    assert mlx5.get("pause_frames", "tx", 0) is None  # global pause only: no per-priority counter, not 0
    bnxt = normalise("x", parse_ethtool_stats(capture(GOLDEN / "ethtool/bnxt_en-ethq.txt")), "bnxt_en")
    assert bnxt.get("discards", qualifier="rx_out_of_buffer") == 655430134
    assert "[0]: rx_ucast_packets" in bnxt.raw
    mlxsw = normalise(
        "swp31", parse_ethtool_stats(capture(GOLDEN / "ethtool/mlxsw-swp31-snmpd-test.txt")), "mlxsw_spectrum2"
    )
    assert mlxsw.get("priority_bytes", "tx", 3) == 16352350345145
    assert mlxsw.get("priority_packets", "rx", 0) == 63917145378
    assert mlxsw.get("pause_duration_us", "rx", 7) == 0


def test_ethtool_driver_source_names_keep_priorities() -> None:
    """Names no capture holds, written from the drivers' sources: Linux i40e_ethtool.c i40e_gstrings_pfc_stats
    (since 4.17) and Intel's out-of-tree ice ice_ethtool.h PICK() names. Not a capture: the text is built here."""
    i40e = normalise(
        "p1",
        parse_ethtool_stats(
            "port.rx_priority_3_xoff_rx: 7\nport.tx_priority_3_xon_tx: 2\nport.rx_priority_3_xon_2_xoff: 1\n"
        ),
        "i40e",
    )
    assert (
        i40e.get("pause_frames", "rx", 3),
        i40e.get("resume_frames", "tx", 3),
        i40e.get("pause_transitions", "rx", 3),
    ) == (7, 2, 1)
    ice = normalise("p1", parse_ethtool_stats("port-rx-xoff_prio-3_events: 5\nport-tx-xon_prio-6_events: 4\n"), "ice")
    assert (ice.get("pause_frames", "rx", 3), ice.get("resume_frames", "tx", 6)) == (5, 4)


# -- RDMA sysfs ----------------------------------------------------------------------------------------------------


def rdma_json(dev: RdmaDevice) -> dict[str, Any]:
    return {
        "name": dev.name,
        "fw_ver": dev.fw_ver,
        "board_id": dev.board_id,
        "hca_type": dev.hca_type,
        "node_guid": dev.node_guid,
        "problems": [str(p) for p in dev.problems],
        "ports": [
            {
                "port": p.port,
                "state": p.state,
                "state_name": p.state_name,
                "phys_state": p.phys_state,
                "phys_state_name": p.phys_state_name,
                "rate": p.rate,
                "rate_gbps": p.rate_gbps,
                "link_layer": p.link_layer,
                "saturated": list(p.saturated),
                "counters": dict(sorted(p.counters.items())),
                "hw_counters": dict(sorted(p.hw_counters.items())),
                "normalised": sorted(
                    (
                        {"counter": k.counter, "direction": k.direction, "qualifier": k.qualifier, "value": v}
                        for k, v in p.normalised().items()
                    ),
                    key=lambda r: (r["counter"], str(r["direction"]), str(r["qualifier"])),
                ),
                "unmapped_hw_counters": dict(sorted(p.unmapped_hw_counters().items())),
            }
            for p in dev.ports
        ],
    }


@pytest.mark.parametrize("tree", sorted(p for p in (GOLDEN / "sysfs").iterdir() if p.is_dir()), ids=lambda p: p.name)
def test_rdma_sysfs_golden(tree: Path, tmp_path: Path, update_goldens: bool) -> None:
    assert (tree / "SOURCE").read_text().startswith("# source:")
    cls = tmp_path / "sys/class/infiniband"
    cls.mkdir(parents=True)
    for dev in tree.iterdir():
        if dev.is_dir():
            shutil.copytree(dev, cls / dev.name)
    devices = read_rdma(tmp_path)
    assert devices
    check(tree.with_suffix(".json"), [rdma_json(d) for d in devices], update_goldens)


def test_rdma_units_and_edge_cases(tmp_path: Path) -> None:
    """4-octet data units, N/A (no PMA), saturated 32-bit counters, counters_ext preferred."""
    cls = tmp_path / "sys/class/infiniband"
    shutil.copytree(GOLDEN / "sysfs/node_exporter-sys", cls)
    devs = {d.name: d for d in read_rdma(tmp_path)}
    i40iw = devs["i40iw0"].ports[0]
    assert i40iw.counters["port_rcv_data"] is None and not devs["i40iw0"].problems
    assert i40iw.normalised() == {}
    mlx4 = devs["mlx4_0"].ports[0]
    assert mlx4.saturated == ("port_xmit_wait",)
    norm = {(k.counter, k.direction): v for k, v in mlx4.normalised().items()}
    assert norm[("data_bytes", "rx")] == 4631917 * 4
    assert norm[("packets", "rx")] == 0  # counters_ext/port_rcv_packets_64 (0) wins over counters/ (6825908347)


# -- perfquery -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted((GOLDEN / "perfquery").glob("*.txt")), ids=lambda p: p.stem)
def test_perfquery_golden(path: Path, update_goldens: bool) -> None:
    blocks = parse_perfquery(capture(path))
    assert blocks
    data = [
        {
            "kind": b.kind,
            "lid": b.lid,
            "port": b.port,
            "cap_mask": b.cap_mask,
            "counters": dict(b.counters),
            "normalised": sorted(
                ([k.counter, k.direction, k.qualifier, v] for k, v in b.normalised().items()),
                key=lambda r: (str(r[0]), str(r[1]), str(r[2])),
            ),
        }
        for b in blocks
    ]
    check(path.with_suffix(".json"), data, update_goldens)


def test_perfquery_data_is_bytes() -> None:
    (block,) = parse_perfquery(capture(GOLDEN / "perfquery/perfquery-l-x-hca-treydock.txt"))
    norm = {(k.counter, k.direction): v for k, v in block.normalised().items()}
    assert norm[("data_bytes", "tx")] == 37108676853855 * 4
    assert block.counters["QP1Dropped"] == 0


# -- ibnetdiscover --ports ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted((GOLDEN / "ibnetdiscover").glob("*.txt")), ids=lambda p: p.stem)
def test_ibnetdiscover_ports_golden(path: Path, update_goldens: bool) -> None:
    ports = parse_ibnetdiscover_ports(capture(path))
    assert ports
    data = [
        {
            "node_type": p.node_type,
            "lid": p.lid,
            "port": p.port,
            "guid": p.guid,
            "width": p.width,
            "speed": p.speed,
            "node": p.node,
            "rate_bytes_per_second": p.rate_bytes_per_second,
            "peer": None
            if p.peer is None
            else {
                "node_type": p.peer.node_type,
                "lid": p.peer.lid,
                "port": p.peer.port,
                "guid": p.peer.guid,
                "node": p.peer.node,
            },
        }
        for p in ports
    ]
    check(path.with_suffix(".json"), data, update_goldens)


def test_ibnetdiscover_reads_links_and_lone_ports() -> None:
    ports = parse_ibnetdiscover_ports(capture(GOLDEN / "ibnetdiscover/ibnetdiscover-p--treydock-edr.txt"))
    assert len(ports) == 9 and sum(p.peer is None for p in ports) == 2
    sw = next(p for p in ports if (p.lid, p.port) == (1719, 1))
    assert sw.node == "ib-i1l1s01" and sw.peer is not None and sw.peer.node == "ib-i1l2s01" and sw.peer.lid == 1516
    assert sw.rate_bytes_per_second == 100e9 / 8  # 4x EDR, as sysfs says "100 Gb/sec (4X EDR)"
    down = next(p for p in ports if (p.lid, p.port) == (2052, 37))
    assert down.speed == "???" and down.rate_bytes_per_second is None and down.node == "ib-i4l1s01"
    (bare,) = parse_ibnetdiscover_ports(capture(GOLDEN / "ibnetdiscover/ibnetdiscover-p--treydock-qdr-unquoted.txt"))
    assert bare.node == "Infiniscale-IV Mellanox Technologies" and bare.peer is None


def test_ibnetdiscover_topology_format_is_a_located_error() -> None:
    from fabricd.readers.textparse import TextParseError

    with pytest.raises(TextParseError) as err:
        parse_ibnetdiscover_ports('\nvendid=0x2c9\nSwitch\t36 "S-0002c903"')
    assert err.value.render().startswith("ibnetdiscover:2: not a ports-report line")
    assert "run `ibnetdiscover --ports`" in err.value.render()


# -- switches ------------------------------------------------------------------------------------------------------

SWITCH = GOLDEN / "switch"
SWITCH_CAPTURES = sorted(SWITCH.rglob("*.txt"))
"""Every switch capture, each read by the parsers the parser-role registry links it to (tests/golden/capture_links.py:
each pack's ``roles.py`` names its captures, ``lab-<role>.txt`` the lab's), with the ``interface`` its facts file
names; nothing here lists a platform."""


def switch_parser(path: Path) -> Callable[[str], SwitchCounters]:
    """The capture's parse: every linked parser (an output holding two commands is read by both), merged."""
    parsers = [bound(path, fn) for fn in parsers_of(path)]
    if len(parsers) == 1:
        return parsers[0]
    return lambda text: merge(p(text) for p in parsers)


def test_every_switch_capture_has_a_parser() -> None:
    assert len(SWITCH_CAPTURES) > 50, "the walk finds the switch captures"
    missing = unlinked(SWITCH_CAPTURES)
    assert not missing, NO_PARSER.format(missing)


def test_no_facts_without_their_capture() -> None:
    assert not orphan_facts(), f"facts files without their capture (<stem>.txt): {orphan_facts()}"


@pytest.mark.parametrize("path", SWITCH_CAPTURES, ids=lambda p: str(p.relative_to(SWITCH).with_suffix("")))
def test_switch_golden(path: Path, update_goldens: bool) -> None:
    counters = switch_parser(path)(capture(path))
    data = counters.as_dict()
    keys = ("pfc", "queues", "pfcwd", "pfcwd_config", "interfaces", "drops", "watermarks", "optics", "link")
    assert any(data.get(k) for k in keys), "parsed nothing"
    check(path.with_suffix(".json"), data, update_goldens)


CHECKED = [p for p in SWITCH_CAPTURES if facts(p).get("checks")]


def test_switch_key_facts_are_found() -> None:
    """The values read by eye are found (the walk is not vacuous): captures of every pack carry some."""
    assert {p.parent.name for p in CHECKED} >= {"sonic", "arista_eos", "cumulus_nvue"} and len(CHECKED) >= 14


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: str(p.relative_to(SWITCH).with_suffix("")))
def test_switch_key_facts(path: Path) -> None:
    """Spot checks against values read by eye from the captures (the ``checks`` of each capture's facts file); a
    check marked ``bare`` parses without the facts' interface (the parser reads the port from the prompt)."""
    text = capture(path)
    parsed = switch_parser(path)(text).as_dict()
    bare = [fn(text) for fn in parsers_of(path)]
    for n, spot in enumerate(facts(path)["checks"]):
        tables = (bare[0] if len(bare) == 1 else merge(bare)).as_dict() if spot.get("bare") else parsed
        check_rows(tables, spot, f"{facts_path(path).name} check {n}")
