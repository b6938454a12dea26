"""iproute2 ``dcb pfc show``, ``dcb ets show``, ``dcb buffer show`` and ``dcb app show`` text, as a bundle holds it.

Each output line is ``key value...``; map values are ``index:value`` pairs (dcb(8) "prio-pfc 0:off 3:on").
Grammar and keys from iproute2 dcb/dcb_pfc.c, dcb_ets.c, dcb_buffer.c, dcb_app.c and their man pages; captures in
tests/golden/readers/dcb/ (man-page examples, headers name each). Sizes in ``dcb buffer`` are printed by
iproute2's ``print_size`` (``b``, ``Kb``, ``Mb``, ``Gb`` in powers of 1024 bytes), or as plain byte counts
(``buffer-size 0:10000``: the first dcb-buffer patch, see its commit message). Keys are read in either spelling
(``ets-cap``/``ets_cap``: the first dcb-ets patch printed ``ets_cap``); a key printed twice is an error. An unknown
key, a bad pair, or an output with none of the command's keys is a located :class:`TextParseError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .framing import framed
from .textparse import TextParseError, content_lines, to_int

DSCP_NAMES = {
    **{f"CS{i}": i * 8 for i in range(8)},
    **{f"AF{c}{d}": c * 8 + d * 2 for c in range(1, 5) for d in range(1, 4)},
    "EF": 46,
    "VA": 44,
    "LE": 1,
}
"""DSCP names iproute2 prints without ``-N`` (lib/rt_names ``rtnl_dsfield``/dcb_app DSCP names; RFC 2474/2597/3246)."""

_SIZE = re.compile(r"^(?P<n>\d+(?:\.\d+)?)(?P<unit>[KMG]?b)?$")
_SCALE = {"b": 1, "Kb": 1024, "Mb": 1024**2, "Gb": 1024**3}


@dataclass(frozen=True, slots=True)
class DcbPfc:
    pfc_cap: int | None
    macsec_bypass: bool | None
    delay: int | None
    prio_pfc: dict[int, bool]
    requests: dict[int, int] = field(default_factory=dict)
    indications: dict[int, int] = field(default_factory=dict)

    @property
    def mask(self) -> int:
        return sum(1 << p for p, on in self.prio_pfc.items() if on)


@dataclass(frozen=True, slots=True)
class DcbEts:
    willing: bool | None
    ets_cap: int | None
    cbs: bool | None
    tc_bw: dict[int, int]
    tc_tsa: dict[int, str]
    prio_tc: dict[int, int]
    reco_tc_bw: dict[int, int] = field(default_factory=dict)
    reco_tc_tsa: dict[int, str] = field(default_factory=dict)
    reco_prio_tc: dict[int, int] = field(default_factory=dict)
    pg_bw: dict[int, int] = field(default_factory=dict)
    """``pg-bw``: the IEEE ETS ``tc_rx_bw`` map (iproute2 dcb_ets.c prints it under the CEE name), a field of its
    own: in the full output it follows ``tc-bw`` and must not replace it."""


@dataclass(frozen=True, slots=True)
class DcbBuffer:
    prio_buffer: dict[int, int]
    buffer_size_bytes: dict[int, int]
    total_size_bytes: int | None


@dataclass(frozen=True, slots=True)
class DcbApp:
    dscp_prio: list[tuple[int, int]]
    """(DSCP, priority) pairs in printed order (a DSCP may map to several priorities)."""


def _pairs(tokens: list[str], source: str, n: int, key: str, *, lo: int = 0, hi: int = 7) -> list[tuple[int, str]]:
    out = []
    for tok in tokens:
        idx, sep, val = tok.partition(":")
        if not sep or not val:
            raise TextParseError(source, n, f"{key}: not an index:value pair", expected="e.g. 3:on", got=tok)
        i = to_int(idx, source, n, key)
        if not lo <= i <= hi:
            raise TextParseError(source, n, f"{key}: index out of range", expected=f"{lo}-{hi}", got=idx)
        out.append((i, val))
    if not out:
        raise TextParseError(source, n, f"{key} has no values", expected="index:value pairs", got="nothing")
    return out


def _onoff(value: str, source: str, n: int, key: str) -> bool:
    if value not in ("on", "off"):
        raise TextParseError(source, n, key, expected="on or off", got=value)
    return value == "on"


def _key(token: str, keys: frozenset[str]) -> str | None:
    """``token`` as one of ``keys``: iproute2 releases spell some keys with ``_`` (``ets_cap``), others with ``-``."""
    if token in keys:
        return token
    hyphen = token.replace("_", "-")
    return hyphen if hyphen in keys else None


def _lines(
    text: str, source: str, keys: frozenset[str], repeatable: frozenset[str] = frozenset()
) -> list[tuple[int, str, list[str]]]:
    """Split into (line, key, values); the key may open a line more than once per line (pfc-cap ... delay N). A key
    printed twice is an error naming both lines (a later line must never silently replace an earlier one), except
    ``repeatable`` keys whose lines add entries (``dscp-prio``)."""
    out = []
    seen: dict[str, int] = {}
    for n, line in content_lines(text):
        tokens = line.split()
        i = 0
        while i < len(tokens):
            key = _key(tokens[i], keys)
            if key is None:
                raise TextParseError(source, n, "unknown key", expected=" or ".join(sorted(keys)), got=tokens[i])
            if key in seen and key not in repeatable:
                raise TextParseError(
                    source,
                    n,
                    f"{key} printed twice (first on line {seen[key]})",
                    expected="one output of one command",
                    got=line.strip(),
                )
            seen[key] = n
            j = i + 1
            while j < len(tokens) and _key(tokens[j], keys) is None:
                j += 1
            out.append((n, key, tokens[i + 1 : j]))
            i = j
    if not out:
        raise TextParseError(source, 1, "no output", expected=" or ".join(sorted(keys)), got=text.strip()[:80])
    return out


def _one(values: list[str], source: str, n: int, key: str) -> str:
    if len(values) != 1:
        raise TextParseError(source, n, f"{key} takes one value", expected="one value", got=" ".join(values))
    return values[0]


PFC_KEYS = frozenset({"pfc-cap", "macsec-bypass", "delay", "prio-pfc", "pg-pfc", "requests", "indications"})
"""``pg-pfc`` is how the first dcb-pfc patch printed ``prio-pfc`` (its commit message shows an mlxsw port so)."""


@framed
def parse_dcb_pfc(text: str, source: str = "dcb pfc show") -> DcbPfc:
    got: dict[str, object] = {}
    for n, key, values in _lines(text, source, PFC_KEYS):
        if key == "pfc-cap":
            got["pfc_cap"] = to_int(_one(values, source, n, key), source, n, key)
        elif key == "delay":
            got["delay"] = to_int(_one(values, source, n, key), source, n, key)
        elif key == "macsec-bypass":
            got["macsec_bypass"] = _onoff(_one(values, source, n, key), source, n, key)
        elif key in ("prio-pfc", "pg-pfc"):
            if "prio_pfc" in got:
                raise TextParseError(
                    source, n, f"{key} and prio-pfc/pg-pfc both printed", expected="one of them", got=key
                )
            got["prio_pfc"] = {i: _onoff(v, source, n, key) for i, v in _pairs(values, source, n, key)}
        else:
            got[key] = {i: to_int(v, source, n, key) for i, v in _pairs(values, source, n, key)}
    if "prio_pfc" not in got:
        raise TextParseError(source, 1, "no prio-pfc line", expected="prio-pfc 0:off ... 7:off", got=text.strip()[:80])
    return DcbPfc(
        pfc_cap=got.get("pfc_cap"),  # type: ignore[arg-type]
        macsec_bypass=got.get("macsec_bypass"),  # type: ignore[arg-type]
        delay=got.get("delay"),  # type: ignore[arg-type]
        prio_pfc=got["prio_pfc"],  # type: ignore[arg-type]
        requests=got.get("requests", {}),  # type: ignore[arg-type]
        indications=got.get("indications", {}),  # type: ignore[arg-type]
    )


ETS_KEYS = frozenset(
    {"willing", "ets-cap", "cbs", "tc-bw", "pg-bw", "tc-tsa", "prio-tc", "reco-tc-bw", "reco-tc-tsa", "reco-prio-tc"}
)
TSA = frozenset({"strict", "cbs", "ets", "vendor"})


@framed
def parse_dcb_ets(text: str, source: str = "dcb ets show") -> DcbEts:
    got: dict[str, object] = {}
    for n, key, values in _lines(text, source, ETS_KEYS):
        name = key.replace("-", "_")
        if key in ("willing", "cbs"):
            got[name] = _onoff(_one(values, source, n, key), source, n, key)
        elif key == "ets-cap":
            got[name] = to_int(_one(values, source, n, key), source, n, key)
        elif key.endswith("tc-tsa"):
            pairs = _pairs(values, source, n, key)
            for _, v in pairs:
                if v not in TSA:
                    raise TextParseError(source, n, f"{key}: unknown TSA", expected=" or ".join(sorted(TSA)), got=v)
            got[name] = dict(pairs)
        elif key.endswith("bw"):
            pairs_bw = {i: to_int(v, source, n, key) for i, v in _pairs(values, source, n, key)}
            if any(not 0 <= v <= 100 for v in pairs_bw.values()):
                raise TextParseError(source, n, f"{key}: bandwidth", expected="0-100 %", got=" ".join(values))
            got[name] = pairs_bw
        else:  # prio-tc, reco-prio-tc
            got[name] = {i: to_int(v, source, n, key) for i, v in _pairs(values, source, n, key)}
    if not any(k in got for k in ("tc_bw", "tc_tsa", "prio_tc")):
        raise TextParseError(
            source, 1, "no tc-bw, tc-tsa or prio-tc line", expected="the ETS maps", got=text.strip()[:80]
        )
    return DcbEts(
        willing=got.get("willing"),  # type: ignore[arg-type]
        ets_cap=got.get("ets_cap"),  # type: ignore[arg-type]
        cbs=got.get("cbs"),  # type: ignore[arg-type]
        tc_bw=got.get("tc_bw", {}),  # type: ignore[arg-type]
        tc_tsa=got.get("tc_tsa", {}),  # type: ignore[arg-type]
        prio_tc=got.get("prio_tc", {}),  # type: ignore[arg-type]
        reco_tc_bw=got.get("reco_tc_bw", {}),  # type: ignore[arg-type]
        reco_tc_tsa=got.get("reco_tc_tsa", {}),  # type: ignore[arg-type]
        reco_prio_tc=got.get("reco_prio_tc", {}),  # type: ignore[arg-type]
        pg_bw=got.get("pg_bw", {}),  # type: ignore[arg-type]
    )


BUFFER_KEYS = frozenset({"prio-buffer", "buffer-size", "total-size"})


def _size(value: str, source: str, n: int, key: str) -> int:
    m = _SIZE.match(value)
    if m is None:
        raise TextParseError(
            source, n, f"{key}: size", expected="a size like 10Kb, 1Mb, 512b or 10000 (bytes)", got=value
        )
    return int(float(m.group("n")) * _SCALE[m.group("unit") or "b"])


@framed
def parse_dcb_buffer(text: str, source: str = "dcb buffer show") -> DcbBuffer:
    prio: dict[int, int] = {}
    sizes: dict[int, int] = {}
    total: int | None = None
    for n, key, values in _lines(text, source, BUFFER_KEYS):
        if key == "prio-buffer":
            prio = {i: to_int(v, source, n, key) for i, v in _pairs(values, source, n, key)}
        elif key == "buffer-size":
            sizes = {i: _size(v, source, n, key) for i, v in _pairs(values, source, n, key)}
        else:
            total = _size(_one(values, source, n, key), source, n, key)
    if not prio and not sizes:
        raise TextParseError(
            source, 1, "no prio-buffer or buffer-size line", expected="the buffer maps", got=text.strip()[:80]
        )
    return DcbBuffer(prio_buffer=prio, buffer_size_bytes=sizes, total_size_bytes=total)


@framed
def parse_dcb_app(text: str, source: str = "dcb app show") -> DcbApp:
    """``dcb app show dev X dscp-prio`` (with or without ``-N``: DSCP names such as CS3 are resolved)."""
    pairs: list[tuple[int, int]] = []
    for n, key, values in _lines(text, source, frozenset({"dscp-prio"}), repeatable=frozenset({"dscp-prio"})):
        for tok in values:
            d, sep, p = tok.partition(":")
            if not sep:
                raise TextParseError(
                    source, n, f"{key}: not a DSCP:priority pair", expected="e.g. 26:3 or CS3:3", got=tok
                )
            dscp = DSCP_NAMES.get(d.upper()) if not d.isdigit() else int(d)
            if dscp is None or not 0 <= dscp <= 63:
                raise TextParseError(source, n, f"{key}: DSCP", expected="0-63 or a DSCP name (CS3, AF41, EF)", got=d)
            prio = to_int(p, source, n, key)
            if not 0 <= prio <= 7:
                raise TextParseError(source, n, f"{key}: priority", expected="0-7", got=p)
            pairs.append((dscp, prio))
    return DcbApp(dscp_prio=pairs)
