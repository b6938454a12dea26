"""Counter snapshots of a remote endpoint, as a replay root the readers understand (docs/contracts.md "Replay root").

A small stdlib-only Python program runs on the endpoint (through a :class:`~fabricd.traffic.remote.Runner`), reads
the RDMA device's sysfs (``ports/<n>/{state,phys_state,rate,link_layer,counters,hw_counters,gids,gid_attrs}``), the
netdevs' ``statistics/`` and the text of ``ethtool -S`` / ``ethtool -i``, and prints them as one JSON object.
:func:`materialise` writes them under a local directory with the replay layout (``sys/class/infiniband/...``,
``sys/class/net/<if>/statistics/...``, ``ethtool/<if>.stats|.info``), so :mod:`fabricd.readers` reads a remote
host's counters exactly as it reads a live or captured one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from fabricd.readers.common import Problems, read_counter

from .oob import TrafficError
from .remote import Runner

NETDEV_STATS = (
    "rx_bytes",
    "tx_bytes",
    "rx_packets",
    "tx_packets",
    "rx_dropped",
    "tx_dropped",
    "rx_errors",
    "tx_errors",
)
"""``/sys/class/net/<if>/statistics/`` files snapshotted (Linux ABI: sysfs-class-net-statistics)."""

SNAPSHOT_PROGRAM = r"""
import json, os, subprocess, sys
devices, netdevs = sys.argv[1].split(",") if sys.argv[1] else [], sys.argv[2].split(",") if sys.argv[2] else []
out = {}
ZERO = "0000:0000:0000:0000:0000:0000:0000:0000"
def rd(p):
    try:
        with open(p) as f:
            return f.read()
    except OSError:
        return None
def put(rel, text):
    if text is not None:
        out[rel] = text
for dev in devices:
    base = "sys/class/infiniband/" + dev
    for name in ("node_type", "node_guid", "fw_ver", "hca_type", "board_id"):
        put(base + "/" + name, rd("/" + base + "/" + name))
    try:
        ports = [p for p in os.listdir("/" + base + "/ports") if p.isdigit()]
    except OSError:
        ports = []
    for p in ports:
        pb = base + "/ports/" + p
        for name in ("state", "phys_state", "rate", "link_layer"):
            put(pb + "/" + name, rd("/" + pb + "/" + name))
        for sub in ("counters", "counters_ext", "hw_counters"):
            try:
                names = os.listdir("/" + pb + "/" + sub)
            except OSError:
                continue
            for n in names:
                put(pb + "/" + sub + "/" + n, rd("/" + pb + "/" + sub + "/" + n))
        try:
            gids = os.listdir("/" + pb + "/gids")
        except OSError:
            gids = []
        for g in gids:
            text = rd("/" + pb + "/gids/" + g)
            if text is None or text.strip() == ZERO:
                continue
            put(pb + "/gids/" + g, text)
            put(pb + "/gid_attrs/types/" + g, rd("/" + pb + "/gid_attrs/types/" + g))
            put(pb + "/gid_attrs/ndevs/" + g, rd("/" + pb + "/gid_attrs/ndevs/" + g))
    try:
        for n in os.listdir("/" + base + "/device/net"):
            out[base + "/device/net/" + n] = ""
    except OSError:
        pass
for nd in netdevs:
    nb = "sys/class/net/" + nd
    for name in ("mtu", "operstate", "address"):
        put(nb + "/" + name, rd("/" + nb + "/" + name))
    for name in STATS:
        put(nb + "/statistics/" + name, rd("/" + nb + "/statistics/" + name))
    for flag, suffix in (("-S", ".stats"), ("-i", ".info")):
        try:
            r = subprocess.run(["ethtool", flag, nd], capture_output=True, text=True, timeout=20)
            if r.returncode == 0:
                out["ethtool/" + nd + suffix] = r.stdout
        except (OSError, subprocess.SubprocessError):
            pass
json.dump(out, sys.stdout)
"""


def program() -> str:
    """The snapshot program with the statistics list filled in."""
    return f"STATS = {NETDEV_STATS!r}\n" + SNAPSHOT_PROGRAM


def take(runner: Runner, devices: Sequence[str], netdevs: Sequence[str], *, timeout_s: float = 120) -> dict[str, str]:
    """Run the snapshot program on the endpoint; ``{relative path: file text}``."""
    r = runner.run(
        ["python3", "-", ",".join(devices), ",".join(netdevs)], stdin=program().encode(), timeout_s=timeout_s
    )
    data = r.json_stdout(f"{runner.name}: counter snapshot")
    if not isinstance(data, dict):
        raise TrafficError(f"{runner.name}: counter snapshot is not an object")
    return {str(k): str(v) for k, v in data.items()}


def materialise(files: dict[str, str], root: Path) -> Path:
    """Write a snapshot under ``root`` (refusing paths that would leave it); returns ``root``."""
    base = root.resolve()
    for rel, text in files.items():
        target = (base / rel).resolve()
        if base not in target.parents:
            raise TrafficError(f"snapshot path {rel!r} leaves the replay root")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


@dataclass(frozen=True)
class NetdevStats:
    """Kernel netdev counters of one interface (bytes and packets; None when absent)."""

    interface: str
    values: dict[str, int | None]

    def get(self, name: str) -> int | None:
        return self.values.get(name)


def read_netdev_stats(root: str | os.PathLike[str], interface: str) -> NetdevStats:
    """``<root>/sys/class/net/<if>/statistics/*`` through the readers' counter parser."""
    base = os.path.join(os.fspath(root), "sys", "class", "net", interface, "statistics")
    problems = Problems()
    return NetdevStats(
        interface, {n: read_counter(os.path.join(base, n), problems, optional=True) for n in NETDEV_STATS}
    )
