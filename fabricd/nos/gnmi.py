"""What a platform pack declares for gNMI streaming: :class:`GnmiTable`, one per switch OS
(``fabricd/nos/<id>/gnmi.py``).

A table is data, pure (L1): the subscriptions the gNMI collector sends (path, origin, target, encoding, SAMPLE or
ON_CHANGE, the interval floor and default the NOS documents), and ``to_counters``, which turns the latest value of
every subscribed path into the same :class:`~fabricd.readers.switch.model.SwitchCounters` the pack's SSH parsers
produce, so the exporter emits the same series whichever transport read them. Every entry names its source
(the repository path or vendor page). A counter the NOS does not publish over gNMI
is listed in ``ssh_only`` (read over SSH by the SSH collector, or missing when the switch streams) and never
reported as 0. ``mapped`` False: the paths are recorded but the collector cannot read this NOS over gNMI yet (the
inventory refuses ``telemetry.transport: gnmi`` for it, naming this table).

The collector (fabricd.collectors.gnmi, L2) is the only module that imports grpc and the gNMI stubs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from fabricd.model import Platform
from fabricd.readers.switch.model import SwitchCounters

Mode = Literal["SAMPLE", "ON_CHANGE"]
Encoding = Literal["JSON", "JSON_IETF", "PROTO"]


@dataclass(frozen=True)
class GnmiPath:
    """One subscribed path. ``path`` is slash-separated gNMI elements (keys as ``name[key=value]``); ``origin`` and
    ``target`` go in the request's prefix; ``group`` names the Subscribe stream the path belongs to (one
    subscription per group: origins are never mixed in one request, EOS refuses that)."""

    path: str
    mode: Mode
    source: str
    origin: str = ""
    target: str = ""
    group: str = "counters"
    interval_s: float | None = None
    """SAMPLE: the interval this path is streamed at by default (None: the table's default); the switch's own counter
    refresh is the floor that makes sense (SONiC queues refresh every 10 s)."""


@dataclass(frozen=True)
class GnmiPart:
    """One independent piece of ``to_counters``: it reads only the path keys ``reads``, so a collector converts it
    again only when one of those values changed (SONiC's queue tables change every 10 s, its ports every 1 s)."""

    reads: tuple[str, ...]
    convert: Callable[[Mapping[str, Any]], SwitchCounters]


@dataclass(frozen=True)
class GnmiTable:
    """A NOS's gNMI table. ``port``: the NOS's default gNMI port; ``encoding``: what its JSON values need;
    ``min_interval_s``: the shortest SAMPLE interval the NOS accepts (``None``: unverified); ``default_interval_s``:
    what the NOS uses when the request gives 0 or none; ``supports_get``: False where the NOS refuses Get (Cumulus);
    ``ssh_only``: counter -> why it is not streamed (read over SSH, or missing when streaming);
    ``missing_when_streaming``: the prefixes of the switch series (``fabricd_switch_...``) the SSH collector exports
    for this NOS and a streaming switch does not: absent, never 0, while the switch is read over gNMI;
    ``unverified``: what no published payload or document confirmed."""

    platform: Platform
    port: int
    encoding: Encoding
    paths: tuple[GnmiPath, ...]
    min_interval_s: float | None
    default_interval_s: float
    to_counters: Callable[[Mapping[str, Any]], SwitchCounters] | None
    source: str
    supports_get: bool = True
    ssh_only: Mapping[str, str] = field(default_factory=dict)
    missing_when_streaming: tuple[str, ...] = ()
    unverified: tuple[str, ...] = ()
    parts: tuple[GnmiPart, ...] = ()
    """``to_counters`` in independent pieces (optional): merged, they give what ``to_counters`` gives."""

    @property
    def mapped(self) -> bool:
        """True when the collector can turn this NOS's notifications into counters."""
        return self.to_counters is not None

    def groups(self) -> dict[str, tuple[GnmiPath, ...]]:
        """The paths by subscription group (one Subscribe stream each), in table order."""
        out: dict[str, list[GnmiPath]] = {}
        for p in self.paths:
            out.setdefault(p.group, []).append(p)
        return {k: tuple(v) for k, v in out.items()}

    def interval(self, path: GnmiPath, requested_s: float | None) -> float:
        """The SAMPLE interval for ``path``: the inventory's ``requested_s`` (or the path's/table's default), never
        under the NOS's floor."""
        value = requested_s if requested_s is not None else (path.interval_s or self.default_interval_s)
        if self.min_interval_s is not None:
            value = max(value, self.min_interval_s)
        return value


def path_key(target: str, origin: str, path: str) -> str:
    """The key a decoded update is stored under: ``[origin:]`` ``[target/]`` path (what ``to_counters`` reads)."""
    key = f"{target}/{path}" if target else path
    return f"{origin}:{key}" if origin else key
