#!/usr/bin/env bash
# Build both wheels (fabricd and fabricd-lab), install them in a fresh venv, and run fabricd from outside the source
# tree as a wheel user would: the product wheel alone first (no lab code, no asyncssh or matplotlib; validate,
# render, init --replay-root, export host --once on the shipped replay root; the lab's commands say which
# distribution brings them), then with fabricd-lab (demo --no-vm). `make test` runs it; `make wheel-smoke` alone.
# Usage: scripts/wheel_smoke.sh [PYTHON]. Needs the package registry for the wheels' dependencies.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
py=${1:-python3}
work=$(mktemp -d /tmp/fabricd-wheel-smoke.XXXXXX)
keep=${FABRICD_SMOKE_KEEP:-0}
cleanup() { [ "$keep" = 1 ] && echo "wheel-smoke: kept $work" || rm -rf "$work"; }
trap cleanup EXIT
say() { echo "wheel-smoke: $*"; }
t0=$(date +%s)

say "building the wheels of fabricd and fabricd-lab"
"$py" -m venv "$work/build-venv"
"$work/build-venv/bin/python" -m pip install -q --upgrade pip
"$work/build-venv/bin/python" -m pip wheel -q --no-deps "$repo" "$repo/lab" -w "$work/wheels"
product=$(ls "$work"/wheels/fabricd-[0-9]*.whl)
lab=$(ls "$work"/wheels/fabricd_lab-*.whl)

say "checking the product wheel: no lab code, no asyncssh or matplotlib, py.typed"
"$py" - "$product" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = z.namelist()
meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
base = [l.split(":", 1)[1].strip() for l in meta.splitlines() if l.startswith("Requires-Dist:") and "extra ==" not in l]
bad = [r for r in base if r.split(">")[0].split("=")[0].split("<")[0].strip().lower() in ("asyncssh", "matplotlib")]
lab = [n for n in names if n.startswith(("fabricd_lab/", "fabricd/lab/", "fabricd/report/"))
       or "/demo" in n and n.endswith(".py")]
problems = []
if bad:
    problems.append(f"base dependencies include {bad}")
if lab:
    problems.append(f"lab code in the product wheel: {lab[:5]}")
if "fabricd/py.typed" not in names:
    problems.append("fabricd/py.typed is missing")
if problems:
    sys.exit("wheel-smoke: " + "; ".join(problems))
print(f"wheel-smoke: {len(names)} files; base dependencies: {', '.join(sorted(base))}")
PY

say "installing the product wheel alone in a fresh venv"
"$py" -m venv "$work/venv"
v="$work/venv/bin"
"$v/python" -m pip install -q --upgrade pip
"$v/python" -m pip install -q "$product"
if "$v/python" -c 'import asyncssh' 2>/dev/null || "$v/python" -c 'import matplotlib' 2>/dev/null; then
  say "asyncssh or matplotlib came with the product wheel's dependencies"; exit 1
fi
cd "$work"   # outside the source tree from here on
export FABRICD_STATE_DIR="$work/state" HOME="$work/home"
mkdir -p "$HOME"
unset FABRICD_INVENTORY PYTHONPATH || true
"$v/fabricd" --version
"$v/fabricd" validate
"$v/fabricd" init --replay-root fabric >/dev/null
"$v/fabricd" validate fabric
"$v/fabricd" render fabric --out rendered >/dev/null
test -s rendered/switches/leaf1-sonic.json
"$v/fabricd" export host --once --root fabric/replay/gpu1-mlx5 > host.prom
for c in nic rdma nic_config; do
  grep -q "fabricd_scrape_collector_success{collector=\"$c\"} 1" host.prom || { say "collector $c failed"; exit 1; }
done
say "export host --once: $(grep -vc '^#' host.prom) series from the shipped replay root"
set +e
out=$("$v/fabricd" demo --no-vm 2>&1); rc=$?
set -e
flat=$(tr -d '\n│' <<<"$out" | tr -s ' ')   # the message is wrapped in a box
if [ "$rc" != 2 ] || ! grep -q "install fabricd-lab beside fabricd" <<<"$flat" || ! grep -q 'pip install ./lab' <<<"$flat"; then
  say "without fabricd-lab, 'fabricd demo' should name the distribution to install (exit 2); got $rc: $out"; exit 1
fi

say "adding fabricd-lab; fabricd demo --no-vm"
"$v/python" -m pip install -q "$lab"
"$v/fabricd" demo --no-vm
say "ok in $(( $(date +%s) - t0 )) s"
