"""The NVUE version command and its parser (``fabricd capture`` records the version in its manifest).
The shapes and their captures: :mod:`fabricd.readers.switch.version`."""

from __future__ import annotations

import re

from fabricd.readers.framing import framed
from fabricd.readers.switch.version import first_match, json_version

VERSION_COMMAND = "nv show system"
"""The read-only command that prints the NOS version."""

_RELEASE = re.compile(r"^\s*product-release\s+(\S+)", re.MULTILINE)
"""Cumulus Linux 5.10 and later: ``nv show system`` nests ``version / product-release 5.16.0``."""
_BUILD = re.compile(r"^\s*build\s+(\S.*?)\s*$", re.MULTILINE)
"""Before 5.10: a ``build`` row (``Cumulus Linux 5.x``), as fabricd's lab simulator prints it; no real capture."""


@framed
def parse_version(text: str) -> str | None:
    """The NOS version in ``text`` (the version command's output), or None when it has none."""
    return json_version(text) or first_match(_RELEASE, text) or first_match(_BUILD, text)
