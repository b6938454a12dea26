"""`fabricd audit host --root DIR` reads DCB from a bundle of real `dcb ... show` outputs (DIR/dcb/<if>.pfc|ets|app,
fabricd.hosts.dcb_bundle) instead of skipping it: PFC, ETS and the DSCP map are judged against the intent, a bad
file is a finding with the reader's located error, and apptrust (no reader) is skipped with the reason."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from fabricd import settings
from fabricd.cli.main import build_app
from fabricd.intent.host import host_intent
from fabricd.inventory import load_inventory
from fabricd.readers.textparse import split_commands
from fabricd_lab.fake_host import build_fake_host, fake_nics_for

CAPTURES = Path(__file__).resolve().parents[1] / "golden" / "readers" / "host_text"
runner = CliRunner()


def tree(tmp_path: Path) -> tuple[Path, str]:
    intent = host_intent(load_inventory(settings.default_inventory()).fabric, "gpu1")
    root = build_fake_host(tmp_path / "h", fake_nics_for(intent))
    (root / "dcb").mkdir()
    return root, intent.nics[0].netdev


def audit(root: Path) -> dict[str, dict[str, object]]:
    res = runner.invoke(
        build_app(), ["audit", "host", "--host", "gpu1", "--root", str(root), "--skip", "netlink", "--output", "json"]
    )
    assert res.exception is None or getattr(res.exception, "code", None) in (0, 1), res.output
    return {c["code"]: c for c in json.loads(res.stdout)["checks"]}


def test_bundle_from_a_connectx3_host(tmp_path: Path) -> None:
    root, netdev = tree(tmp_path)
    parts = dict(split_commands((CAPTURES / "dcb-pfc-app-show-mlx4-cx3-readme.txt").read_text()))
    (root / "dcb" / f"{netdev}.pfc").write_text(parts["dcb pfc show dev ens6"])  # prio-pfc 3:on: as intended
    (root / "dcb" / f"{netdev}.app").write_text(parts["dcb app show dev ens6"])  # only AF31:3 of the 64
    (root / "dcb" / f"{netdev}.ets").write_text((CAPTURES / "dcb-ets-show-manpage.txt").read_text())
    checks = audit(root)
    assert checks["HOST-PFC"]["status"] == "pass"
    assert checks["HOST-DSCP-MAP"]["status"] == "fail" and checks["HOST-ETS"]["status"] == "fail"
    [ets] = checks["HOST-ETS"]["findings"]  # type: ignore[misc]
    assert ets["got"]["tc_bw"] == [33, 33, 34, 0, 0, 0, 0, 0]
    assert checks["HOST-TRUST"]["status"] == "skip" and "apptrust" in str(checks["HOST-TRUST"]["note"])


def test_bundle_pfc_on_the_wrong_priorities_and_bad_files(tmp_path: Path) -> None:
    root, netdev = tree(tmp_path)
    (root / "dcb" / f"{netdev}.pfc").write_text(
        (CAPTURES / "dcb-pfc-show-stats-mlxsw-netdev-patch.txt").read_text()
    )  # priorities 1 and 7
    (root / "dcb" / f"{netdev}.app").write_text("dscp-prio 26:3 48:")  # truncated
    checks = audit(root)
    [pfc] = checks["HOST-PFC"]["findings"]  # type: ignore[misc]
    assert (pfc["expected"], pfc["got"]) == (8, 0b10000010)
    [app] = checks["HOST-DSCP-MAP"]["findings"]  # type: ignore[misc]
    assert "cannot read" in app["message"] and f"{netdev}.app:1:" in app["message"]
    [ets] = checks["HOST-ETS"]["findings"]  # type: ignore[misc]
    assert "not in the bundle" in ets["message"]


def test_no_bundle_keeps_dcb_skipped(tmp_path: Path) -> None:
    root, _ = tree(tmp_path)
    (root / "dcb").rmdir()
    checks = audit(root)
    assert {checks[c]["status"] for c in ("HOST-PFC", "HOST-ETS", "HOST-DSCP-MAP", "HOST-TRUST")} == {"skip"}
