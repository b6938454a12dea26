"""Benchmark: render the generated 1,000-switch / 16,000-host Clos fabric (bench/validate.py's generator).

Times, best of ``--repeat`` in this process, with the inventory already loaded:

* **fabricd**: ``render_devices`` for every device, in memory: switch intents (maps, queues, ECN units,
  headroom, watchdog timers, VLANs, warnings), the templates, SONiC ``config_db`` JSON + CLI lines, host intents,
  host scripts and host plan JSON. 17,000 devices -> 17,000 configs (a SONiC switch is one config of two files,
  a host one config of script + plan).
* the measured **anchor**, named for what it is: **a lower bound of fabricd's own pipeline**, not another tool.
  The same outputs from fabricd's own precomputed contexts only: a bare jinja2 render of the same template set with
  the intents already built, ``json.dumps`` of the same CONFIG_DB dicts and of the same host plan dicts. It is what
  fabricd's rendering would cost if deciding were free, so the ratio is below 1 by construction and says how much
  of the time deciding takes. No other tool renders these configs from one inventory (pyavd renders EOS only, from
  its own structured config), so there is no outside anchor to measure against.

Also printed (stderr and extra JSON keys): the same fabric with its leaves spread over the four NOSes, and a run
that also writes every file to a temporary directory. ``--profile`` prints the top costs (cProfile).

Last line: ``{"bench": "render", "value": configs/s, "unit": "configs/s", "anchor": ..., "anchor_value": ...,
"ratio": ...}``. Target: >= 2,000 configs/s on a 2-core machine. Run from the repo root: ``python bench/render.py``.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import pstats
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from validate import generate_clos  # bench/validate.py: the foundation benchmark's generator

from fabricd.intent.host import desired_plan, host_intents
from fabricd.inventory import load_inventory
from fabricd.model import Fabric, Platform
from fabricd.nos.registry import SwitchIntentBuilder
from fabricd.nos.sonic.intent import SonicSwitchIntent
from fabricd.render.env import environment
from fabricd.render.host_script import host_script
from fabricd.render.render import render_devices, write_render

TARGET = 2000


def _best_of(n: int, fn: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(n):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _mixed(fabric: Fabric) -> Fabric:
    """The same fabric with its leaves (not spines/superspines) spread round-robin over the four NOSes."""
    platforms = list(Platform.BUILTIN)
    switches = [
        s.model_copy(update={"platform": platforms[i % 4]}) if s.role.value == "leaf" else s
        for i, s in enumerate(fabric.switches)
    ]
    return Fabric.model_validate({**fabric.model_dump(), "switches": [s.model_dump() for s in switches]})


def _fabricd(fabric: Fabric) -> int:
    count = 0
    for _ in render_devices(fabric):
        count += 1
    return count


def _anchor_inputs(fabric: Fabric) -> tuple[list[Any], list[Any], list[dict[str, Any]], list[dict[str, Any]]]:
    builder = SwitchIntentBuilder(fabric)
    switches = [builder.build(s) for s in fabric.switches]
    hosts = host_intents(fabric)
    scripts = [host_script(h) for h in hosts]
    dbs = [s.config_db.model_dump(exclude_none=True) for s in switches if isinstance(s, SonicSwitchIntent)]
    plans = [desired_plan(h).model_dump(mode="json") for h in hosts]
    return switches, scripts, dbs, plans


def _anchor(inputs: tuple[list[Any], list[Any], list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    env = environment()
    switches, scripts, dbs, plans = inputs
    for sw in switches:
        env.get_template(f"{sw.platform.value}/main.j2").render(sw=sw)
    for db in dbs:
        json.dumps(db, indent=4, sort_keys=True)
    host = env.get_template("linux_host/main.j2")
    for script in scripts:
        host.render(host=script)
    for plan in plans:
        json.dumps(plan, indent=2)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--pods", type=int, default=40)
    ap.add_argument("--leaves", type=int, default=20)
    ap.add_argument("--spines", type=int, default=4)
    ap.add_argument("--superspines", type=int, default=40)
    ap.add_argument("--hosts-per-leaf", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="print the top costs of one fabricd run (cProfile)")
    args = ap.parse_args(argv)

    tmp = Path(tempfile.mkdtemp(prefix="fabricd-bench-render-"))
    try:
        devices = generate_clos(
            tmp / "inv",
            pods=args.pods,
            leaves=args.leaves,
            spines=args.spines,
            superspines=args.superspines,
            hosts_per_leaf=args.hosts_per_leaf,
        )
        fabric = load_inventory(tmp / "inv").fabric
        print(
            f"fabric: {len(fabric.switches)} switches, {len(fabric.hosts)} hosts ({devices} devices)", file=sys.stderr
        )

        fabricd_s = _best_of(args.repeat, lambda: _fabricd(fabric))
        inputs = _anchor_inputs(fabric)
        anchor_s = _best_of(args.repeat, lambda: _anchor(inputs))

        mixed = _mixed(fabric)
        mixed_s = _best_of(1, lambda: _fabricd(mixed))

        out = tmp / "out"

        def _write() -> None:
            for r in render_devices(fabric):
                write_render(r, out)

        write_s = _best_of(1, _write)
        files = sum(1 for _ in out.rglob("*") if _.is_file())

        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            _fabricd(mixed)
            prof.disable()
            pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(15)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    value = devices / fabricd_s
    anchor_value = devices / anchor_s
    mixed_value = devices / mixed_s
    write_value = devices / write_s
    print(
        f"fabricd render_devices (generated fabric, all SONiC): {fabricd_s:.3f} s, {value:.0f} configs/s",
        file=sys.stderr,
    )
    print(
        f"anchor, lower bound of fabricd's own pipeline (its templates + json.dumps of its precomputed contexts): "
        f"{anchor_s:.3f} s, {anchor_value:.0f} configs/s",
        file=sys.stderr,
    )
    print(f"same fabric, leaves over 4 NOSes: {mixed_s:.3f} s, {mixed_value:.0f} configs/s", file=sys.stderr)
    print(f"render + write {files} files: {write_s:.3f} s, {write_value:.0f} configs/s", file=sys.stderr)
    print(
        json.dumps(
            {
                "bench": "render",
                "value": round(value),
                "unit": "configs/s",
                "anchor": "lower bound of fabricd's own pipeline: its templates rendered from its precomputed "
                "intents + "
                f"json.dumps of the same CONFIG_DB and host plan dicts (target {TARGET} configs/s)",
                "anchor_kind": "lower bound of fabricd's own pipeline (not another tool; ratio < 1 by construction)",
                "anchor_value": round(anchor_value),
                "ratio": round(value / anchor_value, 3),
                "devices": devices,
                "seconds": round(fabricd_s, 3),
                "mixed_nos_configs_per_s": round(mixed_value),
                "with_write_configs_per_s": round(write_value),
                "files_written": files,
                "target_configs_per_s": TARGET,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
