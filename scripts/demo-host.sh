#!/bin/bash
# `make demo` host step: apply the host plan of lab host gpu1 into a network namespace (netlink, pyroute2) and a
# fake mlx5 /sys tree built from real captures (sysfs/configfs), then audit it. Needs root for the netns; skips
# politely otherwise. Everything it creates (netns fdt-host-demo*, a temp dir) is removed on exit.
set -euo pipefail
bin=${1:-.venv/bin}
host=${FABRICD_DEMO_HOST:-gpu1}
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
    echo "demo-host: skipped (needs root and iproute2 to create a network namespace)"
    exit 0
fi
ns=fdt-host-demo-$$
peer=fdt-host-demo-$$-sw
root=$(mktemp -d)
cleanup() { ip netns del "$ns" 2>/dev/null || true; ip netns del "$peer" 2>/dev/null || true; rm -rf "$root"; }
trap cleanup EXIT
ip netns add "$ns"
ip netns add "$peer"
ip -n "$ns" link add ens1f0np0 type veth peer name swp1 netns "$peer"
ip -n "$peer" link set swp1 mtu 9216 up
"$bin/python" - "$root" "$host" <<'PY'
import sys
from fabricd.intent.host import host_intent
from fabricd.inventory import load_inventory
from fabricd_lab.fake_host import build_fake_host, fake_nics_for
from fabricd.settings import default_inventory
intent = host_intent(load_inventory(default_inventory()).fabric, sys.argv[2])
build_fake_host(sys.argv[1], fake_nics_for(intent, skip_vlan=True))
PY
export FABRICD_STATE_DIR="$root/state"
# this kernel has no 802.1Q and veth has no DCB: run untagged and leave DCB out (the Soft-RoCE VM covers both)
args=(inventory/lab --host "$host" --netns "$ns" --root "$root" --skip "vlan,dcb")
echo "== fabricd audit host ${args[*]}   (before: findings expected)"
"$bin/fabricd" audit host "${args[@]}" || true
echo "== fabricd host apply ${args[*]} --yes"
"$bin/fabricd" host apply "${args[@]}" --yes
echo "== fabricd audit host ${args[*]}   (after: compliant)"
"$bin/fabricd" audit host "${args[@]}"
