#!/usr/bin/env bash
# Build the YANG validator SONiC pins (libyang 3.12.2, rules/libyang3.mk in sonic-buildimage) and its CESNET Python
# bindings (PyPI libyang==3.1.0, rules/libyang3-py3.mk) for the SONiC conformance suite
# (tests/conformance/test_sonic_yang.py). Debian 12 ships only libyang2 2.1.30, so the source comes from Debian
# trixie's source package libyang 3.12.2 (no Debian patches), fetched with apt-get through a private apt
# configuration: the machine's own apt sources, lists and cache are never touched.
#
# Usage: scripts/libyang.sh        (called by `make test` through the Makefile target `libyang`)
#   - installs the C library into build/libyang3 (git-ignored) and the bindings into .venv, linked with an rpath
#     to build/libyang3/lib, so the tests need no LD_LIBRARY_PATH;
#   - idempotent: a second run checks a stamp and returns at once;
#   - never fails the build by itself (like scripts/sysdeps.sh): when it cannot build (not root and build tools
#     missing, archive unreachable, checksum mismatch, compiler error) it says why on stderr and writes the reason
#     to build/libyang3.missing. The conformance tests then skip with that reason, or FAIL when CI=true.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
version=3.12.2
debian_version=3.12.2-1
orig_sha256=d7b35a5f9f3a5b929b9c9ee0c2b1b63fbef7be788d88f74e1362b85990002db3
bindings=3.1.0
prefix="$root/build/libyang3"
cache="$root/build/libyang3-cache"
missing="$root/build/libyang3.missing"
venv_python="$root/.venv/bin/python"
stamp="$prefix/.fabricd-stamp"
want="libyang $version sha256:$orig_sha256 bindings $bindings python:$venv_python"

give_up() {
  mkdir -p "$root/build"
  echo "libyang: $*; the SONiC YANG conformance tests skip (fail when CI=true)" >&2
  printf '%s\n' "$*" >"$missing"
  exit 0
}

bindings_ok() {
  "$venv_python" - "$prefix" <<'EOF' >/dev/null 2>&1
import sys, importlib.metadata as md
import _libyang  # the compiled part: it must find libyang.so.3 in the prefix through its rpath
import libyang
assert md.version("libyang") == "3.1.0"
libyang.Context().destroy()
with open("/proc/self/maps") as maps:
    assert sys.argv[1] + "/lib/libyang.so" in maps.read()
EOF
}

[ -x "$venv_python" ] || give_up "no $venv_python (run 'make .venv/.installed' first)"
# Fast path: built, stamped, and the bindings import.
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$prefix/lib/libyang.so.3" ] && bindings_ok; then
  rm -f "$missing"
  exit 0
fi

start=$(date +%s)
# Build tools (Debian packages). Installed only as root; otherwise they must already be there.
need=()
for p in cmake gcc make libpcre2-dev pkg-config; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
# the bindings compile a CFFI extension: Python.h of the venv's interpreter (Debian's python3 needs python3-dev)
"$venv_python" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(sysconfig.get_paths()["include"] + "/Python.h"))' \
  || need+=(python3-dev)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    give_up "missing Debian packages ${need[*]} (run as root, or 'sudo apt-get install ${need[*]}')"
  fi
  echo "libyang: installing Debian packages: ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null 2>&1; apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1; } \
    || give_up "apt-get install ${need[*]} failed"
fi

# The machine's own Debian mirror (first non-security Debian URI of its apt sources), default deb.debian.org.
mirror=$(
  { cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed -n 's/^URIs:[[:space:]]*//p' | tr ' ' '\n'
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '$1 ~ /^deb/ {for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) {print $i; break}}'
  } | grep -v -e security -e '^$' | grep -i debian | head -1
)
mirror=${mirror:-http://deb.debian.org/debian}
mirror=${mirror%/}

lib_want="libyang $version sha256:$orig_sha256"
lib_stamp="$prefix/.built"
if [ -f "$lib_stamp" ] && [ "$(cat "$lib_stamp")" = "$lib_want" ] && [ -f "$prefix/lib/libyang.so.3" ]; then
  echo "libyang: libyang $version already built in $prefix" >&2
else
  src="$cache/src"
  mkdir -p "$cache/lists/partial" "$cache/archives/partial" "$cache/etc/sources.list.d" "$cache/etc/preferences.d" "$src"
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  signed=""
  [ -f "$keyring" ] && signed="[signed-by=$keyring] "
  echo "deb-src ${signed}$mirror trixie main" >"$cache/etc/sources.list"
  apt_opts=(
    -o "Dir::Etc::SourceList=$cache/etc/sources.list"
    -o "Dir::Etc::SourceParts=$cache/etc/sources.list.d"
    -o "Dir::Etc::Preferences=$cache/etc/preferences"
    -o "Dir::Etc::PreferencesParts=$cache/etc/preferences.d"
    -o "Dir::State::Lists=$cache/lists"
    -o "Dir::Cache=$cache"
    -o "Dir::Cache::Archives=$cache/archives"
    -o "APT::Sandbox::User=root"
    -o "Acquire::Languages=none"
  )
  tarball="$src/libyang_$version.orig.tar.xz"
  if [ ! -f "$tarball" ]; then
    echo "libyang: fetching Debian trixie source package libyang $debian_version from $mirror" >&2
    apt-get "${apt_opts[@]}" -qq update >"$cache/apt.log" 2>&1 \
      || give_up "apt-get update of the private trixie deb-src list failed ($mirror; see $cache/apt.log)"
    (cd "$src" && apt-get "${apt_opts[@]}" -qq source --download-only "libyang=$debian_version") >>"$cache/apt.log" 2>&1 \
      || give_up "apt-get source libyang=$debian_version failed (see $cache/apt.log)"
  fi
  got=$(sha256sum "$tarball" | cut -d' ' -f1)
  if [ "$got" != "$orig_sha256" ]; then
    rm -f "$tarball"
    give_up "$tarball: sha256 $got, expected $orig_sha256"
  fi

  work="$cache/build"
  rm -rf "$work" "$prefix"
  mkdir -p "$work"
  tar -xJf "$tarball" -C "$work" || give_up "cannot extract $tarball"
  srcdir=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -1)
  echo "libyang: building libyang $version into $prefix" >&2
  {
    cmake -S "$srcdir" -B "$work/out" -DCMAKE_BUILD_TYPE=Release -DENABLE_TESTS=OFF -DENABLE_TOOLS=OFF \
      -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
      && cmake --build "$work/out" -j "$(nproc)" \
      && cmake --install "$work/out"
  } >"$cache/build.log" 2>&1 || give_up "libyang $version build failed (see $cache/build.log)"
  printf '%s' "$lib_want" >"$lib_stamp"
  rm -rf "$work"
fi

mkdir -p "$cache"
echo "libyang: pip install libyang==$bindings into .venv against $prefix (rpath)" >&2
{
  LIBYANG_HEADERS="$prefix/include" LIBYANG_LIBRARIES="$prefix/lib" LIBYANG_EXTRA_LDFLAGS="-Wl,-rpath,$prefix/lib" \
    "$venv_python" -m pip install -q --no-cache-dir --force-reinstall --no-deps --no-binary libyang \
    "libyang==$bindings" \
    && "$venv_python" -m pip install -q "libyang==$bindings"
} >"$cache/pip.log" 2>&1 || give_up "pip install libyang==$bindings failed (see $cache/pip.log)"
bindings_ok || give_up "libyang bindings installed but do not import (see $cache/pip.log)"
printf '%s' "$want" >"$stamp"
rm -f "$missing"
echo "libyang: ready in $(($(date +%s) - start)) s" >&2
exit 0
