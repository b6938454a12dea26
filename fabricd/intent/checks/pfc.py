"""PFC, watchdog, transport and congestion-control checks, and host <-> switch consistency.

Watchdog timer ranges per platform (``WATCHDOG_LIMITS``), all in ms:

* SONiC ``config pfcwd start``/``interval`` (sonic-utilities pfcwd/main.py): detection 100-5000, restoration
  100-60000, poll 100-1000;
* Cumulus NVUE (Cumulus Linux 5.x QoS docs): ``polling-interval`` 100-5000; detection = poll x ``robustness``
  (1-1000), so detection must be a whole number of polls; restoration is not configurable (one quiet poll);
* Arista EOS (``priority-flow-control pause watchdog ... timeout / recovery-time / polling-interval`` in seconds):
  timeout and recovery 10-60000 ms, polling 5-30000 ms - from a third-party guide, unverified;
  timeout and recovery take 2 decimals, so whole 10 ms (AVD schema pattern ``\\d+(\\.\\d{1,2})?``);
* Cisco NX-OS: the watchdog interval (poll) is 100-1000 ms (Cisco NDFC ``pfc_watch_int`` 101-1000, the switch's
  default 100); detection is the per-interface multiplier (DME ``interfaceMutiplier`` 0-40) x the poll and
  restoration the ``fixed-restore multiplier`` (1-100, range unverified) x the poll, so both are whole polls.

Host <-> switch PFC consistency: fabricd derives the PFC priorities, trust mode, DSCP map and CNP class of *both*
ends of every host link from the one fabric-wide policy (there is deliberately no per-host or per-port override),
so a PFC mismatch cannot be written in the intent. What can still differ between a NIC and its switch port is
checked here and in topology.py: the peer must be a switch port (FAB009), with the same speed (FAB012), a large
enough MTU (FAB013), the NIC's VLAN (FAB076) and a host role (FAB015); with trust pcp the NIC must be tagged
(FAB039). The *live* comparison of both ends is ``fabricd audit``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from fabricd.model import CongestionControl, Platform, Transport

from .base import Context, Finding, Severity, check, names

WATCHDOG = ("policy", "pfc", "watchdog")


@dataclass(frozen=True)
class WatchdogLimits:
    """Inclusive ranges in ms; None = the platform has no such knob. ``step_ms``: timers are whole multiples of
    this (EOS: 10 ms); ``detect_in_polls`` / ``restore_in_polls``: the timer = poll x an integer (NVUE detection,
    NX-OS both)."""

    detection_ms: tuple[int, int]
    restoration_ms: tuple[int, int] | None
    poll_ms: tuple[int, int] | None
    source: str
    step_ms: int | None = None
    detect_in_polls: bool = False
    restore_in_polls: bool = False


WATCHDOG_LIMITS: dict[Platform, WatchdogLimits] = {
    Platform.SONIC: WatchdogLimits((100, 5000), (100, 60000), (100, 1000), "sonic-utilities pfcwd"),
    Platform.CUMULUS_NVUE: WatchdogLimits((100, 5_000_000), None, (100, 5000),
                                          "NVUE polling-interval 100-5000, robustness 1-1000",
                                          detect_in_polls=True),
    Platform.ARISTA_EOS: WatchdogLimits((10, 60000), (10, 60000), (5, 30000),
                                        "EOS timeout/recovery-time 0.01-60 s with 2 decimals (AVD schema), "
                                        "polling-interval 0.005-30 s", step_ms=10),
    Platform.CISCO_NXOS: WatchdogLimits((100, 40000), (100, 100000), (100, 1000),
                                        "NX-OS watchdog interval 100-1000 ms x interface-multiplier 1-40 / "
                                        "fixed-restore multiplier 1-100", detect_in_polls=True,
                                        restore_in_polls=True),
}


def _watchdog_active(ctx: Context) -> bool:
    return ctx.policy.pfc.watchdog.enabled and bool(ctx.pfc_priorities)


@check("FAB040", "watchdog-poll-too-long", Severity.ERROR, area="pfc",
       title="Watchdog poll <= min(detection, restoration)",
       why="The watchdog samples every poll: a poll longer than a timer cannot honour it (SONiC rejects "
       "`pfcwd interval` above any port's detection or restoration time; timer accuracy is detect <= observed "
       "<= detect + poll).",
       fix="lower poll_ms or raise detection_ms / restoration_ms")
def watchdog_poll(ctx: Context) -> Iterator[Finding]:
    wd = ctx.policy.pfc.watchdog
    if not _watchdog_active(ctx):
        return
    limit = min(wd.detection_ms, wd.restoration_ms)
    if wd.poll_ms > limit:
        yield Finding((*WATCHDOG, "poll_ms"), "watchdog poll is longer than a timer it must measure",
                      expected=f"<= {limit} ms (min of detection {wd.detection_ms}, restoration {wd.restoration_ms})",
                      got=f"{wd.poll_ms} ms")


@check("FAB041", "watchdog-platform-range", Severity.ERROR, area="pfc",
       title="Watchdog timers are within every used platform's range",
       why="A timer outside a platform's range is rejected when pushed (or silently clamped), so switches of "
       "different OSes would detect storms at different times.",
       fix="pick timers inside the ranges of every platform in the fabric (`fabricd docs checks`)")
def watchdog_platform_range(ctx: Context) -> Iterator[Finding]:
    wd = ctx.policy.pfc.watchdog
    if not _watchdog_active(ctx):
        return
    for platform, indexes in ctx.used_platforms.items():
        lim = WATCHDOG_LIMITS.get(Platform(platform))
        if lim is None:
            continue
        who = f"{platform} ({names(ctx.fabric.switches[i].name for i in indexes)})"
        for field, value, rng in (("detection_ms", wd.detection_ms, lim.detection_ms),
                                  ("restoration_ms", wd.restoration_ms, lim.restoration_ms),
                                  ("poll_ms", wd.poll_ms, lim.poll_ms)):
            if rng is not None and not rng[0] <= value <= rng[1]:
                yield Finding((*WATCHDOG, field), f"{field} is outside the range of {who}",
                              expected=f"{rng[0]}-{rng[1]} ms ({lim.source})", got=f"{value} ms")


@check("FAB042", "watchdog-granularity", Severity.WARNING, area="pfc",
       title="Watchdog timers are whole multiples of the platform's step",
       why="NX-OS counts detection and restoration in polls of its watchdog interval, EOS takes seconds with 2 "
       "decimals (10 ms steps) and NVUE counts detection in polls (robustness); other values are rounded when "
       "rendered, so the switch acts at another time than the intent says.",
       fix="use a detection (NX-OS, NVUE) and restoration (NX-OS) that are whole multiples of poll_ms, and whole "
       "10 ms on EOS")
def watchdog_granularity(ctx: Context) -> Iterator[Finding]:
    wd = ctx.policy.pfc.watchdog
    if not _watchdog_active(ctx):
        return
    for platform in ctx.used_platforms:
        lim = WATCHDOG_LIMITS.get(Platform(platform))
        if lim is None:
            continue
        if lim.step_ms:
            for field, value in (("detection_ms", wd.detection_ms), ("restoration_ms", wd.restoration_ms)):
                if value % lim.step_ms:
                    yield Finding((*WATCHDOG, field), f"{field} is not a multiple of {platform}'s {lim.step_ms} ms "
                                  "step", expected=f"a multiple of {lim.step_ms} ms",
                                  got=f"{value} ms (renders as {-(-value // lim.step_ms) * lim.step_ms} ms)")
        if lim.detect_in_polls and wd.poll_ms and wd.detection_ms % wd.poll_ms:
            yield Finding((*WATCHDOG, "detection_ms"), f"detection is not a whole number of polls on {platform}",
                          expected=f"a multiple of poll_ms {wd.poll_ms}",
                          got=f"{wd.detection_ms} ms (renders as {-(-wd.detection_ms // wd.poll_ms)} polls)")
        if lim.restore_in_polls and wd.poll_ms and wd.restoration_ms % wd.poll_ms:
            yield Finding((*WATCHDOG, "restoration_ms"), f"restoration is not a whole number of polls on {platform}",
                          expected=f"a multiple of poll_ms {wd.poll_ms}",
                          got=f"{wd.restoration_ms} ms (renders as {-(-wd.restoration_ms // wd.poll_ms)} polls)")


@check("FAB043", "watchdog-disabled", Severity.WARNING, area="pfc",
       title="Lossless fabrics run the PFC watchdog",
       why="Without a watchdog one stuck NIC can pause the whole fabric indefinitely (the PFC storm of Guo et al. "
       "2016); every vendor recipe enables it.",
       fix="set policy.pfc.watchdog.enabled: true")
def watchdog_disabled(ctx: Context) -> Iterator[Finding]:
    if ctx.lossless and ctx.pfc_priorities and not ctx.policy.pfc.watchdog.enabled:
        yield Finding((*WATCHDOG, "enabled"), "the PFC watchdog is disabled on a lossless fabric",
                      expected="enabled: true", got="false")


@check("FAB044", "lossless-without-pfc", Severity.ERROR, area="pfc",
       title="A lossless transport has PFC priorities",
       why="roce_v2_lossless relies on PFC; with no PFC priority the fabric is lossy RoCE in disguise.",
       fix="list the RoCE priority in policy.pfc.priorities, or set transport: roce_v2_lossy")
def lossless_without_pfc(ctx: Context) -> Iterator[Finding]:
    if ctx.lossless and not ctx.pfc_priorities:
        yield Finding(("policy", "pfc", "priorities"), "transport roce_v2_lossless but no PFC priority",
                      expected=f"at least the RoCE priority {ctx.policy.qos.roce.priority}", got="[]")


@check("FAB045", "pfc-on-lossy-transport", Severity.WARNING, area="pfc",
       title="Lossy RoCE and iWARP run without PFC",
       why="Lossy RoCE and iWARP recover from loss themselves; PFC adds pause storms and deadlock risk for no gain.",
       fix="set policy.pfc.priorities: [] or use transport: roce_v2_lossless")
def pfc_on_lossy_transport(ctx: Context) -> Iterator[Finding]:
    t = ctx.policy.transport
    if t in (Transport.ROCE_V2_LOSSY, Transport.IWARP) and ctx.pfc_priorities:
        yield Finding(("policy", "pfc", "priorities"), f"PFC is enabled with transport {t.value}",
                      expected="[] (no PFC)", got=str(sorted(ctx.pfc_priorities)))


@check("FAB046", "infiniband-on-ethernet", Severity.WARNING, area="pfc",
       title="InfiniBand transport is not rendered on Ethernet switches",
       why="The switch platforms fabricd drives are Ethernet; with transport infiniband their RoCE QoS "
       "(PFC, ECN, DSCP map) does not apply to the RDMA traffic.",
       fix="use a RoCE transport for Ethernet fabrics")
def infiniband_on_ethernet(ctx: Context) -> Iterator[Finding]:
    if ctx.policy.transport == Transport.INFINIBAND and ctx.fabric.switches:
        yield Finding(("policy", "transport"), "transport infiniband with Ethernet switches",
                      expected="roce_v2_lossless or roce_v2_lossy",
                      got=f"infiniband and {len(ctx.fabric.switches)} Ethernet switches")


@check("FAB047", "dcqcn-priorities", Severity.ERROR, area="pfc",
       title="DCQCN is enabled on the RoCE priority",
       why="The NIC reacts to CNPs only on priorities with roce_rp/enable set, and sends CNPs only for "
       "roce_np/enable ones: leaving out the RoCE priority disables congestion control.",
       fix="include the RoCE priority in dcqcn.rp_priorities and dcqcn.np_priorities (or leave them unset)")
def dcqcn_priorities(ctx: Context) -> Iterator[Finding]:
    if ctx.policy.congestion_control != CongestionControl.DCQCN:
        return
    prio = ctx.policy.qos.roce.priority
    dc = ctx.policy.dcqcn
    for field, value in (("rp_priorities", dc.rp_priorities), ("np_priorities", dc.np_priorities)):
        if value is not None and prio not in value:
            yield Finding(("policy", "dcqcn", field), f"{field} leaves out the RoCE priority {prio}",
                          expected=f"a list containing {prio}", got=str(value))


@check("FAB048", "no-congestion-control", Severity.WARNING, area="pfc",
       title="Lossless RoCE runs with a congestion control",
       why="PFC alone stops loss by spreading congestion upstream (head-of-line blocking, victim flows); DCQCN with "
       "ECN keeps queues short so PFC rarely fires.",
       fix="set congestion_control: dcqcn")
def no_congestion_control(ctx: Context) -> Iterator[Finding]:
    if ctx.lossless and ctx.policy.congestion_control == CongestionControl.NONE:
        yield Finding(("policy", "congestion_control"), "lossless RoCE without congestion control",
                      expected="dcqcn", got="none")


CHECKS = (
    watchdog_poll,
    watchdog_platform_range,
    watchdog_granularity,
    watchdog_disabled,
    lossless_without_pfc,
    pfc_on_lossy_transport,
    infiniband_on_ethernet,
    dcqcn_priorities,
    no_congestion_control,
)
