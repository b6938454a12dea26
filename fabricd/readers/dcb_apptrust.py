"""iproute2 ``dcb apptrust show dev IF`` text: the trusted APP selectors, most trusted first.

Grammar from iproute2 dcb/dcb_apptrust.c (``dcb_apptrust_print_order``: ``order: `` then ``<selector> `` for each
trusted selector, then a newline; selector names from its ``selector_names``) and the dcb-apptrust(8) example
(tests/golden/readers/host_text/dcb-apptrust-show-manpage.txt, whose header names both). ``order:`` with no
selector is "trust nothing" (``dcb apptrust set dev IF order`` with an empty list). A text without an ``order:``
line, or with an unknown selector, is a located :class:`TextParseError`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .framing import framed
from .textparse import TextParseError, content_lines

SELECTORS = ("ethtype", "stream-port", "dgram-port", "port", "dscp", "pcp")
"""The selector names dcb prints (dcb_apptrust.c ``selector_names``)."""


@dataclass(frozen=True, slots=True)
class DcbApptrust:
    order: tuple[str, ...]


@framed
def parse_dcb_apptrust(text: str, source: str = "dcb apptrust show") -> DcbApptrust:
    found: tuple[str, ...] | None = None
    for n, line in content_lines(text):
        key, sep, rest = line.strip().partition(":")
        if not sep or key != "order":
            raise TextParseError(
                source,
                n,
                f"unexpected line {line.strip()[:60]!r}",
                expected="'order: SELECTOR...' as `dcb apptrust show` prints it",
                got=line.strip()[:80],
            )
        names = tuple(rest.split())
        bad = [s for s in names if s not in SELECTORS]
        if bad:
            raise TextParseError(source, n, f"unknown selector {bad[0]!r}", expected=" or ".join(SELECTORS), got=bad[0])
        found = names
    if found is None:
        raise TextParseError(
            source, 1, "no 'order:' line", expected="'order: SELECTOR...'", got=text.strip()[:80] or "nothing"
        )
    return DcbApptrust(order=found)
