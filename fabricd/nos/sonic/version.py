"""The SONiC version command and its parser (``fabricd capture`` records the version in its manifest).
The shapes and their captures: :mod:`fabricd.readers.switch.version`."""

from __future__ import annotations

import re

from fabricd.readers.switch.version import version_parser

VERSION_COMMAND = "show version"
"""The read-only command that prints the NOS version."""

_VERSION = re.compile(r"^\s*SONiC Software Version:\s*(\S+)", re.MULTILINE)

parse_version = version_parser(__name__, _VERSION)
"""The NOS version in the version command's output, or None (:func:`~fabricd.readers.switch.version.version_parser`)."""
