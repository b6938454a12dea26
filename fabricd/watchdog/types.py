"""Inputs and outputs of the detector: channel keys, timestamped counter samples and events.

Samples are slotted dataclasses, not pydantic models: the watchdog builds thousands per second (64 ports × 2
directions × 20 polls/s in ``bench/watchdog.py``) and a pydantic constructor costs several µs each. Events are rare
and user-facing, so they are frozen pydantic models (``fabricd.model.types.Model``).

Direction is always seen from the port that owns the counter (docs/contracts.md, ``direction`` label):
- ``rx``: the port *receives* pause; its transmit on that priority is held. On a NIC this is the victim side.
- ``tx``: the port *sends* pause; its receive buffer for that priority is full. A NIC doing so for long is the
  stalled receiver of Guo et al. 2016 (the culprit that starts a storm).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import Field

from fabricd.model.types import Model


class Scope(StrEnum):
    NIC = "nic"
    SWITCH = "switch"


class Direction(StrEnum):
    RX = "rx"
    TX = "tx"


class EventKind(StrEnum):
    STORM_DETECTED = "storm_detected"
    STORM_RESTORED = "storm_restored"
    LOSSLESS_DROP = "lossless_drop"
    WATCHDOG_STUCK = "watchdog_stuck"


@dataclass(frozen=True, slots=True)
class ChannelKey:
    """One watched pause channel: a port, a priority (0-7) and a direction (rx | tx).

    Its hash is computed once (keys are looked up several times per sample on the watchdog's hot path).
    """

    scope: Scope
    device: str
    interface: str
    priority: int
    direction: Direction
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "_hash", hash((self.scope, self.device, self.interface, self.priority, self.direction))
        )

    def __hash__(self) -> int:
        return self._hash

    @property
    def port(self) -> str:
        return f"{self.device}:{self.interface}"


@dataclass(frozen=True, slots=True)
class PauseSample:
    """Cumulative counters of one channel, read at monotonic time ``t`` (seconds).

    - ``pause_s``: cumulative time paused, seconds (mlx5 ``rx_prio3_pause_duration`` µs / 1e6, bnxt
      ``pfc_pri3_rx_duration_us``, SONiC PFC history ``TOTAL_PAUSE_TIME_MS``); None when the device has none.
    - ``frames``: cumulative pause frames (mlx5 ``rx_prio3_pause``, SONiC ``PFC3 Rx``); None when unknown.
    - ``progress``: cumulative packets moving the other way on the same priority, i.e. the queue draining
      (for ``rx``: packets transmitted on the priority; for ``tx``: packets received); None when unknown.
    - ``link_up``: operational state (sysfs ``operstate``, switch ``oper status``); None when unknown.
    - ``link_epoch``: a counter that moves on every link flap (sysfs ``carrier_changes`` or mlx5
      ``link_down_events_phy``); None when unknown.
    - ``update_s``: how often the device refreshes these counters, seconds, when the source knows it (declared:
      SONiC refreshes PFC counters every 1 s and queue counters every 10 s, a gNMI SAMPLE stream every sample
      interval); None lets the detector measure it from the counters (:class:`~fabricd.watchdog.detector.Cadence`).
    """

    key: ChannelKey
    t: float
    pause_s: float | None = None
    frames: int | None = None
    progress: int | None = None
    link_up: bool | None = None
    link_epoch: int | None = None
    update_s: float | None = None


@dataclass(frozen=True, slots=True)
class DropKey:
    """A drop counter on the lossless path: ``reason`` is e.g. ``queue_drop``, ``buffer_discard`` or
    ``out_of_buffer`` (RDMA hw_counters: receive WQE missing); ``priority`` None when the counter has none."""

    scope: Scope
    device: str
    interface: str
    priority: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class DropSample:
    key: DropKey
    t: float
    count: int | None


@dataclass(frozen=True, slots=True)
class WdKey:
    """A switch's own PFC watchdog on one port and priority."""

    device: str
    interface: str
    priority: int


@dataclass(frozen=True, slots=True)
class WdSample:
    """Cumulative storms detected and restored by the switch's watchdog (SONiC ``show pfcwd stats``
    ``STORM DETECTED/RESTORED``; EOS ``show priority-flow-control counters watchdog``)."""

    key: WdKey
    t: float
    detected: int | None
    restored: int | None


class Event(Model):
    """One watchdog event, printed as one JSON line by ``fabricd watch --output json``."""

    ts: float = Field(description="epoch seconds when the detector decided (the poll that saw it)")
    event: EventKind
    scope: Scope
    device: str
    interface: str
    priority: int | None = Field(default=None, description="0-7; None for a drop counter without priority")
    direction: Direction | None = None
    origin: str | None = Field(default=None, description="'device:interface' at the root of the pause tree")
    origin_path: list[str] | None = Field(default=None, description="ports walked from this one to the origin")
    origin_kind: str | None = Field(
        default=None, description="stalled_receiver | switch_congestion | inferred_peer | deadlock | unknown"
    )
    paused_ms: float | None = Field(default=None, description="continuous pause measured at detection, ms")
    storm_duration_s: float | None = Field(default=None, description="detected -> restored, seconds")
    reason: str | None = None
    count: int | None = Field(default=None, description="drops since the previous event of this channel")
    detected: int | None = None
    restored: int | None = None
    stuck_s: float | None = Field(default=None, description="time since the unrestored detection, seconds")

    def as_dict(self) -> dict[str, Any]:
        """The JSON object of the event, without empty fields."""
        return self.model_dump(mode="json", exclude_none=True)


@dataclass
class Batch:
    """What one poll of one source produced."""

    pause: list[PauseSample] = field(default_factory=list)
    drops: list[DropSample] = field(default_factory=list)
    wd: list[WdSample] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
