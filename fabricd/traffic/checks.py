"""``fabricd validate-fabric``'s checks in the one check vocabulary (:mod:`fabricd.model.checks`): what a traffic
pair asserts on its counters (:mod:`fabricd.traffic.validate` gives each one's result from these declarations) and
what the traffic matrix judges (``--matrix``, :mod:`fabricd.traffic.matrix`)."""

from __future__ import annotations

from fabricd.errors import Fix
from fabricd.model.checks import CheckSpec, by_code


def _pair(code: str, title: str, hint: str = "", *fixes: Fix) -> CheckSpec:
    return CheckSpec(code=code, title=title, subject="pair", hint=hint, fixes=fixes)


_AUDIT_HOST = Fix(("audit", "host"), text="on each host of the pair")
_AUDIT_SWITCH = Fix(("audit", "switch"), text="on their leaves")

TRAFFIC_CHECKS: tuple[CheckSpec, ...] = (
    _pair(
        "FABRIC-TRAFFIC",
        "RDMA traffic ran and payloads verified",
        "a pair that did not run says why (no runner for a host, a counter snapshot or the client failed); a "
        "corrupt payload is a NIC or path fault",
    ),
    _pair(
        "FABRIC-RDMA-BYTES",
        "bytes counted on the sender match the payload",
        "more bytes than the payload means retransmitted data: see FABRIC-SEQUENCE and FABRIC-DROPS",
    ),
    _pair(
        "FABRIC-SEQUENCE",
        "no out-of-sequence, duplicate or retransmitted packets",
        "the path lost or reordered packets: check PFC on the traffic's priority on both hosts and their switch ports",
        _AUDIT_HOST,
        _AUDIT_SWITCH,
    ),
    _pair(
        "FABRIC-DROPS",
        "no drops or errors",
        "the finding names the counter that moved: check MTU and PFC on that host and its switch port",
        _AUDIT_HOST,
        _AUDIT_SWITCH,
    ),
    _pair(
        "FABRIC-DSCP",
        "RoCE packets carry the intent's DSCP",
        "set the RoCE ToS on both hosts as the intent says",
        Fix(("host", "apply"), text="on each host of the pair"),
    ),
    _pair(
        "FABRIC-PRIORITY-BYTES",
        "bytes on the intended priority",
        "check the sender's DSCP-to-priority map and trust mode",
        _AUDIT_HOST,
    ),
    _pair(
        "FABRIC-PFC",
        "pause frames only on lossless priorities",
        "a priority that is not lossless was paused: check the PFC priorities on both hosts and their switches",
        _AUDIT_HOST,
        _AUDIT_SWITCH,
    ),
    _pair("FABRIC-ECN", "ECN/CNP counters readable (DCQCN)"),
    _pair("FABRIC-BAR", "throughput reaches the bar"),
    _pair("FABRIC-BASELINE", "no drop of more than 5% from the baseline"),
    _pair("FABRIC-COUNTERS", "counter-delta checks of the pair"),
)
"""Every check of a traffic pair and of the traffic matrix (``--matrix``)."""
TRAFFIC = by_code(TRAFFIC_CHECKS)


__all__ = ["TRAFFIC", "TRAFFIC_CHECKS"]
