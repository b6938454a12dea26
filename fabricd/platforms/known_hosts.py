"""What OpenSSH reads in a known_hosts file and paramiko skips: ``@revoked`` lines and host patterns.

paramiko's ``HostKeys`` drops a line that starts with a marker (``@revoked``, ``@cert-authority``) and compares
host names literally, so a key OpenSSH refuses (revoked) or compares (``*.lab``, ``10.0.0.?``, ``!bastion``) was,
for fabricd, an unknown host, which ``--accept-new-host-keys`` then trusted on first use. This module reads those
lines itself (sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT"): the revoked keys, and the entries whose host field holds a
pattern; :mod:`fabricd.platforms.netmiko_base` consults both before authenticating. ``@cert-authority`` lines are
ignored (fabricd does not do host certificates, so it never trusts one).

:func:`read_known_hosts` also reads the plain entries line by line: paramiko's ``HostKeys.load`` raises on the
first line it cannot decode (a marker line, a truncated key), which failed every connection; OpenSSH skips such a
line, and so does fabricd.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import paramiko

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PatternEntry:
    """One key line the literal lookup cannot use: revoked, or filed under a host pattern."""

    path: str
    patterns: tuple[str, ...]
    key_type: str
    key_b64: str


@lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    return re.compile("".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern), re.DOTALL)


def host_matches(patterns: tuple[str, ...], name: str) -> bool:
    """OpenSSH's match_hostname: some pattern matches ``name`` (lowercased) and no negated (``!``) one does; a
    hashed entry (``|1|salt|hmac``) matches by its HMAC."""
    name = name.lower()
    positive = False
    for raw in patterns:
        negated = raw.startswith("!")
        pattern = raw[1:] if negated else raw
        if pattern.startswith("|1|"):  # a hashed name (ssh-keygen -H): no pattern, compared by its HMAC
            hit = paramiko.HostKeys.hash_host(name, pattern) == pattern
        else:
            hit = _glob(pattern.lower()).fullmatch(name) is not None
        if hit:
            if negated:
                return False
            positive = True
    return positive


@dataclass
class KnownHostsExtras:
    """The ``@revoked`` keys and the pattern entries of the consulted known_hosts files."""

    revoked: list[PatternEntry] = field(default_factory=list)
    patterned: list[PatternEntry] = field(default_factory=list)

    def load(self, path: Path, text: str) -> None:
        for line in text.splitlines():
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            marker = fields[0] if fields[0].startswith("@") else None
            if marker is not None:
                fields = fields[1:]
            if len(fields) < 3 or marker == "@cert-authority":
                continue
            hosts, key_type, key_b64 = fields[0], fields[1], fields[2]
            entry = PatternEntry(str(path), tuple(hosts.split(",")), key_type, key_b64)
            if marker == "@revoked":
                self.revoked.append(entry)
            elif not hosts.startswith("|") and any(c in hosts for c in "*?!"):
                self.patterned.append(entry)

    def revoked_in(self, name: str, key_type: str, key_b64: str) -> str | None:
        """The file that revokes this key for ``name``, or None."""
        return next(
            (
                e.path
                for e in self.revoked
                if e.key_type == key_type and e.key_b64 == key_b64 and host_matches(e.patterns, name)
            ),
            None,
        )

    def pattern_verdict(self, name: str, key_type: str, key_b64: str) -> tuple[bool, PatternEntry] | None:
        """None when no pattern entry names ``name``; else ``(True, entry)`` when one holds this very key and none
        holds another key of its type, ``(False, entry)`` otherwise (another key of the type, or only keys of other
        types: the host is known, and not with this key, as paramiko treats a literal entry)."""
        matching = [e for e in self.patterned if host_matches(e.patterns, name)]
        if not matching:
            return None
        same_type = [e for e in matching if e.key_type == key_type]
        other = next((e for e in same_type if e.key_b64 != key_b64), None)
        if other is not None:
            return (False, other)
        if same_type:
            return (True, same_type[0])
        return (False, matching[0])


def read_known_hosts(path: Path) -> tuple[paramiko.HostKeys, str]:
    """The plain entries of ``path`` as paramiko ``HostKeys`` (marker and undecodable lines skipped), and its text.
    Raises OSError, or UnicodeDecodeError for a file that is not UTF-8."""
    text = path.read_text(encoding="utf-8")
    keys = paramiko.HostKeys()
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", "@")):
            continue
        try:
            entry = paramiko.hostkeys.HostKeyEntry.from_line(line, lineno)
        except (paramiko.hostkeys.InvalidHostKey, ValueError) as exc:
            log.debug("%s:%d: skipped a known_hosts line paramiko cannot read: %s", path, lineno, exc)
            continue
        if entry is not None:
            keys._entries.append(entry)
    return keys, text
