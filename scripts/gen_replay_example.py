#!/usr/bin/env python3
"""Write the replay root that ships with fabricd (exporters/replay/gpu1-mlx5): host gpu1 of the embedded lab
fabric as fabricd-lab's fake host builds it from real captures (fabricd_lab.fake_host; sources in
tests/golden/host/SOURCES.md and the ethtool capture's header), plus what makes it show the product:

- per-priority PFC pause counters on priority 3, appended to ``ethtool/<if>.stats`` under mlx5's names (Linux
  drivers/net/ethernet/mellanox/mlx5/core/en_stats.c ``pport_per_prio_pfc_stats_desc``: ``rx_prio3_pause``,
  ``rx_prio3_pause_duration``, ``tx_prio3_pause``, ``tx_prio3_pause_duration``, ``rx_prio3_pause_transition``, in
  that order, after the per-priority traffic counters), with the values of a real ConnectX-3 (mlx4_en) host with
  PFC on priority 3 (tests/golden/readers/ethtool/mlx4-grep-prio3-pfc-notes.txt). No real mlx5 ``ethtool -S``
  with non-zero per-priority pause was found (every hit was an invented example), so the values are mlx4's;
- a DCB bundle (``dcb/<if>.pfc|ets|app|apptrust``, fabricd.hosts.dcb_bundle) from real ``dcb`` outputs: PFC and the
  APP table of the same kind of ConnectX-3 host (tests/golden/readers/host_text/dcb-pfc-app-show-mlx4-cx3-readme.txt:
  PFC on 3, as the lab intends; only AF31(26):3 mapped, so 48:6 is missing), ETS and apptrust from iproute2's man
  pages (dcb-ets-show-manpage.txt, dcb-apptrust-show-manpage.txt): not the lab's intent, so ``audit host`` shows
  what drift looks like;
- a 400G link: ``sys/class/net/<if>/speed`` 400000 (Mb/s, kernel ABI) and the RDMA port's ``rate``
  ``400 Gb/sec (4X NDR)`` in the format of the captured rate files (``100 Gb/sec (4X EDR)``); no capture of a 400G
  port's sysfs was used (the procfs netdev capture is a 1000 Mb/s port).

``fabricd export host --root`` and ``fabricd audit host --root`` read it without a NIC.
tests/golden/test_replay_example.py checks that the shipped tree is what this script writes.

Usage (from the repo root): .venv/bin/python scripts/gen_replay_example.py [DIR]
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from fabricd.intent.host import host_intent
from fabricd.inventory import load_inventory
from fabricd.readers.textparse import split_commands
from fabricd_lab.fake_host import build_fake_host, fake_nics_for, write_ethtool

REPO = Path(__file__).resolve().parents[1]
HOST = "gpu1"
ETHTOOL = REPO / "tests" / "golden" / "readers" / "ethtool"
HOST_TEXT = REPO / "tests" / "golden" / "readers" / "host_text"
PAUSE_CAPTURE = "mlx4-grep-prio3-pfc-notes.txt"
MLX4_TO_MLX5 = (
    ("rx_pause_prio_3", "rx_prio3_pause"),
    ("rx_pause_duration_prio_3", "rx_prio3_pause_duration"),
    ("tx_pause_prio_3", "tx_prio3_pause"),
    ("tx_pause_duration_prio_3", "tx_prio3_pause_duration"),
    ("rx_pause_transition_prio_3", "rx_prio3_pause_transition"),
)
"""mlx4_en's per-priority pause names (the capture) -> mlx5's, in the order mlx5 prints them."""
SPEED_MBPS = 400_000
RATE = "400 Gb/sec (4X NDR)"
README = """# A replay root: host gpu1 of the embedded lab fabric, from real captures

A `--root` tree as docs/contracts.md describes it (sysfs, configfs, `ethtool/<if>.stats|.info`, and a DCB bundle
in `dcb/`) for a host with one ConnectX (mlx5) port at 400G, written by `scripts/gen_replay_example.py` with
fabricd-lab's fake host from real captures (sources: tests/golden/host/SOURCES.md in the fabricd repository, the
header of each capture, and the script's docstring):

- sysfs: prometheus/procfs' `sys/class/net/eth0/ecn` and `sys/class/infiniband/mlx5_0` fixtures; the link speed
  (400000 Mb/s) and the RDMA port rate (400 Gb/sec (4X NDR)) are set for a 400G port (no 400G capture);
- `ethtool/<if>.stats`: an mlx5 `ethtool -S | grep prio` capture (bytedance/byteps #179), then PFC pause counters
  on priority 3 under mlx5's names with the values of a real ConnectX-3 (mlx4) host with PFC on priority 3 (no
  real mlx5 capture with non-zero per-priority pause was found);
- `dcb/<if>.pfc|app`: `dcb pfc show` and `dcb app show` of a ConnectX-3 host (PFC on 3; only DSCP 26 mapped);
  `dcb/<if>.ets|apptrust`: iproute2's man-page examples. `fabricd audit host` checks them against the intent:
  PFC passes, trust, ETS and the DSCP map show findings.

The GID table and configfs files have no capture; they follow the kernel ABI. Counters do not move.

    fabricd init --replay-root ./try && cd try
    fabricd export host --once --root replay/gpu1-mlx5 | grep pfc_pause
    fabricd audit host --host gpu1 --root replay/gpu1-mlx5
"""


def _pause_lines() -> str:
    values = {}
    for line in (ETHTOOL / PAUSE_CAPTURE).read_text().splitlines():
        key, sep, value = line.strip().partition(":")
        if sep and not key.startswith("#"):
            values[key] = value.strip()
    head = (
        f"# appended by scripts/gen_replay_example.py: PFC pause on priority 3 under mlx5's names (en_stats.c), "
        f"values of a real ConnectX-3 host ({PAUSE_CAPTURE}); no mlx5 capture with non-zero pause was found\n"
    )
    return head + "".join(f"     {mlx5}: {values[mlx4]}\n" for mlx4, mlx5 in MLX4_TO_MLX5)


def _dcb_bundle(dest: Path, netdev: str) -> None:
    parts = dict(split_commands((HOST_TEXT / "dcb-pfc-app-show-mlx4-cx3-readme.txt").read_text()))
    files = {
        "pfc": parts["dcb pfc show dev ens6"].strip() + "\n",
        "app": parts["dcb app show dev ens6"].strip() + "\n",
        "ets": (HOST_TEXT / "dcb-ets-show-manpage.txt").read_text(),
        "apptrust": (HOST_TEXT / "dcb-apptrust-show-manpage.txt").read_text(),
    }
    (dest / "dcb").mkdir(parents=True, exist_ok=True)
    for kind, text in files.items():
        (dest / "dcb" / f"{netdev}.{kind}").write_text(text)


def write(dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    nics = fake_nics_for(host_intent(load_inventory(REPO / "inventory" / "lab").fabric, HOST))
    build_fake_host(dest, nics)
    write_ethtool(dest, nics)
    for nic in nics:
        stats = dest / "ethtool" / f"{nic.netdev}.stats"
        stats.write_text(stats.read_text() + _pause_lines())
        (dest / "sys" / "class" / "net" / nic.netdev / "speed").write_text(f"{SPEED_MBPS}\n")
        rate = dest / "sys" / "class" / "infiniband" / nic.rdma_device / "ports" / str(nic.rdma_port) / "rate"
        rate.write_text(f"{RATE}\n")
        _dcb_bundle(dest, nic.netdev)
    (dest / "README.md").write_text(README)


if __name__ == "__main__":
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "exporters" / "replay" / f"{HOST}-mlx5"
    write(out)
    print(f"wrote {out}")
