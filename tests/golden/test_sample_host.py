"""The shipped sample host shows the product (issue 25, part 4): ``fabricd export host --root`` on it exports
per-priority PFC series with non-zero values, ``fabricd audit host --root`` runs its trust, PFC, ETS, DSCP-map and
link-speed checks (none skipped) from the DCB bundle and the 400G link, and ``fabricd init --replay-root`` prints a
summary instead of every path. Also the ``dcb apptrust show`` reader on its only capture (the dcb-apptrust(8)
example) and the link-speed check against a wrong speed."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabricd import settings
from fabricd.cli.main import build_app
from fabricd.readers.dcb_apptrust import parse_dcb_apptrust
from fabricd.readers.link_speed import read_speed_mbps
from fabricd.readers.textparse import TextParseError

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "exporters" / "replay" / "gpu1-mlx5"
HOST_TEXT = REPO / "tests" / "golden" / "readers" / "host_text"
LAB = str(settings.lab_inventory())


def _run(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(build_app(), list(args))
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    return res.exit_code, res.stdout


def test_export_host_on_the_sample_shows_per_priority_pfc() -> None:
    code, out = _run("export", "host", "--once", "--root", str(SAMPLE))
    assert code == 0
    series = dict(re.findall(r"^(fabricd_nic_pfc_pause_frames_total\{[^}]*\}) (\S+)$", out, re.M))
    assert series['fabricd_nic_pfc_pause_frames_total{interface="ens1f0np0",priority="3",direction="rx"}'] == "14812"
    assert (
        'fabricd_nic_pfc_pause_duration_seconds_total{interface="ens1f0np0",priority="3",direction="tx"} '
        "0.047848" in out
    )
    # the values are those of the real mlx4 capture the script names
    capture = (REPO / "tests/golden/readers/ethtool/mlx4-grep-prio3-pfc-notes.txt").read_text()
    assert re.search(r"rx_pause_prio_3: 14812\b", capture) and re.search(r"tx_pause_duration_prio_3: 47848\b", capture)


def test_audit_host_on_the_sample_runs_trust_pfc_ets_dscp_and_speed() -> None:
    code, out = _run("audit", "host", LAB, "--host", "gpu1", "--root", str(SAMPLE), "--output", "json")
    assert code == 1  # the sample carries real outputs that are not the lab's intent: findings
    checks = {c["code"]: c for c in json.loads(out)["checks"]}
    status = {k: checks[k]["status"] for k in ("HOST-TRUST", "HOST-PFC", "HOST-ETS", "HOST-DSCP-MAP", "HOST-SPEED")}
    assert status == {
        "HOST-TRUST": "fail",
        "HOST-PFC": "pass",
        "HOST-ETS": "fail",
        "HOST-DSCP-MAP": "fail",
        "HOST-SPEED": "pass",
    }
    [trust] = checks["HOST-TRUST"]["findings"]
    assert (trust["expected"], trust["got"]) == (["dscp"], ["port", "pcp", "ethtype"])
    [dscp] = checks["HOST-DSCP-MAP"]["findings"]
    assert dscp["got"] == {"26": 3}  # AF31:3 of the ConnectX-3 capture; 48:6 is missing


def test_link_speed_check_finds_a_slower_link(tmp_path: Path) -> None:
    root = tmp_path / "h"
    shutil.copytree(SAMPLE, root)
    (root / "sys/class/net/ens1f0np0/speed").write_text("25000\n")
    code, out = _run("audit", "host", LAB, "--host", "gpu1", "--root", str(root), "--output", "json")
    [speed] = [c for c in json.loads(out)["checks"] if c["code"] == "HOST-SPEED"]
    assert code == 1 and speed["status"] == "fail"
    assert speed["findings"][0]["expected"] == "400000 Mb/s (400G)" and speed["findings"][0]["got"] == "25000 Mb/s"
    (root / "sys/class/net/ens1f0np0/speed").write_text("-1\n")  # SPEED_UNKNOWN
    _, out = _run("audit", "host", LAB, "--host", "gpu1", "--root", str(root), "--output", "json")
    [speed] = [c for c in json.loads(out)["checks"] if c["code"] == "HOST-SPEED"]
    assert speed["status"] == "skip" and "gives no speed" in speed["note"]


def test_read_speed_mbps(tmp_path: Path) -> None:
    assert read_speed_mbps(SAMPLE, "ens1f0np0") == 400_000
    assert read_speed_mbps(SAMPLE, "nosuch") is None


def test_apptrust_reader_on_the_man_page_capture() -> None:
    text = (HOST_TEXT / "dcb-apptrust-show-manpage.txt").read_text()
    assert parse_dcb_apptrust(text).order == ("port", "pcp", "ethtype")
    assert parse_dcb_apptrust("order: dscp \n\n").order == ("dscp",)  # as dcb_apptrust.c prints: trailing space
    assert parse_dcb_apptrust("order: \n").order == ()
    with pytest.raises(TextParseError) as err:
        parse_dcb_apptrust("order: dscp vlan\n", "x.apptrust")
    assert "x.apptrust:1" in err.value.render() and "'vlan'" in err.value.render()
    with pytest.raises(TextParseError):
        parse_dcb_apptrust("")


def test_init_replay_root_prints_a_summary(tmp_path: Path) -> None:
    code, out = _run("init", "--replay-root", str(tmp_path / "try"))
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 6, out  # the 5 inventory files, then one line for the replay root
    files = [p for p in (tmp_path / "try" / "replay").rglob("*") if p.is_file()]
    folders = {p.parent for p in files}
    assert lines[-1] == (
        f"{tmp_path / 'try' / 'replay'}/: {len(files)} files in {len(folders)} folders "
        "(gpu1-mlx5: README.md, dcb/, ethtool/, sys/)"
    )
