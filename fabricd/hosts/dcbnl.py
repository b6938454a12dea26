"""DCB netlink (RTM_GETDCB / RTM_SETDCB) on pyroute2's netlink message classes.

pyroute2 knows only the constants ``RTM_GETDCB`` (78) and ``RTM_SETDCB`` (79); this module adds the ``dcbmsg``
message class, its IEEE 802.1Qaz attributes and the C structures they carry, and a small client. The layout is
the kernel UAPI ``include/uapi/linux/dcbnl.h`` (struct ieee_ets, ieee_pfc, dcb_app); the requests are the ones
iproute2's ``dcb`` sends (tests/golden/dcb/ holds them, captured with strace, and the unit tests compare the
bytes). Mellanox mlnx-tools ``dcbnlink.py`` (used by ``mlnx_qos``) sends the same commands.

Message: ``nlmsghdr`` + ``struct dcbmsg {u8 dcb_family; u8 cmd; u16 pad}`` + attributes:
``DCB_ATTR_IFNAME`` (NUL-terminated) and a nested ``DCB_ATTR_IEEE`` holding ``DCB_ATTR_IEEE_ETS`` (ieee_ets),
``DCB_ATTR_IEEE_PFC`` (ieee_pfc), ``DCB_ATTR_IEEE_APP_TABLE`` (nested ``DCB_ATTR_IEEE_APP`` = dcb_app) and
``DCB_ATTR_DCB_APP_TRUST_TABLE`` (nested u8 selectors; Linux >= 6.1). The kernel answers a SET with a
``DCB_ATTR_IEEE`` u8 holding a negative errno (0 = ok), a GET with the whole IEEE object.
"""

from __future__ import annotations

import errno as errno_mod
import socket
import struct
from collections.abc import Callable
from typing import Any

from pydantic import Field
from pyroute2.netlink import NLM_F_ACK, NLM_F_REQUEST, NLMSG_ERROR, nla, nlmsg

from fabricd.model.types import Model

RTM_GETDCB = 78
RTM_SETDCB = 79

DCB_CMD_IEEE_SET = 20
DCB_CMD_IEEE_GET = 21
DCB_CMD_IEEE_DEL = 27

DCB_ATTR_IFNAME = 1
DCB_ATTR_IEEE = 13

DCB_ATTR_IEEE_ETS = 1
DCB_ATTR_IEEE_PFC = 2
DCB_ATTR_IEEE_APP_TABLE = 3
DCB_ATTR_DCB_APP_TRUST_TABLE = 11

DCB_ATTR_IEEE_APP = 1
"""Entry type of an IEEE selector (1-5) in the APP and trust tables."""
DCB_ATTR_DCB_APP = 2
"""Entry type of a non-IEEE selector (PCP, 255) in the APP and trust tables."""

SEL_ETHERTYPE = 1
SEL_STREAM = 2
SEL_DGRAM = 3
SEL_ANY = 4
SEL_DSCP = 5
"""IEEE 802.1Qcd DSCP selector (IEEE_8021QAZ_APP_SEL_DSCP)."""
SEL_PCP = 255
"""Linux DCB_APP_SEL_PCP: the PCP "selector" used in the trust table."""

TSA_STRICT = 0
TSA_CBS = 1
TSA_ETS = 2
TSA_VENDOR = 255
TSA_NAMES = {TSA_STRICT: "strict", TSA_CBS: "cbs", TSA_ETS: "ets", TSA_VENDOR: "vendor"}
TSA_CODES = {v: k for k, v in TSA_NAMES.items()}
TRUST_NAMES = {
    SEL_ETHERTYPE: "ethtype",
    SEL_STREAM: "stream-port",
    SEL_DGRAM: "dgram-port",
    SEL_ANY: "port",
    SEL_DSCP: "dscp",
    SEL_PCP: "pcp",
}
TRUST_CODES = {v: k for k, v in TRUST_NAMES.items()}

_PFC = struct.Struct("=BBBxH2x8Q8Q")  # struct ieee_pfc: 136 bytes (u64 arrays 8-aligned)
_ETS = struct.Struct("=BBB56B")  # struct ieee_ets: 3 + 7 x 8 bytes = 59
_APP = struct.Struct("=BBH")  # struct dcb_app: selector, priority, protocol


class IeeePfc(Model):
    """struct ieee_pfc. ``pfc_en`` bit p enables PFC on priority p; ``delay`` in bit times (dcb-pfc(8))."""

    pfc_cap: int = Field(default=8, ge=0, le=8, description="number of TCs that can do PFC at once")
    pfc_en: int = Field(default=0, ge=0, le=255, description="PFC enable bitmap, bit p = priority p")
    mbc: int = Field(default=0, ge=0, le=255, description="MACsec bypass capability")
    delay: int = Field(default=0, ge=0, le=65535, description="allowance for cable delay, bit times")
    requests: list[int] = Field(default_factory=lambda: [0] * 8, description="pause frames sent, per prio")
    indications: list[int] = Field(default_factory=lambda: [0] * 8, description="pause frames received")

    def encode(self) -> bytes:
        return _PFC.pack(self.pfc_cap, self.pfc_en, self.mbc, self.delay, *self.requests, *self.indications)

    @classmethod
    def decode(cls, data: bytes) -> IeeePfc:
        v = _PFC.unpack_from(data.ljust(_PFC.size, b"\0"))
        return cls(pfc_cap=v[0], pfc_en=v[1], mbc=v[2], delay=v[3], requests=list(v[4:12]), indications=list(v[12:20]))


class IeeeEts(Model):
    """struct ieee_ets: per-TC bandwidth (%), TSA codes (0 strict, 1 cbs, 2 ets, 255 vendor) and prio -> TC."""

    willing: int = 0
    ets_cap: int = 0
    cbs: int = 0
    tc_tx_bw: list[int] = Field(default_factory=lambda: [0] * 8)
    tc_rx_bw: list[int] = Field(default_factory=lambda: [0] * 8)
    tc_tsa: list[int] = Field(default_factory=lambda: [0] * 8)
    prio_tc: list[int] = Field(default_factory=lambda: [0] * 8)
    tc_reco_bw: list[int] = Field(default_factory=lambda: [0] * 8)
    tc_reco_tsa: list[int] = Field(default_factory=lambda: [0] * 8)
    reco_prio_tc: list[int] = Field(default_factory=lambda: [0] * 8)

    def encode(self) -> bytes:
        arrays = (
            self.tc_tx_bw,
            self.tc_rx_bw,
            self.tc_tsa,
            self.prio_tc,
            self.tc_reco_bw,
            self.tc_reco_tsa,
            self.reco_prio_tc,
        )
        flat = [x for arr in arrays for x in arr]
        return _ETS.pack(self.willing, self.ets_cap, self.cbs, *flat)

    @classmethod
    def decode(cls, data: bytes) -> IeeeEts:
        v = _ETS.unpack_from(data.ljust(_ETS.size, b"\0"))
        arr = [list(v[3 + 8 * i : 11 + 8 * i]) for i in range(7)]
        return cls(
            willing=v[0],
            ets_cap=v[1],
            cbs=v[2],
            tc_tx_bw=arr[0],
            tc_rx_bw=arr[1],
            tc_tsa=arr[2],
            prio_tc=arr[3],
            tc_reco_bw=arr[4],
            tc_reco_tsa=arr[5],
            reco_prio_tc=arr[6],
        )


class DcbApp(Model):
    """struct dcb_app: packets matching (selector, protocol) get ``priority``; DSCP selector 5, protocol = DSCP."""

    selector: int = Field(ge=0, le=255)
    priority: int = Field(ge=0, le=7)
    protocol: int = Field(ge=0, le=65535)

    def encode(self) -> bytes:
        return _APP.pack(self.selector, self.priority, self.protocol)

    @classmethod
    def decode(cls, data: bytes) -> DcbApp:
        s, p, proto = _APP.unpack_from(data)
        return cls(selector=s, priority=p, protocol=proto)


class IeeeState(Model):
    """What a DCB_CMD_IEEE_GET returns, decoded; None where the device did not report the attribute."""

    ets: IeeeEts | None = None
    pfc: IeeePfc | None = None
    app: list[DcbApp] | None = None
    trust: list[int] | None = Field(default=None, description="apptrust selectors, most trusted first")


# ------------------------------------------------------------------------------------------------------------
# pyroute2 message classes
# ------------------------------------------------------------------------------------------------------------


class dcbmsg(nlmsg):  # type: ignore[misc]  # noqa: N801 - pyroute2 naming of message classes
    """``struct dcbmsg`` and its attributes, for pyroute2's encoder/decoder."""

    fields = (("family", "B"), ("cmd", "B"), ("pad", "H"))
    nla_map = (
        (DCB_ATTR_IFNAME, "DCB_ATTR_IFNAME", "asciiz"),
        (DCB_ATTR_IEEE, "DCB_ATTR_IEEE", "ieee"),
    )

    class ieee(nla):  # type: ignore[misc]  # noqa: N801
        """Nested DCB_ATTR_IEEE. A SET reply carries it as a bare u8 errno instead (see :func:`decode_reply`)."""

        nla_flags = 0x8000  # NLA_F_NESTED, as libmnl's mnl_attr_nest_start() sets it
        nla_map = (
            (DCB_ATTR_IEEE_ETS, "DCB_ATTR_IEEE_ETS", "cdata"),
            (DCB_ATTR_IEEE_PFC, "DCB_ATTR_IEEE_PFC", "cdata"),
            (DCB_ATTR_IEEE_APP_TABLE, "DCB_ATTR_IEEE_APP_TABLE", "app_table"),
            (DCB_ATTR_DCB_APP_TRUST_TABLE, "DCB_ATTR_DCB_APP_TRUST_TABLE", "trust_table"),
        )

        class app_table(nla):  # type: ignore[misc]  # noqa: N801
            nla_flags = 0x8000
            nla_map = (
                (DCB_ATTR_IEEE_APP, "DCB_ATTR_IEEE_APP", "cdata"),
                (DCB_ATTR_DCB_APP, "DCB_ATTR_DCB_APP", "cdata"),
            )

        class trust_table(nla):  # type: ignore[misc]  # noqa: N801
            nla_flags = 0x8000
            nla_map = (
                (DCB_ATTR_IEEE_APP, "DCB_ATTR_IEEE_APP", "uint8"),
                (DCB_ATTR_DCB_APP, "DCB_ATTR_DCB_APP", "uint8"),
            )


def _app_entry_type(selector: int) -> str:
    return "DCB_ATTR_DCB_APP" if selector == SEL_PCP else "DCB_ATTR_IEEE_APP"


def encode_request(
    msg_type: int,
    cmd: int,
    ifname: str,
    ieee: IeeeState | None = None,
    *,
    seq: int = 0,
    pid: int = 0,
) -> bytes:
    """Encode one DCB request exactly as iproute2 ``dcb`` does (flags REQUEST|ACK, IFNAME first, then IEEE).

    A GET carries no IEEE attribute. For a SET/DEL the IEEE nest holds, in this order, ``ieee``'s ETS, PFC, APP
    table and trust table, each only when given (not None).
    """
    msg = dcbmsg()
    msg["header"]["type"] = msg_type
    msg["header"]["flags"] = NLM_F_REQUEST | NLM_F_ACK
    msg["header"]["sequence_number"] = seq
    msg["header"]["pid"] = pid
    msg["family"] = socket.AF_UNSPEC
    msg["cmd"] = cmd
    attrs: list[list[Any]] = [["DCB_ATTR_IFNAME", ifname]]
    nest = _ieee_attrs(ieee) if ieee is not None else []
    if nest:
        attrs.append(["DCB_ATTR_IEEE", {"attrs": nest}])
    msg["attrs"] = attrs
    msg.encode()
    return bytes(msg.data)


def _ieee_attrs(ieee: IeeeState) -> list[list[Any]]:
    """The attributes of the IEEE nest: ETS, PFC, the APP table and the trust table, each only when given."""
    out: list[list[Any]] = []
    if ieee.ets is not None:
        out.append(["DCB_ATTR_IEEE_ETS", ieee.ets.encode()])
    if ieee.pfc is not None:
        out.append(["DCB_ATTR_IEEE_PFC", ieee.pfc.encode()])
    if ieee.app is not None:
        out.append(
            ["DCB_ATTR_IEEE_APP_TABLE", {"attrs": [[_app_entry_type(a.selector), a.encode()] for a in ieee.app]}]
        )
    if ieee.trust is not None:
        out.append(["DCB_ATTR_DCB_APP_TRUST_TABLE", {"attrs": [[_app_entry_type(s), s] for s in ieee.trust]}])
    return out


def decode_message(data: bytes) -> dcbmsg:
    """Decode one dcbmsg (request or GET reply) with pyroute2."""
    msg = dcbmsg(data)
    msg.decode()
    return msg


def decode_ieee(msg: dcbmsg) -> IeeeState:
    """The IEEE object of a decoded request or GET reply (absent parts are None)."""
    ieee = msg.get_attr("DCB_ATTR_IEEE")
    if ieee is None or not hasattr(ieee, "get_attr"):
        return IeeeState()
    ets_raw = ieee.get_attr("DCB_ATTR_IEEE_ETS")
    pfc_raw = ieee.get_attr("DCB_ATTR_IEEE_PFC")
    table = ieee.get_attr("DCB_ATTR_IEEE_APP_TABLE")
    trust = ieee.get_attr("DCB_ATTR_DCB_APP_TRUST_TABLE")
    return IeeeState(
        ets=IeeeEts.decode(bytes(ets_raw)) if ets_raw is not None else None,
        pfc=IeeePfc.decode(bytes(pfc_raw)) if pfc_raw is not None else None,
        app=[DcbApp.decode(bytes(v)) for _, v in table["attrs"]] if table is not None else None,
        trust=[int(v) for _, v in trust["attrs"]] if trust is not None else None,
    )


def request_fields(msg: dcbmsg) -> tuple[int, int, str | None]:
    """(nlmsg type, dcb cmd, ifname) of a decoded message."""
    return int(msg["header"]["type"]), int(msg["cmd"]), msg.get_attr("DCB_ATTR_IFNAME")


# ------------------------------------------------------------------------------------------------------------
# Client
# ------------------------------------------------------------------------------------------------------------


class DcbNetlinkError(OSError):
    """The kernel refused a DCB request; ``errno`` as the kernel gave it (EOPNOTSUPP: no dcbnl_ops)."""


SocketFactory = Callable[[], socket.socket]


def default_socket() -> socket.socket:
    """An AF_NETLINK/NETLINK_ROUTE socket in the caller's network namespace."""
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)  # NETLINK_ROUTE = 0
    sock.bind((0, 0))
    return sock


def _split(data: bytes) -> list[bytes]:
    out = []
    off = 0
    while off + 16 <= len(data):
        (length,) = struct.unpack_from("=I", data, off)
        if length < 16:
            break
        out.append(data[off : off + length])
        off += (length + 3) & ~3
    return out


class DcbClient:
    """Send DCB requests on a NETLINK_ROUTE socket from ``socket_factory`` and decode the replies.

    The factory decides the network namespace (fabricd.hosts.netns opens sockets inside one).
    """

    def __init__(self, socket_factory: SocketFactory = default_socket) -> None:
        self._factory = socket_factory
        self._seq = 0

    def _talk(self, msg_type: int, cmd: int, ifname: str, ieee: IeeeState | None = None) -> list[bytes]:
        self._seq += 1
        seq = self._seq
        data = encode_request(msg_type, cmd, ifname, ieee, seq=seq)
        sock = self._factory()
        try:
            sock.send(data)
            replies: list[bytes] = []
            while True:
                chunk = sock.recv(65536)
                done = False
                for part in _split(chunk):
                    (_, ptype, _, pseq, _) = struct.unpack_from("=IHHII", part)
                    if pseq != seq:
                        continue
                    if ptype == NLMSG_ERROR:
                        (err,) = struct.unpack_from("=i", part, 16)
                        if err:
                            raise DcbNetlinkError(-err, f"{errno_mod.errorcode.get(-err, err)} on {ifname}")
                        done = True
                    else:
                        replies.append(part)
                if done:
                    return replies
        finally:
            sock.close()

    def get(self, ifname: str) -> IeeeState:
        """DCB_CMD_IEEE_GET: the device's ETS, PFC, APP table and trust order."""
        for reply in self._talk(RTM_GETDCB, DCB_CMD_IEEE_GET, ifname):
            msg = decode_message(reply)
            if msg["header"]["type"] == RTM_GETDCB:
                return decode_ieee(msg)
        return IeeeState()

    def _set(self, cmd: int, ifname: str, ieee: IeeeState) -> None:
        for reply in self._talk(RTM_SETDCB, cmd, ifname, ieee):
            code = set_reply_errno(reply)
            if code:
                raise DcbNetlinkError(code, f"{errno_mod.errorcode.get(code, code)} setting DCB on {ifname}")

    def set_pfc(self, ifname: str, pfc: IeeePfc) -> None:
        self._set(DCB_CMD_IEEE_SET, ifname, IeeeState(pfc=pfc))

    def set_ets(self, ifname: str, ets: IeeeEts) -> None:
        self._set(DCB_CMD_IEEE_SET, ifname, IeeeState(ets=ets))

    def add_apps(self, ifname: str, apps: list[DcbApp]) -> None:
        if apps:
            self._set(DCB_CMD_IEEE_SET, ifname, IeeeState(app=apps))

    def del_apps(self, ifname: str, apps: list[DcbApp]) -> None:
        if apps:
            self._set(DCB_CMD_IEEE_DEL, ifname, IeeeState(app=apps))

    def set_trust(self, ifname: str, selectors: list[int]) -> None:
        self._set(DCB_CMD_IEEE_SET, ifname, IeeeState(trust=selectors))


def set_reply_errno(reply: bytes) -> int:
    """The errno (positive, 0 = ok) in a SET reply's bare ``DCB_ATTR_IEEE`` u8 (an i8 holding -errno)."""
    off = 16 + 4
    while off + 4 <= len(reply):
        length, atype = struct.unpack_from("=HH", reply, off)
        if length < 4:
            break
        if (atype & 0x3FFF) == DCB_ATTR_IEEE and length == 5:
            (value,) = struct.unpack_from("=b", reply, off + 4)
            return -int(value)
        off += (length + 3) & ~3
    return 0
