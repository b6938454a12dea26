"""Secret scrubbing for ``fabricd capture``: passwords, password hashes, keys, SNMP communities and TACACS+/RADIUS
keys are replaced by ``<redacted>`` before a device's output is written to disk, so a capture can be shared.

Two forms:

- **CLI configs** (EOS, NX-OS, NVUE ``nv set`` lines, and any text output): a secret is the value after a secret
  keyword (``password``, ``secret``, ``key``, ``community``, ``hashed-password``, ``auth``/``priv`` of SNMPv3 users,
  ``ssh-key``...), after any encryption-type or hash-type words (``7``, ``5``, ``sha512``, ``md5``, ``auth``...).
  Quoted values are replaced whole; the keyword and the type words stay, so the line keeps its shape.
- **SONiC CONFIG_DB JSON**: the string value of a secret field (``passkey``, ``password``, ``secret``, ``auth_key``,
  ``priv_key``, ``community``...) and the names of ``SNMP_COMMUNITY`` entries. The text is edited in place (not
  re-serialised), so everything else stays byte for byte.

Over-scrubbing is preferred to a leak: a false positive costs a ``<redacted>`` token in a line fabricd does not
read. Lines fabricd parses (QoS, PFC, ECN, watchdog, MTU) carry none of these keywords.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

REDACTED = "<redacted>"

_KEYWORDS = (
    "password",
    "passwd",
    "secret",
    "passkey",
    "hashed-password",
    "key",
    "key-string",
    "authentication-key",
    "community",
    "readonly-community",
    "readwrite-community",
    "read-only-community",
    "read-write-community",
    "ssh-key",
    "sshkey",
    "authorized-key",
    "shared-secret",
    "pre-shared-key",
    "psk",
    "auth-password",
    "priv-password",
    "localizedkey",
    "md5",
    "encryption-key",
)
_TYPES = (
    r"[0-9]",
    "sha512",
    "sha256",
    "sha1",
    "sha",
    "md5",
    "aes",
    "aes-128",
    "aes128",
    "aes-256",
    "des",
    "3des",
    "auth",
    "priv",
    "encrypted",
    "clear",
    "cleartext",
    "hashed",
    "plain",
    "plaintext",
    "type",
    "ssh-rsa",
    "ssh-ed25519",
    "ssh-dss",
    r"ecdsa-sha2-nistp\d+",
    "localizedkey",
    "hash",
    "ascii",
)
_LINE = re.compile(
    r"(?<![\w-])(?P<kw>" + "|".join(re.escape(k) for k in sorted(_KEYWORDS, key=len, reverse=True)) + r")"
    r"(?P<sep>(?:[ \t]+(?:" + "|".join(_TYPES) + r"))*[ \t]+)"
    r"(?!(?:strength-check|encryption|policy|prompt|required|min-length|history|lifetime)\b)"
    r"(?P<val>\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'|[^\s]+)",
    re.IGNORECASE,
)
_SNMPV3 = re.compile(
    r"(?<![\w-])(?P<kw>auth|priv)(?P<sep>[ \t]+(?:(?:md5|sha\d*|des|3des|aes\d*|aes-\d+)[ \t]+)?)"
    r"(?P<val>(?!(?:md5|sha\d*|des|3des|aes\d*|aes-\d+)\b)\S+)",
    re.IGNORECASE,
)
"""``snmp-server user U G auth md5 SECRET priv aes-128 SECRET`` (the secret follows the algorithm, which
``priv`` may omit: ``priv 0x...``)."""

_JSON_FIELDS = (
    "passkey",
    "password",
    "passwd",
    "secret",
    "key",
    "auth_key",
    "priv_key",
    "community",
    "auth_password",
    "priv_password",
    "hashed_password",
    "shared_secret",
    "psk",
    "tacacs_key",
    "radius_key",
    "snmp_rocommunity",
    "snmp_rwcommunity",
    "auth_pass",
    "priv_pass",
)
_JSON_FIELD = re.compile(
    r'(?P<head>"(?P<name>(?:[^"\\]*[_-])?(?:' + "|".join(re.escape(f) for f in _JSON_FIELDS) + r'))"\s*:\s*)'
    r'"(?:[^"\\]|\\.)*"',
    re.IGNORECASE,
)
"""A secret field: one of ``_JSON_FIELDS``, alone or after a ``_``/``-`` (``tacacs_passkey``), not inside a word
(``monkey``, ``sortKey`` stay)."""
_SECRET_TABLES = ("SNMP_COMMUNITY",)
"""CONFIG_DB tables whose entry *names* are secrets (``SNMP_COMMUNITY|public``)."""


@dataclass(frozen=True, slots=True)
class Scrubbed:
    """The scrubbed text and how many secrets were replaced."""

    text: str
    redactions: int


def _value(val: str) -> str:
    if val.startswith('"'):
        return f'"{REDACTED}"'
    if val.startswith("'"):
        return f"'{REDACTED}'"
    return REDACTED


def scrub_text(text: str) -> Scrubbed:
    """Scrub a CLI config or any text output line by line."""
    count = 0

    def repl(m: re.Match[str]) -> str:
        nonlocal count
        if m.group("val") in (REDACTED, f'"{REDACTED}"', f"'{REDACTED}'"):
            return m.group(0)
        count += 1
        return f"{m.group('kw')}{m.group('sep')}{_value(m.group('val'))}"

    out = _SNMPV3.sub(repl, text)
    out = _LINE.sub(repl, out)
    return Scrubbed(out, count)


def _secret_names(data: Any) -> list[str]:
    names: list[str] = []
    if isinstance(data, dict):
        for table in _SECRET_TABLES:
            entries = data.get(table)
            if isinstance(entries, dict):
                names.extend(str(k) for k in entries)
    return names


def scrub_json(text: str, data: Any) -> Scrubbed:
    """Scrub a JSON document (SONiC CONFIG_DB) in place: secret fields' string values and secret entry names."""
    count = 0

    def field(m: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return f'{m.group("head")}"{REDACTED}"'

    out = _JSON_FIELD.sub(field, text)
    for i, name in enumerate(_secret_names(data), 1):
        pattern = re.compile(re.escape(json.dumps(name)) + r"(?=\s*:)")
        out, n = pattern.subn(f'"{REDACTED}-{i}"', out)
        count += n
    return Scrubbed(out, count)


def scrub(text: str) -> Scrubbed:
    """Scrub any device output: JSON documents field-wise, everything else line-wise."""
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if data is not None:
            return scrub_json(text, data)
    return scrub_text(text)
