#!/bin/bash
# Capture the DCB netlink requests that iproute2's `dcb` sends, as golden files for fabricd's DCB codec.
#
# Usage (as root): tests/golden/dcb/capture/capture.sh [OUTDIR]   (default: tests/golden/dcb)
# Needs: iproute2 (dcb), strace, gcc. Creates the netns fdt-host-dcbcap with a veth pair and removes it after.
# Each output file: header lines starting with '#' (command, tool versions), then the request bytes in hex,
# one message per file, exactly as `strace -e trace=sendto -e write=3` dumps them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/..}
ns=fdt-host-dcbcap
dev=fdtdcb0
tmp=$(mktemp -d)
cleanup() { ip netns del "$ns" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
gcc -shared -fPIC -o "$tmp/dcbfake.so" "$here/dcbfake.c" -ldl
ip netns add "$ns"
ip -n "$ns" link add "$dev" type veth peer name fdtdcb1

capture() {  # name, preload(0|1), dcb args...
    local name=$1 preload=$2; shift 2
    local env=()
    [ "$preload" = 1 ] && env=(env "LD_PRELOAD=$tmp/dcbfake.so")
    ip netns exec "$ns" strace -o "$tmp/$name.strace" -e trace=sendto -e write=3 "${env[@]}" dcb "$@" \
        >/dev/null 2>&1 || true
    {
        echo "# source: iproute2 $(dcb -V | sed 's/.*iproute2-//') \`dcb $*\` (dev $dev in a netns, kernel $(uname -r))"
        echo "# captured with: strace $(strace -V | head -1 | awk '{print $4}') -e trace=sendto -e write=3"
        [ "$preload" = 1 ] && echo "# the preceding RTM_GETDCB read was answered by capture/dcbfake.c (all-zero ETS/PFC, pfc_cap 8)"
        echo "# message: the last RTM_SETDCB/RTM_GETDCB request sent; bytes 8-11 are nlmsg_seq (time of day)"
        # keep the last sendto's hex dump
        awk '/^sendto\(/{buf=""; next} /^ \| [0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]  /{buf=buf $0 "\n"} END{printf "%s", buf}' \
            "$tmp/$name.strace"
    } >"$out/$name.txt"
}

capture app-add-dscp-prio 0 app add dev "$dev" dscp-prio 26:3 48:6
capture app-del-dscp-prio 0 app del dev "$dev" dscp-prio 26:3
capture ieee-get 0 app show dev "$dev"
capture pfc-set-prio3 1 pfc set dev "$dev" prio-pfc all:off 3:on
capture pfc-set-prio3-delay 1 pfc set dev "$dev" prio-pfc all:off 3:on 4:on delay 4096
capture ets-set-roce 1 ets set dev "$dev" prio-tc 0:0 1:0 2:0 3:3 4:0 5:0 6:6 7:0 \
    tc-tsa 0:ets 1:ets 2:ets 3:ets 4:ets 5:ets 6:strict 7:ets tc-bw 0:50 1:0 2:0 3:50 4:0 5:0 6:0 7:0
ls -1 "$out"/*.txt
