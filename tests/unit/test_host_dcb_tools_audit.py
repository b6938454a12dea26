"""`fabricd audit host --root DIR` on a host whose DCB lives in NIC firmware or lldpad: the bundle holds
`mlnx_qos -i`, `lldptool -ti` or `niccli ... qos` output (DIR/dcb/<if>.mlnx_qos|.lldptool|.niccli) instead of
iproute2 `dcb` text, and PFC, ETS, the DSCP map and (mlnx_qos) trust are judged from it instead of being reported
unreadable. Every file written here is a real capture from tests/golden/readers/host_text."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from fabricd import settings
from fabricd.cli.main import build_app
from fabricd.hosts.dcb_bundle import DcbBundle
from fabricd.intent.host import Backend, HostStep, host_intent
from fabricd.inventory import load_inventory
from fabricd_lab.fake_host import build_fake_host, fake_nics_for

CAPTURES = Path(__file__).resolve().parents[1] / "golden" / "readers" / "host_text"
MIXED = str(Path(__file__).resolve().parents[2] / "inventory" / "examples" / "mixed-nics.yml")
runner = CliRunner()


def tree(tmp_path: Path, inventory: str, host: str) -> tuple[Path, str]:
    intent = host_intent(load_inventory(inventory).fabric, host)
    root = build_fake_host(tmp_path / "h", fake_nics_for(intent))
    (root / "dcb").mkdir()
    return root, intent.nics[0].netdev


def audit(root: Path, host: str, inventory: str | None = None) -> dict[str, dict[str, object]]:
    args = [
        "audit",
        "host",
        *([inventory] if inventory else []),
        "--host",
        host,
        "--root",
        str(root),
        "--skip",
        "netlink",
        "--output",
        "json",
    ]
    res = runner.invoke(build_app(), args)
    assert res.exception is None or getattr(res.exception, "code", None) in (0, 1), res.output
    return {c["code"]: c for c in json.loads(res.stdout)["checks"]}


def findings(check: dict[str, object]) -> list[dict[str, object]]:
    found = check.get("findings")
    assert isinstance(found, list)
    return found


def test_mlx5_host_audited_from_mlnx_qos(tmp_path: Path) -> None:
    root, netdev = tree(tmp_path, str(settings.default_inventory()), "gpu1")
    (root / "dcb" / f"{netdev}.mlnx_qos").write_text(
        (CAPTURES / "mlnx_qos-trust-dscp-pfc5-ets-gpu-prod-notes.txt").read_text()
    )
    checks = audit(root, "gpu1")
    # trust is read (HOST-TRUST was skipped on every bundle before), and passes: the capture trusts DSCP
    assert checks["HOST-TRUST"]["status"] == "pass"
    assert "mlnx_qos" in str(checks["HOST-TRUST"]["note"]) and "DCBX host" in str(checks["HOST-TRUST"]["note"])
    [pfc] = findings(checks["HOST-PFC"])
    assert (pfc["expected"], pfc["got"]) == (8, 32)  # PFC on priority 5, the intent wants 3
    [app] = findings(checks["HOST-DSCP-MAP"])
    got = app["got"]
    assert isinstance(got, dict) and (got["26"], got["48"], got["40"]) == (3, 6, 5)
    [ets] = findings(checks["HOST-ETS"])
    assert isinstance(ets["got"], dict) and ets["got"]["tc_bw"] == [9, 1, 80, 10, 0, 0, 0, 0]


def test_bnxt_host_audited_from_niccli(tmp_path: Path) -> None:
    root, netdev = tree(tmp_path, MIXED, "gpu2")
    (root / "dcb" / f"{netdev}.niccli").write_text(
        (CAPTURES / "niccli-qos-ets-show-bcm57608-node-scraper.txt").read_text()
    )
    checks = audit(root, "gpu2", MIXED)
    assert checks["HOST-PFC"]["status"] == "pass"  # PFC enabled: 3
    # the NIC runs CNP on priority 7 (PRIO_MAP 7:2, APP DSCP 48 -> 7); the inventory puts it on 6
    [ets] = findings(checks["HOST-ETS"])
    assert isinstance(ets["got"], dict) and ets["got"]["prio_tc"] == [0, 0, 0, 1, 0, 0, 0, 2]
    assert ets["got"]["tc_tsa"] == ["ets", "ets", "strict", None, None, None, None, None]
    [app] = findings(checks["HOST-DSCP-MAP"])
    assert (app["expected"], app["got"]) == ({"26": 3, "48": 6}, {"26": 3, "48": 7})


def test_ets_of_a_tool_that_prints_only_its_tcs(tmp_path: Path) -> None:
    """niccli prints the NIC's 3 TCs; the TCs it leaves out carry no priority, so they are not compared, but a
    difference on a TC in use is."""
    root, netdev = tree(tmp_path, MIXED, "gpu2")
    (root / "dcb" / f"{netdev}.niccli").write_text(
        (CAPTURES / "niccli-qos-ets-show-bcm57608-node-scraper.txt").read_text()
    )
    bundle = DcbBundle(root)
    reading = bundle.read(netdev, "ets")
    want = {
        "prio_tc": [0, 0, 0, 1, 0, 0, 0, 2],
        "tc_tsa": ["ets", "ets", "strict", *["ets"] * 5],
        "tc_bw": [50, 50, 0, 0, 0, 0, 0, 0],
    }
    step = HostStep(backend=Backend.DCB, object=netdev, path="ets", desired=want, check="HOST-ETS")
    assert bundle.satisfied(step, reading)
    moved = {**want, "tc_bw": [40, 60, 0, 0, 0, 0, 0, 0]}
    assert not bundle.satisfied(step.model_copy(update={"desired": moved}), reading)
    unshown_in_use = {**want, "prio_tc": [0, 0, 0, 1, 0, 0, 3, 2]}
    assert not bundle.satisfied(step.model_copy(update={"desired": unshown_in_use}), reading)


def test_lldptool_and_precedence_and_bad_files(tmp_path: Path) -> None:
    root, netdev = tree(tmp_path, str(settings.default_inventory()), "gpu1")
    (root / "dcb" / f"{netdev}.lldptool").write_text(
        (CAPTURES / "lldptool-ti-ieee-ets-reco-app-intel-autotest.txt").read_text()
    )
    (root / "dcb" / f"{netdev}.pfc").write_text((CAPTURES / "dcb-pfc-show-manpage.txt").read_text())
    (root / "dcb" / f"{netdev}.maxrate").write_text((CAPTURES / "dcb-maxrate-show-manpage.txt").read_text())
    checks = audit(root, "gpu1")
    # PFC from the iproute2 file (first), ETS and APP from lldptool; trust: lldptool does not show it
    [pfc] = findings(checks["HOST-PFC"])
    assert pfc["got"] == 0b11000000  # the man page's prio-pfc 6:on 7:on, not lldptool's 1 2 5 7 (0b10100110)
    [ets] = findings(checks["HOST-ETS"])
    assert isinstance(ets["got"], dict) and ets["got"]["prio_tc"] == [0, 0, 1, 1, 2, 2, 3, 3]
    [app] = findings(checks["HOST-DSCP-MAP"])
    assert app["got"] == {}  # lldpad holds no DSCP APP entry
    assert checks["HOST-TRUST"]["status"] == "skip" and "mlnx_qos" in str(checks["HOST-TRUST"]["note"])
    (root / "dcb" / f"{netdev}.lldptool").write_text("IEEE 8021QAZ PFC TLV\n\t PFC enabled: 9\n")
    checks = audit(root, "gpu1")
    [ets] = findings(checks["HOST-ETS"])
    assert "cannot read" in str(ets["message"]) and f"{netdev}.lldptool:2:" in str(ets["message"])


def test_pass_note_names_the_file_and_rate_caps(tmp_path: Path) -> None:
    root, netdev = tree(tmp_path, MIXED, "gpu2")
    (root / "dcb" / f"{netdev}.niccli").write_text(
        (CAPTURES / "niccli-qos-ets-show-bcm57608-node-scraper.txt").read_text()
    )
    (root / "dcb" / f"{netdev}.maxrate").write_text((CAPTURES / "dcb-maxrate-show-manpage.txt").read_text())
    (root / "dcb" / f"{netdev}.dcbx").write_text((CAPTURES / "dcb-dcbx-show-manpage.txt").read_text())
    note = str(audit(root, "gpu2", MIXED)["HOST-PFC"]["note"])
    assert f"dcb/{netdev}.niccli" in note and "DCBX host ieee" in note and "6:100Gbit" in note
