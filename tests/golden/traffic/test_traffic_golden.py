"""validate-fabric's assertions and GID selection on real Soft-RoCE captures (tests/golden/traffic/*/SOURCE says how
each was made: capture_rxe.py against the lab VMs, nothing edited).

* rxe-clean: 256 x 64 KiB WRITEs, one in flight, lossless socketpair wire: no sequence error may be reported;
* rxe-lossy-udp: the same at depth 16 over the UDP wire, which drops datagrams under load: rxe's go-back-N counters
  moved and FABRIC-SEQUENCE must say so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabricd.errors import UsageError
from fabricd.model import Policy
from fabricd.model.checks import Status
from fabricd.readers.rdma import RdmaKey, read_rdma_device
from fabricd.traffic.checks import TRAFFIC
from fabricd.traffic.gid import choose_gid
from fabricd.traffic.pair import PairRun
from fabricd.traffic.sniff import Capture
from fabricd.traffic.spec import RoceVersion, SessionResult
from fabricd.traffic.validate import Endpoint, Sniffed, assess, counter_deltas, read_counters

HERE = Path(__file__).resolve().parent
A = Endpoint(host="rxe-a", rdma_device="rxe0", rdma_port=1, netdev="eth0", ip_netdev="eth0.100", address="198.18.100.1")
B = Endpoint(host="rxe-b", rdma_device="rxe0", rdma_port=1, netdev="eth0", ip_netdev="eth0.100", address="198.18.100.2")


def _case(name: str) -> tuple[PairRun, dict, dict, Capture]:
    d = HERE / name
    session = SessionResult.model_validate_json((d / "session.json").read_text())
    run = PairRun(
        server_host="rxe-b",
        client_host="rxe-a",
        server_ip=B.address,
        port=1,
        client=session,
        server={"ok": True},
        error=None,
        client_rc=0,
        server_rc=0,
    )
    before = {ep.host: read_counters(d / f"{ep.host}-before", ep) for ep in (A, B)}
    after = {ep.host: read_counters(d / f"{ep.host}-after", ep) for ep in (A, B)}
    cap = json.loads((d / "capture.json").read_text())
    return run, before, after, Capture(cap["interface"], cap["packets"], {int(k): v for k, v in cap["tos"].items()})


def _by_code(checks: list) -> dict:
    return {c.code: c for c in checks}


def test_readers_understand_real_rxe_counters() -> None:
    dev = read_rdma_device(HERE / "rxe-clean" / "rxe-a-after", "rxe0")
    (port,) = dev.ports
    assert port.state_name == "ACTIVE" and port.link_layer == "Ethernet"
    assert not port.counters  # rxe has no PMA counters/ (lab.md)
    assert set(port.hw_counters) >= {"sent_pkts", "rcvd_pkts", "out_of_seq_request", "rcvd_seq_err", "lifespan"}
    norm = port.normalised()
    assert norm[RdmaKey("packets", "tx")] == port.hw_counters["sent_pkts"] > 4096
    assert "lifespan" not in port.unmapped_hw_counters()


def test_clean_run_passes_what_rxe_can_show_and_says_what_needs_real_nics() -> None:
    run, before, after, cap = _case("rxe-clean")
    checks = _by_code(assess(run, A, B, before=before, after=after, sniffed=Sniffed(cap), policy=Policy(), tos=106))
    assert list(checks) == [s.code for s in TRAFFIC.values()][:8]  # the declarations' order and titles
    assert all(c.title == TRAFFIC[c.code].title and not c.findings for c in checks.values())
    assert checks["FABRIC-TRAFFIC"].status == Status.PASS
    assert checks["FABRIC-RDMA-BYTES"].status == Status.PASS
    assert "eth0.100 tx_bytes (rxe0 has no RDMA byte counters)" in (checks["FABRIC-RDMA-BYTES"].note or "")
    assert checks["FABRIC-SEQUENCE"].status == Status.PASS
    assert checks["FABRIC-DROPS"].status == Status.PASS
    assert checks["FABRIC-DSCP"].status == Status.PASS and "DSCP 26 -> priority 3" in (checks["FABRIC-DSCP"].note or "")
    for code in ("FABRIC-PRIORITY-BYTES", "FABRIC-PFC", "FABRIC-ECN"):
        assert checks[code].status == Status.SKIP and "; needs " in (checks[code].note or "")
    deltas = counter_deltas(before["rxe-a"], after["rxe-a"])
    assert deltas["rdma.packets.tx"] == 256 * 16  # 64 KiB messages in 4 KiB RoCE packets
    assert deltas["rdma.packets.rx"] == 256  # one ACK per message


def test_lossy_wire_is_reported_as_sequence_errors() -> None:
    run, before, after, cap = _case("rxe-lossy-udp")
    checks = _by_code(assess(run, A, B, before=before, after=after, sniffed=Sniffed(cap), policy=Policy(), tos=106))
    seq = checks["FABRIC-SEQUENCE"]
    (finding,) = seq.findings
    assert seq.status == Status.FAIL and "rxe-b out_of_sequence +" in finding.message
    assert finding.object == "rxe-a->rxe-b" and finding.expected == "0" and finding.code == "FABRIC-SEQUENCE"
    assert checks["FABRIC-TRAFFIC"].status == Status.PASS  # RC recovered: the data still arrived intact


def test_wrong_marking_and_missing_capture() -> None:
    run, before, after, _ = _case("rxe-clean")
    wrong = Capture("eth0.100", 10, {0: 4, 106: 6})
    checks = _by_code(assess(run, A, B, before=before, after=after, sniffed=Sniffed(wrong), policy=Policy(), tos=106))
    (finding,) = checks["FABRIC-DSCP"].findings
    assert checks["FABRIC-DSCP"].status == Status.FAIL and finding.got == "ToS 0 x4, ToS 106 x6"
    assert (finding.object, finding.path) == ("rxe-b", "eth0.100")
    no_capture = Sniffed(None, "AF_PACKET: permission denied")
    checks = _by_code(assess(run, A, B, before=before, after=after, sniffed=no_capture, policy=Policy(), tos=106))
    assert checks["FABRIC-DSCP"].status == Status.SKIP


def test_failed_session_is_one_failing_check() -> None:
    _run, before, after, cap = _case("rxe-clean")
    failed = PairRun(
        server_host="rxe-b",
        client_host="rxe-a",
        server_ip=B.address,
        port=1,
        client=None,
        server=None,
        error="client on rxe-a exited 3: cannot reach",
        client_rc=3,
        server_rc=None,
    )
    (check,) = assess(failed, A, B, before=before, after=after, sniffed=Sniffed(cap), policy=Policy(), tos=106)
    assert check.code == "FABRIC-TRAFFIC" and check.status == Status.FAIL
    assert "cannot reach" in check.findings[0].message


def test_gid_by_address_and_by_index_on_a_real_rxe_table() -> None:
    root = HERE / "rxe-clean" / "rxe-a-before"
    g = choose_gid(root, ip="198.18.100.1")
    assert (g.device, g.port, g.index, g.ndev) == ("rxe0", 1, 1, "eth0.100")
    assert g.gid == "0000:0000:0000:0000:0000:ffff:c612:6401"
    assert choose_gid(root, ip=None, device="rxe0", index=1).index == 1
    assert choose_gid(root, ip=None).index == 1  # first IPv4-mapped RoCE v2 entry


def test_gid_errors_say_what_the_table_holds() -> None:
    root = HERE / "rxe-clean" / "rxe-a-before"
    with pytest.raises(UsageError, match=r"GID index 7 on rxe0 port 1 is empty") as err:
        choose_gid(root, ip=None, device="rxe0", index=7)
    assert "1 (198.18.100.1 RoCE v2 on eth0.100)" in err.value.render()
    with pytest.raises(UsageError, match=r"no RoCE v2 GID for address 198\.18\.100\.9"):
        choose_gid(root, ip="198.18.100.9")
    with pytest.raises(UsageError, match="is RoCE v2, not RoCE v1"):
        choose_gid(root, ip=None, device="rxe0", index=1, version=RoceVersion.V1)
    with pytest.raises(UsageError, match="RDMA device 'rxe9' does not exist"):
        choose_gid(root, ip="198.18.100.1", device="rxe9")
    with pytest.raises(UsageError, match="--gid-index needs --device"):
        choose_gid(root, ip=None, index=1)


def test_no_rdma_device_at_all(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no RDMA device on this host") as err:
        choose_gid(tmp_path, ip="10.0.0.1")
    assert "rdma link add rxe0 type rxe netdev eth0" in err.value.render()
