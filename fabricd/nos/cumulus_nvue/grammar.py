"""The pinned Cumulus Linux NVUE grammar fabricd renders for, and NVIDIA's rules that are stricter than it.

fabricd's NVUE output targets **Cumulus Linux 5.11** (:data:`CL_RELEASE`): the PFC watchdog commands exist (they
arrived in 5.6) and on/off leaves still take ``enable|disable`` (5.15 moved several leaves to ``enabled|disabled``,
and NVIDIA's current command reference writes ``ecn enabled``/``red enabled``; see :data:`SOURCES` ``cl515-changes``
and ``nvue-ref-qos``). A switch on another release may refuse lines this table accepts; the release is named in
docs/platforms.md.

:data:`COMMANDS` are ``nv set`` paths exactly as NVIDIA's ``nv list-commands`` prints them (``<x-id>`` a key,
``<value>`` a value, ``a-b`` an integer range, ``(x|y)`` alternatives), each with the source it was copied from.
The listing leaves ``<value>`` and the id types untyped; :data:`VALUE_TYPES` and :data:`ID_TYPES` say what fabricd
checks there and why. :func:`check_lines` is the oracle the conformance suite runs over every render: each line
must match a command with typed arguments (:data:`COMMANDS`), then pass :data:`RULES`, the documented rules the
grammar does not carry (DWRR ``bw-percent`` 1-100, probability 1-100, shares and pools summing to at most 100 %,
the watchdog only on swp ports with PFC and with an explicit ``state``, VLANs outside Cumulus' reserved range,
``egress-queue-mapping`` on ``default-global`` only).

Every entry names its source: repository, path and commit (or URL), and the date it was read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

CL_RELEASE = "5.11"
"""The Cumulus Linux release the rendered ``nv set`` lines are written for."""

READ = "2026-11-25"
"""When the sources below were read."""


@dataclass(frozen=True)
class Source:
    """Where a grammar entry or rule comes from."""

    repo: str
    path: str
    commit: str
    excerpt: str


_DOCS = "CumulusNetworks/docs"
SOURCES: dict[str, Source] = {
    "cl55-list": Source(
        _DOCS,
        "content/cumulus-linux-55/System-Configuration/NVIDIA-User-Experience-NVUE/NVUE-Commands.md",
        "6276fd32f9955efdfd3ac97a552e68481746e5ef",
        "`nv list-commands` example: nv set qos ... / nv set interface <interface-id> ... / nv set bridge ...",
    ),
    "cl56-new": Source(
        _DOCS,
        "content/cumulus-linux-56/Whats-New/_index.md",
        "84b381b07c4515a8b292a239e5ad4802cc4c1aed",
        "New Commands: nv set qos pfc-watchdog polling-interval 100-5000; robustness 1-1000; "
        "nv set interface <interface-id> qos pfc-watchdog state (enable|disable)",
    ),
    "cl511-qos": Source(
        _DOCS,
        "content/cumulus-linux-511/Layer-1-and-Switch-Ports/Quality-of-Service/_index.md",
        "28af43a79290cd11474da3de881e90e9971edc72",
        "In `dwrr` mode, you must define a bandwidth percent value between 1 and 100 ... The combined total of "
        "values you assign to `bw_percent` must be less than or equal to 100 | qos_features.conf: If you specify a "
        "value of 0 for an egress queue, Cumulus Linux assigns `strict` priority mode | The total memory "
        "allocation across pools must not exceed 100% | NVUE only supports the `default-global` profile "
        "(egress-queue-mapping) | You can only enable PFC watchdog on a physical interface (swp) | You can only "
        "configure PFC watchdog on a port with PFC (or link pause) configuration | ... `nv set interface "
        "<interface> qos pfc-watchdog state disable`",
    ),
    "nvue-ref-qos": Source(
        _DOCS,
        "content/nvue-reference/Set-and-Unset-Commands/QoS.md",
        "05e495393117e53e42ab6be1fd591c119d2ae070",
        "probability: You can set a value between 1 and 100 | bw-percent: the bandwidth percent value between 1 "
        "and 100 | max-threshold/min-threshold: buffer threshold in bytes | (current release writes "
        "`ecn enabled`, `red enabled`)",
    ),
    "cl511-vlan": Source(
        _DOCS,
        "content/cumulus-linux-511/Layer-2/Ethernet-Bridging-VLANs/VLAN-aware-Bridge-Mode.md",
        "ad804834b92f9f38b9ceb02865480c879d7fa92b",
        "Cumulus Linux reserves a range of VLANs by default; the reserved range is 3725-3999.",
    ),
    "nvue-ansible-qos": Source(
        "stackhpc/ansible-nvidia-nvue",
        "plugins/modules/qos.py",
        "3ae8111e842d52747f4b6c5045789ab8603e3aff",
        "NVIDIA's nvidia.nvue collection (fork): pfc xoff_threshold/xon_threshold/port_buffer 'type: int' '(in "
        "bytes)', cable_length int (in meters), tx/rx choices enable|disable, traffic_pool memory_percent int",
    ),
    "cl515-changes": Source(
        _DOCS,
        "content/cumulus-linux-515/Whats-New/New-and-Changed-NVUE-Commands.md",
        "07d58d4b2ae2bd3864171785ca7a10c1f5dfd950",
        "CL5.14.0 and Earlier `... ping-check (on|off)` | CL5.15 and Later `... ping-check (enabled|disabled)` "
        "(on/off and enable/disable leaves become enabled/disabled)",
    ),
}


@dataclass(frozen=True)
class Command:
    """One ``nv set`` path as ``nv list-commands`` prints it (without ``nv set``), and its source."""

    path: str
    source: str
    value: str = ""
    """For a ``<value>`` leaf: the type fabricd checks (a key of :data:`VALUE_TYPES`)."""
    unverified: str = ""
    """What of this entry no source confirms (empty when the source gives it all); the suite counts such lines."""


_BYTES = "no source gives the upper bound of this byte value (checked against 0-4294967295)"

COMMANDS: tuple[Command, ...] = (
    Command("qos traffic-pool <traffic-pool-id> switch-priority <qos-sp-id>", "cl55-list"),
    Command("qos traffic-pool <traffic-pool-id> memory-percent 1-100", "cl55-list"),
    Command("qos pfc <profile-id> switch-priority <qos-sp-id>", "cl55-list"),
    Command("qos pfc <profile-id> xoff-threshold <value>", "cl55-list", value="bytes", unverified=_BYTES),
    Command("qos pfc <profile-id> xon-threshold <value>", "cl55-list", value="bytes", unverified=_BYTES),
    Command("qos pfc <profile-id> port-buffer <value>", "cl55-list", value="bytes", unverified=_BYTES),
    Command("qos pfc <profile-id> cable-length 1-100000", "cl55-list"),
    Command("qos pfc <profile-id> tx (enable|disable)", "cl55-list"),
    Command("qos pfc <profile-id> rx (enable|disable)", "cl55-list"),
    Command("qos mapping <profile-id> pcp <qos-pcp-id> switch-priority 0-7", "cl55-list"),
    Command("qos mapping <profile-id> dscp <qos-dscp-id> switch-priority 0-7", "cl55-list"),
    Command("qos mapping <profile-id> port-default-sp 0-7", "cl55-list"),
    Command("qos mapping <profile-id> trust (l2|l3|port|both)", "cl55-list"),
    Command(
        "qos congestion-control <profile-id> traffic-class <qos-tc-id> min-threshold <value>",
        "cl55-list",
        value="bytes",
        unverified=_BYTES,
    ),
    Command(
        "qos congestion-control <profile-id> traffic-class <qos-tc-id> max-threshold <value>",
        "cl55-list",
        value="bytes",
        unverified=_BYTES,
    ),
    Command("qos congestion-control <profile-id> traffic-class <qos-tc-id> probability 0-100", "cl55-list"),
    Command("qos congestion-control <profile-id> traffic-class <qos-tc-id> red (enable|disable)", "cl55-list"),
    Command("qos congestion-control <profile-id> traffic-class <qos-tc-id> ecn (enable|disable)", "cl55-list"),
    Command("qos egress-queue-mapping <profile-id> switch-priority <qos-sp-id> traffic-class 0-7", "cl55-list"),
    Command("qos egress-scheduler <profile-id> traffic-class <qos-tc-id> mode (dwrr|strict)", "cl55-list"),
    Command("qos egress-scheduler <profile-id> traffic-class <qos-tc-id> bw-percent 0-100", "cl55-list"),
    Command("qos pfc-watchdog polling-interval 100-5000", "cl56-new"),
    Command("qos pfc-watchdog robustness 1-1000", "cl56-new"),
    Command("interface <interface-id> link mtu 552-9216", "cl55-list"),
    Command("interface <interface-id> link state (up|down)", "cl55-list"),
    Command("interface <interface-id> description <value>", "cl55-list", value="text"),
    Command("interface <interface-id> bridge domain <domain-id> vlan <vid>", "cl55-list"),
    Command("interface <interface-id> bridge domain <domain-id> access (1-4094|auto)", "cl55-list"),
    Command("interface <interface-id> qos pfc profile <profile-name>", "cl55-list"),
    Command("interface <interface-id> qos pfc-watchdog", "cl511-qos"),
    Command("interface <interface-id> qos pfc-watchdog state (enable|disable)", "cl56-new"),
    Command("bridge domain <domain-id> vlan <vid>", "cl55-list"),
    Command("system hostname <value>", "cl55-list", value="text"),
)

SET_PATHS: tuple[str, ...] = tuple(c.path for c in COMMANDS)
"""The paths alone (the lab simulator's schema, :mod:`.schema`, accepts exactly these)."""

# --- argument types ----------------------------------------------------------------------------------------------

_NUM_LIST = re.compile(r"\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
"""Profile, pool and bridge names fabricd writes. NVUE's own pattern for ``<profile-id>`` is not in any source read
(unverified); fabricd keeps to letters, digits, ``_`` and ``-``, which every example in the sources uses."""
SWP = re.compile(r"swp\d+(?:s\d+)?")
"""A Cumulus front-panel port (``swp1``) or breakout (``swp1s0``); the watchdog runs only on these (cl511-qos)."""
INTERFACE = re.compile(r"[A-Za-z0-9_.-]{1,15}")
"""A Linux interface name (at most 15 characters); NVUE keys interfaces by it."""
RESERVED_VLANS = (3725, 3999)
"""Cumulus' default reserved VLAN range (cl511-vlan)."""


def _num_list(lo: int, hi: int) -> Callable[[str], bool]:
    def ok(token: str) -> bool:
        if not _NUM_LIST.fullmatch(token):
            return False
        for part in token.split(","):
            a, _, b = part.partition("-")
            first, last = int(a), int(b or a)
            if not lo <= first <= last <= hi:
                return False
        return True

    return ok


ID_TYPES: dict[str, tuple[str, Callable[[str], bool]]] = {
    "<qos-sp-id>": ("a switch priority 0-7, or a list/range of them", _num_list(0, 7)),
    "<qos-pcp-id>": ("a PCP 0-7, or a list/range of them", _num_list(0, 7)),
    "<qos-tc-id>": ("a traffic class 0-7, or a list/range of them", _num_list(0, 7)),
    "<qos-dscp-id>": ("a DSCP 0-63, or a list/range of them", _num_list(0, 63)),
    "<vid>": ("a VLAN 1-4094, or a list/range of them", _num_list(1, 4094)),
    "<profile-id>": ("a name: letters, digits, _ and -", lambda t: bool(NAME.fullmatch(t))),
    "<profile-name>": ("a name: letters, digits, _ and -", lambda t: bool(NAME.fullmatch(t))),
    "<traffic-pool-id>": ("a name: letters, digits, _ and -", lambda t: bool(NAME.fullmatch(t))),
    "<domain-id>": ("a name: letters, digits, _ and -", lambda t: bool(NAME.fullmatch(t))),
    "<interface-id>": ("an interface name (15 characters at most)", lambda t: bool(INTERFACE.fullmatch(t))),
}
"""What each id accepts. The number ranges are the QoS model's (8 priorities and queues, 64 DSCPs, 802.1Q VLANs);
list and range syntax as NVUE's examples write it (``4,5,7``, ``1-7``; cl511-qos)."""

VALUE_TYPES: dict[str, tuple[str, Callable[[str], bool]]] = {
    "bytes": ("a whole number of bytes", lambda t: t.isdigit() and int(t) <= 4_294_967_295),
    "text": ("one word", bool),
}
"""``<value>`` leaves. Thresholds and buffers are whole bytes (nvue-ref-qos: 'in bytes'; nvue-ansible-qos: the PFC
ones are ``int`` '(in bytes)'; ``nv show`` prints ``10000 B``); no source read gives their upper bound, so fabricd
checks the 32-bit range the neighbouring buffer leaves document (``0-4294967295``, cl55-list) and marks the bound
unverified."""


# --- matching ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Elem:
    text: str

    def accepts(self, token: str, value_type: str) -> bool:
        t = self.text
        if t in ID_TYPES:
            return ID_TYPES[t][1](token)
        if t == "<value>":
            return VALUE_TYPES[value_type][1](token)
        if t.startswith("(") and t.endswith(")"):
            return any(_Elem(alt).accepts(token, value_type) for alt in t[1:-1].split("|"))
        lo, dash, hi = t.partition("-")
        if dash and lo.isdigit() and hi.isdigit():
            return token.isdigit() and int(lo) <= int(token) <= int(hi)
        return token == t

    def describe(self, value_type: str) -> str:
        if self.text in ID_TYPES:
            return f"{self.text} ({ID_TYPES[self.text][0]})"
        if self.text == "<value>":
            return f"<value> ({VALUE_TYPES[value_type][0]})"
        return self.text


_TEMPLATES = tuple((c, tuple(_Elem(t) for t in c.path.split())) for c in COMMANDS)


@dataclass(frozen=True)
class Rejection:
    """A line the oracle refuses: where, why, and the source of the rule."""

    line_no: int
    line: str
    reason: str
    source: str

    def __str__(self) -> str:
        return f"line {self.line_no}: {self.line!r}: {self.reason} [{self.source}]"


def match(tokens: list[str]) -> Command | str:
    """The command ``nv set TOKENS`` is, or why none matches (the furthest any command got)."""
    best, why = -1, "no nv set command starts like this"
    for cmd, tpl in _TEMPLATES:
        pos = 0
        while pos < len(tpl) and pos < len(tokens) and tpl[pos].accepts(tokens[pos], cmd.value):
            pos += 1
        if pos == len(tpl) == len(tokens):
            return cmd
        if pos > best:
            best = pos
            if pos < len(tpl) and pos < len(tokens):
                why = f"{tokens[pos]!r} is not {tpl[pos].describe(cmd.value)} (after {' '.join(tokens[:pos])!r})"
            elif pos < len(tpl):
                why = f"incomplete: expects {tpl[pos].describe(cmd.value)} after {' '.join(tokens)!r}"
            else:
                why = f"extra words after {' '.join(tokens[:pos])!r}"
    return why


# --- the rules stricter than the grammar -------------------------------------------------------------------------

Line = tuple[int, str, list[str], Command]
"""(line number, text, tokens after ``nv set``, the command it matched)."""
Rule = Callable[[list[Line]], Iterable[tuple[int, str, str]]]
"""A rule sees every matched line of one render and yields ``(line number, reason, source key)``."""


def _num_values(token: str) -> list[int]:
    out: list[int] = []
    for part in token.split(","):
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def _rule_bw_percent(lines: list[Line]) -> Iterable[tuple[int, str, str]]:
    shares: dict[tuple[str, int], int] = {}
    modes: dict[tuple[str, int], str] = {}
    first: dict[str, int] = {}
    for no, _, w, _cmd in lines:
        if w[:2] != ["qos", "egress-scheduler"] or len(w) != 7:
            continue
        first.setdefault(w[2], no)
        for tc in _num_values(w[4]):
            if w[5] == "bw-percent":
                shares[(w[2], tc)] = int(w[6])
            else:
                modes[(w[2], tc)] = w[6]
        if w[5] == "bw-percent" and int(w[6]) == 0:
            yield no, "dwrr bw-percent must be 1-100 (0 means strict in qos_features.conf)", "cl511-qos"
    for profile in sorted({p for p, _ in shares}):
        total = sum(v for (p, _), v in shares.items() if p == profile)
        if total > 100:
            yield (
                first[profile],
                f"egress-scheduler {profile} bw-percent shares sum to {total} % (at most 100)",
                "cl511-qos",
            )
    for (profile, tc), mode in sorted(modes.items()):
        if mode == "dwrr" and (profile, tc) not in shares:
            yield first[profile], f"traffic-class {tc} is dwrr without a bw-percent (1-100)", "cl511-qos"


def _rule_probability(lines: list[Line]) -> Iterable[tuple[int, str, str]]:
    for no, _, w, _cmd in lines:
        if w[:2] == ["qos", "congestion-control"] and len(w) == 7 and w[5] == "probability" and int(w[6]) < 1:
            yield no, "probability is 1-100", "nvue-ref-qos"


def _rule_ecn_thresholds(lines: list[Line]) -> Iterable[tuple[int, str, str]]:
    th: dict[tuple[str, int], dict[str, tuple[int, int]]] = {}
    for no, _, w, _cmd in lines:
        if w[:2] == ["qos", "congestion-control"] and len(w) == 7 and w[5] in ("min-threshold", "max-threshold"):
            for tc in _num_values(w[4]):
                th.setdefault((w[2], tc), {})[w[5]] = (no, int(w[6]))
    for (profile, tc), got in th.items():
        if "min-threshold" in got and "max-threshold" in got and got["min-threshold"][1] >= got["max-threshold"][1]:
            yield (
                got["max-threshold"][0],
                f"{profile} traffic-class {tc}: min-threshold must be below max-threshold (marking ramps between them)",
                "nvue-ref-qos",
            )


def _rule_pools(lines: list[Line]) -> Iterable[tuple[int, str, str]]:
    pools = {
        w[2]: (no, int(w[4])) for no, _, w, _c in lines if w[:2] == ["qos", "traffic-pool"] and w[3] == "memory-percent"
    }
    total = sum(v for _, v in pools.values())
    if total > 100:
        yield max(n for n, _ in pools.values()), f"traffic-pool memory-percent sums to {total} %", "cl511-qos"


def _rule_queue_profile(lines: list[Line]) -> Iterable[tuple[int, str, str]]:
    for no, _, w, _cmd in lines:
        if w[:2] == ["qos", "egress-queue-mapping"] and w[2] != "default-global":
            yield no, "NVUE only supports the default-global egress-queue-mapping profile", "cl511-qos"


def _interfaces(token: str) -> list[str]:
    out: list[str] = []
    for item in token.split(","):
        m = re.fullmatch(r"(.*?\D)(\d+)-(\d+)", item)
        if m:
            out.extend(f"{m.group(1)}{i}" for i in range(int(m.group(2)), int(m.group(3)) + 1))
        else:
            out.append(item)
    return out


def _rule_watchdog(lines: list[Line]) -> Iterable[tuple[int, str, str]]:
    pfc_ports = {
        i
        for _, _, w, _c in lines
        if w[0] == "interface" and w[2:5] == ["qos", "pfc", "profile"]
        for i in _interfaces(w[1])
    }
    for no, _, w, _cmd in lines:
        if w[0] != "interface" or w[2:4] != ["qos", "pfc-watchdog"]:
            continue
        if len(w) == 4:
            yield (
                no,
                "the watchdog is enabled without an explicit `state enable` (NVIDIA's configs write it)",
                "cl56-new",
            )
            continue
        if w[5] != "enable":
            continue
        for port in _interfaces(w[1]):
            if not SWP.fullmatch(port):
                yield no, f"{port}: the PFC watchdog runs only on physical swp ports", "cl511-qos"
            elif port not in pfc_ports:
                yield no, f"{port}: the PFC watchdog needs PFC (a qos pfc profile) on the port", "cl511-qos"


def _rule_reserved_vlans(lines: list[Line]) -> Iterable[tuple[int, str, str]]:
    lo, hi = RESERVED_VLANS
    for no, _, w, _cmd in lines:
        if "bridge" not in w or "domain" not in w:
            continue
        tail = w[-2:]
        if tail[0] in ("vlan", "access") and tail[1] != "auto":
            bad = [v for v in _num_values(tail[1]) if lo <= v <= hi]
            if bad:
                yield no, f"VLAN {bad[0]} is in Cumulus' reserved range {lo}-{hi}", "cl511-vlan"


RULES: tuple[tuple[str, Rule], ...] = (
    ("dwrr-bw-percent", _rule_bw_percent),
    ("ecn-probability", _rule_probability),
    ("ecn-thresholds", _rule_ecn_thresholds),
    ("traffic-pools", _rule_pools),
    ("egress-queue-mapping-profile", _rule_queue_profile),
    ("pfc-watchdog", _rule_watchdog),
    ("reserved-vlans", _rule_reserved_vlans),
)
"""NVIDIA's documented rules stricter than the grammar, by name."""


def set_lines(text: str) -> list[tuple[int, str]]:
    """The command lines of a render (comments and blank lines skipped), numbered from 1."""
    return [
        (n, line.strip())
        for n, line in enumerate(text.splitlines(), 1)
        if line.strip() and not line.lstrip().startswith("#")
    ]


def check_lines(lines: list[tuple[int, str]]) -> list[Rejection]:
    """Every line the pinned grammar or a stricter rule refuses (empty when the render is accepted)."""
    out: list[Rejection] = []
    matched: list[Line] = []
    for no, text in lines:
        words = text.split()
        if words[:2] != ["nv", "set"]:
            out.append(Rejection(no, text, "not an `nv set` command", "cl55-list"))
            continue
        got = match(words[2:])
        if isinstance(got, str):
            out.append(Rejection(no, text, got, "cl55-list"))
        else:
            matched.append((no, text, words[2:], got))
    by_no = {no: text for no, text in lines}
    for _name, rule in RULES:
        for no, reason, source in rule(matched):
            out.append(Rejection(no, by_no[no], reason, source))
    return sorted(out, key=lambda r: r.line_no)


def check_text(text: str) -> list[Rejection]:
    """:func:`check_lines` over a whole render."""
    return check_lines(set_lines(text))
