"""The lossless path, proved on the output: parse a rendered switch config back with its pack's own running-config
parser and check, per port, that every lossless priority is paused, watched and buffered on the queue it actually
lands in, and that CNPs land on a strict queue.

The expected path is the one decision of :mod:`fabricd.intent.lossless_path`; what the device would do is read from
the rendered text by ``spec_of(platform).parse_running_config`` (the same parser ``fabricd audit switch`` reads a
live switch with), so a table the render derived from something else, or forgot, shows here. Per lossless priority
P of a port with PFC:

- ``queue``: the queue P's traffic actually lands in (the priority -> queue map; on NX-OS, which classifies straight
  to a queue, the queue of every codepoint the intent classifies to P) is the decided one;
- ``paused``: PFC is on for P and a pause received for P stops that queue;
- ``watched`` (ports with the watchdog on): the watchdog watches that queue, counting P's pause frames;
- ``buffered``: P's ingress priority group has lossless headroom (SONiC BUFFER_PG, NVUE's PFC profile; EOS and
  NX-OS size it themselves for a no-drop priority);
- ``cnp`` (the policy's CNP class is strict): the CNP priority's queue is strict and CNP is not paused.

Pure (L1): text in, violations out.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricd.intent.lossless_path import PathPlan
from fabricd.intent.switch import SwitchIntentBase
from fabricd.readers.switch.config_model import LosslessConfig, PortConfig

from .registry import spec_of


@dataclass(frozen=True)
class PathViolation:
    """One break of the lossless path on one port of one switch."""

    switch: str
    port: str
    priority: int
    kind: str  # queue | paused | watched | buffered | cnp | port | parse
    expected: str
    got: str

    def render(self) -> str:
        return (
            f"{self.switch} {self.port}: priority {self.priority} not {self.kind} as decided "
            f"(expected {self.expected}, got {self.got})"
        )


def _queue_of(priority: int, intent: SwitchIntentBase, cfg: PortConfig) -> tuple[int | None, str]:
    """The queue ``priority``'s traffic lands in on this port, and how that was read."""
    if cfg.priority_to_queue is not None:
        return cfg.priority_to_queue.get(priority, priority), "priority -> queue map"
    cps = [c for line in intent.classifier if line.priority == priority for c in line.codepoints]
    table = cfg.dscp_to_queue if intent.trust_dscp else cfg.pcp_to_queue
    if table is None or not cps:
        return None, "no priority -> queue map and no classification to a queue"
    queues = {table.get(c) for c in cps}
    if len(queues) != 1 or None in queues:
        return None, f"codepoints of priority {priority} go to queues {sorted(str(q) for q in queues)}"
    (queue,) = queues
    return queue, "codepoint -> queue classification"


def check_config(intent: SwitchIntentBase, plan: PathPlan, config: LosslessConfig) -> list[PathViolation]:
    """Where ``config`` (a parsed render of ``intent``) breaks the lossless path ``plan`` decided."""
    out: list[PathViolation] = []
    for port in intent.ports:
        cfg = config.ports.get(port.name)

        def bad(priority: int, kind: str, expected: str, got: str, name: str = port.name) -> None:
            out.append(PathViolation(intent.name, name, priority, kind, expected, got))

        if cfg is None:
            bad(-1, "port", f"port {port.name} in the rendered config", "absent")
            continue
        if port.pfc:
            for path in plan.lossless:
                p = path.priority
                queue, how = _queue_of(p, intent, cfg)
                if queue is None:
                    bad(p, "queue", f"queue {path.queue}", how)
                    continue
                if queue != path.queue:
                    bad(p, "queue", f"queue {path.queue}", f"queue {queue} ({how})")
                if p not in cfg.pfc_priorities or cfg.pfc_queues.get(p) != queue:
                    bad(
                        p,
                        "paused",
                        f"PFC on priority {p} stopping queue {queue}",
                        f"PFC priorities {sorted(cfg.pfc_priorities)}, priority {p} stops queue "
                        f"{cfg.pfc_queues.get(p, '-')}",
                    )
                if port.watchdog and p not in cfg.watchdog_queues.get(queue, frozenset()):
                    watched = ", ".join(
                        f"queue {q} (priorities {','.join(map(str, sorted(w)))})"
                        for q, w in sorted(cfg.watchdog_queues.items())
                    )
                    bad(p, "watched", f"watchdog on queue {queue} counting priority {p}", watched or "none")
                if cfg.buffered_priorities is not None and p not in cfg.buffered_priorities:
                    bad(
                        p,
                        "buffered",
                        f"lossless headroom for priority {p}",
                        f"lossless PGs of priorities {sorted(cfg.buffered_priorities)}",
                    )
        cnp = plan.cnp
        if cnp.strict and cfg.strict_queues is not None:
            queue, how = _queue_of(cnp.priority, intent, cfg)
            if queue is None or queue not in cfg.strict_queues:
                bad(
                    cnp.priority,
                    "cnp",
                    f"CNP priority {cnp.priority} on a strict queue ({cnp.queue})",
                    f"queue {queue if queue is not None else how}, strict queues {sorted(cfg.strict_queues)}",
                )
            if cnp.priority in cfg.pfc_priorities:
                bad(cnp.priority, "cnp", "CNP not paused", f"PFC on priority {cnp.priority}")
    return out


def check_render(intent: SwitchIntentBase, plan: PathPlan, text: str) -> list[PathViolation]:
    """Parse ``text`` (the rendered config file named by the platform spec's ``suffix``: SONiC's CONFIG_DB JSON, the
    others' CLI) with the platform's running-config parser and check it (:func:`check_config`)."""
    config = spec_of(intent.platform).parse_running_config(text)
    out = [PathViolation(intent.name, "-", -1, "parse", "a readable config", problem) for problem in config.problems]
    return out + check_config(intent, plan, config)
