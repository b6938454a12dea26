"""The lossless QoS policy: trust, maps, classes, PFC and its watchdog, ECN, DCQCN, buffers and VLANs.

Defaults are the converged industry recipe (the vendors' RoCE guides agree): RoCE DSCP 26 -> priority 3 lossless,
CNP DSCP 48 -> priority 6 strict, ECN 150 KB / 1500 KB / 100 %, PFC watchdog 200 / 200 / 100 ms.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from .types import (
    Bytes,
    Dscp,
    Endpoint,
    IPv4Subnet,
    Meters,
    Milliseconds,
    Model,
    Name,
    Percent,
    Priority,
    Tos,
    TrafficClassId,
    VlanId,
)

ECT0 = 0b10
"""ECN-capable transport (0) codepoint in the two low ToS bits (RFC 3168)."""


class Transport(StrEnum):
    """How RDMA runs over this fabric. Lossy RoCE and iWARP need no PFC; lossless RoCE needs PFC and ECN."""

    ROCE_V2_LOSSLESS = "roce_v2_lossless"
    ROCE_V2_LOSSY = "roce_v2_lossy"
    INFINIBAND = "infiniband"
    IWARP = "iwarp"


class TrustMode(StrEnum):
    """Which header field classifies ingress traffic: DSCP (L3, the modern default) or 802.1p PCP (needs tags)."""

    DSCP = "dscp"
    PCP = "pcp"


class Scheduler(StrEnum):
    STRICT = "strict"
    DWRR = "dwrr"


class WatchdogAction(StrEnum):
    """What a switch does to a stormed queue: drop its packets, forward them ignoring pause, or only alert."""

    DROP = "drop"
    FORWARD = "forward"
    ALERT = "alert"


class CongestionControl(StrEnum):
    DCQCN = "dcqcn"
    NONE = "none"


class LinkRole(StrEnum):
    """What a link connects; selects the default cable length (SONiC buffers_config.j2 role table)."""

    HOST = "host"
    LEAF_SPINE = "leaf_spine"
    SPINE_SUPERSPINE = "spine_superspine"
    INTERNAL = "internal"


class RoceClass(Model):
    """The RoCEv2 data class. ``tos`` defaults to DSCP << 2 | ECT(0) (26 -> 106)."""

    dscp: Dscp = 26
    priority: Priority = 3
    tos: Tos | None = Field(default=None, description="RDMA-CM ToS; None means DSCP << 2 | ECT(0)")

    @property
    def effective_tos(self) -> int:
        return self.tos if self.tos is not None else (self.dscp << 2) | ECT0


class CnpClass(Model):
    """Congestion notification packets: their own DSCP and priority, lossy, on a strict-priority queue."""

    dscp: Dscp = 48
    priority: Priority = 6
    strict: bool = True


class TrafficClass(Model):
    """An egress queue: the priorities it carries, how it is scheduled, and its ECN profile if any."""

    id: TrafficClassId
    name: Name
    priorities: list[Priority] = Field(min_length=1)
    scheduler: Scheduler = Scheduler.DWRR
    weight_percent: Percent | None = Field(default=None, description="DWRR share, 1-100 %; None for strict")
    ecn_profile: Name | None = None


def _default_classes() -> list[TrafficClass]:
    return [
        TrafficClass(id=0, name="default", priorities=[0, 1, 2, 4, 5, 7], weight_percent=50),
        TrafficClass(id=3, name="roce", priorities=[3], weight_percent=50, ecn_profile="roce"),
        TrafficClass(id=6, name="cnp", priorities=[6], scheduler=Scheduler.STRICT),
    ]


class QosPolicy(Model):
    """Classification and scheduling. ``dscp_to_priority`` is a *map*; unmapped DSCPs go to ``default_priority``."""

    trust: TrustMode = TrustMode.DSCP
    dscp_to_priority: dict[Dscp, Priority] = Field(default_factory=lambda: {26: 3, 48: 6})
    default_priority: Priority = 0
    roce: RoceClass = Field(default_factory=RoceClass)
    cnp: CnpClass = Field(default_factory=CnpClass)
    traffic_classes: list[TrafficClass] = Field(default_factory=_default_classes)

    def priority_of(self, dscp: int) -> int:
        return self.dscp_to_priority.get(dscp, self.default_priority)

    def class_of(self, priority: int) -> TrafficClass | None:
        return next((tc for tc in self.traffic_classes if priority in tc.priorities), None)


class Watchdog(Model):
    """PFC watchdog. SONiC ranges: detection 100-5000 ms, restoration 100-60000 ms, poll 100-1000 ms."""

    enabled: bool = True
    detection_ms: Milliseconds = 200
    restoration_ms: Milliseconds = 200
    poll_ms: Milliseconds = 100
    action: WatchdogAction = WatchdogAction.DROP


class PfcPolicy(Model):
    """Priority flow control: the lossless priorities (at most 2) and the watchdog guarding them."""

    priorities: list[Priority] = Field(default_factory=lambda: [3])
    watchdog: Watchdog = Field(default_factory=Watchdog)


class EcnProfile(Model):
    """WRED/ECN marking on an egress queue: mark from ``min_bytes`` rising to ``max_mark_probability_percent`` at
    ``max_bytes``. Stored in bytes; rendered as kbytes on EOS/NX-OS, bytes on SONiC/NVUE."""

    name: Name
    min_bytes: Bytes = 150_000
    max_bytes: Bytes = 1_500_000
    max_mark_probability_percent: Percent = 100
    traffic_classes: list[TrafficClassId] = Field(default_factory=lambda: [3])


class DcqcnRp(Model):
    """DCQCN reaction point (sender) parameters: ``/sys/class/net/<if>/ecn/roce_rp/<name>`` on mlx5 (OFED).

    None leaves the device value alone: defaults differ by firmware, so fabricd reads back and diffs instead of
    assuming. Ranges are the firmware's documented ones (NVIDIA DOCA "DCQCN CC Parameters").
    """

    rpg_time_reset: int | None = Field(default=None, ge=1, le=131071, description="rate-increase timer, µs")
    rpg_byte_reset: int | None = Field(default=None, ge=0, le=32767, description="byte counter period")
    rpg_threshold: int | None = Field(default=None, ge=1, le=31, description="stages before fast recovery ends")
    rpg_ai_rate: int | None = Field(default=None, ge=1, le=100000, description="additive increase, Mb/s")
    rpg_hai_rate: int | None = Field(default=None, ge=1, le=100000, description="hyper increase, Mb/s")
    rpg_gd: int | None = Field(default=None, ge=1, le=15, description="log2 of the decrease gain Gd")
    rpg_min_dec_fac: int | None = Field(default=None, ge=1, le=100, description="max single decrease, %")
    rpg_min_rate: int | None = Field(default=None, ge=0, le=100000, description="rate floor, Mb/s")
    rpg_max_rate: int | None = Field(default=None, ge=0, le=800000, description="rate ceiling, Mb/s; 0 = line")
    rate_to_set_on_first_cnp: int | None = Field(default=None, ge=0, le=800000, description="Mb/s; 0 = keep")
    rate_reduce_monitor_period: int | None = Field(default=None, ge=0, le=1000000, description="µs")
    dce_tcp_g: int | None = Field(default=None, ge=0, le=1023, description="alpha gain g, fixed point /1024")
    dce_tcp_rtt: int | None = Field(default=None, ge=1, le=131071, description="alpha update period, µs")
    initial_alpha_value: int | None = Field(default=None, ge=0, le=1023, description="fixed point /1023")
    clamp_tgt_rate: int | None = Field(default=None, ge=0, le=1)
    clamp_tgt_rate_after_time_inc: int | None = Field(default=None, ge=0, le=1)


class DcqcnNp(Model):
    """DCQCN notification point (receiver) parameters: ``/sys/class/net/<if>/ecn/roce_np/<name>``.

    ``cnp_dscp`` and ``cnp_802p_prio`` come from the CNP class and are not repeated here.
    """

    min_time_between_cnps: int | None = Field(default=None, ge=0, le=4095, description="CNP pacing, µs")


class Dcqcn(Model):
    """Per-priority RP/NP enables and parameters. Empty enable lists mean: the RoCE priority."""

    rp_priorities: list[Priority] | None = None
    np_priorities: list[Priority] | None = None
    rp: DcqcnRp = Field(default_factory=DcqcnRp)
    np: DcqcnNp = Field(default_factory=DcqcnNp)


def _default_cables() -> dict[LinkRole, Meters]:
    return {
        LinkRole.HOST: 5.0,
        LinkRole.LEAF_SPINE: 40.0,
        LinkRole.SPINE_SUPERSPINE: 300.0,
        LinkRole.INTERNAL: 5.0,
    }


class Buffers(Model):
    """Buffer inputs. Headroom is *computed* from speed, cable length and MTU (SONiC formula), never typed in."""

    cable_length_m: dict[LinkRole, Meters] = Field(default_factory=_default_cables)
    lossless_mtu_bytes: Bytes | None = Field(
        default=None,
        description="size of the largest lossless packet still arriving after XOFF; None = the port MTU "
        "(worst case, the headroom formula of fabricd.intent.headroom); SONiC's LOSSLESS_TRAFFIC_PATTERN uses 1024",
    )
    xon_bytes: Bytes = Field(default=19_456, description="xon offset / pipeline latency in bytes (ASIC data)")


class Vlan(Model):
    """An isolated RDMA VLAN: id, name, subnet and its member switch ports (``switch:port``)."""

    id: VlanId
    name: Name
    subnet: IPv4Subnet
    members: list[Endpoint] = Field(default_factory=list, description="'switch:port' endpoints; hosts join by NIC vlan")


class Policy(Model):
    """The whole lossless policy of a fabric."""

    transport: Transport = Transport.ROCE_V2_LOSSLESS
    congestion_control: CongestionControl = CongestionControl.DCQCN
    qos: QosPolicy = Field(default_factory=QosPolicy)
    pfc: PfcPolicy = Field(default_factory=PfcPolicy)
    ecn_profiles: list[EcnProfile] = Field(default_factory=lambda: [EcnProfile(name="roce")])
    dcqcn: Dcqcn = Field(default_factory=Dcqcn)
    buffers: Buffers = Field(default_factory=Buffers)
    vlans: list[Vlan] = Field(default_factory=list)

    @property
    def lossless(self) -> bool:
        return self.transport == Transport.ROCE_V2_LOSSLESS

    def ecn_profile(self, name: str) -> EcnProfile | None:
        return next((p for p in self.ecn_profiles if p.name == name), None)
