"""Optional per-command latency for the lab switches, so that a push measures round trips and concurrency.

Without it a simulator answers in microseconds and a push benchmark measures the simulators' and the client's CPU.
A real switch answers after the management network's round trip and its own processing, and its commit (an EOS
config session ``commit``, NX-OS ``copy running-config startup-config``, SONiC ``config apply-patch``, NVUE
``nv config apply``) takes seconds. The model, per SSH session:

- every line's echo and answer come back no earlier than one round trip (``rtt_ms``) after the line arrived;
- the switch handles one line at a time: each takes ``command_ms``, a commit line ``commit_ms``, a ``show`` line
  ``show_ms``; lines sent in one burst queue behind each other, as on a device;
- so a client that waits for each line's prompt before sending the next pays ``rtt + command`` per line, and one
  that sends a burst pays the round trip once.

Given as ``rtt_ms=N,command_ms=N,show_ms=N,commit_ms=N`` (any subset; the rest 0) in the lab spec's ``latency``
field (``bench/push.py --latency``). **The figures in :data:`PROFILES` are unverified**: no capture of device
timings exists in this repository; they are orders of magnitude chosen to match the statement that a commit takes
seconds, not microseconds, and are to be replaced by measured ones (``time`` around the same commands on a
device) when someone has them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabricd.errors import UsageError
from fabricd.model import Platform

COMMIT_LINES: dict[Platform, re.Pattern[str]] = {
    Platform.ARISTA_EOS: re.compile(r"^\s*(commit\b|configure session \S+ commit\b)"),
    Platform.CISCO_NXOS: re.compile(r"^\s*(copy running-config startup-config|rollback running-config\b)"),
    Platform.SONIC: re.compile(r"^\s*(sudo\s+)?config\s+(apply-patch|rollback|save|replace)\b"),
    Platform.CUMULUS_NVUE: re.compile(r"^\s*nv\s+config\s+(apply|save)\b"),
}
SHOW_LINE = re.compile(r"^\s*(show\b|nv\s+(show|config\s+diff)\b|(sudo\s+)?(show|sonic-cfggen|config\s+checkpoint)\b)")


@dataclass(frozen=True)
class Latency:
    """Seconds: the round trip, and a line's processing time by kind (see the module docstring)."""

    rtt_s: float = 0.0
    command_s: float = 0.0
    show_s: float = 0.0
    commit_s: float = 0.0

    def __bool__(self) -> bool:
        return any((self.rtt_s, self.command_s, self.show_s, self.commit_s))

    def processing(self, platform: Platform, line: str) -> float:
        pattern = COMMIT_LINES.get(platform)
        if pattern is not None and pattern.search(line):
            return self.commit_s
        if SHOW_LINE.search(line):
            return self.show_s
        return self.command_s

    def to_text(self) -> str:
        return (
            f"rtt_ms={self.rtt_s * 1000:g},command_ms={self.command_s * 1000:g},"
            f"show_ms={self.show_s * 1000:g},commit_ms={self.commit_s * 1000:g}"
        )


_FIELDS = {"rtt_ms": "rtt_s", "command_ms": "command_s", "show_ms": "show_s", "commit_ms": "commit_s"}

PROFILES: dict[str, str] = {
    # unverified (see the module docstring): a management network inside one site, a few ms per config line,
    # a show of the running config a few hundred ms, a commit of seconds
    "datacenter-unverified": "rtt_ms=1,command_ms=5,show_ms=300,commit_ms=2000",
    # unverified: the same devices reached over a WAN from a central automation host
    "remote-site-unverified": "rtt_ms=40,command_ms=5,show_ms=300,commit_ms=2000",
}


def parse_latency(text: str) -> Latency:
    """``rtt_ms=N,command_ms=N,show_ms=N,commit_ms=N`` (any subset) or a :data:`PROFILES` name."""
    text = PROFILES.get(text.strip(), text)
    values: dict[str, float] = {}
    form = (
        "comma-separated NAME=MS with NAME one of "
        + ", ".join(_FIELDS)
        + " (or a profile: "
        + ", ".join(PROFILES)
        + ")"
    )
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, eq, num = part.partition("=")
        if not eq or name.strip() not in _FIELDS:
            raise UsageError(f"latency {text!r}: {part!r} is not NAME=MS; expected {form}")
        try:
            ms = float(num)
        except ValueError:
            raise UsageError(f"latency {text!r}: {num!r} in {part!r} is not a number of ms") from None
        if not 0 <= ms <= 600_000:
            raise UsageError(f"latency {text!r}: {part!r} out of range; expected 0-600000 ms")
        values[_FIELDS[name.strip()]] = ms / 1000.0
    return Latency(**values)
