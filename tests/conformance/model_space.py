"""Fabric documents drawn from everything the inventory model accepts (issue 24 part 5), not from a curated space.

The leaf models (watchdog, ECN profile, RoCE and CNP classes, ports, buffers, NICs, VLANs) are drawn *from the
pydantic model itself* (:func:`from_model`): each field's type, its ``ge``/``le`` bounds, its enum, its optional
and list forms, biased towards the bounds and the values vendors treat specially. What the model types only as
text is drawn in every form the switch OSes use:

- port names: each NOS's physical and breakout forms (SONiC ``Ethernet0``/``Ethernet1`` lanes, EOS ``Ethernet1``,
  ``Ethernet1/1``, NX-OS ``Ethernet1/1``, ``Ethernet1/1/1``, NVUE ``swp1``, ``swp1s0``), and, once validate has a
  port-name rule (FAB140, issue 24 part 1), LAG names and other NOSes' forms;
- queue layouts where a queue's number is not its priority's, one or two lossless priorities anywhere but the CNP
  priority, DWRR weights and strict classes;
- MTUs, descriptions, VLAN ids and names, watchdog timers and ECN thresholds at and around the edges.

The fabric's structure (one switch per NOS, a host per switch cabled to it, links between switches) is fixed so
that most draws are consistent; :func:`fabricd validate` decides which are accepted (``conformance_corpus.accepted``).
"""

from __future__ import annotations

import importlib
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from annotated_types import Ge, Le, MaxLen, MinLen
from hypothesis import strategies as st
from pydantic import BaseModel

from fabricd.model import CnpClass, EcnProfile, Nic, Port, RoceClass, Watchdog
from fabricd.model.policy import Buffers
from fabricd.nos.registry import SPECS
from fabricd.nos.validate import CHECKS_BY_CODE

HERE = Path(__file__).resolve().parent
PLATFORMS = tuple(p.value for p in SPECS)
"""The registry's platforms, walked at import (never a list of four)."""
JUMBO = {"arista_eos": 9214}
"""The port MTU inventories write for a NOS whose largest is not the model's 9216: EOS's `mtu` is the IP MTU,
68-9214 (EOS User Manual, "Support for Layer 3 MTU on 7280R3/7500R3/7800R3")."""

NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:/@+-"
names = st.text(alphabet=NAME_CHARS, min_size=1, max_size=64).filter(lambda s: s[0].isalnum())
"""The model's ``Name``: 1-64 of letters, digits and ``_ . : / @ + -``, starting with a letter or digit."""
idents = st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,30}", fullmatch=True)
"""Names every NOS takes as an identifier (most real inventories use these; at most 31 characters: NX-OS VLAN names
take 32 without ``system vlan long-name``)."""
cli_text = st.text(
    alphabet=st.characters(codec="ascii", min_codepoint=32, max_codepoint=126, exclude_characters="\"'`$;|&<>\\"),
    min_size=0,
    max_size=200,
)
"""The model's ``CliText``: one printable ASCII line without quotes or shell metacharacters, at most 200."""

# ---------------------------------------------------------------------------------------------------------------
# strategies from the pydantic model
# ---------------------------------------------------------------------------------------------------------------

_EDGES = (
    0,
    1,
    99,
    100,
    101,
    127,
    128,
    200,
    576,
    999,
    1000,
    1001,
    1500,
    4000,
    4094,
    5000,
    9000,
    9100,
    9214,
    9216,
    60000,
)


def _int(lo: int | None, hi: int | None) -> st.SearchStrategy[int]:
    lo_ = 0 if lo is None else lo
    hi_ = max(lo_, 10_000_000 if hi is None else hi)
    edges = sorted({e for e in (*_EDGES, lo_, hi_, lo_ + 1, hi_ - 1) if lo_ <= e <= hi_})
    return st.one_of(st.sampled_from(edges), st.integers(lo_, hi_))


def _bounds(metadata: list[Any]) -> tuple[int | None, int | None, int | None, int | None]:
    lo = hi = min_len = max_len = None
    for m in metadata:
        if isinstance(m, Ge):
            lo = int(m.ge)  # type: ignore[call-overload]
        elif isinstance(m, Le):
            hi = int(m.le)  # type: ignore[call-overload]
        elif isinstance(m, MinLen):
            min_len = m.min_length
        elif isinstance(m, MaxLen):
            max_len = m.max_length
    return lo, hi, min_len, max_len


def _float(lo: int | None, hi: int | None) -> st.SearchStrategy[float]:
    return st.one_of(
        st.sampled_from([0.0, 1.0, 2.5, 5.0, 40.0, 300.0]),
        st.floats(lo or 0, hi or 100_000, allow_nan=False, allow_infinity=False).map(lambda x: round(x, 1)),
    )


_SCALARS: dict[Any, Callable[[int | None, int | None], st.SearchStrategy[Any]]] = {
    bool: lambda lo, hi: st.booleans(),
    int: _int,
    float: _float,
    str: lambda lo, hi: names,
}
"""Strategies for the scalar annotations, from the field's numeric bounds."""


def for_type(tp: Any, metadata: list[Any]) -> st.SearchStrategy[Any]:
    """A strategy for one annotation (with its pydantic field metadata)."""
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        inner, *extra = typing.get_args(tp)
        extra_meta: list[Any] = []
        for e in extra:
            extra_meta.extend(getattr(e, "metadata", []) or [e])
        return for_type(inner, [*metadata, *extra_meta])
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(for_type(a, metadata) for a in typing.get_args(tp)))
    if tp is type(None):
        return st.none()
    lo, hi, min_len, max_len = _bounds(metadata)
    if origin is list:
        (item,) = typing.get_args(tp)
        return st.lists(for_type(item, []), min_size=min_len or 0, max_size=min(max_len or 3, 3))
    if isinstance(tp, type) and issubclass(tp, Enum):
        return st.sampled_from(list(tp))
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return from_model(tp)
    scalar = _SCALARS.get(tp)
    if scalar is not None:
        return scalar(lo, hi)
    raise TypeError(f"no strategy for {tp!r}")


def from_model(model: type[BaseModel], **overrides: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A JSON-ready dict for ``model``: every field drawn from its annotation (fields with a default sometimes left
    out, so the model's default is drawn too), ``overrides`` replacing a field's strategy (always drawn;
    ``st.nothing()`` leaves the field out)."""
    fields: dict[str, st.SearchStrategy[Any]] = {}
    for name, info in model.model_fields.items():
        if name in overrides:
            fields[name] = overrides[name]
        else:
            fields[name] = for_type(info.annotation, list(info.metadata))

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, strategy in fields.items():
            if strategy.is_empty:
                continue
            required = model.model_fields[name].is_required() or name in overrides
            if required or draw(st.integers(0, 3)) > 0:
                value = draw(strategy)
                out[name] = value.value if isinstance(value, Enum) else value
        return out

    return build()


# ---------------------------------------------------------------------------------------------------------------
# port names in each NOS's forms
# ---------------------------------------------------------------------------------------------------------------

PORT_RULES = "FAB140" in CHECKS_BY_CODE
"""Whether validate checks port names per NOS (issue 24 part 1). Until it does, LAG names and other NOSes' forms
are not drawn: they are the known gap that rule closes (an NX-OS ``port-channel1`` or an NVUE ``bond0`` port renders
lines the oracles refuse)."""


@dataclass(frozen=True)
class WholeModel:
    """What a pack's conformance suite (``tests/conformance/test_<id>_*.py``, its ``WHOLE_MODEL``) gives the
    whole-model property test: the port names its switches use (``ports(n)``: full ports and breakouts, ``n`` the
    port numbers), its LAG name form (FAB140 must refuse a LAG used as a port), and its oracle's ``judge(switch name,
    intent, render text, sampled) -> problems`` (``sampled``: this draw is in the sample the slow oracles judge)."""

    ports: Callable[[st.SearchStrategy[int]], st.SearchStrategy[str]]
    lag: str
    judge: Callable[[str, Any, str, bool], list[str]]


@cache
def suite_of(platform: str) -> ModuleType | None:
    """The conformance suite of a platform pack (``test_<id>_*.py`` beside this file), imported; None when the pack
    has none."""
    paths = sorted(HERE.glob(f"test_{platform}_*.py"))
    return importlib.import_module(paths[0].stem) if paths else None


def whole_model(platform: str) -> WholeModel | None:
    """The pack's ``WHOLE_MODEL`` from its conformance suite; None when it declares none."""
    suite = suite_of(platform)
    found = getattr(suite, "WHOLE_MODEL", None)
    return found if isinstance(found, WholeModel) else None


def missing_whole_models() -> list[str]:
    """The registered platforms whose conformance suite declares no ``WHOLE_MODEL`` (walking the registry as it is
    now: a fifth pack without one is named here and cannot be drawn)."""
    return [p.value for p in SPECS if whole_model(p.value) is None]


def _declared(platform: str) -> WholeModel:
    found = whole_model(platform)
    if found is None:
        raise LookupError(f"{platform}: no WHOLE_MODEL in tests/conformance/test_{platform}_*.py")
    return found


def _own_ports(platform: str) -> st.SearchStrategy[str]:
    return _declared(platform).ports(st.integers(1, 64))


def port_names(platform: str) -> st.SearchStrategy[str]:
    """A port name for a switch of ``platform``: its own forms, and with FAB140 also LAGs and foreign forms."""
    own = _own_ports(platform)
    if not PORT_RULES:
        return own
    lag = st.integers(1, 128).map(_declared(platform).lag.format)
    foreign = st.one_of(*(_own_ports(p) for p in PLATFORMS if p != platform))
    # one port name in about a hundred is a LAG or another NOS's form: enough that validate must refuse it in many
    # draws, few enough that most draws of a many-port fabric still reach the oracles
    # (two inner values: hypothesis draws the ends of a range far more often than one in a hundred)
    return st.integers(0, 99).flatmap(lambda i: lag if i == 37 else foreign if i == 61 else own)


# ---------------------------------------------------------------------------------------------------------------
# the fabric
# ---------------------------------------------------------------------------------------------------------------


def mostly(usual: st.SearchStrategy[Any], anything: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``usual`` three times in four, else ``anything`` (the model's whole range: what validate must judge)."""
    return st.one_of(usual, usual, usual, anything)


@st.composite
def queue_layout(draw: st.DrawFn) -> dict[str, Any]:
    """The QoS part of the policy: lossless priorities (1-2, never the CNP one), each in its own class (or both in
    one) whose id (the queue) is often not the priority, the CNP class, a default class; the DSCP map, RoCE and CNP
    classes."""
    cnp = draw(from_model(CnpClass))
    cnp_prio = cnp.get("priority", 6)
    free = [p for p in range(8) if p != cnp_prio]
    lossless = draw(st.lists(st.sampled_from(free), min_size=1, max_size=2, unique=True))
    rest = [p for p in range(8) if p not in lossless and p != cnp_prio]
    queues = list(draw(st.permutations(list(range(8)))))  # class ids: a queue per class, numbers shuffled
    n = len(lossless) + 2
    if draw(st.integers(0, 3)) > 0:  # most layouts keep the CNP queue above the DWRR ones (EOS's rule, FAB121)
        top = max(range(n), key=lambda i: queues[i])
        queues[top], queues[n - 1] = queues[n - 1], queues[top]
    default_prio = draw(st.sampled_from(rest)) if rest else cnp_prio
    classes: list[dict[str, Any]] = []
    dwrr: list[dict[str, Any]] = []
    if len(lossless) == 2 and draw(st.integers(0, 3)) == 0:  # both lossless priorities in one queue
        dwrr.append(
            {"id": queues[0], "name": f"lossless{lossless[0]}", "priorities": sorted(lossless), "scheduler": "dwrr"}
        )
    else:
        for i, p in enumerate(lossless):
            dwrr.append({"id": queues[i], "name": f"lossless{p}", "priorities": [p], "scheduler": "dwrr"})
    if rest:
        dwrr.append({"id": queues[len(lossless)], "name": draw(idents), "priorities": rest, "scheduler": "dwrr"})
    strict = cnp.get("strict", True) or draw(st.booleans())
    cnp_tc: dict[str, Any] = {
        "id": queues[n - 1],
        "name": "cnp",
        "priorities": [cnp_prio],
        "scheduler": "strict" if strict else "dwrr",
    }
    if cnp_tc["scheduler"] == "dwrr":
        dwrr.append(cnp_tc)
    else:
        classes.append(cnp_tc)
    cuts = sorted(draw(st.lists(st.integers(1, 99), min_size=len(dwrr) - 1, max_size=len(dwrr) - 1, unique=True)))
    shares = [b - a for a, b in zip([0, *cuts], [*cuts, 100], strict=True)]
    for tc, share in zip(dwrr, shares, strict=True):
        tc["weight_percent"] = share
    classes = dwrr + classes
    ecn_name = draw(mostly(st.one_of(st.just("roce"), idents), names))
    roce = draw(from_model(RoceClass, priority=st.sampled_from(lossless), tos=st.nothing()))
    for tc in classes:
        if roce["priority"] in tc["priorities"] or (tc["name"].startswith("lossless") and draw(st.booleans())):
            tc["ecn_profile"] = ecn_name
    dscps = draw(st.lists(st.integers(0, 63), min_size=2, max_size=2, unique=True))
    roce["dscp"], cnp["dscp"] = dscps
    cnp["priority"] = cnp_prio
    dscp_map = {roce["dscp"]: roce["priority"], cnp["dscp"]: cnp_prio}
    for p in lossless:
        if p != roce["priority"]:
            dscp_map[draw(st.integers(0, 63).filter(lambda d: d not in dscp_map))] = p
    return {
        "trust": "dscp",
        "dscp_to_priority": dscp_map,
        "default_priority": default_prio,
        "roce": roce,
        "cnp": cnp,
        "traffic_classes": draw(st.permutations(classes)),
        "_lossless": lossless,
        "_ecn": ecn_name,
        "_ecn_queues": sorted(tc["id"] for tc in classes if tc.get("ecn_profile") == ecn_name),
    }


_TIMER = st.sampled_from([100, 200, 300, 400, 500, 1000])


@st.composite
def watchdogs(draw: st.DrawFn) -> dict[str, Any]:
    """The model's watchdog, its timers mostly whole polls inside every NOS's range (most draws are accepted) and
    otherwise anywhere the model allows."""
    if draw(st.integers(0, 3)) > 0:
        poll = draw(st.sampled_from([100, 100, 200]))
        det, rest = draw(st.integers(2, 10).map(lambda k: k * 100)), draw(_TIMER.filter(lambda t: t >= 200))
    else:
        poll, det, rest = draw(_int(0, 10_000)), draw(_int(0, 100_000)), draw(_int(0, 100_000))
    return draw(from_model(Watchdog, detection_ms=st.just(det), restoration_ms=st.just(rest), poll_ms=st.just(poll)))


@st.composite
def ecn_profiles(draw: st.DrawFn, name: str, queues: list[int]) -> dict[str, Any]:
    """The model's ECN profile, min below max, at and around the edges (bytes that are not whole kbytes too)."""
    if draw(st.integers(0, 3)) > 0:
        lo = draw(st.sampled_from([1, 999, 1000, 1500, 9216, 150_000, 1_048_576]))
        hi = lo + draw(st.sampled_from([1, 1000, 1_350_000]))
    else:
        lo = draw(_int(0, 8_000_000))
        hi = lo + draw(_int(1, 8_000_000))
    return draw(
        from_model(
            EcnProfile,
            name=st.just(name),
            traffic_classes=st.just(queues),
            min_bytes=st.just(lo),
            max_bytes=st.just(hi),
        )
    )


@st.composite
def switch_buffers(draw: st.DrawFn) -> dict[str, Any]:
    """The model's switch buffer figures: mostly unknown (as most inventories), else consistent sizes."""
    if draw(st.integers(0, 2)) > 0:
        return {}
    total = draw(st.integers(16_000_000, 200_000_000))
    return {
        "total_bytes": total,
        "headroom_pool_bytes": draw(st.integers(4_000_000, total // 2)),
        "max_queue_bytes": draw(st.integers(total // 4, total)),
    }


@st.composite
def fabrics(draw: st.DrawFn) -> dict[str, Any]:
    """A fabric document: 1-4 switches, each of a NOS drawn (at least one), with 2-4 ports; a host NIC cabled to
    each switch's first port; links between switches; a policy drawn from the whole model."""
    qos = draw(queue_layout())
    lossless = qos.pop("_lossless")
    ecn_name = qos.pop("_ecn")
    ecn_queues = qos.pop("_ecn_queues")
    wd = draw(watchdogs())
    ecn = draw(ecn_profiles(ecn_name, ecn_queues))
    vlan_ids = draw(st.lists(mostly(st.integers(2, 3724), _int(1, 4094)), min_size=0, max_size=2, unique=True))
    vlan_names = draw(st.lists(mostly(idents, names), min_size=len(vlan_ids), max_size=len(vlan_ids), unique=True))
    if vlan_ids and draw(st.integers(0, 3)) == 0:
        qos["trust"] = "pcp"  # PCP needs VLAN-tagged NICs (FAB039): every NIC joins a VLAN below
    platforms = draw(st.lists(st.sampled_from(PLATFORMS), min_size=1, max_size=4, unique=True))
    switches: list[dict[str, Any]] = []
    hosts: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    for i, platform in enumerate(platforms):
        ports = draw(st.lists(port_names(platform), min_size=2, max_size=4, unique=True))
        # descriptions and MTUs mostly as inventories write them (a word; the switch's jumbo MTU), else anywhere
        # the model allows: validate must refuse what a NOS does not take
        described = st.one_of(st.none(), mostly(idents, cli_text))
        mtus = mostly(st.just(JUMBO.get(platform, 9216)), st.integers(576, 9216))
        port_docs = [
            {**draw(from_model(Port, name=st.just(p), description=described, mtu=mtus)), "name": p} for p in ports
        ]
        for pd in port_docs:
            if pd.get("description") is None:
                pd.pop("description", None)
        name = f"sw{i}-{platform.replace('_', '-')}"
        switches.append(
            {
                "name": name,
                "platform": platform,
                "mgmt": {"host": f"192.0.2.{i + 1}"},
                "ports": port_docs,
                "buffer": draw(switch_buffers()),
            }
        )
        host_port = port_docs[0]
        host_port["role"] = "host"
        host_port["mtu"] = max(host_port.get("mtu", 9216), 1522)
        nic = draw(
            from_model(
                Nic,
                netdev=st.just("eth0"),
                rdma_device=st.just("mlx5_0"),
                driver=st.just("mlx5_core"),
                rdma_driver=st.nothing(),
                transport=st.nothing(),
                cc=st.just({}),
                ip=st.nothing(),
                peer=st.just(f"{name}:{ports[0]}"),
                vlan=st.nothing(),
                speed=st.nothing(),
                cable_m=st.one_of(st.nothing(), st.sampled_from([0.5, 1.0, 3.0, 5.0])),
            )
        )
        nic["speed"] = host_port.get("speed", "400G")
        nic["mtu"] = min(max(nic.get("mtu", 9000), 576), host_port["mtu"] - 22)
        k = (
            draw(st.integers(0, len(vlan_ids) - 1))
            if vlan_ids and (qos["trust"] == "pcp" or draw(st.booleans()))
            else None
        )
        if k is not None:
            nic["vlan"] = vlan_ids[k]
            nic["ip"] = f"10.{100 + k}.{i}.1/16"
        else:
            nic["ip"] = f"10.{i}.0.1/24"
        hosts.append({"name": f"host{i}", "nics": [nic]})
    for a, b in zip(switches[::2], switches[1::2], strict=False):  # disjoint pairs: a port is cabled once
        pa, pb = a["ports"][-1], b["ports"][-1]
        if draw(st.booleans()):
            for pd in (pa, pb):
                pd["role"] = "leaf_spine"
            mtu = pa.get("mtu", 9216)
            if mtu == JUMBO.get(a["platform"], 9216):  # the usual jumbo: each end writes its own NOS's
                mtu = JUMBO.get(b["platform"], 9216)
            pb.update(speed=pa.get("speed", "400G"), mtu=mtu)
            links.append({"a": f"{a['name']}:{pa['name']}", "b": f"{b['name']}:{pb['name']}", "role": "leaf_spine"})
    vlans: list[dict[str, Any]] = []
    for k, vid in enumerate(vlan_ids):
        members = [f"{s['name']}:{s['ports'][-1]['name']}" for s in switches if draw(st.booleans())]
        members += [n["peer"] for h in hosts for n in h["nics"] if n.get("vlan") == vid]  # FAB076
        vlans.append({"id": vid, "name": vlan_names[k], "subnet": f"10.{100 + k}.0.0/16", "members": members})
    policy: dict[str, Any] = {
        "transport": draw(st.sampled_from(["roce_v2_lossless"] * 5 + ["roce_v2_lossy"])),
        "qos": qos,
        "pfc": {"priorities": lossless, "watchdog": wd},
        "ecn_profiles": [ecn],
        "dcqcn": {"rp_priorities": lossless, "np_priorities": lossless},
        "buffers": draw(from_model(Buffers, cable_length_m=st.nothing())),
        "vlans": vlans,
    }
    return {
        "name": draw(mostly(idents, names)),
        "description": draw(cli_text) or "-",
        "policy": policy,
        "switches": switches,
        "hosts": hosts,
        "links": links,
    }
