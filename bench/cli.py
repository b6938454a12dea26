"""Benchmark: how fast the CLI starts.

Times, as separate processes run in turn (so that a load spike hits all of them alike):

* the measured **anchor**: ``python -c pass``, the interpreter's own start (site-packages included);
* **fabricd --help**, through the installed console script (``fabricd`` beside this interpreter; ``python -m
  fabricd`` when there is none): the target is a median under 0.3 s;
* ``fabricd validate`` of the lab inventory, and, for scale, a process that imports every command module as the
  CLI did before commands loaded on first use.

Prints medians to stderr and one JSON line last:
``{"bench": "cli", "value": median --help seconds, "unit": "s", "anchor": ..., "anchor_value": ..., "ratio": ...}``.

Run from the repo root: ``python bench/cli.py`` (``--runs N``, default 15).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 0.3


def _fabricd() -> list[str]:
    script = Path(sys.executable).with_name("fabricd")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "fabricd"]


def _time(argv: list[str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO, check=False)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-500:]}")
    return elapsed


def _module_count(args: list[str]) -> int:
    probe = (
        "import sys; sys.argv = ['fabricd', *sys.argv[1:]]\nfrom fabricd.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\nsys.stderr.write(f'\\nMODULES {len(sys.modules)}\\n')"
    )
    proc = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=REPO, check=False)
    return int(proc.stderr.rsplit("MODULES ", 1)[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--runs", type=int, default=15, help="runs of each command (medians are reported)")
    args = ap.parse_args(argv)
    fabricd = _fabricd()
    cases = {
        "anchor": [sys.executable, "-c", "pass"],
        "help": [*fabricd, "--help"],
        "validate": [*fabricd, "validate", str(REPO / "inventory" / "lab")],
        "eager": [
            sys.executable,
            "-c",
            "from fabricd.cli.main import COMMANDS, load_command\nfor name in COMMANDS:\n    load_command(name)",
        ],
    }
    for argv_ in cases.values():  # warm the page cache and the .pyc files
        _time(argv_)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, argv_ in cases.items():
            times[name].append(_time(argv_))
    med = {name: statistics.median(values) for name, values in times.items()}
    modules = {"help": _module_count(["--help"]), "validate": _module_count(["validate"])}
    load = os.getloadavg()
    print(f"{args.runs} runs each, load average {load[0]:.2f} {load[1]:.2f}", file=sys.stderr)
    print(f"anchor python -c pass:          {med['anchor'] * 1000:7.1f} ms", file=sys.stderr)
    print(
        f"fabricd --help:                 {med['help'] * 1000:7.1f} ms ({modules['help']} modules; "
        f"target < {TARGET_S * 1000:.0f} ms)",
        file=sys.stderr,
    )
    print(
        f"fabricd validate (lab):         {med['validate'] * 1000:7.1f} ms ({modules['validate']} modules)",
        file=sys.stderr,
    )
    print(
        f"every command module imported:  {med['eager'] * 1000:7.1f} ms (what each start cost before)", file=sys.stderr
    )
    print(
        json.dumps(
            {
                "bench": "cli",
                "value": round(med["help"], 4),
                "unit": "s",
                "anchor": "python -c pass (interpreter start), same run",
                "anchor_value": round(med["anchor"], 4),
                "ratio": round(med["help"] / med["anchor"], 2),
                "target_s": TARGET_S,
                "runs": args.runs,
                "validate_s": round(med["validate"], 4),
                "all_commands_imported_s": round(med["eager"], 4),
                "help_modules": modules["help"],
                "validate_modules": modules["validate"],
                "loadavg_1m": round(load[0], 2),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
