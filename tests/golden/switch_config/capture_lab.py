"""Regenerate the ``<platform>/lab-pushed.txt`` captures: the running config each of fabricd's switch simulators
(lab/fabricd_lab) shows after ``fabricd push`` of inventory/lab, read back over SSH with the platform driver.

No public capture exists of a SONiC CONFIG_DB or an NVUE ``nv config show -o commands`` with a lossless port; these
are what the lab speaks, and the config parsers (fabricd/readers/switch/config_*.py) must read exactly that.
Run from the repo root: ``python tests/golden/switch_config/capture_lab.py``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[1] / "integration"))

from switchlab import LEAVES, switch_lab  # noqa: E402

from fabricd.deploy.pipeline import push  # noqa: E402

COMMAND = {
    "sonic": "show runningconfiguration all",
    "arista_eos": "show running-config",
    "cisco_nxos": "show running-config",
    "cumulus_nvue": "nv config show -o commands",
}
VOLATILE = ("!Time:", "!Running configuration last done at:")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, switch_lab(Path(tmp)) as lab:
        report = push(lab.targets(), lab.candidates, lab.options, factory=lab.factory())
        assert not report.failed, report
        for name in LEAVES:
            platform = lab.switches[name].platform.value
            drv = lab.driver(name)
            drv.open()
            try:
                text = drv.get_config()
            finally:
                drv.close()
            body = "\n".join(ln for ln in text.splitlines() if not ln.startswith(VOLATILE))
            out = HERE / platform / "lab-pushed.txt"
            out.parent.mkdir(exist_ok=True)
            out.write_text(
                f"# source: fabricd lab simulator lab/fabricd_lab (this repository), "
                f"`{COMMAND[platform]}` on "
                f"{name} after `fabricd push` of inventory/lab (no public capture of this format)\n"
                f"{body}\n"
            )
            print(out)


if __name__ == "__main__":
    main()
