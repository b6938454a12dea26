"""What the platform packs' version parsers share (``fabricd/nos/<platform>/version.py``, for ``fabricd capture``'s
manifest): the version of a JSON answer and the first match of a text pattern.

Shapes, from the real captures in tests/golden/readers/switch_version/: SONiC ``show version`` prints ``SONiC
Software Version: SONiC.<release>``; EOS ``show version | json`` has a top-level ``version`` key; NX-OS ``show
version`` prints ``NXOS: version <v>`` (``system: version <v>`` on older and ACI releases); NVUE ``nv show system``
nests ``version / product-release 5.16.0`` (Cumulus Linux 5.10 and later). Releases before 5.10 printed a ``build``
row (``Cumulus Linux 5.x``) instead, as fabricd's lab simulator does: read too, but no real capture of it is here.

A pack's ``parse_version`` is :func:`version_parser` of its patterns: the pack declares them, the rule is here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from fabricd.readers.framing import framed, json_object_text


def json_version(text: str) -> str | None:
    """The top-level ``version`` (else ``build``) string of a JSON answer; None for text or a JSON without one."""
    try:
        data = json_object_text(text)
    except ValueError:
        return None
    if isinstance(data, dict):
        for key in ("version", "build"):
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    return None


def first_match(pattern: re.Pattern[str], text: str) -> str | None:
    """Group 1 of the first match of ``pattern`` in ``text``, or None."""
    m = pattern.search(text)
    return m.group(1) if m else None


def version_parser(module: str, *patterns: re.Pattern[str]) -> Callable[[str], str | None]:
    """A pack's ``parse_version`` (framed, named as defined in ``module``, the pack's version module): the version
    of a JSON answer (:func:`json_version`), else group 1 of the first of ``patterns`` that matches, else None."""

    def parse_version(text: str) -> str | None:
        """The NOS version in ``text`` (the version command's output), or None when it has none."""
        return json_version(text) or next((v for p in patterns if (v := first_match(p, text))), None)

    parse_version.__module__ = module
    return framed(parse_version)
