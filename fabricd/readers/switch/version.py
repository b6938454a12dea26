"""The NOS version a switch reports, for ``fabricd capture``'s manifest: the command per platform and a pure parser.

Shapes, from the real captures in tests/golden/readers/switch_version/: SONiC ``show version`` prints ``SONiC
Software Version: SONiC.<release>``; EOS ``show version | json`` has a top-level ``version`` key; NX-OS ``show
version`` prints ``NXOS: version <v>`` (``system: version <v>`` on older and ACI releases); NVUE ``nv show system``
nests ``version / product-release 5.16.0`` (Cumulus Linux 5.10 and later). Releases before 5.10 printed a ``build``
row (``Cumulus Linux 5.x``) instead, as fabricd's lab simulator does: read too, but no real capture of it is here.
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
_NVUE_RELEASE = re.compile(r"^\s*product-release\s+(\S+)", re.MULTILINE)
"""Cumulus Linux 5.10 and later: ``nv show system`` nests ``version / product-release 5.16.0``."""


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
    if platform == "cumulus_nvue":
        release = _NVUE_RELEASE.search(text)
        if release:
            return release.group(1)
    pattern = _TEXT.get(platform)
    if pattern is None:
        return None
    m = pattern.search(text)
    return m.group(1) if m else None
