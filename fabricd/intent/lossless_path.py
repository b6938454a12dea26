"""The lossless path: one decision, per priority, from which every dependent switch table is derived.

A lossless priority travels through a chain of tables on every switch OS: ingress classification puts it in a
traffic class, the traffic class goes to an egress queue, PFC pauses (received for that priority) must stop that
queue, the PFC watchdog must watch that queue, and the ingress priority group that counts it must have lossless
headroom. When one table is changed and another is not (SONiC: ``TC_TO_QUEUE_MAP`` moved, ``pfc_to_queue_map`` and
``pfcwd_sw_enable`` left on the priority's number), the switch pauses and watches an empty queue while the real one
drops. So this module decides the chain once, from the policy, and every platform pack's intent reads it
(:attr:`fabricd.intent.switch.PolicyParts.paths`); :mod:`fabricd.nos.lossless_path` checks the rendered configs
against it after parsing them back.

fabricd's layout, for every NOS: the traffic class of a priority is the priority number itself (DSCP -> TC maps
write the priority), the egress queue is the id of the policy traffic class listing the priority, and the ingress
priority group of a lossless priority is the priority number (lossy priorities share PG 0).
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricd.model import Fabric, TrafficClass

NUM_PRIORITIES = 8


@dataclass(frozen=True)
class LosslessPath:
    """Where one lossless priority goes: its egress ``queue`` (the policy traffic class listing it, ``traffic_class``
    its name) and the ingress ``priority_group`` whose headroom holds it. Pauses received for ``priority`` must stop
    ``queue``, and the watchdog must watch ``queue``."""

    priority: int
    queue: int
    traffic_class: str
    priority_group: int

    @property
    def moved(self) -> bool:
        """The priority sits in a queue with another number (tables keyed by one or the other then differ)."""
        return self.queue != self.priority


@dataclass(frozen=True)
class CnpPath:
    """Where congestion notification packets go: the CNP priority's queue, and whether the policy wants it strict."""

    priority: int
    queue: int
    strict: bool


@dataclass(frozen=True)
class PathPlan:
    """The one decision: priority -> queue for all 8 priorities, the lossless paths and the CNP path."""

    priority_queue: dict[int, int]
    lossless: tuple[LosslessPath, ...]
    cnp: CnpPath

    @property
    def lossless_priorities(self) -> list[int]:
        return [p.priority for p in self.lossless]

    def path(self, priority: int) -> LosslessPath | None:
        return next((p for p in self.lossless if p.priority == priority), None)


def class_of_priority(fabric: Fabric) -> dict[int, TrafficClass | None]:
    """The policy traffic class of each priority 0-7; a priority no class lists takes the default priority's."""
    qos = fabric.policy.qos
    default_tc = qos.class_of(qos.default_priority)
    return {p: qos.class_of(p) or default_tc for p in range(NUM_PRIORITIES)}


def path_plan(fabric: Fabric) -> PathPlan:
    """The lossless path of every PFC priority (none when the transport is lossy) and the CNP path."""
    policy = fabric.policy
    classes = class_of_priority(fabric)
    priority_queue = {p: (tc.id if tc is not None else 0) for p, tc in classes.items()}
    prios = sorted(set(policy.pfc.priorities)) if policy.lossless else []
    lossless = tuple(
        LosslessPath(
            priority=p,
            queue=priority_queue[p],
            traffic_class=(tc.name if (tc := classes[p]) else "unused"),
            priority_group=p,
        )
        for p in prios
    )
    cnp = policy.qos.cnp
    return PathPlan(priority_queue, lossless, CnpPath(cnp.priority, priority_queue[cnp.priority], cnp.strict))
