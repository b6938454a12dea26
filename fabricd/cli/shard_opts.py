"""``--shard K/N`` and ``--shard-from-hostname N`` of ``fabricd serve`` and ``fabricd export switches``: this replica
polls only the switches whose Prometheus-style hashmod of the name is K (fabricd/inventory/shard.py)."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Annotated

import typer

from fabricd.errors import UsageError
from fabricd.inventory.shard import Shard, parse_shard, shard_from_hostname

from .common import stderr

ShardOpt = Annotated[
    str | None,
    typer.Option(
        "--shard",
        envvar="FABRICD_SHARD",
        show_default=False,
        help="Poll only shard K of N of the switches (K/N, K from 0): those whose Prometheus hashmod of the "
        "switch name (md5, low 64 bits, mod N) is K. N replicas with 0/N .. N-1/N export every switch "
        "once.",
    ),
]
ShardFromHostnameOpt = Annotated[
    int | None,
    typer.Option(
        "--shard-from-hostname",
        envvar="FABRICD_SHARD_FROM_HOSTNAME",
        min=1,
        show_default=False,
        help="Shard K of N with K the pod ordinal at the end of the hostname (a StatefulSet's name-K); "
        "give N, the replicas.",
    ),
]


def resolve_shard(shard: str | None, from_hostname: int | None, hostname: str | None = None) -> Shard | None:
    """The replica's shard from the two options (at most one may be given), or None for every switch."""
    if shard is not None and from_hostname is not None:
        raise UsageError(
            "--shard and --shard-from-hostname both given (or FABRICD_SHARD and FABRICD_SHARD_FROM_HOSTNAME)",
            hint="give one of them",
        )
    if shard is not None:
        return parse_shard(shard)
    if from_hostname is not None:
        return shard_from_hostname(from_hostname, hostname if hostname is not None else socket.gethostname())
    return None


def select(shard: Shard | None, names: Sequence[str]) -> list[str]:
    """The names this replica polls, with one stderr line saying how many of how many."""
    if shard is None:
        return list(names)
    mine = shard.select(names)
    stderr().print(
        f"shard {shard}: {len(mine)} of {len(names)} switches" + ("" if mine else " (this replica polls none)"),
        highlight=False,
        markup=False,
    )
    return mine
