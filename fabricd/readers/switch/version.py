"""The NOS version a switch reports, for ``fabricd capture``'s manifest: the command per platform and a pure parser.

Shapes (unverified against real captures in this repository; see ``fabricd.readers.roles``): SONiC ``show version``
prints ``SONiC Software Version: SONiC.<release>``; EOS ``show version | json`` has a top-level ``version`` key;
NX-OS ``show version`` prints ``NXOS: version <v>`` (``system: version <v>`` on older releases); NVUE ``nv show
system`` prints a ``build`` row (``Cumulus Linux 5.x``), or a ``build`` key with ``-o json``.
"""

from __future__ import annotations

import json
import re

VERSION_COMMANDS: dict[str, str] = {
    "sonic": "show version",
    "arista_eos": "show version | json",
    "cisco_nxos": "show version",
    "cumulus_nvue": "nv show system",
}
"""Platform id -> the read-only command that prints the NOS version."""

_TEXT: dict[str, re.Pattern[str]] = {
    "sonic": re.compile(r"^\s*SONiC Software Version:\s*(\S+)", re.MULTILINE),
    "arista_eos": re.compile(r"^\s*Software image version:\s*(\S+)", re.MULTILINE),
    "cisco_nxos": re.compile(r"^\s*(?:NXOS|system):\s+version\s+(\S+)", re.MULTILINE),
    "cumulus_nvue": re.compile(r"^\s*build\s+(\S.*?)\s*$", re.MULTILINE),
}


def parse_version(platform: str, text: str) -> str | None:
    """The version string in ``text`` (a version command's output), or None when it has none."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict):
            for key in ("version", "build"):
                value = data.get(key)
                if isinstance(value, str) and value.strip():
                    return value.strip()
    pattern = _TEXT.get(platform)
    if pattern is None:
        return None
    m = pattern.search(text)
    return m.group(1) if m else None
