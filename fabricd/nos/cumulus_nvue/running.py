"""NVIDIA Cumulus NVUE ``nv config show -o commands``: the lossless settings in effect per interface, as a pure
parser over the ``nv set`` lines.

Read back (Cumulus Linux 5.x QoS and RoCE guides; the paths are those of
``fabricd.nos.cumulus_nvue.patterns.SET_PATHS``):

- ``qos mapping <profile> trust l2|l3|both|port`` and ``dscp|pcp <list> switch-priority <p>``;
- ``qos egress-queue-mapping <profile> switch-priority <list> traffic-class <tc>``;
- ``qos pfc <profile> switch-priority <list>`` and ``tx|rx enable|disable``, bound per interface with
  ``interface <if> qos pfc profile <profile>`` (PFC is in effect when neither direction is disabled);
- ``qos congestion-control <profile> traffic-class <list> min-threshold|max-threshold <bytes>``, ``probability``,
  ``ecn enable|disable``;
- ``qos pfc-watchdog polling-interval <ms>`` and ``robustness <polls>`` (detection = their product, restoration =
  one polling interval; Cumulus defaults 100 ms and 3), on for interfaces with ``interface <if> qos pfc-watchdog``
  (the container alone, as the 5.11 guide writes it) or ``... qos pfc-watchdog state enable`` (fabricd's render and
  NVIDIA's reference configs; ``state disable`` turns it off), watching their PFC profile's priorities;
- ``interface <if> link mtu <bytes>``;
- the lossless path: ``qos pfc <profile> xoff-threshold|xon-threshold|port-buffer|cable-length`` (a PFC profile
  with headroom buffers its switch priorities), ``qos egress-scheduler <profile> traffic-class <list> mode
  strict`` (strict queues). NVUE pauses and watches the traffic class a switch priority maps to (Cumulus's default
  mapping is switch-priority N -> traffic-class N); fabricd's reading of the Cumulus Linux QoS chapter, not
  verified on a device.

Profiles are ``default-global`` unless the interface binds another (``interface <if> qos mapping|congestion-control|
egress-queue-mapping profile <name>``). Keys take lists and ranges (``0,1,2``, ``24-31``) and interface ranges
(``swp1-4``), as NVUE prints them. No public ``nv config show`` capture exists; the golden is the lab simulator's
output after pushing inventory/lab.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from fabricd.readers.framing import framed
from fabricd.readers.switch.config_model import (
    EcnConfig,
    LosslessConfig,
    PortConfig,
    Trust,
    by_queue,
    int_list,
    nothing_read,
    to_int,
)

PLATFORM = "cumulus_nvue"
DEFAULT_PROFILE = "default-global"
DEFAULT_POLL_MS = 100
DEFAULT_ROBUSTNESS = 3
_TRUST: dict[str, Trust] = {"l3": "dscp", "l2": "pcp", "both": "both", "port": "port"}
_STATE = {"enable": True, "enabled": True, "disable": False, "disabled": False}
"""``qos pfc-watchdog state``: ``enable|disable`` to Cumulus Linux 5.14, ``enabled|disabled`` from 5.15."""
_IF_RANGE = re.compile(r"^(.*?\D)(\d+)-(\d+)$")


_IF_NAME = re.compile(r"^(.*?)(\d+)$")


def interfaces(text: str) -> list[str]:
    """``swp1-4,swp7`` -> swp1, swp2, swp3, swp4, swp7 (NVUE's interface lists and ranges). NVUE also prints a list
    whose later items are bare numbers that take the previous item's stem: ``swp1-2,32`` is swp1, swp2, swp32 (seen
    in public ``nv config show -o commands`` outputs)."""
    out: list[str] = []
    stem = ""
    for raw in text.split(","):
        item = stem + raw if (raw.isdigit() or (raw[:1].isdigit() and "-" in raw)) and stem else raw
        m = _IF_RANGE.match(item)
        if m and int(m.group(2)) <= int(m.group(3)):
            stem = m.group(1)
            out.extend(f"{m.group(1)}{i}" for i in range(int(m.group(2)), int(m.group(3)) + 1))
        elif item:
            n = _IF_NAME.match(item)
            stem = n.group(1) if n else stem
            out.append(item)
    return out


@dataclass
class _Iface:
    mtu: int | None = None
    pfc_profile: str | None = None
    watchdog: bool = False
    profiles: dict[str, str] = field(default_factory=dict)


@dataclass
class _Qos:
    trust: dict[str, Trust] = field(default_factory=dict)
    dscp: dict[str, dict[int, int]] = field(default_factory=dict)
    pcp: dict[str, dict[int, int]] = field(default_factory=dict)
    queues: dict[str, dict[int, int]] = field(default_factory=dict)
    pfc_prios: dict[str, set[int]] = field(default_factory=dict)
    pfc_off: dict[str, set[str]] = field(default_factory=dict)
    ecn: dict[str, dict[int, dict[str, str]]] = field(default_factory=dict)
    watchdog: dict[str, int] = field(default_factory=dict)
    pfc_buffer: dict[str, set[str]] = field(default_factory=dict)
    strict: dict[str, set[int]] = field(default_factory=dict)


def _set_lines(text: str) -> Iterator[list[str]]:
    for raw in text.splitlines():
        words = raw.split()
        if words[:2] == ["nv", "set"]:
            yield words[2:]


def _unreadable(w: list[str], what: str, problems: list[str]) -> None:
    problems.append(f"unreadable {what}: nv set {' '.join(w)}")


def _mapping(q: _Qos, w: list[str], problems: list[str]) -> None:
    """``qos mapping <profile> trust <t>`` and ``qos mapping <profile> dscp|pcp <list> switch-priority <p>``."""
    n = len(w)
    if n == 5 and w[3] == "trust" and w[4] in _TRUST:
        q.trust[w[2]] = _TRUST[w[4]]
    elif n == 7 and w[3] in ("dscp", "pcp") and w[5] == "switch-priority":
        codes = int_list(w[4], 0, 63 if w[3] == "dscp" else 7)
        prio = to_int(w[6])
        if codes is None or prio is None:
            _unreadable(w, "mapping", problems)
            return
        target = q.dscp if w[3] == "dscp" else q.pcp
        for cp in codes:
            target.setdefault(w[2], {})[cp] = prio


def _egress_queue_mapping(q: _Qos, w: list[str], problems: list[str]) -> None:
    """``qos egress-queue-mapping <profile> switch-priority <list> traffic-class <tc>``."""
    if len(w) != 7 or w[3] != "switch-priority" or w[5] != "traffic-class":
        return
    prios, tc = int_list(w[4], 0, 7), to_int(w[6])
    if prios is None or tc is None:
        _unreadable(w, "egress-queue-mapping", problems)
        return
    for p in prios:
        q.queues.setdefault(w[2], {})[p] = tc


def _pfc(q: _Qos, w: list[str], _problems: list[str]) -> None:
    """``qos pfc <profile> switch-priority <list>``, its headroom keys and ``tx|rx enable|disable``."""
    if len(w) != 5:
        return
    if w[3] == "switch-priority":
        q.pfc_prios.setdefault(w[2], set()).update(int_list(w[4], 0, 7) or [])
    elif w[3] in ("xoff-threshold", "xon-threshold", "port-buffer", "cable-length"):
        q.pfc_buffer.setdefault(w[2], set()).add(w[3])
    elif w[3] in ("tx", "rx"):
        off = q.pfc_off.setdefault(w[2], set())
        (off.add if w[4] == "disable" else off.discard)(w[3])


def _egress_scheduler(q: _Qos, w: list[str], _problems: list[str]) -> None:
    """``qos egress-scheduler <profile> traffic-class <list> mode strict|dwrr``."""
    if len(w) != 7 or w[3] != "traffic-class" or w[5] != "mode":
        return
    tcs = set(int_list(w[4], 0, 7) or [])
    strict = q.strict.setdefault(w[2], set())
    if w[6] == "strict":
        strict |= tcs
    else:
        strict -= tcs


def _congestion_control(q: _Qos, w: list[str], _problems: list[str]) -> None:
    """``qos congestion-control <profile> traffic-class <list> <field> <value>``."""
    if len(w) != 7 or w[3] != "traffic-class":
        return
    for tc in int_list(w[4], 0, 7) or []:
        q.ecn.setdefault(w[2], {}).setdefault(tc, {})[w[5]] = w[6]


def _pfc_watchdog(q: _Qos, w: list[str], _problems: list[str]) -> None:
    """``qos pfc-watchdog polling-interval|robustness <n>``."""
    if len(w) == 4 and (value := to_int(w[3])) is not None:
        q.watchdog[w[2]] = value


_QOS_LINES: dict[str, Callable[[_Qos, list[str], list[str]], None]] = {
    "mapping": _mapping,
    "egress-queue-mapping": _egress_queue_mapping,
    "pfc": _pfc,
    "egress-scheduler": _egress_scheduler,
    "congestion-control": _congestion_control,
    "pfc-watchdog": _pfc_watchdog,
}
"""``nv set qos <family> ...`` -> the handler of that family's lines."""


def _qos_line(q: _Qos, w: list[str], problems: list[str]) -> None:
    if len(w) > 1 and (handler := _QOS_LINES.get(w[1])) is not None:
        handler(q, w, problems)


def _interface_line(it: _Iface, name: str, rest: list[str], problems: list[str]) -> None:
    """``nv set interface <if> <rest>``: MTU, PFC profile, PFC watchdog and the other QoS profile bindings."""
    if rest[:2] == ["link", "mtu"] and len(rest) == 3:
        it.mtu = to_int(rest[2])
    elif rest[:3] == ["qos", "pfc", "profile"] and len(rest) == 4:
        it.pfc_profile = rest[3]
    elif rest == ["qos", "pfc-watchdog"]:
        it.watchdog = True
    elif rest[:3] == ["qos", "pfc-watchdog", "state"] and len(rest) == 4:
        if rest[3] not in _STATE:
            problems.append(f"interface {name}: unreadable pfc-watchdog state {rest[3]!r}")
        else:
            it.watchdog = _STATE[rest[3]]
    elif len(rest) == 4 and rest[0] == "qos" and rest[2] == "profile":
        it.profiles[rest[1]] = rest[3]


def _pfc_in_effect(
    name: str, it: _Iface, q: _Qos, problems: list[str]
) -> tuple[frozenset[int], frozenset[int], str | None]:
    """(PFC priorities in effect, the bound PFC profile's priorities, why PFC is off though a profile is bound)."""
    if it.pfc_profile is None:
        return frozenset(), frozenset(), None
    profile_prios = frozenset(q.pfc_prios.get(it.pfc_profile, set()))
    if it.pfc_profile not in q.pfc_prios and it.pfc_profile not in q.pfc_off:
        problems.append(f"interface {name}: qos pfc profile {it.pfc_profile} is not configured")
        return frozenset(), profile_prios, None
    if q.pfc_off.get(it.pfc_profile):
        note = f"qos pfc {it.pfc_profile} has {' and '.join(sorted(q.pfc_off[it.pfc_profile]))} disabled"
        return frozenset(), profile_prios, note
    return profile_prios, profile_prios, None


def _ecn(fields_by_tc: dict[int, dict[str, str]]) -> dict[int, EcnConfig]:
    return {
        tc: EcnConfig(
            enabled=fields.get("ecn") == "enable",
            min_bytes=to_int(fields.get("min-threshold")),
            max_bytes=to_int(fields.get("max-threshold")),
            probability_percent=to_int(fields.get("probability")),
        )
        for tc, fields in fields_by_tc.items()
    }


def _port(name: str, it: _Iface, q: _Qos, problems: list[str]) -> PortConfig:
    """One interface with the profiles it binds (``default-global`` where it binds none)."""
    poll = q.watchdog.get("polling-interval", DEFAULT_POLL_MS)
    robust = q.watchdog.get("robustness", DEFAULT_ROBUSTNESS)
    mapping_prof = it.profiles.get("mapping", DEFAULT_PROFILE)
    eq_prof = it.profiles.get("egress-queue-mapping", DEFAULT_PROFILE)
    to_queue = q.queues.get(eq_prof, {})
    pfc, profile_prios, note = _pfc_in_effect(name, it, q, problems)
    buffered = it.pfc_profile is not None and {"xoff-threshold", "port-buffer"} <= q.pfc_buffer.get(
        it.pfc_profile, set()
    )
    return PortConfig(
        name=name,
        mtu_bytes=it.mtu,
        trust=q.trust.get(mapping_prof),
        dscp_to_priority=q.dscp.get(mapping_prof),
        pcp_to_priority=q.pcp.get(mapping_prof),
        priority_to_queue=q.queues.get(eq_prof),
        pfc_priorities=pfc,
        pfc_note=note,
        watchdog_priorities=profile_prios if it.watchdog else frozenset(),
        detection_ms=poll * robust,
        restoration_ms=poll,
        ecn=_ecn(q.ecn.get(it.profiles.get("congestion-control", DEFAULT_PROFILE), {})),
        pfc_queues={p: to_queue.get(p, p) for p in pfc},
        watchdog_queues=by_queue(pfc, to_queue) if it.watchdog else {},
        buffered_priorities=pfc if buffered else frozenset(),
        strict_queues=frozenset(q.strict.get(it.profiles.get("egress-scheduler", DEFAULT_PROFILE), set())),
    )


@framed
def parse_running_config(text: str) -> LosslessConfig:
    """Per-interface lossless settings from ``nv config show -o commands``."""
    q = _Qos()
    ifaces: dict[str, _Iface] = {}
    problems: list[str] = []
    for w in _set_lines(text):
        if w[:1] == ["qos"]:
            _qos_line(q, w, problems)
        elif w[:1] == ["interface"] and len(w) >= 2:
            for name in interfaces(w[1]):
                _interface_line(ifaces.setdefault(name, _Iface()), name, w[2:], problems)
    ports = {name: _port(name, it, q, problems) for name, it in ifaces.items()}
    return nothing_read(LosslessConfig(PLATFORM, ports, tuple(problems)), text, "`nv config show -o commands`")
