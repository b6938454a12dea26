"""The NVUE version command and its parser (``fabricd capture`` records the version in its manifest).
The shapes and their captures: :mod:`fabricd.readers.switch.version`."""

from __future__ import annotations

import re

from fabricd.readers.switch.version import version_parser

VERSION_COMMAND = "nv show system"
"""The read-only command that prints the NOS version."""

_RELEASE = re.compile(r"^\s*product-release\s+(\S+)", re.MULTILINE)
"""Cumulus Linux 5.10 and later: ``nv show system`` nests ``version / product-release 5.16.0``."""
_BUILD = re.compile(r"^\s*build\s+(\S.*?)\s*$", re.MULTILINE)
"""Before 5.10: a ``build`` row (``Cumulus Linux 5.x``), as fabricd's lab simulator prints it; no real capture."""

parse_version = version_parser(__name__, _RELEASE, _BUILD)
"""The NOS version in the version command's output, or None (:func:`~fabricd.readers.switch.version.version_parser`)."""
