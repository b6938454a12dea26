"""Find the Debian mirror this machine's apt already uses, so the lab image never hard-codes a mirror host.

Reads both apt source formats:

* deb822 ``/etc/apt/sources.list.d/*.sources`` (``Types:``/``URIs:``/``Suites:``/``Components:``/``Signed-By:``),
  the default since Debian 12;
* one-line ``/etc/apt/sources.list`` and ``/etc/apt/sources.list.d/*.list`` (``deb [opts] URI suite comp...``).

Source: sources.list(5) of apt 2.6 (Debian 12). Pure functions over text; the caller passes the root so tests use a
fake ``/etc``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from fabricd.errors import UsageError


@dataclass(frozen=True)
class AptSource:
    """One ``deb`` entry: mirror URI, its suites and components, the keyring that signs it (if named)."""

    uri: str
    suites: tuple[str, ...]
    components: tuple[str, ...]
    signed_by: str | None
    origin: str
    """``file`` (and stanza/line number) the entry came from, for messages."""


def parse_deb822(text: str, origin: str) -> list[AptSource]:
    """Parse a deb822 ``.sources`` file. Stanzas are separated by blank lines; ``#`` lines are comments."""
    out: list[AptSource] = []
    for n, stanza in enumerate(re.split(r"\n\s*\n", text), start=1):
        fields: dict[str, str] = {}
        key = ""
        for raw in stanza.splitlines():
            if raw.startswith("#") or not raw.strip():
                continue
            if raw[0] in " \t" and key:  # continuation line
                fields[key] += " " + raw.strip()
                continue
            name, sep, value = raw.partition(":")
            if not sep:
                continue
            key = name.strip().lower()
            fields[key] = value.strip()
        if "deb" not in fields.get("types", "").split():
            continue
        if fields.get("enabled", "yes").lower() == "no":
            continue
        signed = fields.get("signed-by")
        for uri in fields.get("uris", "").split():
            out.append(
                AptSource(
                    uri=uri.rstrip("/"),
                    suites=tuple(fields.get("suites", "").split()),
                    components=tuple(fields.get("components", "").split()),
                    signed_by=signed if signed and signed.startswith("/") else None,
                    origin=f"{origin} stanza {n}",
                )
            )
    return out


_ONE_LINE = re.compile(r"^\s*deb\s+(?:\[(?P<opts>[^\]]*)\]\s+)?(?P<uri>\S+)\s+(?P<suite>\S+)\s*(?P<comps>.*)$")


def parse_one_line(text: str, origin: str) -> list[AptSource]:
    """Parse one-line style entries (``deb [signed-by=...] URI suite component...``); ``deb-src`` is skipped."""
    out: list[AptSource] = []
    for n, line in enumerate(text.splitlines(), start=1):
        m = _ONE_LINE.match(line.split("#", 1)[0])
        if not m:
            continue
        opts = dict(o.split("=", 1) for o in (m.group("opts") or "").split() if "=" in o)
        signed = opts.get("signed-by")
        out.append(
            AptSource(
                uri=m.group("uri").rstrip("/"),
                suites=(m.group("suite"),),
                components=tuple(m.group("comps").split()),
                signed_by=signed if signed and signed.startswith("/") else None,
                origin=f"{origin} line {n}",
            )
        )
    return out


def read_sources(root: Path = Path("/")) -> list[AptSource]:
    """Every enabled ``deb`` entry configured under ``root/etc/apt``, in apt's reading order."""
    etc = root / "etc" / "apt"
    found: list[AptSource] = []
    main_list = etc / "sources.list"
    if main_list.is_file():
        found += parse_one_line(main_list.read_text(errors="replace"), str(main_list))
    parts = etc / "sources.list.d"
    if parts.is_dir():
        for f in sorted(parts.iterdir()):
            if f.suffix == ".sources":
                found += parse_deb822(f.read_text(errors="replace"), str(f))
            elif f.suffix == ".list":
                found += parse_one_line(f.read_text(errors="replace"), str(f))
    return found


def host_codename(root: Path = Path("/")) -> str | None:
    """``VERSION_CODENAME`` from ``root/etc/os-release`` when the host is Debian, else None."""
    path = root / "etc" / "os-release"
    if not path.is_file():
        return None
    values: dict[str, str] = {}
    for line in path.read_text(errors="replace").splitlines():
        k, sep, v = line.partition("=")
        if sep:
            values[k.strip()] = v.strip().strip('"')
    if values.get("ID") != "debian":
        return None
    return values.get("VERSION_CODENAME") or None


def pick_mirror(sources: list[AptSource], suite: str) -> AptSource:
    """The first configured source that carries ``suite`` with component ``main``.

    Raises UsageError listing what was found when none does, with the fix (``--mirror`` or
    ``FABRICD_VM_MIRROR``).
    """
    for src in sources:
        if suite in src.suites and "main" in src.components and src.uri.split(":", 1)[0] in ("http", "https", "file"):
            return src
    seen = "; ".join(f"{s.uri} {' '.join(s.suites)} ({s.origin})" for s in sources) or "no deb entries"
    raise UsageError(
        f"no apt source on this machine carries Debian '{suite}' main (found: {seen})",
        hint=f"add a Debian '{suite}' mirror to /etc/apt/sources.list.d/, or pass --mirror URL (env FABRICD_VM_MIRROR)",
    )
