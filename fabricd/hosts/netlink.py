"""The netlink backend (pyroute2): MTU, link up, the RDMA VLAN netdev, the RDMA address, global pause off.

Paths of its steps (fabricd.intent.host.netlink_steps): ``mtu`` (int), ``state`` ("up"/"down", IFF_UP),
``vlan`` ({"link": parent, "id": vid} or absent), ``address`` (the IPv4 addresses on the netdev, "a.b.c.d/len"),
``pause`` ({"rx", "tx"} global 802.3x pause through the ethtool ioctl). Every operation is idempotent: the plan
only holds what differs, and a write of a value already there is a no-op for the kernel.

``netns`` runs everything inside a named network namespace (containers, tests). A kernel without 802.1Q
(``CONFIG_VLAN_8021Q``) answers a VLAN creation with EOPNOTSUPP; that becomes a located HostBackendError.
"""

from __future__ import annotations

import errno
import ipaddress
from collections.abc import Callable
from typing import Any

from pyroute2.netlink.exceptions import NetlinkError

from fabricd.errors import HostBackendError
from fabricd.intent.host import Backend, HostStep

from . import ethtool
from .base import HostBackend, Reading
from .netns import open_iproute

IFF_UP = 0x1

IPRouteFactory = Callable[[], Any]


class NetlinkBackend(HostBackend):
    """Links, MTU, VLAN and addresses with pyroute2, optionally inside a network namespace."""

    backend = Backend.NETLINK

    def __init__(self, netns: str | None = None, *, iproute_factory: IPRouteFactory | None = None) -> None:
        self.netns = netns
        self._factory: IPRouteFactory = iproute_factory or (lambda: open_iproute(netns))
        self._ipr: Any = None

    # -- socket ---------------------------------------------------------------------------------------------

    def _ip(self) -> Any:
        if self._ipr is None:
            self._ipr = self._factory()
        return self._ipr

    def close(self) -> None:
        if self._ipr is not None:
            self._ipr.close()
            self._ipr = None

    def _link(self, ifname: str) -> Any | None:
        idx = self._ip().link_lookup(ifname=ifname)
        if not idx:
            return None
        return self._ip().get_links(idx[0])[0]

    def _index(self, ifname: str, op: str) -> int:
        idx = self._ip().link_lookup(ifname=ifname)
        if not idx:
            raise HostBackendError(
                op,
                ifname,
                "no such network interface" + self._where(),
                errno=errno.ENODEV,
                hint="check the NIC's netdev name in the inventory (`ip link`)",
            )
        return int(idx[0])

    def _where(self) -> str:
        return f" in netns {self.netns}" if self.netns else ""

    # -- reads ----------------------------------------------------------------------------------------------

    def read(self, obj: str, path: str) -> Reading:
        try:
            return self._read(obj, path)
        except (NetlinkError, OSError) as exc:
            return Reading(object=obj, path=path, present=False, error=str(exc))

    def _read(self, obj: str, path: str) -> Reading:
        if path == "pause":
            pause = ethtool.read_pause(obj, self.netns)
            if pause is None:
                return Reading(object=obj, path=path, present=False)
            return Reading(object=obj, path=path, value=dict(pause))
        link = self._link(obj)
        if link is None:
            return Reading(object=obj, path=path, present=False)
        return Reading(object=obj, path=path, value=self._link_value(obj, path, link))

    def _link_value(self, obj: str, path: str, link: Any) -> Any:
        """The value of ``path`` (mtu, state, operstate, vlan, address) read from ``obj``'s link message."""
        if path == "mtu":
            return int(link.get_attr("IFLA_MTU"))
        if path == "state":
            return "up" if link["flags"] & IFF_UP else "down"
        if path == "operstate":
            return str(link.get_attr("IFLA_OPERSTATE"))
        if path == "vlan":
            return self._vlan(link)
        if path == "address":
            addrs = self._ip().get_addr(index=link["index"], family=2)
            return sorted(f"{a.get_attr('IFA_ADDRESS')}/{a['prefixlen']}" for a in addrs)
        raise HostBackendError("read", f"{obj} {path}", "unknown netlink attribute")

    def _vlan(self, link: Any) -> dict[str, Any]:
        """A VLAN's parent and id; another kind of link gives its kind only."""
        info = link.get_attr("IFLA_LINKINFO")
        kind = info.get_attr("IFLA_INFO_KIND") if info is not None else None
        if kind != "vlan":
            return {"kind": kind}
        data = info.get_attr("IFLA_INFO_DATA")
        parent = self._ip().get_links(link.get_attr("IFLA_LINK"))[0].get_attr("IFLA_IFNAME")
        return {"link": parent, "id": int(data.get_attr("IFLA_VLAN_ID"))}

    def satisfied(self, step: HostStep, current: Reading) -> bool:
        if not current.present:
            return False
        if step.path == "address":
            return _address_ok(str(step.desired), current.value)
        if step.path == "pause" and isinstance(current.value, dict) and isinstance(step.desired, dict):
            return all(current.value.get(k) == v for k, v in step.desired.items())
        return current.value == step.desired

    # -- writes ---------------------------------------------------------------------------------------------

    def write(self, step: HostStep) -> None:
        obj, path, desired = step.object, step.path, step.desired
        try:
            if path == "mtu":
                self._ip().link("set", index=self._index(obj, "set mtu"), mtu=int(str(desired)))
            elif path == "state":
                self._ip().link("set", index=self._index(obj, "set state"), state=str(desired))
            elif path == "vlan":
                if not isinstance(desired, dict):
                    raise HostBackendError("create vlan", obj, f"bad desired value {desired!r}")
                self._ensure_vlan(obj, str(desired["link"]), int(str(desired["id"])))
            elif path == "address":
                self._ensure_address(obj, str(desired))
            elif path == "pause":
                if not isinstance(desired, dict):
                    raise HostBackendError("ethtool -A", obj, f"bad desired value {desired!r}")
                ethtool.write_pause(obj, rx=bool(desired["rx"]), tx=bool(desired["tx"]), netns=self.netns)
            else:
                raise HostBackendError("write", f"{obj} {path}", "unknown netlink attribute")
        except NetlinkError as exc:
            raise HostBackendError(
                f"set {path}",
                obj + self._where(),
                f"kernel said: {exc.args[-1]}",
                errno=exc.code,
                hint=_hint(path, exc.code),
            ) from exc

    def _ensure_vlan(self, name: str, parent: str, vid: int) -> None:
        link = self._link(name)
        if link is not None:
            current = self._read(name, "vlan").value
            if current == {"link": parent, "id": vid}:
                return
            self._ip().link("del", index=link["index"])
        parent_idx = self._index(parent, "create vlan")
        try:
            self._ip().link("add", ifname=name, kind="vlan", link=parent_idx, vlan_id=vid)
        except NetlinkError as exc:
            if exc.code == errno.EOPNOTSUPP:
                raise HostBackendError(
                    "create vlan",
                    f"{name} (802.1Q id {vid} on {parent}{self._where()})",
                    "the kernel has no 802.1Q VLAN support (CONFIG_VLAN_8021Q / module 8021q): Operation not supported",
                    errno=exc.code,
                    hint="`modprobe 8021q`, or run with --skip vlan to configure the untagged netdev only",
                ) from exc
            raise

    def _ensure_address(self, ifname: str, address: str) -> None:
        idx = self._index(ifname, "add address")
        want = ipaddress.IPv4Interface(address)
        for existing in self._read(ifname, "address").value or []:  # type: ignore[union-attr]
            have = ipaddress.IPv4Interface(str(existing))
            if have != want and have.ip in want.network:
                self._ip().addr("del", index=idx, address=str(have.ip), prefixlen=have.network.prefixlen)
        if str(want) not in (self._read(ifname, "address").value or []):  # type: ignore[operator]
            self._ip().addr("add", index=idx, address=str(want.ip), prefixlen=want.network.prefixlen)

    def write_back(self, reading: Reading) -> None:
        obj, path = reading.object, reading.path
        try:
            if path == "vlan":
                link = self._link(obj)
                if not reading.present:
                    if link is not None:
                        self._ip().link("del", index=link["index"])
                    return
                if isinstance(reading.value, dict) and "id" in reading.value:
                    self._ensure_vlan(obj, str(reading.value["link"]), int(str(reading.value["id"])))
                return
            if not reading.present:
                return
            if path == "address":
                self._set_addresses(obj, [str(a) for a in reading.value or []])  # type: ignore[union-attr]
                return
            if path == "pause" and isinstance(reading.value, dict) and reading.value.get("supported") is False:
                return
            self.write(HostStep(backend=self.backend, object=obj, path=path, desired=reading.value, check="restore"))
        except NetlinkError as exc:
            raise HostBackendError(
                f"restore {path}", obj + self._where(), f"kernel said: {exc.args[-1]}", errno=exc.code
            ) from exc

    def _set_addresses(self, ifname: str, wanted: list[str]) -> None:
        idx = self._index(ifname, "restore addresses")
        have = [str(a) for a in self._read(ifname, "address").value or []]  # type: ignore[union-attr]
        for a in have:
            if a not in wanted:
                iface = ipaddress.IPv4Interface(a)
                self._ip().addr("del", index=idx, address=str(iface.ip), prefixlen=iface.network.prefixlen)
        for a in wanted:
            if a not in have:
                iface = ipaddress.IPv4Interface(a)
                self._ip().addr("add", index=idx, address=str(iface.ip), prefixlen=iface.network.prefixlen)


def _address_ok(desired: str, current: object) -> bool:
    """The desired address is present and no other address of its subnet competes with it."""
    if not isinstance(current, list):
        return False
    want = ipaddress.IPv4Interface(desired)
    have = [ipaddress.IPv4Interface(str(a)) for a in current]
    return want in have and not any(h != want and h.ip in want.network for h in have)


def _hint(path: str, code: int) -> str:
    if path == "mtu" and code == errno.EINVAL:
        return "the device or its parent does not allow this MTU; raise the parent's MTU first"
    if code == errno.EPERM:
        return "run as root (CAP_NET_ADMIN)"
    if code == errno.ENODEV:
        return "check the NIC's netdev name in the inventory (`ip link`)"
    return "see `ip link` and dmesg"
