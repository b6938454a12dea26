#!/usr/bin/env python3
"""Write the replay root that ships with fabricd (exporters/replay/gpu1-mlx5): host gpu1 of the embedded lab
fabric as fabricd-lab's fake host builds it from real captures (fabricd_lab.fake_host; sources in
tests/golden/host/SOURCES.md and the ethtool capture's header). ``fabricd export host --root`` and ``fabricd audit
host --root`` read it without a NIC. tests/golden/test_replay_example.py checks that the shipped tree is what this
script writes.

Usage (from the repo root): .venv/bin/python scripts/gen_replay_example.py [DIR]
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from fabricd_lab.fake_host import build_fake_host, fake_nics_for, write_ethtool

from fabricd.intent.host import host_intent
from fabricd.inventory import load_inventory

REPO = Path(__file__).resolve().parents[1]
HOST = "gpu1"
README = """# A replay root: host gpu1 of the embedded lab fabric, from real captures

A `--root` tree as docs/contracts.md describes it (sysfs, configfs, `ethtool/<if>.stats|.info`) for a host with one
ConnectX (mlx5) port, written by `scripts/gen_replay_example.py` with fabricd-lab's fake host from real captures:
prometheus/procfs' `sys/class/net/eth0/ecn` and `sys/class/infiniband/mlx5_0` fixtures and an mlx5 `ethtool -S`
capture (sources: tests/golden/host/SOURCES.md in the fabricd repository, and the header of the ethtool file).
The GID table and configfs files have no capture; they follow the kernel ABI. Counters do not move.

    fabricd init --replay-root ./try && fabricd export host --once --root ./try/replay/gpu1-mlx5
"""


def write(dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    nics = fake_nics_for(host_intent(load_inventory(REPO / "inventory" / "lab").fabric, HOST))
    build_fake_host(dest, nics)
    write_ethtool(dest, nics)
    (dest / "README.md").write_text(README)


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "exporters" / "replay" / f"{HOST}-mlx5"
    write(out)
    print(f"wrote {out}")
