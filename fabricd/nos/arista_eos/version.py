"""The Arista EOS version command and its parser (``fabricd capture`` records the version in its manifest).
The shapes and their captures: :mod:`fabricd.readers.switch.version`."""

from __future__ import annotations

import re

from fabricd.readers.framing import framed
from fabricd.readers.switch.version import first_match, json_version

VERSION_COMMAND = "show version | json"
"""The read-only command that prints the NOS version."""

_VERSION = re.compile(r"^\s*Software image version:\s*(\S+)", re.MULTILINE)


@framed
def parse_version(text: str) -> str | None:
    """The NOS version in ``text`` (the version command's output), or None when it has none."""
    return json_version(text) or first_match(_VERSION, text)
