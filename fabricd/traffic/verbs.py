"""The verbs layer: one RDMA port with a pre-registered memory pool, one CQ and RC QPs, over rdma-core's pyverbs.

The engine (:mod:`fabricd.traffic.engine`) talks to the :class:`VerbsPort` protocol only; :class:`PyverbsPort` is
the real implementation (the ``verbs`` extra: Debian's ``python3-pyverbs`` 44, which matches Debian's libibverbs;
PyPI's pyverbs 59 does not load against it, lab.md). pyverbs is imported inside functions, so fabricd imports and
type-checks on hosts without it.

The flow is the classic one (rdma-core ``Documentation/pyverbs.md``): open the device, allocate a
PD, register one MR for the whole pool (registration pins pages and is costly, so it is done once and sliced), create
a CQ and RC QPs (INIT), learn the peer's QPN/PSN/GID, move to RTR then RTS with the GRH traffic class set to the
intent's ToS, then post WR lists and poll the CQ.

Work requests are prepared once and reposted: a *chain* is a linked list of ``post_list`` WRs posted with one
``ibv_post_send`` call; only WRs at ``signal_every`` boundaries request a completion (``sq_sig_all=0``). pyverbs 44
``SendWR.__dealloc`` is misspelt and never frees the WR's SGE array, so building WRs per post would also leak.

Completion objects expose ``wr_id``, ``status``, ``opcode``, ``byte_len``, ``imm_data``, ``qp_num`` with libibverbs'
ABI values (below), as pyverbs' ``WC`` does.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from fabricd.errors import UsageError

from .gid import GidChoice
from .oob import TrafficError
from .spec import Op

log = logging.getLogger(__name__)

# libibverbs ABI values (infiniband/verbs.h): stable across releases.
WC_RECV, WC_RECV_RDMA_WITH_IMM = 128, 129
WR_OPCODE = {
    Op.WRITE: 0,  # IBV_WR_RDMA_WRITE
    Op.WRITE_IMM: 1,  # IBV_WR_RDMA_WRITE_WITH_IMM
    Op.SEND: 2,  # IBV_WR_SEND
    Op.READ: 4,  # IBV_WR_RDMA_READ
    Op.CMP_SWAP: 5,  # IBV_WR_ATOMIC_CMP_AND_SWP
    Op.FETCH_ADD: 6,  # IBV_WR_ATOMIC_FETCH_AND_ADD
}
SEND_SIGNALED = 2  # IBV_SEND_SIGNALED
ACCESS = 1 | 2 | 4 | 8  # IBV_ACCESS_LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC
PORT_ACTIVE = 4
MTU_BYTES = {1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096}
MTU_ENUM = {v: k for k, v in MTU_BYTES.items()}

WC_STATUS = (
    "SUCCESS",
    "LOC_LEN_ERR",
    "LOC_QP_OP_ERR",
    "LOC_EEC_OP_ERR",
    "LOC_PROT_ERR",
    "WR_FLUSH_ERR",
    "MW_BIND_ERR",
    "BAD_RESP_ERR",
    "LOC_ACCESS_ERR",
    "REM_INV_REQ_ERR",
    "REM_ACCESS_ERR",
    "REM_OP_ERR",
    "RETRY_EXC_ERR",
    "RNR_RETRY_EXC_ERR",
    "LOC_RDD_VIOL_ERR",
    "REM_INV_RD_REQ_ERR",
    "REM_ABORT_ERR",
    "INV_EECN_ERR",
    "INV_EEC_STATE_ERR",
    "FATAL_ERR",
    "RESP_TIMEOUT_ERR",
    "GENERAL_ERR",
)
"""``enum ibv_wc_status`` names by value."""

WC_HINT = {
    12: "the peer stopped acknowledging (link down, wrong GID/route, or the peer's QP went away)",
    13: "the peer posted no receive buffer in time",
    10: "the peer's memory key or address was not valid for this access",
    1: "a message was larger than the peer's receive buffer",
}


def wc_status_name(status: int) -> str:
    return WC_STATUS[status] if 0 <= status < len(WC_STATUS) else f"status {status}"


@dataclass(frozen=True)
class WrItem:
    """One WR of a chain: local pool offset and length, remote address, immediate data and atomic operands."""

    offset: int
    length: int
    remote_addr: int = 0
    imm: int = 0
    compare_add: int = 0
    swap: int = 0
    signaled: bool = True
    wr_id: int = 0


class Completion(Protocol):
    wr_id: int
    status: int
    opcode: int
    byte_len: int
    imm_data: int
    qp_num: int


class VerbsPort(Protocol):
    """An open RDMA port with a registered pool, one CQ and a set of RC QPs (indexed 0..n-1)."""

    device: str
    port: int
    gid_index: int
    gid: str
    mtu: int
    """Active path MTU in bytes (256-4096)."""
    max_rd_atomic: int
    pool_addr: int
    pool_rkey: int
    pool_len: int

    def create_qps(self, count: int, *, send_depth: int, recv_depth: int) -> list[tuple[int, int]]:
        """Create ``count`` RC QPs in INIT; return their (qpn, psn)."""
        ...

    def connect_qp(
        self,
        index: int,
        *,
        remote_qpn: int,
        remote_psn: int,
        remote_gid: str,
        mtu: int,
        tos: int,
        rd_atomic: int,
        ack_timeout: int,
    ) -> None:
        """Move QP ``index`` to RTR then RTS towards the remote QP, with ``tos`` as GRH traffic class and the local
        ACK timeout ``4.096 us x 2^ack_timeout``."""
        ...

    def prepare(self, index: int, op: Op, items: Sequence[WrItem], rkey: int) -> Any:
        """Build a chain of WRs for QP ``index`` (posted as one list); returns an opaque handle."""
        ...

    def set_atomic(self, chain: Any, position: int, compare_add: int, swap: int) -> None:
        """Change the atomic operands of WR ``position`` of a prepared chain before reposting it."""
        ...

    def post(self, index: int, chain: Any) -> None: ...

    def prepare_recv(self, index: int, offset: int, length: int, wr_id: int) -> Any: ...

    def post_recv(self, index: int, recv: Any) -> None: ...

    def poll(self, budget: int) -> Sequence[Completion]: ...

    def read(self, offset: int, length: int) -> bytes: ...

    def write(self, offset: int, data: bytes) -> None: ...

    def destroy_qps(self) -> None:
        """Destroy every QP and the CQ (the pool stays registered for the next session)."""
        ...

    def close(self) -> None:
        """Release everything: QPs, CQ, MR, PD, context. Safe to call twice."""
        ...


def _verbs_error(what: str, device: str, exc: Exception) -> TrafficError:
    code = getattr(exc, "error_code", None)
    detail = f" ({os.strerror(code)})" if isinstance(code, int) and code > 0 else ""
    return TrafficError(
        f"{device}: {what} failed: {exc}{detail}", hint="check the device with 'fabricd gids' and 'rdma resource show'"
    )


class PyverbsPort:
    """:class:`VerbsPort` over pyverbs (rdma-core 44). Every failure releases what was created and raises
    TrafficError; nothing is left registered."""

    def __init__(self, choice: GidChoice, pool_bytes: int) -> None:
        try:
            import pyverbs.device as vd
            import pyverbs.mr as vmr
            import pyverbs.pd as vpd
            from pyverbs.pyverbs_error import PyverbsError
        except ImportError as exc:
            raise UsageError(
                f"pyverbs is not importable here ({exc})",
                hint="install Debian's python3-pyverbs (the 'verbs' extra); fabricd's lab VM image has it",
            ) from exc
        self._err: type[Exception] = PyverbsError
        self.device, self.port, self.gid_index, self.gid = choice.device, choice.port, choice.index, choice.gid
        self._ctx: Any = None
        self._pd: Any = None
        self._mr: Any = None
        self._cq: Any = None
        self._qps: list[Any] = []
        self._psns: list[int] = []
        self._chains: list[Any] = []
        try:
            self._ctx = vd.Context(name=self.device)
            dattr = self._ctx.query_device()
            pattr = self._ctx.query_port(self.port)
            if pattr.state != PORT_ACTIVE:
                raise TrafficError(
                    f"{self.device} port {self.port} is not ACTIVE (state {pattr.state})",
                    hint="check the link: 'rdma link show'",
                )
            self.mtu = MTU_BYTES.get(int(pattr.active_mtu), 1024)
            self.max_rd_atomic = max(1, min(int(dattr.max_qp_rd_atom), int(dattr.max_qp_init_rd_atom), 16))
            self._max_cqe = int(dattr.max_cqe)
            self._pd = vpd.PD(self._ctx)
            self._mr = vmr.MR(self._pd, pool_bytes, ACCESS)
            self.pool_addr, self.pool_rkey, self.pool_len = int(self._mr.buf), int(self._mr.rkey), pool_bytes
            self._lkey = int(self._mr.lkey)
        except TrafficError:
            self.close()
            raise
        except self._err as exc:
            self.close()
            raise _verbs_error(
                f"opening the device and registering a {pool_bytes}-byte pool", self.device, exc
            ) from exc

    def create_qps(self, count: int, *, send_depth: int, recv_depth: int) -> list[tuple[int, int]]:
        from pyverbs.cq import CQ
        from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr

        qp_type_rc = 2  # IBV_QPT_RC
        try:
            cqe = min(self._max_cqe, count * (send_depth + recv_depth) + 16)
            self._cq = CQ(self._ctx, cqe)
            for _ in range(count):
                cap = QPCap(max_send_wr=send_depth, max_recv_wr=max(recv_depth, 1), max_send_sge=1, max_recv_sge=1)
                init = QPInitAttr(qp_type=qp_type_rc, scq=self._cq, rcq=self._cq, cap=cap, sq_sig_all=0)
                attr = QPAttr()
                attr.qp_access_flags = ACCESS
                attr.port_num = self.port
                attr.pkey_index = 0
                self._qps.append(QP(self._pd, init, attr))  # returned in INIT (RC needs the peer for RTR)
                self._psns.append(int.from_bytes(os.urandom(3), "big"))
        except self._err as exc:
            self.destroy_qps()
            raise _verbs_error(f"creating {count} RC QPs (depth {send_depth})", self.device, exc) from exc
        return [(int(qp.qp_num), psn) for qp, psn in zip(self._qps, self._psns, strict=True)]

    def connect_qp(
        self,
        index: int,
        *,
        remote_qpn: int,
        remote_psn: int,
        remote_gid: str,
        mtu: int,
        tos: int,
        rd_atomic: int,
        ack_timeout: int,
    ) -> None:
        from pyverbs.addr import GID, AHAttr, GlobalRoute
        from pyverbs.qp import QPAttr

        qp = self._qps[index]
        try:
            attr = QPAttr()
            attr.qp_access_flags = ACCESS
            attr.path_mtu = MTU_ENUM.get(min(mtu, self.mtu), 3)
            attr.dest_qp_num = remote_qpn
            attr.rq_psn = remote_psn
            attr.max_dest_rd_atomic = rd_atomic
            attr.min_rnr_timer = 12
            dgid = GID()
            dgid.gid = remote_gid
            gr = GlobalRoute(dgid=dgid, sgid_index=self.gid_index, hop_limit=64, traffic_class=tos)
            attr.ah_attr = AHAttr(port_num=self.port, is_global=1, gr=gr)
            qp.to_rtr(attr)
            attr.timeout = ack_timeout
            attr.retry_cnt = 7
            attr.rnr_retry = 7
            attr.sq_psn = self._psns[index]
            attr.max_rd_atomic = rd_atomic
            qp.to_rts(attr)
        except self._err as exc:
            raise _verbs_error(
                f"connecting QP {index} to remote QPN {remote_qpn:#x} (GID {remote_gid})", self.device, exc
            ) from exc

    def prepare(self, index: int, op: Op, items: Sequence[WrItem], rkey: int) -> Any:
        from pyverbs.wr import SGE, SendWR

        opcode = WR_OPCODE[op]
        nxt = None
        wrs = []
        for item in reversed(items):
            sge = SGE(self.pool_addr + item.offset, item.length, self._lkey)
            kwargs: dict[str, Any] = {
                "wr_id": item.wr_id,
                "opcode": opcode,
                "num_sge": 1,
                "sg": [sge],
                "send_flags": SEND_SIGNALED if item.signaled else 0,
                "imm_data": item.imm,
            }
            if nxt is not None:
                kwargs["next_wr"] = nxt
            wr = SendWR(**kwargs)
            if op.atomic:
                wr.set_wr_atomic(rkey, item.remote_addr, item.compare_add, item.swap)
            elif op in (Op.WRITE, Op.WRITE_IMM, Op.READ):
                wr.set_wr_rdma(rkey, item.remote_addr)
            wrs.append(wr)
            nxt = wr
        wrs.reverse()
        chain = (wrs, rkey, [it.remote_addr for it in items])
        self._chains.append(chain)
        return chain

    def set_atomic(self, chain: Any, position: int, compare_add: int, swap: int) -> None:
        wrs, rkey, addrs = chain
        wrs[position].set_wr_atomic(rkey, addrs[position], compare_add, swap)

    def post(self, index: int, chain: Any) -> None:
        try:
            self._qps[index].post_send(chain[0][0])
        except self._err as exc:
            raise _verbs_error(f"ibv_post_send on QP {index}", self.device, exc) from exc

    def prepare_recv(self, index: int, offset: int, length: int, wr_id: int) -> Any:
        from pyverbs.wr import SGE, RecvWR

        return RecvWR(wr_id=wr_id, num_sge=1, sg=[SGE(self.pool_addr + offset, length, self._lkey)])

    def post_recv(self, index: int, recv: Any) -> None:
        try:
            self._qps[index].post_recv(recv)
        except self._err as exc:
            raise _verbs_error(f"ibv_post_recv on QP {index}", self.device, exc) from exc

    def poll(self, budget: int) -> Sequence[Completion]:
        try:
            _n, wcs = self._cq.poll(budget)
        except self._err as exc:
            raise _verbs_error("ibv_poll_cq", self.device, exc) from exc
        return wcs  # type: ignore[no-any-return]

    def read(self, offset: int, length: int) -> bytes:
        return bytes(self._mr.read(length, offset))

    def write(self, offset: int, data: bytes) -> None:
        self._mr.write(data, len(data), offset)

    def destroy_qps(self) -> None:
        for qp in self._qps:
            try:
                qp.close()
            except self._err as exc:
                log.warning("%s: destroying a QP failed: %s", self.device, exc)
        self._qps, self._psns = [], []
        for wrs, _rkey, _addrs in self._chains:
            for wr in wrs:
                wr.close()  # frees the SGE array pyverbs 44 would leak
        self._chains = []
        if self._cq is not None:
            try:
                self._cq.close()
            except self._err as exc:
                log.warning("%s: destroying the CQ failed: %s", self.device, exc)
            self._cq = None

    def close(self) -> None:
        self.destroy_qps()
        for attr in ("_mr", "_pd", "_ctx"):
            obj = getattr(self, attr, None)
            if obj is not None:
                try:
                    obj.close()
                except Exception as exc:  # pyverbs raises its own error types; never mask the original failure
                    log.warning("%s: closing %s failed: %s", self.device, attr[1:], exc)
                setattr(self, attr, None)
