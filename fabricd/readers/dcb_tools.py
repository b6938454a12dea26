"""Host DCB as the tools print it when the kernel's dcbnl does not hold it: NIC-firmware DCB and software DCBX.

One typed snapshot, :class:`DcbToolState`, from any of:

- ``mlnx_qos -i <if>`` (MLNX_OFED / mlnx-tools): DCBX mode, trust, the dscp2prio table, PFC per priority and each
  TC's TSA, bandwidth and priorities. Old releases print no ``Receive buffer size`` line nor PFC ``buffer`` row and
  ``tsa: vendor`` everywhere; a TC no priority maps to is not printed. Captures: tests/golden/readers/host/.
- ``lldptool -ti <if>`` (open-lldp, software DCBX with lldpad): the IEEE 802.1Qaz ETS Configuration, PFC and APP
  TLVs (lldpad ``lldp_8021qaz_cmds.c``); the ETS *Recommendation* TLV is read apart and never overwrites the
  configuration; the legacy CEE DCBX TLV gives PFC and the priority groups.
- ``niccli ... qos --ets --show`` / ``getqos`` (Broadcom BCM57xxx firmware DCB): the same TLV names with a colon,
  as many TCs as the NIC runs, and a ``TC Rate Limit`` line.

Plus two iproute2 objects read over dcbnl by ``dcb`` but not by fabricd's netlink backend: ``dcb maxrate show``
(:func:`parse_dcb_maxrate`, bits per second per TC) and ``dcb dcbx show`` (:func:`parse_dcb_dcbx`, the DCBX flags:
``host``, ``lld-managed``, ``cee``, ``ieee``, ``static``).

Values the tool does not show stay absent (None, or missing from a map): a TC the output does not print has no TSA
and no bandwidth here, never a guessed one. A ``PFC enabled`` line lists priorities (``1 2 5 7``, ``none``), as
lldpad prints it. An output that holds none of the tool's lines, or a value of the wrong kind, is a located
:class:`~fabricd.readers.textparse.TextParseError` (source:line, expected, got); lines the tool prints that carry
nothing fabricd needs (``Cable len``, ``Chassis ID TLV``...) are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .framing import framed
from .textparse import TextParseError, content_lines

DCBX_MODES = {"OS controlled": "host", "Firmware controlled": "lld-managed"}
"""mlnx_qos ``DCBX mode`` -> the dcb-dcbx(8) keyword for the same mode."""


@dataclass(frozen=True, slots=True)
class DcbToolState:
    """DCB of one port as a vendor or LLDP tool printed it. Maps are keyed by priority or TC (0-7); ``dscp_prio``
    is None when the tool prints no DSCP table; ``trust`` the trusted selectors, most trusted first (mlnx_qos
    only); ``dcbx`` the DCBX mode as a dcb-dcbx(8) keyword (``host``, ``lld-managed``); ``tc_rate_limit_percent``
    niccli's per-TC rate limit."""

    tool: str
    pfc_enabled: frozenset[int] | None = None
    prio_tc: dict[int, int] = field(default_factory=dict)
    tc_tsa: dict[int, str] = field(default_factory=dict)
    tc_bw: dict[int, int] = field(default_factory=dict)
    dscp_prio: dict[int, int] | None = None
    trust: tuple[str, ...] | None = None
    dcbx: str | None = None
    willing: bool | None = None
    tc_rate_limit_percent: dict[int, int] = field(default_factory=dict)

    @property
    def pfc_mask(self) -> int | None:
        """The PFC enable bitmap (bit p = priority p), as dcbnl's ``ieee_pfc.pfc_en``."""
        return None if self.pfc_enabled is None else sum(1 << p for p in self.pfc_enabled)


def _int(value: str, source: str, n: int, what: str, lo: int = 0, hi: int | None = None) -> int:
    try:
        got = int(value, 10)
    except ValueError:
        raise TextParseError(source, n, f"{what}: not a number", expected="a decimal integer", got=value) from None
    if got < lo or (hi is not None and got > hi):
        raise TextParseError(source, n, f"{what}: out of range", expected=f"{lo}-{hi}", got=value)
    return got


def _nothing(source: str, lines: list[tuple[int, str]], tool: str, expected: str) -> TextParseError:
    n, first = lines[0] if lines else (1, "")
    return TextParseError(source, n, f"no {tool} output read", expected=expected, got=first.strip())


# -- mlnx_qos ----------------------------------------------------------------------------------------------------

_MQ_TC = re.compile(r"^tc:\s*(?P<tc>\d+)\s+ratelimit:\s*(?P<rate>[^,]+),\s*tsa:\s*(?P<tsa>\w+)"
                    r"(?:,\s*bw:\s*(?P<bw>\d+)%)?\s*$")
_MQ_PRIO = re.compile(r"^priority:\s*(?P<p>\d+)\s*$")
_MQ_DSCP = re.compile(r"^prio:\s*(?P<p>\d+)\s+dscp:\s*(?P<list>[\d,\s]*)$")


@framed
def parse_mlnx_qos(text: str, source: str = "mlnx_qos") -> DcbToolState:
    """``mlnx_qos -i <if>`` text -> :class:`DcbToolState`."""
    lines = content_lines(text)
    pfc: frozenset[int] | None = None
    prio_tc: dict[int, int] = {}
    tsa: dict[int, str] = {}
    bw: dict[int, int] = {}
    dscp: dict[int, int] | None = None
    trust: tuple[str, ...] | None = None
    dcbx: str | None = None
    tc: int | None = None
    header: list[int] | None = None
    read = False
    for n, line in lines:
        s = line.strip()
        _, sep, value = s.partition(":")
        if s.startswith("DCBX mode:"):
            dcbx = DCBX_MODES.get(value.strip(), value.strip().lower() or None)
            read = True
        elif s.startswith("Priority trust state:"):
            trust = (value.strip(),) if value.strip() else None
            read = True
        elif s.startswith("dscp2prio mapping"):
            dscp = {}
        elif (m := _MQ_DSCP.match(s)) is not None:
            prio = _int(m.group("p"), source, n, "dscp2prio priority", 0, 7)
            table = dscp if dscp is not None else {}
            for d in (x.strip() for x in m.group("list").split(",")):
                if d:
                    table[_int(d, source, n, "dscp2prio DSCP", 0, 63)] = prio
            dscp = table
            read = True
        elif s.split()[:1] == ["priority"] and not sep:
            header = [_int(x, source, n, "PFC priority", 0, 7) for x in s.split()[1:]]
        elif s.split()[:1] == ["enabled"] and not sep:
            if header is None:
                raise TextParseError(source, n, "PFC 'enabled' row before its 'priority' header",
                                     expected="priority 0 1 ... 7", got=s)
            flags = s.split()[1:]
            if len(flags) != len(header):
                raise TextParseError(source, n, "PFC 'enabled' row does not match its header",
                                     expected=f"{len(header)} values", got=s)
            pfc = frozenset(p for p, f in zip(header, flags, strict=True)
                            if _int(f, source, n, "PFC enabled", 0, 1))
            read = True
        elif (m := _MQ_TC.match(s)) is not None:
            tc = _int(m.group("tc"), source, n, "tc", 0, 7)
            tsa[tc] = m.group("tsa")
            if m.group("bw") is not None:
                bw[tc] = _int(m.group("bw"), source, n, f"tc {tc} bw", 0, 100)
            elif m.group("tsa") != "ets":
                bw[tc] = 0  # strict/vendor TCs take no ETS share (dcb ets prints 0% for them)
            read = True
        elif (m := _MQ_PRIO.match(s)) is not None:
            if tc is None:
                raise TextParseError(source, n, "'priority:' line before any 'tc:' line",
                                     expected="tc: N ratelimit: ..., tsa: ...", got=s)
            prio_tc[_int(m.group("p"), source, n, "priority", 0, 7)] = tc
    if not read:
        raise _nothing(source, lines, "mlnx_qos", "'DCBX mode:', 'Priority trust state:', PFC and 'tc:' lines")
    return DcbToolState("mlnx_qos", pfc, prio_tc, tsa, bw, dscp, trust, dcbx)


# -- lldptool -ti and niccli (IEEE 802.1Qaz TLVs) ------------------------------------------------------------------

_TLV = re.compile(r"^(?P<name>[A-Za-z0-9 .()/#'_-]+?)\s*TLV:?\s*$")
_PAIRS = re.compile(r"(\d+):(\w+)")
_APP = re.compile(r"^APP#\d+:?$", re.I)


def _pairs(value: str, source: str, n: int, what: str) -> dict[int, str]:
    pairs = _PAIRS.findall(value)
    if not pairs or len(pairs) != len(value.split()):
        raise TextParseError(source, n, f"{what}: not index:value pairs", expected="e.g. 0:0 1:0 3:1", got=value)
    return {_int(k, source, n, what, 0, 7): v for k, v in pairs}


def _percents(value: str, source: str, n: int, what: str) -> dict[int, int]:
    out = {}
    for i, tok in enumerate(value.split()):
        if not tok.endswith("%"):
            raise TextParseError(source, n, f"{what}: not a percentage", expected="e.g. 50%", got=tok)
        out[i] = _int(tok[:-1], source, n, what, 0, 100)
    return out


def _priorities(value: str, source: str, n: int, what: str) -> frozenset[int]:
    toks = [t for t in re.split(r"[\s,]+", value.strip()) if t]
    if toks == ["none"]:
        return frozenset()
    return frozenset(_int(t, source, n, what, 0, 7) for t in toks)


def parse_qaz_tlvs(text: str, source: str, tool: str) -> DcbToolState:
    """The IEEE 802.1Qaz TLV text ``lldptool -ti`` and ``niccli`` print, section by section; a key is read only in
    its own TLV (the ETS Recommendation's PRIO_MAP never overwrites the Configuration's)."""
    lines = content_lines(text)
    section = ""
    pfc: frozenset[int] | None = None
    prio_tc: dict[int, int] = {}
    tsa: dict[int, str] = {}
    bw: dict[int, int] = {}
    apps: dict[int, int] | None = None
    app: dict[str, str] = {}
    willing: bool | None = None
    rate: dict[int, int] = {}
    read = False

    def close_app() -> None:
        nonlocal apps, app
        if app.get("sel") == "5" and "DSCP" in app and "priority" in app:
            apps = apps if apps is not None else {}
            apps[_int(app["DSCP"], source, n, "APP DSCP", 0, 63)] = _int(app["priority"], source, n,
                                                                        "APP priority", 0, 7)
        app = {}

    heads = [len(line) - len(line.lstrip()) for _, line in lines if _TLV.match(line.strip())]
    top = min(heads) if heads else 0  # a README may indent the whole output; sub-TLVs (CEE) are indented more
    n = 0
    for n, line in lines:
        s = line.strip()
        tlv = _TLV.match(s)
        if tlv is not None and len(line) - len(line.lstrip()) <= top:
            close_app()
            section = tlv.group("name").strip()
            if section == "IEEE 8021QAZ APP":
                apps = apps if apps is not None else {}
            continue
        if s.startswith("End of LLDPDU"):
            close_app()
            section = ""
            continue
        key, sep, value = s.partition(":")
        key, value = key.strip(), value.strip()
        if key == "TC Rate Limit":  # niccli: a top-level line after the TLVs
            close_app()
            section = ""
            rate = _percents(value, source, n, "TC Rate Limit")
        elif section == "IEEE 8021QAZ ETS Configuration":
            if key == "PRIO_MAP":
                prio_tc = {p: _int(t, source, n, "PRIO_MAP TC", 0, 7)
                           for p, t in _pairs(value, source, n, "PRIO_MAP").items()}
                read = True
            elif key == "TC Bandwidth":
                bw = _percents(value, source, n, "TC Bandwidth")
            elif key == "TSA_MAP":
                tsa = _pairs(value, source, n, "TSA_MAP")
            elif key == "Willing":
                willing = value == "yes"
        elif section == "IEEE 8021QAZ PFC" and key == "PFC enabled":
            pfc = _priorities(value, source, n, "PFC enabled")
            read = True
        elif section == "IEEE 8021QAZ APP":
            if _APP.match(s):
                close_app()
            elif key == "Priority":
                app["priority"] = value
            elif key == "Sel":
                app["sel"] = value
            elif sep:
                app[key] = value
        elif section == "CEE DCBX" and key == "PFC enabled priorities" and pfc is None:
            pfc = _priorities(value, source, n, "PFC enabled priorities")
            read = True
        elif section == "CEE DCBX" and key == "PGID Priorities" and not prio_tc:
            for pg, prios in re.findall(r"(\d+):\[([\d,]*)\]", value):
                for p in prios.split(","):
                    if p:
                        prio_tc[_int(p, source, n, "PGID priority", 0, 7)] = _int(pg, source, n, "PGID", 0, 15)
            read = True
    close_app()
    if not read:
        raise _nothing(source, lines, tool, "'IEEE 8021QAZ ETS Configuration TLV' with PRIO_MAP, or "
                       "'IEEE 8021QAZ PFC TLV' with 'PFC enabled:'")
    for tc in tsa:
        if tsa[tc] != "ets":
            bw.setdefault(tc, 0)
    return DcbToolState(tool, pfc, prio_tc, tsa, bw, apps, None, None, willing, rate)


@framed
def parse_lldptool(text: str, source: str = "lldptool") -> DcbToolState:
    """``lldptool -ti <if>`` (or ``-t -i``; local TLVs of lldpad's software DCBX)."""
    return parse_qaz_tlvs(text, source, "lldptool")


@framed
def parse_niccli_qos(text: str, source: str = "niccli") -> DcbToolState:
    """Broadcom ``niccli --dev N qos --ets --show`` (``getqos``): firmware DCB of a BCM57xxx port."""
    return parse_qaz_tlvs(text, source, "niccli")


# -- iproute2 dcb maxrate / dcbx --------------------------------------------------------------------------------

_RATE = re.compile(r"^(?P<n>\d+(?:\.\d+)?)(?P<prefix>[KMGT]?i?)(?P<unit>bit|b)$")
_DECIMAL = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
DCBX_FLAGS = ("host", "lld-managed", "cee", "ieee", "static")


@framed
def parse_dcb_maxrate(text: str, source: str = "dcb maxrate") -> dict[int, int]:
    """``dcb maxrate show dev <if>``: ``tc-maxrate 0:25Gbit ...`` -> {TC: bits per second}. iproute2 prints rates
    as tc(8) does (``bit`` = bits/s, ``b`` = bytes/s; ``-i`` gives ISO/IEC ``Gibit``); 0 means unlimited."""
    lines = content_lines(text)
    out: dict[int, int] = {}
    for n, line in lines:
        key, *values = line.split()
        if key != "tc-maxrate":
            raise TextParseError(source, n, "not a dcb maxrate line", expected="tc-maxrate TC:RATE ...", got=line)
        for tc, rate in _pairs(" ".join(values), source, n, "tc-maxrate").items():
            m = _RATE.match(rate)
            if m is None:
                raise TextParseError(source, n, f"tc-maxrate {tc}: not a rate", expected="e.g. 25Gbit", got=rate)
            scale = _BINARY.get(m.group("prefix")) or _DECIMAL.get(m.group("prefix"), 1)
            bits = float(m.group("n")) * scale * (8 if m.group("unit") == "b" else 1)
            out[tc] = round(bits)
    if not out:
        raise _nothing(source, lines, "dcb maxrate", "tc-maxrate TC:RATE ...")
    return out


@framed
def parse_dcb_dcbx(text: str, source: str = "dcb dcbx") -> frozenset[str]:
    """``dcb dcbx show dev <if>``: the enabled DCBX flags (``host ieee``)."""
    lines = content_lines(text)
    flags: set[str] = set()
    for n, line in lines:
        for tok in line.split():
            if tok not in DCBX_FLAGS:
                raise TextParseError(source, n, "unknown DCBX flag", expected=" | ".join(DCBX_FLAGS), got=tok)
            flags.add(tok)
    if not lines:
        raise TextParseError(source, 1, "no dcb dcbx output", expected="e.g. host ieee", got="")
    return frozenset(flags)
