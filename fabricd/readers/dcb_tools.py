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
from collections.abc import Callable
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


def _int(value: str, source: str, n: int, what: str, *, lo: int = 0, hi: int | None = None) -> int:
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

_MQ_TC = re.compile(
    r"^tc:\s*(?P<tc>\d+)\s+ratelimit:\s*(?P<rate>[^,]+),\s*tsa:\s*(?P<tsa>\w+)"
    r"(?:,\s*bw:\s*(?P<bw>\d+)%)?\s*$"
)
_MQ_PRIO = re.compile(r"^priority:\s*(?P<p>\d+)\s*$")
_MQ_DSCP = re.compile(r"^prio:\s*(?P<p>\d+)\s+dscp:\s*(?P<list>[\d,\s]*)$")


@dataclass
class _MlnxQos:
    """``mlnx_qos`` read line by line: the settings lines, the dscp2prio table, the PFC table (a ``priority``
    header row and its ``enabled`` row) and the TC blocks (``tc:`` with its ``priority:`` lines). The first step
    that knows a line takes it."""

    source: str
    pfc: frozenset[int] | None = None
    prio_tc: dict[int, int] = field(default_factory=dict)
    tsa: dict[int, str] = field(default_factory=dict)
    bw: dict[int, int] = field(default_factory=dict)
    dscp: dict[int, int] | None = None
    trust: tuple[str, ...] | None = None
    dcbx: str | None = None
    tc: int | None = None
    header: list[int] | None = None
    read: bool = False

    def feed(self, n: int, s: str) -> None:
        _, sep, value = s.partition(":")
        if not (self._settings(s, value.strip()) or self._dscp_row(n, s) or self._pfc_table(n, s, sep)):
            self._tc_block(n, s)

    def _settings(self, s: str, value: str) -> bool:
        """``DCBX mode:``, ``Priority trust state:`` and the ``dscp2prio mapping`` heading."""
        if s.startswith("DCBX mode:"):
            self.dcbx = DCBX_MODES.get(value, value.lower() or None)
            self.read = True
        elif s.startswith("Priority trust state:"):
            self.trust = (value,) if value else None
            self.read = True
        elif s.startswith("dscp2prio mapping"):
            self.dscp = {}
        else:
            return False
        return True

    def _dscp_row(self, n: int, s: str) -> bool:
        """``prio:P dscp:D,D,...``."""
        if (m := _MQ_DSCP.match(s)) is None:
            return False
        prio = _int(m.group("p"), self.source, n, "dscp2prio priority", hi=7)
        table = self.dscp if self.dscp is not None else {}
        for d in (x.strip() for x in m.group("list").split(",")):
            if d:
                table[_int(d, self.source, n, "dscp2prio DSCP", hi=63)] = prio
        self.dscp = table
        self.read = True
        return True

    def _pfc_table(self, n: int, s: str, sep: str) -> bool:
        """The PFC table: ``priority 0 1 ... 7`` then ``enabled 0 0 0 1 ...``."""
        first = s.split()[:1]
        if sep or first not in (["priority"], ["enabled"]):
            return False
        if first == ["priority"]:
            self.header = [_int(x, self.source, n, "PFC priority", hi=7) for x in s.split()[1:]]
            return True
        if self.header is None:
            raise TextParseError(
                self.source, n, "PFC 'enabled' row before its 'priority' header", expected="priority 0 1 ... 7", got=s
            )
        flags = s.split()[1:]
        if len(flags) != len(self.header):
            raise TextParseError(
                self.source,
                n,
                "PFC 'enabled' row does not match its header",
                expected=f"{len(self.header)} values",
                got=s,
            )
        self.pfc = frozenset(
            p for p, f in zip(self.header, flags, strict=True) if _int(f, self.source, n, "PFC enabled", hi=1)
        )
        self.read = True
        return True

    def _tc_block(self, n: int, s: str) -> None:
        """``tc: N ratelimit: ..., tsa: T[, bw: B%]`` and the ``priority: P`` lines under it."""
        if (m := _MQ_TC.match(s)) is not None:
            tc = self.tc = _int(m.group("tc"), self.source, n, "tc", hi=7)
            self.tsa[tc] = m.group("tsa")
            if m.group("bw") is not None:
                self.bw[tc] = _int(m.group("bw"), self.source, n, f"tc {tc} bw", hi=100)
            elif m.group("tsa") != "ets":
                self.bw[tc] = 0  # strict/vendor TCs take no ETS share (dcb ets prints 0% for them)
            self.read = True
        elif (m := _MQ_PRIO.match(s)) is not None:
            if self.tc is None:
                raise TextParseError(
                    self.source,
                    n,
                    "'priority:' line before any 'tc:' line",
                    expected="tc: N ratelimit: ..., tsa: ...",
                    got=s,
                )
            self.prio_tc[_int(m.group("p"), self.source, n, "priority", hi=7)] = self.tc


@framed
def parse_mlnx_qos(text: str, source: str = "mlnx_qos") -> DcbToolState:
    """``mlnx_qos -i <if>`` text -> :class:`DcbToolState`."""
    lines = content_lines(text)
    r = _MlnxQos(source)
    for n, line in lines:
        r.feed(n, line.strip())
    if not r.read:
        raise _nothing(source, lines, "mlnx_qos", "'DCBX mode:', 'Priority trust state:', PFC and 'tc:' lines")
    return DcbToolState("mlnx_qos", r.pfc, r.prio_tc, r.tsa, r.bw, r.dscp, r.trust, r.dcbx)


# -- lldptool -ti and niccli (IEEE 802.1Qaz TLVs) ------------------------------------------------------------------

_TLV = re.compile(r"^(?P<name>[A-Za-z0-9 .()/#'_-]+?)\s*TLV:?\s*$")
_PAIRS = re.compile(r"(\d+):(\w+)")
_APP = re.compile(r"^APP#\d+:?$", re.I)


def _pairs(value: str, source: str, n: int, what: str) -> dict[int, str]:
    pairs = _PAIRS.findall(value)
    if not pairs or len(pairs) != len(value.split()):
        raise TextParseError(source, n, f"{what}: not index:value pairs", expected="e.g. 0:0 1:0 3:1", got=value)
    return {_int(k, source, n, what, hi=7): v for k, v in pairs}


def _percents(value: str, source: str, n: int, what: str) -> dict[int, int]:
    out = {}
    for i, tok in enumerate(value.split()):
        if not tok.endswith("%"):
            raise TextParseError(source, n, f"{what}: not a percentage", expected="e.g. 50%", got=tok)
        out[i] = _int(tok[:-1], source, n, what, hi=100)
    return out


def _priorities(value: str, source: str, n: int, what: str) -> frozenset[int]:
    toks = [t for t in re.split(r"[\s,]+", value.strip()) if t]
    if toks == ["none"]:
        return frozenset()
    return frozenset(_int(t, source, n, what, hi=7) for t in toks)


@dataclass
class _QazTlvs:
    """The IEEE 802.1Qaz TLV text read section by section: each TLV's lines go to that TLV's handler
    (:data:`_SECTIONS`), so a key is read only in its own TLV."""

    source: str
    section: str = ""
    pfc: frozenset[int] | None = None
    prio_tc: dict[int, int] = field(default_factory=dict)
    tsa: dict[int, str] = field(default_factory=dict)
    bw: dict[int, int] = field(default_factory=dict)
    apps: dict[int, int] | None = None
    app: dict[str, str] = field(default_factory=dict)
    willing: bool | None = None
    rate: dict[int, int] = field(default_factory=dict)
    read: bool = False

    def close_app(self, n: int) -> None:
        """End the APP entry being read: a DSCP one (``Sel: 5``) joins the DSCP -> priority map."""
        app = self.app
        if app.get("sel") == "5" and "DSCP" in app and "priority" in app:
            self.apps = self.apps if self.apps is not None else {}
            self.apps[_int(app["DSCP"], self.source, n, "APP DSCP", hi=63)] = _int(
                app["priority"], self.source, n, "APP priority", hi=7
            )
        self.app = {}

    def feed(self, n: int, line: str, top: int) -> None:
        s = line.strip()
        tlv = _TLV.match(s)
        if tlv is not None and len(line) - len(line.lstrip()) <= top:
            self.close_app(n)
            self.section = tlv.group("name").strip()
            if self.section == "IEEE 8021QAZ APP":
                self.apps = self.apps if self.apps is not None else {}
            return
        if s.startswith("End of LLDPDU"):
            self.close_app(n)
            self.section = ""
            return
        key, sep, value = s.partition(":")
        key, value = key.strip(), value.strip()
        if key == "TC Rate Limit":  # niccli: a top-level line after the TLVs
            self.close_app(n)
            self.section = ""
            self.rate = _percents(value, self.source, n, "TC Rate Limit")
        elif (handler := _SECTIONS.get(self.section)) is not None:
            handler(self, _Line(n, s, key, sep, value))

    def ets_configuration(self, ln: _Line) -> None:
        """``IEEE 8021QAZ ETS Configuration``: PRIO_MAP, TC Bandwidth, TSA_MAP, Willing."""
        source, n = self.source, ln.n
        if ln.key == "PRIO_MAP":
            self.prio_tc = {
                p: _int(t, source, n, "PRIO_MAP TC", hi=7) for p, t in _pairs(ln.value, source, n, "PRIO_MAP").items()
            }
            self.read = True
        elif ln.key == "TC Bandwidth":
            self.bw = _percents(ln.value, source, n, "TC Bandwidth")
        elif ln.key == "TSA_MAP":
            self.tsa = _pairs(ln.value, source, n, "TSA_MAP")
        elif ln.key == "Willing":
            self.willing = ln.value == "yes"

    def ieee_pfc(self, ln: _Line) -> None:
        """``IEEE 8021QAZ PFC``: ``PFC enabled``."""
        if ln.key == "PFC enabled":
            self.pfc = _priorities(ln.value, self.source, ln.n, "PFC enabled")
            self.read = True

    def ieee_app(self, ln: _Line) -> None:
        """``IEEE 8021QAZ APP``: ``APP#k`` entries with their ``Priority``, ``Sel`` and protocol lines."""
        if _APP.match(ln.text):
            self.close_app(ln.n)
        elif ln.key == "Priority":
            self.app["priority"] = ln.value
        elif ln.key == "Sel":
            self.app["sel"] = ln.value
        elif ln.sep:
            self.app[ln.key] = ln.value

    def cee_dcbx(self, ln: _Line) -> None:
        """``CEE DCBX``: PFC and priority groups, where no IEEE TLV gave them."""
        if ln.key == "PFC enabled priorities" and self.pfc is None:
            self.pfc = _priorities(ln.value, self.source, ln.n, "PFC enabled priorities")
            self.read = True
        elif ln.key == "PGID Priorities" and not self.prio_tc:
            for pg, prios in re.findall(r"(\d+):\[([\d,]*)\]", ln.value):
                for p in prios.split(","):
                    if p:
                        self.prio_tc[_int(p, self.source, ln.n, "PGID priority", hi=7)] = _int(
                            pg, self.source, ln.n, "PGID", hi=15
                        )
            self.read = True

    def state(self, tool: str) -> DcbToolState:
        for tc in self.tsa:
            if self.tsa[tc] != "ets":
                self.bw.setdefault(tc, 0)
        return DcbToolState(
            tool, self.pfc, self.prio_tc, self.tsa, self.bw, self.apps, None, None, self.willing, self.rate
        )


@dataclass(frozen=True, slots=True)
class _Line:
    """One line inside a TLV: its number, text, and the ``key: value`` split (``sep`` empty: no colon)."""

    n: int
    text: str
    key: str
    sep: str
    value: str


_SECTIONS: dict[str, Callable[[_QazTlvs, _Line], None]] = {
    "IEEE 8021QAZ ETS Configuration": _QazTlvs.ets_configuration,
    "IEEE 8021QAZ PFC": _QazTlvs.ieee_pfc,
    "IEEE 8021QAZ APP": _QazTlvs.ieee_app,
    "CEE DCBX": _QazTlvs.cee_dcbx,
}
"""TLV name -> the handler of its lines (other TLVs carry nothing fabricd reads)."""


def parse_qaz_tlvs(text: str, source: str, tool: str) -> DcbToolState:
    """The IEEE 802.1Qaz TLV text ``lldptool -ti`` and ``niccli`` print, section by section; a key is read only in
    its own TLV (the ETS Recommendation's PRIO_MAP never overwrites the Configuration's)."""
    lines = content_lines(text)
    heads = [len(line) - len(line.lstrip()) for _, line in lines if _TLV.match(line.strip())]
    top = min(heads) if heads else 0  # a README may indent the whole output; sub-TLVs (CEE) are indented more
    r = _QazTlvs(source)
    n = 0
    for n, line in lines:
        r.feed(n, line, top)
    r.close_app(n)
    if not r.read:
        raise _nothing(
            source,
            lines,
            tool,
            "'IEEE 8021QAZ ETS Configuration TLV' with PRIO_MAP, or 'IEEE 8021QAZ PFC TLV' with 'PFC enabled:'",
        )
    return r.state(tool)


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
