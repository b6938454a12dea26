"""The switch password never reaches logs, session logs, errors or results, even at DEBUG and on failures."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from switchlab import LEAVES, switch_lab

from fabricd.deploy.pipeline import drift, push
from fabricd.platforms.base import DriverOptions
from fabricd.platforms.secrets import MASK, Secret
from fabricd_lab.faults import parse_fault

pytestmark = pytest.mark.integration


def test_password_absent_from_debug_logs_session_logs_and_results(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    logs = tmp_path / "session-logs"
    faults = [parse_fault("leaf3-nxos:reject-line=random-detect")]
    with switch_lab(tmp_path, LEAVES, faults) as lab:
        opts = DriverOptions(read_timeout_s=20.0, session_log_dir=logs)
        report = push(lab.targets(), lab.candidates, lab.options, factory=lab.factory(opts))
        drift(lab.targets(), lab.candidates, lab.options, factory=lab.factory(opts))
        secret = lab.password
    assert sum(r.changed for r in report.results) == 3 and report.failed[0].target == "leaf3-nxos"
    files = sorted(logs.glob("*.log"))
    assert [f.name for f in files] == [f"{n}.log" for n in sorted(LEAVES)]
    session_text = "".join(f.read_text(errors="replace") for f in files)
    assert "show running-config" in session_text and "nv config show -o commands" in session_text
    assert secret not in session_text
    assert len(caplog.records) > 100, "DEBUG logging of netmiko and paramiko was captured"
    assert secret not in caplog.text
    assert secret not in report.model_dump_json()


def test_secret_object_hides_itself() -> None:
    s = Secret("hunter2-lab")
    assert str(s) == MASK and "hunter2" not in repr(s) and f"{s}" == MASK
    assert s.reveal() == "hunter2-lab"
