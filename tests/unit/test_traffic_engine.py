"""The traffic engine and its out-of-band protocol over real TCP on 127.0.0.1, with the MOCK verbs layer of
fake_verbs.py (pyverbs cannot run on this host's kernel; the real verbs path is tested in the lab VMs, tests/lab).

Server and client run in two threads of this process, exactly as ``fabricd traffic server`` and ``client`` would on
two hosts: real sockets, real framing, real spec validation; only ibv_post_send & co. are simulated.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_verbs import FakeFabric, FakePort, fake_sysfs

from fabricd.errors import UsageError
from fabricd.traffic import engine, oob
from fabricd.traffic.engine import LocalRdma, Server, run_client
from fabricd.traffic.oob import PeerRefusedError, TrafficError
from fabricd.traffic.spec import Mode, Op, TrafficSpec


@pytest.fixture
def sysroot(tmp_path: Path) -> Path:
    return fake_sysfs(tmp_path / "root")


class Rig:
    """A server thread and a client, both on the same FakeFabric."""

    def __init__(
        self, root: Path, *, server_pool: int = 8 << 20, corrupt_client: bool = False, fail_server_connect: bool = False
    ) -> None:
        self.fabric = FakeFabric()
        self.root = root
        self.ports: list[FakePort] = []
        self.corrupt_client = corrupt_client

        def open_server(choice: Any, pool: int) -> FakePort:
            p = FakePort(self.fabric, choice, pool, fail_connect=fail_server_connect)
            self.ports.append(p)
            return p

        self.server = Server(
            bind="127.0.0.1", port=0, local=LocalRdma(root=str(root), pool_bytes=server_pool, open_port=open_server)
        )
        self.sessions: list[engine.ServerSession] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.sessions = self.server.serve(once=True, accept_timeout_s=30)

    def open_client(self, choice: Any, pool: int) -> FakePort:
        p = FakePort(self.fabric, choice, pool, corrupt=self.corrupt_client)
        self.ports.append(p)
        return p

    def client(self, spec: TrafficSpec, **kw: Any) -> Any:
        local = LocalRdma(root=str(self.root), open_port=self.open_client, pool_bytes=kw.pop("pool_bytes", 8 << 20))
        return run_client("127.0.0.1", spec, port=self.server.port, local=local, connect_timeout_s=5, **kw)

    def finish(self) -> engine.ServerSession:
        self.thread.join(timeout=30)
        assert not self.thread.is_alive()
        self.server.close()
        return self.sessions[0]


@pytest.mark.parametrize("op", list(Op))
@pytest.mark.integration  # the out-of-band TCP exchange over loopback
def test_bandwidth_every_op_moves_and_verifies_payloads(sysroot: Path, op: Op) -> None:
    rig = Rig(sysroot)
    spec = TrafficSpec(
        ops=[op], sizes=[4096], qps=2, depth=16, post_list=4, signal_every=8, iterations=40, duration_s=None
    )
    result = rig.client(spec)
    session = rig.finish()
    (r,) = result.results
    assert result.ok and session.ok, (result, session)
    assert r.op == op and r.verify is not None and r.verify.ok and r.verify.checked > 0
    # 40 per QP, posted in chains of 4 and completed in groups of 8: the ring rounds up to a signaled WR
    assert r.messages == 2 * 40
    assert r.bytes == r.messages * (8 if op.atomic else 4096)
    assert session.phases[0]["counts"] == [40 + 16, 40 + 16]  # + one warm-up round of `depth` per QP
    assert rig.fabric.live_mrs == 0 and all(p.live_qps == 0 for p in rig.ports)


@pytest.mark.parametrize("op", list(Op))
@pytest.mark.integration  # the out-of-band TCP exchange over loopback
def test_latency_ping_pong_and_round_trips(sysroot: Path, op: Op) -> None:
    rig = Rig(sysroot)
    spec = TrafficSpec(
        ops=[op], mode=Mode.LAT, sizes=[64], depth=1, post_list=1, signal_every=1, iterations=25, duration_s=None
    )
    result = rig.client(spec)
    rig.finish()
    (r,) = result.results
    assert r.latency is not None and r.latency.samples == 25
    assert r.latency.kind == ("one_way" if op.needs_recv else "rtt")
    assert r.latency.min_us <= r.latency.p50_us <= r.latency.p99_us <= r.latency.max_us
    assert r.verify is not None and r.verify.ok


@pytest.mark.integration  # the out-of-band TCP exchange over loopback
def test_all_ops_in_one_session_share_qps_and_the_tos_reaches_the_qps(sysroot: Path) -> None:
    rig = Rig(sysroot)
    spec = TrafficSpec(
        ops=list(Op),
        sizes=[512, 8192],
        qps=1,
        depth=8,
        post_list=2,
        signal_every=4,
        iterations=16,
        duration_s=None,
        tos=106,
    )
    result = rig.client(spec)
    session = rig.finish()
    assert [(r.op, r.size) for r in result.results] == [
        (Op.WRITE, 512),
        (Op.WRITE, 8192),
        (Op.WRITE_IMM, 512),
        (Op.WRITE_IMM, 8192),
        (Op.SEND, 512),
        (Op.SEND, 8192),
        (Op.READ, 512),
        (Op.READ, 8192),
        (Op.FETCH_ADD, 8),
        (Op.CMP_SWAP, 8),
    ]
    assert result.ok and session.ok
    assert result.tos == 106 and all(t == 106 for p in rig.ports for t in p.tos_seen)
    assert rig.fabric.opened == 2  # one pool per side for the whole session


@pytest.mark.integration  # the out-of-band TCP exchange over loopback
def test_duration_mode_stops_on_time(sysroot: Path) -> None:
    rig = Rig(sysroot)
    spec = TrafficSpec(ops=[Op.WRITE], sizes=[1024], qps=1, depth=8, post_list=8, signal_every=8, duration_s=0.2)
    result = rig.client(spec)
    rig.finish()
    (r,) = result.results
    assert 0.2 <= r.seconds < 2.0 and r.messages % 8 == 0 and r.gbit_s > 0


@pytest.mark.parametrize("op", [Op.WRITE, Op.SEND, Op.WRITE_IMM])
@pytest.mark.integration  # the out-of-band TCP exchange over loopback
def test_corrupted_payload_is_reported_not_hidden(sysroot: Path, op: Op) -> None:
    rig = Rig(sysroot, corrupt_client=True)
    spec = TrafficSpec(
        ops=[op],
        sizes=[4096],
        qps=1,
        depth=4,
        post_list=1,
        signal_every=1,
        iterations=8,
        duration_s=None,
        verify_stride=1,
    )
    result = rig.client(spec)
    session = rig.finish()
    assert not result.ok and not session.ok
    assert result.results[0].verify is not None and "differs" in result.results[0].verify.detail


@pytest.mark.integration  # the out-of-band TCP exchange over loopback
def test_unreachable_peer_is_a_clear_error_before_any_verbs_resource(
    sysroot: Path, reserve_port: Callable[[], int]
) -> None:
    fabric = FakeFabric()
    port = reserve_port()  # nothing listens there
    with pytest.raises(TrafficError) as err:
        run_client(
            "127.0.0.1",
            TrafficSpec(ops=[Op.WRITE], iterations=1, duration_s=None),
            port=port,
            local=LocalRdma(root=str(sysroot), open_port=lambda c, n: FakePort(fabric, c, n)),
            connect_timeout_s=0.5,
        )
    text = err.value.render()
    assert f"cannot reach traffic server 127.0.0.1:{port}" in text and "start 'fabricd traffic server'" in text
    assert fabric.opened == 0 and fabric.live_mrs == 0


def test_size_over_the_pool_is_bad_input_before_connecting(sysroot: Path) -> None:
    fabric = FakeFabric()
    spec = TrafficSpec(ops=[Op.WRITE], sizes=[1 << 20], qps=4, depth=64, iterations=1, duration_s=None)
    with pytest.raises(UsageError, match=r"need 268435456 bytes of registered memory, more than the 67108864-byte"):
        run_client(
            "127.0.0.1", spec, port=9, local=LocalRdma(root=str(sysroot), open_port=lambda c, n: FakePort(fabric, c, n))
        )
    assert fabric.opened == 0


@pytest.mark.integration  # the out-of-band TCP exchange over loopback
def test_server_refuses_a_request_over_its_pool_and_frees_the_session(sysroot: Path) -> None:
    rig = Rig(sysroot, server_pool=1 << 20)
    spec = TrafficSpec(ops=[Op.WRITE], sizes=[65536], qps=2, depth=16, iterations=1, duration_s=None)
    with pytest.raises(PeerRefusedError, match="more than the server's 1048576-byte MR pool"):
        rig.client(spec)
    session = rig.finish()
    assert not session.ok and "MR pool" in (session.error or "")
    assert rig.fabric.live_mrs == 0 and all(p.live_qps == 0 for p in rig.ports)


@pytest.mark.integration  # the out-of-band TCP exchange over loopback
def test_verbs_failure_on_the_server_leaves_no_qp_on_either_side(sysroot: Path) -> None:
    rig = Rig(sysroot, fail_server_connect=True)
    with pytest.raises(PeerRefusedError, match="fake connect failure"):
        rig.client(TrafficSpec(ops=[Op.WRITE], iterations=4, duration_s=None, depth=4, post_list=1, signal_every=1))
    rig.finish()
    assert rig.fabric.live_mrs == 0 and not rig.fabric.qps


def _raw_hello(port: int, hello: dict[str, Any]) -> dict[str, Any]:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        data = json.dumps(hello).encode()
        s.sendall(struct.pack("!I", len(data)) + data)
        n = struct.unpack("!I", s.recv(4))[0]
        buf = b""
        while len(buf) < n:
            buf += s.recv(n - len(buf))
        return dict(json.loads(buf))


@pytest.mark.integration  # the out-of-band TCP exchange over loopback
def test_server_refuses_another_protocol_version_naming_both(sysroot: Path) -> None:
    rig = Rig(sysroot)
    reply = _raw_hello(rig.server.port, {"type": "hello", "protocol": 99, "fabricd": "9.9.9", "spec": {}})
    session = rig.finish()
    assert reply["type"] == "error"
    assert "peer speaks traffic protocol 99 (fabricd 9.9.9)" in reply["message"]
    assert f"this side speaks {oob.PROTOCOL}" in reply["message"]
    assert not session.ok


@pytest.mark.integration  # the out-of-band TCP exchange over loopback
def test_client_refuses_a_server_of_another_protocol(sysroot: Path) -> None:
    """A listener that answers like a future fabricd (protocol 99)."""
    listener = oob.listen("127.0.0.1", 0)
    port = listener.getsockname()[1]

    def fake_server() -> None:
        conn, _ = listener.accept()
        ch = oob.Channel(conn, "test")
        ch.recv("hello")
        ch.send(
            {
                "type": "accept",
                "protocol": 99,
                "fabricd": "9.9.9",
                "gid": "::1",
                "mtu": 4096,
                "qps": [],
                "mr": {"addr": 0, "rkey": 0, "len": 0},
            }
        )
        ch.close()

    t = threading.Thread(target=fake_server, daemon=True)
    t.start()
    fabric = FakeFabric()
    with pytest.raises(TrafficError, match=r"peer speaks traffic protocol 99 \(fabricd 9.9.9\)"):
        run_client(
            "127.0.0.1",
            TrafficSpec(ops=[Op.WRITE], iterations=1, duration_s=None),
            port=port,
            local=LocalRdma(root=str(sysroot), open_port=lambda c, n: FakePort(fabric, c, n)),
        )
    t.join(5)
    listener.close()
    assert fabric.live_mrs == 0


@pytest.mark.integration  # the out-of-band TCP exchange over loopback
def test_a_non_fabricd_peer_is_named_as_such(sysroot: Path) -> None:
    listener = oob.listen("127.0.0.1", 0)
    port = listener.getsockname()[1]

    def http_server() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        conn.close()

    t = threading.Thread(target=http_server, daemon=True)
    t.start()
    fabric = FakeFabric()
    with pytest.raises(TrafficError, match="not a fabricd peer"):
        run_client(
            "127.0.0.1",
            TrafficSpec(ops=[Op.WRITE], iterations=1, duration_s=None),
            port=port,
            local=LocalRdma(root=str(sysroot), open_port=lambda c, n: FakePort(fabric, c, n)),
        )
    t.join(5)
    listener.close()
    assert fabric.live_mrs == 0


def test_pattern_is_distinct_per_slot_and_phase() -> None:
    a = engine.pattern(1, 0, 0, 4096)
    assert len(a) == 4096 and a != engine.pattern(1, 0, 1, 4096) != engine.pattern(2, 0, 0, 4096)
    assert engine.faa_count(10, 3, 4) == 2 and engine.faa_count(10, 1, 4) == 3 and engine.faa_count(2, 3, 4) == 0
