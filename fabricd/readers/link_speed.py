"""A netdev's link speed as the kernel reports it: ``/sys/class/net/<if>/speed``, in Mb/s.

Kernel ABI (Documentation/ABI/testing/sysfs-class-net, ``speed``): "the current link speed in Mbits/sec"; the read
fails with EINVAL while the link is down, and drivers that do not know the speed print -1 (SPEED_UNKNOWN). Both are
None here, as is a missing file: the caller says why it cannot judge the speed.
"""

from __future__ import annotations

import os
from pathlib import Path


def read_speed_mbps(root: str | os.PathLike[str], ifname: str) -> int | None:
    """The link speed of ``ifname`` under the sysfs root ``root`` in Mb/s, or None when it is not known."""
    path = Path(root) / "sys" / "class" / "net" / ifname / "speed"
    try:
        text = path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
    try:
        value = int(text, 10)
    except ValueError:
        return None
    return value if value > 0 else None
