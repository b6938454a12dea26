"""Cisco NX-OS intent shaping: qos, queuing and network-qos policy-maps, system qos and per-interface PFC.

NX-OS sizes PFC headroom itself (a render warning lists what fabricd computed); WRED thresholds are whole kbytes.
"""

from __future__ import annotations

from pydantic import Field

from fabricd.intent.switch import (
    EcnIntent,
    IntentShaping,
    PolicyParts,
    QueueIntent,
    ShapeContext,
    SwitchIntentBase,
    ident,
    label,
    warn_headroom_computed,
)
from fabricd.intent.units import bytes_to_kbytes, plain_list, range_list
from fabricd.intent.watchdog_timers import Warn
from fabricd.model import EcnProfile, Platform
from fabricd.model.types import Model

from .watchdog import NxosWatchdog, nxos_watchdog

_label = label


class NxosQosClass(Model):
    """A ``class-map type qos`` and its ``set qos-group`` in the classification policy."""

    name: str = _label("class-map name")
    match: str = Field(description="DSCP (or CoS) list/ranges as NX-OS takes it: '24-31', '10,12'")
    qos_group: int = Field(ge=0, le=7, description="qos-group = egress queue")


class NxosQueue(Model):
    """One of the 8 system queues in the queuing and network-qos policies."""

    queue: QueueIntent
    queuing_class: str = _label("c-out-8q-qN / c-out-8q-q-default")
    network_class: str = _label("c-8q-nqN / c-8q-nq-default")
    pause_cos: str | None = Field(description="'pause pfc-cos' list for a lossless queue, else None")


class NxosSwitchIntent(SwitchIntentBase):
    """Cisco NX-OS: qos, queuing and network-qos policy-maps, system qos and per-interface PFC."""

    platform: Platform = Platform.CISCO_NXOS
    qos_classes: list[NxosQosClass]
    nx_queues: list[NxosQueue]
    system_mtu_bytes: int = Field(description="network-qos class MTU: the largest port MTU")
    watchdog: NxosWatchdog | None


def ecn(profile: EcnProfile, queue: int, warn: Warn) -> EcnIntent:
    lo, lo_exact = bytes_to_kbytes(profile.min_bytes)
    hi, hi_exact = bytes_to_kbytes(profile.max_bytes)
    if not lo_exact:
        warn(
            f"queues[{queue}].ecn.min_threshold",
            f"{profile.min_bytes} B",
            f"{lo} kbytes",
            "the WRED command takes whole kbytes",
        )
    if not hi_exact:
        warn(
            f"queues[{queue}].ecn.max_threshold",
            f"{profile.max_bytes} B",
            f"{hi} kbytes",
            "the WRED command takes whole kbytes",
        )
    return EcnIntent(
        profile=profile.name,
        min_threshold=lo,
        max_threshold=hi,
        unit="kbytes",
        probability_percent=profile.max_mark_probability_percent,
    )


def _nxos_classes(parts: PolicyParts) -> list[NxosQosClass]:
    prio_queue = {pq.priority: pq.queue for pq in parts.priority_queues}
    by_queue: dict[int, list[int]] = {}
    for line in parts.classifier:
        q = prio_queue[line.priority]
        by_queue.setdefault(q, []).extend(line.codepoints)
    names = {q.id: q.name for q in parts.queues}
    return [
        NxosQosClass(name=f"FABRICD_{ident(names[q]).upper()}", match=range_list(cps), qos_group=q)
        for q, cps in sorted(by_queue.items())
    ]


def _nxos_queues(parts: PolicyParts) -> list[NxosQueue]:
    out = []
    for q in parts.queues:
        suffix = "-default" if q.id == 0 else str(q.id)
        # the no-drop class of a queue pauses the CoS values of the lossless paths landing in it (one decision,
        # fabricd/intent/lossless_path.py)
        lossless = sorted(path.priority for path in parts.paths if path.queue == q.id)
        out.append(
            NxosQueue(
                queue=q,
                queuing_class=f"c-out-8q-q{suffix}",
                network_class=f"c-8q-nq{suffix}",
                pause_cos=plain_list(lossless) if lossless else None,
            )
        )
    return out


def finish(ctx: ShapeContext) -> NxosSwitchIntent:
    warn_headroom_computed(ctx.ports, ctx.sink, "NX-OS")
    wd = ctx.parts.watchdog
    assert wd is None or isinstance(wd, NxosWatchdog)
    return NxosSwitchIntent(
        qos_classes=_nxos_classes(ctx.parts),
        nx_queues=_nxos_queues(ctx.parts),
        system_mtu_bytes=max((p.mtu_bytes for p in ctx.ports), default=9216),
        watchdog=wd,
        warnings=ctx.sink.items,
        **ctx.common,
    )


SHAPING = IntentShaping(model=NxosSwitchIntent, finish=finish, watchdog=nxos_watchdog, ecn=ecn)
