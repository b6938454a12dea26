#!/usr/bin/env bash
# Install the Debian packages fabricd's tests and demo use, when they are missing and we are root.
# Usage: scripts/sysdeps.sh [test|demo|bench|vm]. Says what it installs; never fails the build by itself:
# tests that need a missing tool skip with the reason.
set -u
what="${1:-test}"
# command-or-path -> Debian package
declare -A need=(
  [promtool]=prometheus
  [prometheus]=prometheus
  [shellcheck]=shellcheck
  [ip]=iproute2
  [ethtool]=ethtool
  [strace]=strace
  [gcc]=gcc
  [amtool]=prometheus-alertmanager
  [systemd-analyze]=systemd
  [openssl]=openssl
  [prometheus-alertmanager]=prometheus-alertmanager
)
if [ "$what" = "demo" ]; then
  # the demo runs Prometheus, Alertmanager, ip and ethtool; the test-only tools are left out
  unset 'need[shellcheck]' 'need[strace]' 'need[gcc]' 'need[systemd-analyze]'
fi
if [ "$what" = "bench" ]; then
  need[prometheus-node-exporter]=prometheus-node-exporter
  need[ansible]=ansible-core   # bench/fleet_fanout.py: the Ansible ad-hoc anchor
fi
# "vm" group: the Soft-RoCE lab VMs (fabricd lab vm, tests/lab marker vm, bench/traffic.py): qemu and the tools that
# build the image. `make test` installs them unless FABRICD_VM_TESTS=0 (the vm tests then skip and say why);
# `scripts/sysdeps.sh vm` installs only this group.
if [ "$what" = "vm" ]; then
  need=()
fi
if [ "$what" = "vm" ] || [ "$what" = "bench" ] || { [ "$what" = "test" ] && [ "${FABRICD_VM_TESTS:-auto}" != "0" ]; }; then
  need[qemu-system-x86_64]=qemu-system-x86
  need[qemu-img]=qemu-utils
  need[debootstrap]=debootstrap
  need[mke2fs]=e2fsprogs
fi
missing=()
for cmd in "${!need[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/bin/$cmd" ] || missing+=("${need[$cmd]}")
done
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)
[ ${#missing[@]} -eq 0 ] && exit 0
pkgs=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
if [ "$(id -u)" != 0 ]; then
  echo "sysdeps: missing Debian packages: $pkgs(run as root, or 'sudo apt-get install $pkgs'); tests that need them skip" >&2
  exit 0
fi
echo "sysdeps: installing Debian packages: $pkgs" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $pkgs >/dev/null 2>&1 \
  || echo "sysdeps: apt-get install failed for: $pkgs; tests that need them skip" >&2
exit 0
