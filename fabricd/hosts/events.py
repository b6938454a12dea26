"""Device events for the reconcile agent: a NIC netdev or an RDMA device that appears (again).

Host RoCE settings (MTU, DCB, sysfs ``ecn/``, configfs ``default_roce_tos``) are lost when a NIC driver reloads or a
device is hot-plugged; the agent re-applies them when the device comes back instead of waiting for its interval.

- **Netdevs**: an ``AF_NETLINK`` route socket joined to ``RTMGRP_LINK`` (inside the agent's network namespace when it
  has one) reports ``RTM_NEWLINK``; a watched name that shows up with an interface index it did not have before (it
  was deleted and created again, or is new) is an appearance. Attribute changes of a live link (MTU, up/down, which
  the agent's own apply causes) have the same index and are not.
- **RDMA devices**: the kernel's RDMA netlink has no portable add/remove multicast group on the kernels fabricd
  supports, so ``<root>/sys/class/infiniband`` is listed every ``rdma_poll_s``; a watched device whose directory
  entry is new (another inode: the driver registered it again) is an appearance.
"""

from __future__ import annotations

import logging
import os
import select
import socket
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from pyroute2.netlink.rtnl import RTMGRP_LINK
from pyroute2.netlink.rtnl.marshal import MarshalRtnl

from .netns import in_netns

log = logging.getLogger(__name__)

RTM_NEWLINK = 16
RTM_DELLINK = 17


class DeviceWatcher:
    """Calls ``on_appear(reason)`` when a watched netdev or RDMA device appears again; runs on its own thread."""

    def __init__(
        self,
        netdevs: Iterable[str],
        rdma_devices: Iterable[str],
        on_appear: Callable[[str], None],
        *,
        netns: str | None = None,
        root: str | os.PathLike[str] = "/",
        rdma_poll_s: float = 1.0,
    ) -> None:
        self.netdevs = set(netdevs)
        self.rdma_devices = set(rdma_devices)
        self.on_appear = on_appear
        self.netns = netns
        self.ib_dir = Path(root) / "sys/class/infiniband"
        self.rdma_poll_s = rdma_poll_s
        self._index: dict[str, int | None] = {}
        self._rdma: dict[str, int | None] = {}
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None

    def update(self, netdevs: Iterable[str], rdma_devices: Iterable[str]) -> None:
        """Watch other names (the intent changed)."""
        self.netdevs = set(netdevs)
        self.rdma_devices = set(rdma_devices)

    def _open(self) -> socket.socket:
        with in_netns(self.netns):
            sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
        sock.bind((0, RTMGRP_LINK))
        return sock

    def _rdma_inodes(self) -> dict[str, int | None]:
        out: dict[str, int | None] = {}
        for name in self.rdma_devices:
            try:
                out[name] = os.lstat(self.ib_dir / name).st_ino
            except OSError:
                out[name] = None
        return out

    def _link_indexes(self) -> dict[str, int | None]:
        out: dict[str, int | None] = {}
        for name in self.netdevs:
            try:
                with in_netns(self.netns):
                    out[name] = socket.if_nametoindex(name)
            except OSError:
                out[name] = None
        return out

    def start(self, stop: threading.Event) -> None:
        """Open the socket now (so no event after this call is missed) and watch until ``stop`` is set."""
        self._sock = self._open()
        self._index = self._link_indexes()
        self._rdma = self._rdma_inodes()
        self._thread = threading.Thread(target=self._loop, args=(stop,), name="device-events", daemon=True)
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self, stop: threading.Event) -> None:
        assert self._sock is not None
        marshal = MarshalRtnl()
        try:
            while not stop.is_set():
                ready, _, _ = select.select([self._sock], [], [], self.rdma_poll_s)
                if ready:
                    try:
                        data = self._sock.recv(1 << 20)
                    except OSError as exc:  # ENOBUFS: events were lost; compare the whole state
                        log.warning("device events: %s; re-reading the links", exc)
                        self._resync()
                        continue
                    try:
                        for msg in marshal.parse(data):
                            self._link_event(msg["header"]["type"], msg["index"], msg.get_attr("IFLA_IFNAME"))
                    except Exception:  # a message pyroute2 cannot decode must not end the watch
                        log.exception("device events: undecodable netlink message; re-reading the links")
                        self._resync()
                self._poll_rdma()
        finally:
            self._sock.close()

    def _resync(self) -> None:
        now = self._link_indexes()
        for name, idx in now.items():
            if idx is not None and idx != self._index.get(name):
                self.on_appear(f"netdev {name} appeared (index {idx})")
        self._index = now

    def _link_event(self, kind: int, index: int, name: str | None) -> None:
        if name is None or name not in self.netdevs:
            return
        if kind == RTM_DELLINK:
            self._index[name] = None
            return
        if kind == RTM_NEWLINK and self._index.get(name) != index:
            self._index[name] = index
            log.info("netdev %s appeared (index %d)", name, index)
            self.on_appear(f"netdev {name} appeared (index {index})")

    def _poll_rdma(self) -> None:
        now = self._rdma_inodes()
        for name, ino in now.items():
            if ino is not None and ino != self._rdma.get(name):
                log.info("RDMA device %s appeared", name)
                self.on_appear(f"rdma device {name} appeared")
        self._rdma = now
