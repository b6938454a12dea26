"""What the lab's gNMI targets serve, per NOS, from the counter engine (:mod:`fabricd_lab.counters`) the SSH shells
print from, so one lab state reads the same over both transports.

- SONiC: COUNTERS_DB's virtual paths and tables as whole JSON values, in sonic-gnmi's published shapes
  (``testdata/COUNTERS:Ethernet_wildcard_expected.txt``, ``COUNTERS:Ethernet68:Queues_expected.txt``,
  ``PERIODIC_WATERMARKS:Ethernet16:PriorityGroups_expected.txt``, ``COUNTERS_QUEUE_NAME_MAP.txt``; OIDs are the
  lab's own; ``COUNTERS_QUEUE_TYPE_MAP``'s shape is **unverified**: no published payload). The port object carries
  only the fields the counter engine has (a real one has ~100 ``SAI_PORT_STAT_*``); the pause duration is
  Mellanox's ``..._RX_PAUSE_DURATION_US`` (the lab's hwsku is an SN4700).
- EOS, NX-OS, Cumulus: the containers of each pack's table (fabricd/nos/<id>/gnmi.py, sources per path), each sent
  as one notification whose prefix is the container with concrete keys and whose updates are its leaves with scalar
  values (the form EOS's published replies take, hellt/netdevops.me ``docs/posts/2020/gnmi-arista.md``). **No
  published reply of these leaves exists for any of the three**: the shapes are **unverified**, as the packs say;
  the leaf values are the same counters the lab's SSH commands print (NX-OS's interface names in the DME's
  ``eth1/1`` form, its queues as the default 8-queue policy's class maps ``c-out-8q-q<N>``/``-q-default``; EOS's
  queue names its TX queue numbers; Cumulus's its traffic classes).

A tree is a list of (container path, {leaf path below it: value}); SONiC's paths are one "container" with the whole
value as its single leaf under the empty prefix.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fabricd.model import Platform

from .device import SimSwitch

Tree = list[tuple[str, dict[str, Any]]]


def _natural(name: str) -> list[object]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


# -- SONiC's COUNTERS_DB, from the counter engine -----------------------------------------------------------------

MC_QUEUES = range(8, 16)
"""Multicast queues MC8..MC15, as the lab's ``show queue counters`` prints them (their counters stay 0)."""


def _oid(port_index: int, queue: int) -> str:
    return f"oid:0x15{port_index:08x}{queue:04x}"


SONIC_PATHS = (
    "COUNTERS/Ethernet*",
    "COUNTERS/Ethernet*/Queues",
    "PERIODIC_WATERMARKS/Ethernet*/PriorityGroups",
    "COUNTERS_QUEUE_NAME_MAP",
    "COUNTERS_QUEUE_TYPE_MAP",
)


def sonic_tables(sw: SimSwitch, only: str | None = None) -> dict[str, Any]:
    """The COUNTERS_DB values the lab's SONiC serves, by path (what ``show pfc counters`` & co. print, as fields);
    ``only``: just that path's (a stream of 500 switches asks one path at a time)."""
    if only in SONIC_PATHS[3:]:  # the maps depend on the port names only
        return _queue_maps(tuple(sw.counters.ports))
    want_ports = only in (None, SONIC_PATHS[0])
    want_queues = only is None or only in SONIC_PATHS[1:]
    ports = sw.counters.read()
    names = _sorted_ports(tuple(ports))
    settings = sw.counters.watchdog
    port_obj: dict[str, dict[str, str]] = {}
    queues: dict[str, dict[str, str]] = {}
    pgs: dict[str, dict[str, str]] = {}
    qnames: dict[str, str] = {}
    qtypes: dict[str, str] = {}
    db = _QueueDb(queues, qnames, qtypes, pgs)
    for pi, name in enumerate(names):
        p = ports[name]
        if want_ports:
            port_obj[name] = _port_fields(p)
        if want_queues:
            _queue_fields(name, pi, p, settings, db)
    return {
        "COUNTERS/Ethernet*": port_obj,
        "COUNTERS/Ethernet*/Queues": queues,  # built in port and queue order
        "PERIODIC_WATERMARKS/Ethernet*/PriorityGroups": pgs,
        "COUNTERS_QUEUE_NAME_MAP": dict(sorted(qnames.items())),
        "COUNTERS_QUEUE_TYPE_MAP": dict(sorted(qtypes.items())),
    }


@functools.lru_cache(maxsize=4096)
def _sorted_ports(ports: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted(ports, key=_natural))


@functools.lru_cache(maxsize=4096)
def _queue_maps(ports: tuple[str, ...]) -> dict[str, Any]:
    names_map = {f"{n}:{i}": _oid(pi, i) for pi, n in enumerate(_sorted_ports(ports)) for i in (*range(8), *MC_QUEUES)}
    types_map = {
        oid: "SAI_QUEUE_TYPE_UNICAST" if int(k.rsplit(":", 1)[1]) < 8 else "SAI_QUEUE_TYPE_MULTICAST"
        for k, oid in names_map.items()
    }
    return {SONIC_PATHS[3]: dict(sorted(names_map.items())), SONIC_PATHS[4]: dict(sorted(types_map.items()))}


def _port_fields(p: Any) -> dict[str, str]:
    fields = {
        "SAI_PORT_STAT_IF_IN_UCAST_PKTS": str(p.rx_packets),
        "SAI_PORT_STAT_IF_OUT_UCAST_PKTS": str(p.tx_packets),
        "SAI_PORT_STAT_IF_IN_OCTETS": str(p.rx_bytes),
        "SAI_PORT_STAT_IF_OUT_OCTETS": str(p.tx_bytes),
        "SAI_PORT_STAT_IF_IN_DISCARDS": str(p.rx_drops),
        "SAI_PORT_STAT_IF_OUT_DISCARDS": str(p.tx_drops),
        "SAI_PORT_STAT_IF_IN_ERRORS": "0",
        "SAI_PORT_STAT_IF_OUT_ERRORS": "0",
    }
    for prio, c in enumerate(p.pfc):
        fields[f"SAI_PORT_STAT_PFC_{prio}_RX_PKTS"] = str(c.rx_frames)
        fields[f"SAI_PORT_STAT_PFC_{prio}_TX_PKTS"] = str(c.tx_frames)
        fields[f"SAI_PORT_STAT_PFC_{prio}_RX_PAUSE_DURATION_US"] = str(c.rx_pause_us)
    return dict(sorted(fields.items()))


@dataclass(frozen=True)
class _QueueDb:
    """The COUNTERS_DB tables :func:`_queue_fields` fills, port by port."""

    queues: dict[str, dict[str, str]]
    qnames: dict[str, str]
    qtypes: dict[str, str]
    pgs: dict[str, dict[str, str]]


def _queue_fields(name: str, pi: int, p: Any, settings: Any, db: _QueueDb) -> None:
    queues, qnames, qtypes, pgs = db.queues, db.qnames, db.qtypes, db.pgs
    wm = p.watermarks
    for i, q in enumerate(p.queues):
        entry = {
            "SAI_QUEUE_STAT_PACKETS": str(q.tx_packets),
            "SAI_QUEUE_STAT_BYTES": str(q.tx_bytes),
            "SAI_QUEUE_STAT_DROPPED_PACKETS": str(q.dropped_packets),
            "SAI_QUEUE_STAT_DROPPED_BYTES": str(q.dropped_bytes),
            "SAI_QUEUE_STAT_WRED_DROPPED_PACKETS": str(q.wred_dropped_packets),
            "SAI_QUEUE_STAT_WRED_DROPPED_BYTES": str(q.wred_dropped_bytes),
            "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS": str(q.ecn_marked_packets),
            "SAI_QUEUE_STAT_WRED_ECN_MARKED_BYTES": str(q.ecn_marked_bytes),
        }
        wd = p.watchdog.get(i)
        if wd is not None and settings is not None:
            entry.update(
                {
                    "PFC_WD_ACTION": settings.action,
                    "PFC_WD_DETECTION_TIME": str(settings.detection_ms * 1000),
                    "PFC_WD_RESTORATION_TIME": str(settings.restoration_ms * 1000),
                    "PFC_WD_STATUS": "stormed" if wd.stormed else "operational",
                    "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED": str(wd.detected),
                    "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED": str(wd.restored),
                    "PFC_WD_QUEUE_STATS_TX_PACKETS": str(wd.tx_ok),
                    "PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS": str(wd.tx_drop),
                    "PFC_WD_QUEUE_STATS_RX_PACKETS": str(wd.rx_ok),
                    "PFC_WD_QUEUE_STATS_RX_DROPPED_PACKETS": str(wd.rx_drop),
                    "PFC_WD_QUEUE_STATS_TX_PACKETS_LAST": str(wd.last_tx_ok),
                    "PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS_LAST": str(wd.last_tx_drop),
                    "PFC_WD_QUEUE_STATS_RX_PACKETS_LAST": str(wd.last_rx_ok),
                    "PFC_WD_QUEUE_STATS_RX_DROPPED_PACKETS_LAST": str(wd.last_rx_drop),
                }
            )
        queues[f"{name}:{i}"] = dict(sorted(entry.items()))
        queues[f"{name}:{i}:periodic"] = {"SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES": str(wm["queue"][i])}
        qnames[f"{name}:{i}"] = _oid(pi, i)
        qtypes[_oid(pi, i)] = "SAI_QUEUE_TYPE_UNICAST"
        pgs[f"{name}:{i}"] = {
            "SAI_INGRESS_PRIORITY_GROUP_STAT_SHARED_WATERMARK_BYTES": str(wm["pg_shared"][i]),
            "SAI_INGRESS_PRIORITY_GROUP_STAT_XOFF_ROOM_WATERMARK_BYTES": str(wm["pg_headroom"][i]),
        }
    for i in MC_QUEUES:
        queues[f"{name}:{i}"] = {
            f"SAI_QUEUE_STAT_{f}": "0"
            for f in (
                "BYTES",
                "DROPPED_BYTES",
                "DROPPED_PACKETS",
                "PACKETS",
                "WRED_DROPPED_BYTES",
                "WRED_DROPPED_PACKETS",
                "WRED_ECN_MARKED_BYTES",
                "WRED_ECN_MARKED_PACKETS",
            )
        }
        queues[f"{name}:{i}:periodic"] = {"SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES": "0"}
        qnames[f"{name}:{i}"] = _oid(pi, i)
        qtypes[_oid(pi, i)] = "SAI_QUEUE_TYPE_MULTICAST"


# -- OpenConfig-style trees (EOS, NX-OS, Cumulus) ---------------------------------------------------------------------


def _eos_pfc(sw: SimSwitch) -> Tree:
    return [
        (
            f"interfaces/interface[name={n}]/ethernet/pfc/priorities/priority[index={i}]/state",
            {"in-frames": c.rx_frames, "out-frames": c.tx_frames},
        )
        for n, p in sw.counters.read().items()
        for i, c in enumerate(p.pfc)
    ]


def _eos_watchdog(sw: SimSwitch) -> Tree:
    return [
        (
            f"interfaces/interface[name={n}]/ethernet/pfc/watchdog/tx-queues/tx-queue[index={q}]"
            "[queue-type=UNICAST]/state",
            {"stuck-count": wd.detected, "recovery-count": wd.restored},
        )
        for n, p in sw.counters.read().items()
        for q, wd in sorted(p.watchdog.items())
    ]


def _oc_queues(sw: SimSwitch) -> Tree:
    """OpenConfig queue state (EOS; Cumulus adds its own leaves in :func:`_nvue_queues`)."""
    return [
        (
            f"qos/interfaces/interface[interface-id={n}]/output/queues/queue[name={i}]/state",
            {
                "transmit-pkts": q.tx_packets,
                "transmit-octets": q.tx_bytes,
                "dropped-pkts": q.dropped_packets,
                "dropped-octets": q.dropped_bytes,
                "ecn-marked-pkts": q.ecn_marked_packets,
            },
        )
        for n, p in sw.counters.read().items()
        for i, q in enumerate(p.queues)
    ]


def _eos_counters(sw: SimSwitch) -> Tree:
    now = sw.clock()
    return [
        (
            f"interfaces/interface[name={n}]/state/counters",
            {
                "in-discards": p.rx_drops,
                "out-discards": p.tx_drops,
                "carrier-transitions": sw.link.carrier_transitions(n, now),
            },
        )
        for n, p in sw.counters.read().items()
    ]


def _nxos_name(port: str) -> str:
    return "eth" + port.removeprefix("Ethernet")


def _nxos_queuing(sw: SimSwitch) -> Tree:
    base = "System/ipqos-items/queuing-items/policy-items/out-items/intf-items"
    out: Tree = []
    for n, p in sw.counters.read().items():
        for i, q in enumerate(p.queues):
            cmap = "c-out-8q-q-default" if i == 0 else f"c-out-8q-q{i}"
            c = p.pfc[i]
            out.append(
                (
                    f"{base}/If-list[name={_nxos_name(n)}]/queCmap-items/QueuingStats-list[cmapName={cmap}]",
                    {
                        "ucTxPackets": q.tx_packets,
                        "ucTxBytes": q.tx_bytes,
                        "ucDropPackets": q.dropped_packets,
                        "ucDropBytes": q.dropped_bytes,
                        "mcTxPackets": 0,
                        "mcTxBytes": 0,
                        "mcDropPackets": 0,
                        "mcDropBytes": 0,
                        "randEcnMarkedPackets": q.ecn_marked_packets,
                        "pfcRxPpp": c.rx_frames,
                        "pfcTxPpp": c.tx_frames,
                    },
                )
            )
    return out


def _nvue_priority(sw: SimSwitch) -> Tree:
    return [
        (
            f"qos/interfaces/interface[interface-id={n}]/switch-priority[priority={i}]/state",
            {
                "counters/in-pause-pkts": c.rx_frames,
                "counters/out-pause-pkts": c.tx_frames,
                "in-pause-duration": c.rx_pause_us,
                "out-pause-duration": c.tx_pause_us,
            },
        )
        for n, p in sw.counters.read().items()
        for i, c in enumerate(p.pfc)
    ]


def _nvue_queues(sw: SimSwitch) -> Tree:
    return [
        (
            f"qos/interfaces/interface[interface-id={n}]/output/queues/queue[name={i}]/state",
            {
                "transmit-pkts": q.tx_packets,
                "transmit-octets": q.tx_bytes,
                "no-buffer-uc-dropped-pkts": q.dropped_packets,
                "wred-dropped-pkts": q.wred_dropped_packets,
                "ecn-marked-pkts": q.ecn_marked_packets,
            },
        )
        for n, p in sw.counters.read().items()
        for i, q in enumerate(p.queues)
    ]


def _nvue_counters(sw: SimSwitch) -> Tree:
    now = sw.clock()
    return [
        (
            f"interfaces/interface[name={n}]/state/counters",
            {
                "ecn-marked-pkts": sum(q.ecn_marked_packets for q in p.queues),
                "carrier-transitions": sw.link.carrier_transitions(n, now),
            },
        )
        for n, p in sw.counters.read().items()
    ]


OC_TREES: dict[Platform, dict[str, Callable[[SimSwitch], Tree]]] = {
    Platform.ARISTA_EOS: {
        "interfaces/interface[name=*]/ethernet/pfc/priorities/priority[index=*]/state": _eos_pfc,
        (
            "interfaces/interface[name=*]/ethernet/pfc/watchdog/tx-queues/tx-queue[index=*][queue-type=*]/state"
        ): _eos_watchdog,
        "qos/interfaces/interface[interface-id=*]/output/queues/queue[name=*]/state": _oc_queues,
        "interfaces/interface[name=*]/state/counters": _eos_counters,
    },
    Platform.CISCO_NXOS: {
        "System/ipqos-items/queuing-items/policy-items/out-items/intf-items/If-list[name=*]/queCmap-items/"
        "QueuingStats-list[cmapName=*]": _nxos_queuing,
    },
    Platform.CUMULUS_NVUE: {
        "qos/interfaces/interface[interface-id=*]/switch-priority[priority=*]/state": _nvue_priority,
        "qos/interfaces/interface[interface-id=*]/output/queues/queue[name=*]/state": _nvue_queues,
        "interfaces/interface[name=*]/state/counters": _nvue_counters,
    },
}
"""Per NOS: the container pattern (keys ``[k=*]``, sorted as gNMI path text sorts them) -> its instances."""

_KEY = re.compile(r"\[([^=\]]+)=([^\]]*)\]")


def _wild(path: str) -> str:
    return _KEY.sub(lambda m: f"[{m.group(1)}=*]", path)


@functools.lru_cache(maxsize=256)
def _filter(path: str) -> re.Pattern[str]:
    """A requested path with concrete and ``*`` keys -> the regex of the container paths it selects."""
    parts = _KEY.split(path)  # text, key, value, text, ...
    body = ""
    for i in range(0, len(parts) - 1, 3):
        key, value = parts[i + 1], parts[i + 2]
        body += re.escape(parts[i]) + re.escape(f"[{key}=") + ("[^\\]]*" if value == "*" else re.escape(value))
        body += "\\]"
    return re.compile(body + re.escape(parts[-1]) + "$")


def oc_tree(sw: SimSwitch, path: str) -> Tree | None:
    """The containers ``path`` selects on ``sw`` (a pattern of its NOS's tree with ``*`` or concrete keys), or None
    when the lab does not serve that path."""
    build = OC_TREES.get(sw.platform, {}).get(_wild(path))
    if build is None:
        return None
    if "*]" in path and path == _wild(path):
        return build(sw)
    selects = _filter(path)
    return [(c, leaves) for c, leaves in build(sw) if selects.match(c)]
