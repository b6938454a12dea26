"""Check this machine for what each fabricd feature needs, and say what to install.

Pure inspection: reads /proc, /sys, /dev and PATH; runs nothing that changes the machine. The ``root`` argument
lets tests point it at a fake tree.
"""

from __future__ import annotations

import gzip
import os
import shutil
import sys
from collections.abc import Collection
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path

from fabricd.nos.roles import unverified_roles
from fabricd.settings import LAB_INSTALL_HINT

FEATURES: dict[str, str] = {
    "core": "validate, show, render, init, schema, headroom, docs",
    "hosts": "host plan|apply|restore, audit host and agent on a live host (or --netns)",
    "rdma": "export host, audit host, watch and serve reading this machine's RDMA NIC (not needed with --root)",
    "exporters": "the demo's Prometheus stage, `promtool test rules` on `fabricd monitoring bundle`",
    "lab": "fabricd lab, demo and report (the fabricd-lab distribution)",
    "lab-vm": "fabricd lab vm, traffic and validate-fabric on Soft-RoCE VMs",
    "tests": "the test suite (shellcheck on rendered host scripts, strace)",
    "bench": "make bench (the node_exporter anchor)",
}
"""Each feature ``fabricd doctor --for FEATURE`` can require, and the commands it serves (docs/contracts.md)."""


@dataclass(frozen=True)
class Check:
    """One capability: the features that need it, whether this machine has it, what was seen, and how to get it.

    ``required`` is set by :func:`run_checks` for the features asked for; an ``optional`` capability (a faster or
    alternative path) never is."""

    feature: str
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = False
    features: tuple[str, ...] = ()
    optional: bool = False


def _kconfig(root: Path) -> dict[str, str]:
    """The running kernel's config from /proc/config.gz (empty when the kernel does not expose it)."""
    try:
        text = gzip.decompress((root / "proc/config.gz").read_bytes()).decode("utf-8", "replace")
    except (OSError, EOFError, gzip.BadGzipFile):
        return {}
    return dict(line.split("=", 1) for line in text.splitlines() if line.startswith("CONFIG_") and "=" in line)


def _module_available(root: Path, name: str, kconfig: dict[str, str], option: str) -> bool:
    """A kernel feature is built in or a module (by kernel config), loaded, or installed for this kernel."""
    if kconfig.get(option) in ("y", "m") or (root / "sys/module" / name).exists():
        return True
    release = os.uname().release
    moddir = root / "lib/modules" / release
    for listing in ("modules.builtin", "modules.dep"):
        path = moddir / listing
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if f"/{name}.ko" in text:
            return True
    return False


def _which(cmd: str, root: Path) -> str | None:
    if root != Path("/"):
        for d in ("usr/bin", "usr/sbin", "bin", "sbin", "usr/local/bin"):
            if (root / d / cmd).exists():
                return str(root / d / cmd)
        return None
    return shutil.which(cmd) or next(
        (str(Path(d) / cmd) for d in ("/usr/sbin", "/sbin") if (Path(d) / cmd).exists()), None
    )


def run_checks(root: Path = Path("/"), need: Collection[str] = ("core",)) -> list[Check]:
    """Every capability, in the order a user meets the features; ``required`` on those a feature in ``need`` uses
    (``core`` by default). Unverified parser roles are not capabilities: :func:`parser_role_checks`."""
    checks = [replace(c, required=not c.optional and any(f in need for f in c.features))
              for c in _capabilities(root)]
    return checks


def _capabilities(root: Path) -> list[Check]:
    checks: list[Check] = []
    kconfig = _kconfig(root)
    py = sys.version_info
    checks.append(Check("core", "python >= 3.11", py >= (3, 11), f"{py.major}.{py.minor}.{py.micro}",
                        "install Python 3.11 or newer", features=tuple(FEATURES)))
    is_root = os.geteuid() == 0
    checks.append(Check("hosts", "root (netns, sysfs writes)", is_root, "uid 0" if is_root else f"uid {os.geteuid()}",
                        "run host apply/audit and netns tests as root (sudo)", features=("hosts",)))
    netns = (root / "proc/self/ns/net").exists()
    checks.append(Check("hosts", "network namespaces", netns, "available" if netns else "missing /proc/self/ns/net",
                        "use a kernel with CONFIG_NET_NS", features=("hosts",)))
    ip = _which("ip", root)
    checks.append(Check("hosts", "iproute2 (ip, dcb)", ip is not None, ip or "not found", "apt-get install iproute2",
                        features=("hosts",)))
    vlan = _module_available(root, "8021q", kconfig, "CONFIG_VLAN_8021Q")
    checks.append(Check("hosts", "8021q (RDMA VLAN)", vlan, "available" if vlan else "no 8021q module",
                        "use a kernel with CONFIG_VLAN_8021Q (the lab VM has it)", features=("hosts",)))
    dcb = _module_available(root, "dcb", kconfig, "CONFIG_DCB")
    checks.append(Check("hosts", "DCB (PFC/ETS/APP netlink)", dcb,
                        "CONFIG_DCB in this kernel (the NIC driver must support it too)" if dcb else "no CONFIG_DCB",
                        "needs CONFIG_DCB and a NIC driver with dcbnl_ops (mlx5, bnxt, ice)", features=("hosts",)))
    try:
        configfs = "configfs" in (root / "proc/filesystems").read_text(encoding="utf-8")
    except OSError:
        configfs = False
    configfs = configfs or _module_available(root, "configfs", kconfig, "CONFIG_CONFIGFS_FS")
    checks.append(Check("hosts", "configfs (RDMA-CM ToS)", configfs,
                        "in this kernel" if configfs else "no configfs in this kernel",
                        "mount -t configfs none /sys/kernel/config", features=("hosts",)))
    ib = root / "sys/class/infiniband"
    devices = sorted(p.name for p in ib.iterdir()) if ib.is_dir() else []
    checks.append(Check("rdma", "RDMA devices", bool(devices), ", ".join(devices) or "none in /sys/class/infiniband",
                        "load the NIC's RDMA driver (mlx5_ib); without a NIC, give --root a replay root "
                        "(`fabricd init --replay-root DIR`) or use `fabricd lab vm up`", features=("rdma",)))
    rxe = _module_available(root, "rdma_rxe", kconfig, "CONFIG_RDMA_RXE")
    checks.append(Check("rdma", "rdma_rxe (Soft-RoCE)", rxe, "available" if rxe else "not in this kernel",
                        "optional: Soft-RoCE on this machine; `fabricd lab vm` boots Debian's kernel, which has it",
                        features=("rdma",), optional=True))
    for cmd, pkg, feature in (
        ("prometheus", "prometheus", "exporters"),
        ("promtool", "prometheus", "exporters"),
        ("prometheus-node-exporter", "prometheus-node-exporter", "bench"),
        ("shellcheck", "shellcheck", "tests"),
        ("qemu-system-x86_64", "qemu-system-x86", "lab-vm"),
        ("strace", "strace", "tests"),
    ):
        path = _which(cmd, root)
        checks.append(Check(feature, cmd, path is not None, path or "not found", f"apt-get install {pkg}",
                            features=(feature,)))
    kvm = root / "dev/kvm"
    kvm_ok = kvm.exists() and os.access(kvm, os.R_OK | os.W_OK)
    checks.append(Check("lab-vm", "/dev/kvm", kvm_ok, "present (boot is probed by `fabricd lab vm up`)" if kvm_ok
                        else "absent: the lab VM runs under TCG, about 10x slower",
                        "optional: enable virtualisation, or accept TCG", features=("lab-vm",), optional=True))
    checks.append(_lab_installed())
    return checks


def _lab_installed() -> Check:
    """fabricd-lab beside fabricd (its distribution metadata; fabricd never imports the lab)."""
    try:
        version = metadata.version("fabricd-lab")
    except metadata.PackageNotFoundError:
        return Check("lab", "fabricd-lab", False, "not installed", LAB_INSTALL_HINT, features=("lab", "lab-vm"))
    return Check("lab", "fabricd-lab", True, f"fabricd-lab {version}", features=("lab", "lab-vm"))


def parser_role_checks() -> list[Check]:
    """One line per parser role no real capture proves (fabricd.nos.roles): feature ``parsers``, name
    ``platform/role``, the command as what was seen, the reason as the fix. Never required: the parser runs, but
    its output shape was not checked against a real device."""
    return [Check("parsers", r.id, False, r.command, r.unverified or "") for r in unverified_roles()]
