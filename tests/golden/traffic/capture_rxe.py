"""Capture real Soft-RoCE (rxe) counter snapshots from the running lab VMs, for tests/golden/traffic/.

Usage (as root, after ``fabricd lab vm up inventory/examples/softroce.yml [--wire udp]``)::

    .venv/bin/python tests/golden/traffic/capture_rxe.py CASE [--depth N]

It snapshots both endpoints (the same program ``validate-fabric`` runs: sysfs RDMA counters, GID table, netdev
statistics, ``ethtool -S/-i``), runs RC WRITEs of 64 KiB from rxe-a to rxe-b with ToS 106, snapshots again and
writes ``CASE/<host>-before`` and ``CASE/<host>-after`` replay roots, ``CASE/session.json`` (the client's result),
``CASE/capture.json`` (the on-wire ToS capture) and ``CASE/SOURCE`` (how it was made). Nothing is edited by hand.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

from fabricd.inventory import load_inventory
from fabricd.traffic import snapshot, sniff
from fabricd.traffic.pair import run_pair
from fabricd.traffic.spec import LAB_ACK_TIMEOUT, Op, TrafficSpec
from fabricd_lab.vm import instance

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent.parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--depth", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=256)
    args = ap.parse_args()
    inst = instance.require_running()
    fabric = load_inventory(REPO / "inventory" / "examples" / "softroce.yml").fabric
    a, b = inst.endpoints
    out = HERE / args.case
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    eps = {ep.host: ep for ep in (a, b)}

    def snap(label: str) -> None:
        for host, ep in eps.items():
            files = snapshot.take(inst.runner(host), [ep.rdma_device], [ep.netdev, ep.ip_netdev])
            snapshot.materialise(files, out / f"{host}-{label}")

    snap("before")
    started = sniff.start(inst.runner(b.host), b.ip_netdev, seconds=120, limit=400)
    spec = TrafficSpec(
        ops=[Op.WRITE],
        sizes=[65536],
        depth=args.depth,
        post_list=1,
        signal_every=1,
        iterations=args.iterations,
        duration_s=None,
        warmup=False,
        tos=fabric.policy.qos.roce.effective_tos,
        ack_timeout=LAB_ACK_TIMEOUT,
    )
    run = run_pair(inst.runner(b.host), inst.runner(a.host), b.address, spec)
    cap = sniff.collect(started, b.ip_netdev, timeout_s=150)
    snap("after")
    if run.client is None:
        print(f"traffic failed: {run.error}", file=sys.stderr)
        return 1
    (out / "session.json").write_text(run.client.model_dump_json(indent=2) + "\n")
    (out / "capture.json").write_text(
        json.dumps(
            {"interface": cap.interface, "packets": cap.packets, "tos": {str(k): v for k, v in cap.tos.items()}},
            indent=2,
        )
        + "\n"
    )
    (out / "SOURCE").write_text(
        f"Captured {time.strftime('%Y-%m-%d')} by tests/golden/traffic/capture_rxe.py {' '.join(sys.argv[1:])}\n"
        f"from the fabricd lab VMs (Debian 12 kernel, rdma_rxe, {inst.accel.upper()}, {inst.wire} wire), "
        f"inventory/examples/softroce.yml: RC WRITE 64 KiB x {args.iterations}, depth {args.depth}, ToS 106, "
        f"client {a.host} -> server {b.host}. Real sysfs/ethtool text; not edited.\n"
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
