"""NIC profiles per driver family, one module each; :data:`PROFILES` is the registry that the readers (counter
names), the lab's fake host, the docs generator (docs/nics.md) and the tests walk. Adding a family:
docs/ARCHITECTURE.md, "Adding a NIC family".

``profile_for(driver)`` maps a kernel driver name (the netdev's ``ethtool -i`` driver or the RDMA device's driver)
to its family's :class:`NicProfile`; :func:`nic_profile` picks it for an inventory NIC (``rdma_driver`` first, then
``driver``). The registry is an explicit tuple: no import-time registration.
"""

from __future__ import annotations

from fabricd.model import Nic

from . import bnxt, ice, ionic, mlx5, rxe
from .base import Knob, LabNic, NicProfile, Prerequisite

PROFILES: tuple[NicProfile, ...] = (mlx5.PROFILE, ice.PROFILE, bnxt.PROFILE, rxe.PROFILE, ionic.PROFILE)
BY_FAMILY: dict[str, NicProfile] = {p.family: p for p in PROFILES}
BY_DRIVER: dict[str, NicProfile] = {d: p for p in PROFILES for d in (*p.drivers, *p.rdma_drivers)}


def known_drivers() -> list[str]:
    return sorted(BY_DRIVER)


def profile_for(driver: str | None) -> NicProfile | None:
    return BY_DRIVER.get(driver) if driver else None


def nic_profile(nic: Nic) -> NicProfile | None:
    """The profile of an inventory NIC: its ``rdma_driver`` when set (Soft-RoCE on virtio_net), else ``driver``."""
    if nic.rdma_driver is not None:
        return profile_for(nic.rdma_driver)
    return profile_for(nic.driver)


CONFIGFS = "/sys/kernel/config"
CONFIGFS_GROUP_ROOTS: tuple[str, ...] = (
    f"{CONFIGFS}/rdma_cm",
    *sorted({p.cc_group.split("/{dev}")[0] for p in PROFILES if p.cc_group}),
)
"""configfs subsystems whose per-device group (``<root>/<dev>``) is created with mkdir before a write beneath it."""

_HEX_ROOTS = tuple(
    sorted(
        {
            k.path.split("/{dev}")[0]
            for p in PROFILES
            for k in (*p.roles.values(), *p.tunables.values())
            if k.fmt == "hex"
        }
    )
)
_COMMITS = tuple((p.cc_commit.rsplit("/", 1)[0], p.cc_commit.rsplit("/", 1)[1]) for p in PROFILES if p.cc_commit)


def configfs_group(path: str) -> tuple[str, str] | None:
    """``(subsystem root, device group)`` for a path under one of :data:`CONFIGFS_GROUP_ROOTS`, else None."""
    for root in CONFIGFS_GROUP_ROOTS:
        if path.startswith(root + "/"):
            dev = path[len(root) + 1 :].split("/", 1)[0]
            return root, f"{root}/{dev}"
    return None


def value_format(path: str) -> str:
    """``hex`` for files whose driver prints and parses hexadecimal (bnxt_re configfs cc/), else ``dec``."""
    return "hex" if any(path.startswith(r + "/") for r in _HEX_ROOTS) else "dec"


def commit_file_for(path: str) -> str | None:
    """The commit file (bnxt_re ``cc/apply``) that makes a write to ``path`` take effect, or None."""
    for pattern, name in _COMMITS:
        head, _, leaf = path.rpartition("/")
        if leaf != name and _matches(pattern, head):
            return f"{head}/{name}"
    return None


def _matches(pattern: str, path: str) -> bool:
    parts, got = pattern.split("/"), path.split("/")
    return len(parts) == len(got) and all(p.startswith("{") or p == g for p, g in zip(parts, got, strict=True))


def families_text() -> str:
    """``mlx5 (mlx5_core, mlx5_ib), ice (ice, irdma), ...`` for error messages."""
    return ", ".join(f"{p.family} ({', '.join((*p.drivers, *p.rdma_drivers))})" for p in PROFILES)


__all__ = [
    "BY_DRIVER",
    "BY_FAMILY",
    "CONFIGFS_GROUP_ROOTS",
    "PROFILES",
    "Knob",
    "LabNic",
    "NicProfile",
    "Prerequisite",
    "commit_file_for",
    "configfs_group",
    "families_text",
    "known_drivers",
    "nic_profile",
    "profile_for",
    "value_format",
]
