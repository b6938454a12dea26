"""Network-namespace plumbing for the host backends: open netlink/ioctl sockets inside a named netns.

A named netns is ``/var/run/netns/<name>`` (what ``ip netns add`` creates). fabricd never creates one by accident:
pyroute2's own helpers default to O_CREAT, so every entry point checks that the namespace exists first.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pyroute2 import IPRoute
from pyroute2.netns import popns, pushns

from fabricd.errors import HostBackendError

NETNS_RUN_DIR = "/var/run/netns"


def require_netns(name: str) -> None:
    """HostBackendError unless the named network namespace exists."""
    if not os.path.exists(os.path.join(NETNS_RUN_DIR, name)):
        raise HostBackendError(
            "netns",
            os.path.join(NETNS_RUN_DIR, name),
            "no such network namespace",
            hint=f"create it with `ip netns add {name}` or drop --netns",
        )


@contextmanager
def in_netns(name: str | None) -> Iterator[None]:
    """Run the block with the calling thread inside netns ``name`` (no-op for None)."""
    if name is None:
        yield
        return
    require_netns(name)
    pushns(name)
    try:
        yield
    finally:
        popns()


def route_socket_factory(name: str | None) -> Callable[[], socket.socket]:
    """A factory of bound NETLINK_ROUTE sockets inside ``name`` (the caller's netns for None)."""

    def make() -> socket.socket:
        with in_netns(name):
            sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
        sock.bind((0, 0))
        return sock

    return make


def open_iproute(name: str | None) -> Any:
    """A pyroute2 IPRoute in ``name`` (never creating it)."""
    if name is None:
        return IPRoute()
    require_netns(name)
    return IPRoute(netns=name, flags=0)
