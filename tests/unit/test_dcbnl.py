"""DCB netlink codec (fabricd.hosts.dcbnl) byte for byte against iproute2 `dcb` requests captured with strace.

The golden files in tests/golden/dcb/ were captured by tests/golden/dcb/capture/capture.sh (command in each
header). The DcbBackend tests at the bottom talk to an in-process fake of the kernel's DCB netlink side (a mock:
no NIC with dcbnl_ops exists on this machine or in CI); the fake decodes requests with the same codec and keeps
the state a driver would, so the backend's read/plan/apply/restore path runs on real message bytes.
"""

from __future__ import annotations

import re
import socket
import struct
from pathlib import Path

import pytest

from fabricd.hosts import dcbnl
from fabricd.hosts.dcb import DcbBackend
from fabricd.hosts.dcbnl import (
    DCB_CMD_IEEE_DEL,
    DCB_CMD_IEEE_GET,
    DCB_CMD_IEEE_SET,
    RTM_GETDCB,
    RTM_SETDCB,
    SEL_DSCP,
    SEL_PCP,
    DcbApp,
    DcbClient,
    IeeeEts,
    IeeePfc,
    IeeeState,
    decode_ieee,
    decode_message,
    encode_request,
    request_fields,
)

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "dcb"
DEV = "fdtdcb0"


def golden(name: str) -> tuple[bytes, str]:
    text = (GOLDEN / f"{name}.txt").read_text()
    header = text.splitlines()[0]
    hexes: list[str] = []
    for line in text.splitlines():
        if line.startswith(" | "):
            hexes += re.findall(r"\b[0-9a-f]{2}\b", line[10:58])
    return bytes(int(h, 16) for h in hexes), header


def seq_of(data: bytes) -> int:
    return int(struct.unpack_from("=I", data, 8)[0])


ROCE_ETS = IeeeEts(
    tc_tx_bw=[50, 0, 0, 50, 0, 0, 0, 0], tc_tsa=[2, 2, 2, 2, 2, 2, 0, 2], prio_tc=[0, 0, 0, 3, 0, 0, 6, 0]
)

CASES = {
    "app-add-dscp-prio": (
        RTM_SETDCB,
        DCB_CMD_IEEE_SET,
        {
            "app": [
                DcbApp(selector=SEL_DSCP, priority=3, protocol=26),
                DcbApp(selector=SEL_DSCP, priority=6, protocol=48),
            ]
        },
    ),
    "app-del-dscp-prio": (RTM_SETDCB, DCB_CMD_IEEE_DEL, {"app": [DcbApp(selector=SEL_DSCP, priority=3, protocol=26)]}),
    "ieee-get": (RTM_GETDCB, DCB_CMD_IEEE_GET, {}),
    "pfc-set-prio3": (RTM_SETDCB, DCB_CMD_IEEE_SET, {"pfc": IeeePfc(pfc_en=0b1000)}),
    "pfc-set-prio3-delay": (RTM_SETDCB, DCB_CMD_IEEE_SET, {"pfc": IeeePfc(pfc_en=0b11000, delay=4096)}),
    "ets-set-roce": (RTM_SETDCB, DCB_CMD_IEEE_SET, {"ets": ROCE_ETS}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_encoder_matches_iproute2_bytes(name: str) -> None:
    data, header = golden(name)
    assert header.startswith("# source: iproute2"), header
    msg_type, cmd, body = CASES[name]
    mine = encode_request(msg_type, cmd, DEV, IeeeState(**body), seq=seq_of(data))
    assert mine == data, f"{name}: ours {mine.hex()} != dcb {data.hex()}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_decoder_reads_iproute2_bytes_and_round_trips(name: str) -> None:
    data, _ = golden(name)
    msg_type, cmd, body = CASES[name]
    msg = decode_message(data)
    assert request_fields(msg) == (msg_type, cmd, DEV)
    state = decode_ieee(msg)
    assert state.ets == body.get("ets")
    assert state.pfc == body.get("pfc")
    assert state.app == body.get("app")
    again = encode_request(msg_type, cmd, DEV, state, seq=seq_of(data))
    assert again == data


def test_trust_table_round_trip_and_layout() -> None:
    """apptrust (Linux >= 6.1, iproute2 >= 6.2; this machine's dcb 6.1 lacks it, so no capture): u8 selectors
    in DCB_ATTR_DCB_APP_TRUST_TABLE, IEEE selectors as DCB_ATTR_IEEE_APP (1), PCP (255) as DCB_ATTR_DCB_APP (2),
    as iproute2's dcb_apptrust_set_cb writes them."""
    data = encode_request(RTM_SETDCB, DCB_CMD_IEEE_SET, "eth0", IeeeState(trust=[SEL_DSCP, SEL_PCP]))
    assert decode_ieee(decode_message(data)).trust == [SEL_DSCP, SEL_PCP]
    # IEEE nest (NLA_F_NESTED | 13) > trust table (NLA_F_NESTED | 11) > [u8 attr type 1 = 5, u8 attr type 2 = 255]
    tail = data[-24:]
    assert tail == bytes.fromhex("18000d8014000b80050001000500000005000200ff000000")


def test_struct_sizes_follow_the_uapi() -> None:
    assert len(IeeePfc().encode()) == 136  # sizeof(struct ieee_pfc)
    assert len(IeeeEts().encode()) == 59  # sizeof(struct ieee_ets)
    assert len(DcbApp(selector=5, priority=3, protocol=26).encode()) == 4


def test_set_reply_errno() -> None:
    ok = (
        struct.pack("=IHHII", 28, RTM_SETDCB, 0, 1, 0)
        + struct.pack("=BBH", 0, DCB_CMD_IEEE_SET, 0)
        + struct.pack("=HHb3x", 5, 13, 0)
    )
    bad = ok[:-4] + struct.pack("=b3x", -22)
    assert dcbnl.set_reply_errno(ok) == 0
    assert dcbnl.set_reply_errno(bad) == 22


class FakeDcbKernel:
    """In-process stand-in for the kernel's dcbnl side of one device (mock, see module docstring)."""

    def __init__(self, ifname: str) -> None:
        self.ifname = ifname
        self.pfc = IeeePfc(pfc_en=0, delay=0)
        self.ets = IeeeEts(tc_tsa=[255] * 8, tc_tx_bw=[0] * 8, prio_tc=[0] * 8)  # mlx5 fresh: vendor TSA
        self.apps: list[DcbApp] = [DcbApp(selector=SEL_DSCP, priority=d >> 3, protocol=d) for d in range(64)]
        self.trust = [SEL_PCP]
        self.requests: list[bytes] = []
        self.fail_on: str | None = None

    def handle(self, data: bytes) -> bytes:
        self.requests.append(data)
        msg = decode_message(data)
        mtype, cmd, ifname = request_fields(msg)
        seq = seq_of(data)
        if ifname != self.ifname:
            return struct.pack("=IHHIIi", 36, 2, 0, seq, 0, -19) + data[:16]  # NLMSG_ERROR -ENODEV
        if mtype == RTM_GETDCB:
            reply = encode_request(
                RTM_GETDCB,
                DCB_CMD_IEEE_GET,
                ifname,
                IeeeState(ets=self.ets, pfc=self.pfc, app=self.apps, trust=self.trust),
                seq=seq,
            )
            return reply + struct.pack("=IHHIIi", 36, 2, 0, seq, 0, 0) + data[:16]
        req = decode_ieee(msg)
        err = 0
        if self.fail_on and getattr(req, self.fail_on) is not None:
            err = -22
        elif cmd == DCB_CMD_IEEE_SET:
            self.ets = req.ets or self.ets
            self.pfc = req.pfc or self.pfc
            self.trust = req.trust if req.trust is not None else self.trust
            for a in req.app or []:
                if a not in self.apps:
                    self.apps.append(a)
        elif cmd == DCB_CMD_IEEE_DEL:
            self.apps = [a for a in self.apps if a not in (req.app or [])]
        reply = (
            struct.pack("=IHHII", 28, RTM_SETDCB, 0, seq, 0)
            + struct.pack("=BBH", 0, cmd, 0)
            + struct.pack("=HHb3x", 5, 13, err)
        )
        return reply + struct.pack("=IHHIIi", 36, 2, 0, seq, 0, 0) + data[:16]


class FakeSocket:
    def __init__(self, kernel: FakeDcbKernel) -> None:
        self.kernel = kernel
        self.pending = b""

    def send(self, data: bytes) -> int:
        self.pending = self.kernel.handle(data)
        return len(data)

    def recv(self, size: int) -> bytes:
        out, self.pending = self.pending, b""
        return out

    def close(self) -> None:
        pass


@pytest.fixture()
def kernel() -> FakeDcbKernel:
    return FakeDcbKernel("ens1f0np0")


@pytest.fixture()
def backend(kernel: FakeDcbKernel) -> DcbBackend:
    client = DcbClient(lambda: FakeSocket(kernel))  # type: ignore[arg-type,return-value]
    return DcbBackend(client=client, dcb_cli=None)


def test_backend_plan_apply_and_restore(kernel: FakeDcbKernel, backend: DcbBackend) -> None:
    from fabricd import settings
    from fabricd.intent.host import host_intent
    from fabricd.inventory import load_inventory

    intent = host_intent(load_inventory(settings.default_inventory()).fabric, "gpu1")
    snap = backend.read_state(intent)
    plan = backend.plan(intent, snap)
    assert {s.path for s in plan.steps} == {"apptrust", "pfc", "ets", "app"}
    app_step = next(s for s in plan.steps if s.path == "app")
    assert isinstance(app_step.current, dict) and app_step.current["10"] == 1  # firmware default dscp >> 3
    result = backend.apply(plan)
    assert result.ok and len(result.applied) == 4
    assert kernel.trust == [SEL_DSCP] and kernel.pfc.pfc_en == 0b1000
    assert kernel.ets.prio_tc == [0, 0, 0, 3, 0, 0, 6, 0] and kernel.ets.tc_tsa[6] == 0
    table = {a.protocol: a.priority for a in kernel.apps}
    assert table[26] == 3 and table[48] == 6 and table[10] == 0 and len(kernel.apps) == 64
    assert backend.plan(intent, backend.read_state(intent)).steps == []
    assert backend.restore(snap) == []
    assert kernel.trust == [SEL_PCP] and kernel.pfc.pfc_en == 0
    assert {a.protocol: a.priority for a in kernel.apps}[10] == 1


def test_backend_failure_restores_earlier_steps(kernel: FakeDcbKernel, backend: DcbBackend) -> None:
    from fabricd import settings
    from fabricd.intent.host import host_intent
    from fabricd.inventory import load_inventory

    intent = host_intent(load_inventory(settings.default_inventory()).fabric, "gpu1")
    kernel.fail_on = "ets"  # the driver rejects the ETS (third step, after apptrust and pfc)
    result = backend.apply(backend.plan(intent, backend.read_state(intent)))
    assert not result.ok and result.failed is not None and result.failed.step.path == "ets"
    assert "EINVAL" in (result.failed.error or "")
    assert [s.path for s in result.applied] == ["apptrust", "pfc"]
    assert result.restored
    assert kernel.trust == [SEL_PCP] and kernel.pfc.pfc_en == 0


@pytest.mark.integration  # opens a netlink socket
def test_unsupported_device_is_a_located_reading_not_a_crash() -> None:
    """A real socket in this (root) netns: lo has no dcbnl_ops, the kernel answers EOPNOTSUPP."""
    backend = DcbBackend(dcb_cli=None)
    try:
        reading = backend.read("lo", "pfc")
    except PermissionError:  # pragma: no cover - unprivileged runner
        pytest.skip("needs CAP_NET_ADMIN for RTM_GETDCB")
    assert not reading.present and reading.error is not None and "EOPNOTSUPP" in reading.error


@pytest.mark.integration  # opens a netlink socket
def test_default_socket_is_netlink_route() -> None:
    sock = dcbnl.default_socket()
    try:
        assert sock.family == socket.AF_NETLINK
    finally:
        sock.close()
