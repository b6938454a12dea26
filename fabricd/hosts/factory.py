"""Pick the host backends for a run: live (a netns or this host) or a replay root.

- ``netns`` given, or ``root`` is ``/``: live netlink and DCB (in the netns if given), sysfs/configfs under root;
- otherwise (a replay root, no netns): links read from the tree's sysfs (read-only), DCB read from the root's
  bundle of ``dcb ... show`` outputs when it has a ``dcb/`` directory (read-only, fabricd.hosts.dcb_bundle), else
  no DCB source; sysfs under root.

``skip`` drops backends by name (``netlink``, ``dcb``, ``sysfs``); ``vlan`` and ``pause`` are step groups
handled by the plan.
"""

from __future__ import annotations

import os

from .base import HostBackend
from .dcb import DcbBackend
from .dcb_bundle import DcbBundle, bundle_dir
from .netlink import NetlinkBackend
from .sysfs import SysfsBackend, SysfsLinks


def is_live(root: str | os.PathLike[str], netns: str | None) -> bool:
    return netns is not None or os.path.realpath(root) == "/"


def open_backends(
    root: str | os.PathLike[str] = "/", netns: str | None = None, skip: frozenset[str] = frozenset()
) -> list[HostBackend]:
    """The backends in apply order (netlink, dcb, sysfs), without the skipped ones."""
    live = is_live(root, netns)
    out: list[HostBackend] = []
    if "netlink" not in skip:
        out.append(NetlinkBackend(netns) if live else SysfsLinks(root))
    if "dcb" not in skip and live:
        out.append(DcbBackend(netns))
    elif "dcb" not in skip and bundle_dir(root).is_dir():
        out.append(DcbBundle(root))
    if "sysfs" not in skip:
        out.append(SysfsBackend(root))
    return out


def close_backends(backends: list[HostBackend]) -> None:
    for b in backends:
        if isinstance(b, NetlinkBackend):
            b.close()
