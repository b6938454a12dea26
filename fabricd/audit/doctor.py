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

from fabricd.model.checks import (
    CheckResult,
    CheckSpec,
    Report,
    Severity,
    Status,
    by_code,
    result_of,
    status_of,
)
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


@dataclass(frozen=True, kw_only=True)
class DoctorCheck(CheckSpec):
    """A capability fabricd can use: its declaration (``title`` is the capability, ``hint`` how to get it), the
    feature it belongs to, the features that need it, and whether it is only a faster or alternative path
    (``optional``: never required)."""

    subject: str = "machine"
    feature: str = "core"
    features: tuple[str, ...] = ()
    optional: bool = False


def _cap(code: str, title: str, hint: str, *features: str, optional: bool = False) -> DoctorCheck:
    return DoctorCheck(code=code, title=title, hint=hint, feature=features[0], features=features, optional=optional)


DOCTOR_CHECKS: tuple[DoctorCheck, ...] = (
    DoctorCheck(
        code="DOC-PYTHON", title="python >= 3.11", hint="install Python 3.11 or newer", features=tuple(FEATURES)
    ),
    _cap("DOC-ROOT", "root (netns, sysfs writes)", "run host apply/audit and netns tests as root (sudo)", "hosts"),
    _cap("DOC-NETNS", "network namespaces", "use a kernel with CONFIG_NET_NS", "hosts"),
    _cap("DOC-IPROUTE2", "iproute2 (ip, dcb)", "apt-get install iproute2", "hosts"),
    _cap("DOC-8021Q", "8021q (RDMA VLAN)", "use a kernel with CONFIG_VLAN_8021Q (the lab VM has it)", "hosts"),
    _cap(
        "DOC-DCB",
        "DCB (PFC/ETS/APP netlink)",
        "needs CONFIG_DCB and a NIC driver with dcbnl_ops (mlx5, bnxt, ice)",
        "hosts",
    ),
    _cap("DOC-CONFIGFS", "configfs (RDMA-CM ToS)", "mount -t configfs none /sys/kernel/config", "hosts"),
    _cap(
        "DOC-RDMA",
        "RDMA devices",
        "load the NIC's RDMA driver (mlx5_ib); without a NIC, give --root a replay root "
        "(`fabricd init --replay-root DIR`) or use `fabricd lab vm up`",
        "rdma",
    ),
    _cap(
        "DOC-RXE",
        "rdma_rxe (Soft-RoCE)",
        "optional: Soft-RoCE on this machine; `fabricd lab vm` boots Debian's kernel, which has it",
        "rdma",
        optional=True,
    ),
    _cap("DOC-PROMETHEUS", "prometheus", "apt-get install prometheus", "exporters"),
    _cap("DOC-PROMTOOL", "promtool", "apt-get install prometheus", "exporters"),
    _cap("DOC-NODE-EXPORTER", "prometheus-node-exporter", "apt-get install prometheus-node-exporter", "bench"),
    _cap("DOC-SHELLCHECK", "shellcheck", "apt-get install shellcheck", "tests"),
    _cap("DOC-QEMU", "qemu-system-x86_64", "apt-get install qemu-system-x86", "lab-vm"),
    _cap("DOC-STRACE", "strace", "apt-get install strace", "tests"),
    _cap("DOC-KVM", "/dev/kvm", "optional: enable virtualisation, or accept TCG", "lab-vm", optional=True),
    _cap("DOC-LAB", "fabricd-lab", LAB_INSTALL_HINT, "lab", "lab-vm"),
    DoctorCheck(
        code="DOC-PARSER-ROLES",
        title="parser roles proven by a real capture",
        feature="parsers",
        severity=Severity.WARNING,
        optional=True,
        hint="the parser runs, but its output shape was not checked against a real device (docs/platforms.md, "
        "'Parser roles and what proves them')",
    ),
)
"""Every capability ``fabricd doctor`` checks, in the order a user meets the features (the command names of the
tools are what :func:`_which` looks for)."""
DOCTOR = by_code(DOCTOR_CHECKS)
_TOOLS = ("DOC-PROMETHEUS", "DOC-PROMTOOL", "DOC-NODE-EXPORTER", "DOC-SHELLCHECK", "DOC-QEMU", "DOC-STRACE")


@dataclass(frozen=True)
class Capability:
    """One capability on this machine: whether it has it and what was seen (``detail``), with its declaration's
    name, fix and features. ``required`` is set by :func:`run_checks` for the features asked for; an ``optional``
    capability never is."""

    feature: str
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = False
    features: tuple[str, ...] = ()
    optional: bool = False
    code: str = ""


def _seen(code: str, ok: bool, detail: str) -> Capability:
    spec = DOCTOR[code]
    return Capability(
        spec.feature, spec.title, ok, detail, spec.hint, features=spec.features, optional=spec.optional, code=code
    )


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


def run_checks(root: Path = Path("/"), need: Collection[str] = ("core",)) -> list[Capability]:
    """Every capability, in the order a user meets the features; ``required`` on those a feature in ``need`` uses
    (``core`` by default). Unverified parser roles are not capabilities: :func:`parser_role_checks`."""
    return [replace(c, required=not c.optional and any(f in need for f in c.features)) for c in _capabilities(root)]


def _capabilities(root: Path) -> list[Capability]:
    py = sys.version_info
    is_root = os.geteuid() == 0
    return [
        _seen("DOC-PYTHON", py >= (3, 11), f"{py.major}.{py.minor}.{py.micro}"),
        _seen("DOC-ROOT", is_root, "uid 0" if is_root else f"uid {os.geteuid()}"),
        *_kernel(root),
        *_rdma(root),
        *(_tool(root, code) for code in _TOOLS),
        _kvm(root),
        _lab_installed(),
    ]


def _kernel(root: Path) -> list[Capability]:
    """Network namespaces, iproute2, 8021q, DCB and configfs (by kernel config, /sys/module or modules.*)."""
    kconfig = _kconfig(root)
    netns = (root / "proc/self/ns/net").exists()
    ip = _which("ip", root)
    vlan = _module_available(root, "8021q", kconfig, "CONFIG_VLAN_8021Q")
    dcb = _module_available(root, "dcb", kconfig, "CONFIG_DCB")
    try:
        configfs = "configfs" in (root / "proc/filesystems").read_text(encoding="utf-8")
    except OSError:
        configfs = False
    configfs = configfs or _module_available(root, "configfs", kconfig, "CONFIG_CONFIGFS_FS")
    return [
        _seen("DOC-NETNS", netns, "available" if netns else "missing /proc/self/ns/net"),
        _seen("DOC-IPROUTE2", ip is not None, ip or "not found"),
        _seen("DOC-8021Q", vlan, "available" if vlan else "no 8021q module"),
        _seen(
            "DOC-DCB", dcb, "CONFIG_DCB in this kernel (the NIC driver must support it too)" if dcb else "no CONFIG_DCB"
        ),
        _seen("DOC-CONFIGFS", configfs, "in this kernel" if configfs else "no configfs in this kernel"),
    ]


def _rdma(root: Path) -> list[Capability]:
    ib = root / "sys/class/infiniband"
    devices = sorted(p.name for p in ib.iterdir()) if ib.is_dir() else []
    rxe = _module_available(root, "rdma_rxe", _kconfig(root), "CONFIG_RDMA_RXE")
    return [
        _seen("DOC-RDMA", bool(devices), ", ".join(devices) or "none in /sys/class/infiniband"),
        _seen("DOC-RXE", rxe, "available" if rxe else "not in this kernel"),
    ]


def _tool(root: Path, code: str) -> Capability:
    path = _which(DOCTOR[code].title, root)
    return _seen(code, path is not None, path or "not found")


def _kvm(root: Path) -> Capability:
    kvm = root / "dev/kvm"
    ok = kvm.exists() and os.access(kvm, os.R_OK | os.W_OK)
    return _seen(
        "DOC-KVM",
        ok,
        "present (boot is probed by `fabricd lab vm up`)"
        if ok
        else "absent: the lab VM runs under TCG, about 10x slower",
    )


def _lab_installed() -> Capability:
    """fabricd-lab beside fabricd (its distribution metadata; fabricd never imports the lab)."""
    try:
        version = metadata.version("fabricd-lab")
    except metadata.PackageNotFoundError:
        return _seen("DOC-LAB", False, "not installed")
    return _seen("DOC-LAB", True, f"fabricd-lab {version}")


def parser_role_checks() -> list[Capability]:
    """One line per parser role no real capture proves (fabricd.nos.roles): feature ``parsers``, name
    ``platform/role``, the command as what was seen, the reason as the fix. Never required: the parser runs, but
    its output shape was not checked against a real device."""
    return [
        Capability("parsers", r.id, False, r.command, r.unverified or "", code="DOC-PARSER-ROLES")
        for r in unverified_roles()
    ]


def doctor_report(capabilities: list[Capability], unverified: list[Capability], *, target: str = "/") -> Report:
    """The doctor's findings in the one report shape: a capability a selected feature needs and this machine
    lacks fails its check; one no selected feature needs (or an optional one) is skipped, with why; the parser
    roles no capture proves are warnings of DOC-PARSER-ROLES."""
    checks = [_capability_result(c) for c in capabilities]
    roles = DOCTOR["DOC-PARSER-ROLES"]
    findings = [
        roles.finding(
            obj=c.name,
            path=c.detail,
            message="no real capture proves this parser's output shape",
            expected="a real capture",
            got=None,
            hint=c.fix,
        )
        for c in unverified
    ]
    checks.append(result_of(roles, status_of(roles, findings), findings))
    return Report(kind="machine", target=target, checks=checks)


def _capability_result(c: Capability) -> CheckResult:
    spec = DOCTOR[c.code]
    if c.ok:
        return result_of(spec, Status.PASS, note=c.detail)
    if not c.required:
        why = "optional" if c.optional else "no selected feature needs it"
        return result_of(spec, Status.SKIP, note=f"{c.detail} ({why})")
    return result_of(
        spec,
        Status.FAIL,
        [
            spec.finding(
                obj=c.name,
                path=", ".join(c.features),
                message="missing on this machine",
                expected="present",
                got=c.detail,
            )
        ],
    )
