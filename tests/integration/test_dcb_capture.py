"""Re-capture iproute2 `dcb` requests with strace (tests/golden/dcb/capture/capture.sh, in a fresh netns) and check
that the stored goldens and fabricd's encoder still match them byte for byte (sequence numbers aside)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from fabricd.hosts.dcbnl import IeeeState, encode_request

_spec = importlib.util.spec_from_file_location("_dcb_cases", Path(__file__).parents[1] / "unit" / "test_dcbnl.py")
assert _spec is not None and _spec.loader is not None
_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cases)
CASES, DEV, GOLDEN, golden, seq_of = _cases.CASES, _cases.DEV, _cases.GOLDEN, _cases.golden, _cases.seq_of

pytestmark = [pytest.mark.integration, pytest.mark.netns]


def _body(data: bytes) -> bytes:
    return data[:8] + data[12:]  # drop nlmsg_seq (time of day)


def test_recapture_matches_goldens_and_encoder(tmp_path: Path) -> None:
    missing = [t for t in ("dcb", "strace", "gcc", "ip") if shutil.which(t) is None]
    if os.geteuid() != 0 or missing:
        pytest.skip(f"needs root and {', '.join(missing) or 'netns'} (scripts/sysdeps.sh installs them)")
    subprocess.run(
        [str(GOLDEN / "capture" / "capture.sh"), str(tmp_path)], check=True, capture_output=True, timeout=120
    )
    for name, (msg_type, cmd, body) in CASES.items():
        text = (tmp_path / f"{name}.txt").read_text()
        fresh = bytes(int(h, 16) for line in text.splitlines() if line.startswith(" | ") for h in line[10:58].split())
        stored, _ = golden(name)
        assert _body(fresh) == _body(stored), name
        assert encode_request(msg_type, cmd, DEV, IeeeState(**body), seq=seq_of(fresh)) == fresh, name
