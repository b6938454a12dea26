"""docs/nics.md, the NIC support matrix, generated from the profiles (scripts/gen_nics_doc.py; a test keeps it
current): per family, what fabricd configures, what it reads, what it cannot do, and the source of each."""

from __future__ import annotations

from . import PROFILES
from .base import Knob, NicProfile

HEAD = """# NIC support matrix

<!-- Generated from fabricd/intent/nics by scripts/gen_nics_doc.py; do not edit by hand. -->

fabricd configures and reads each RDMA NIC as its driver family does it. `Nic.driver` (the netdev's driver, as
`ethtool -i` prints it) or `Nic.rdma_driver` selects the family's profile (`fabricd/intent/nics/`); a driver with
no profile is a `fabricd validate` error (FAB080). Each NIC may set its own `transport` (an E810 can run iWARP in a
RoCE fabric) and its family's congestion-control knobs under `cc:`; `policy.dcqcn` parameters are mlx5's and are an
error on a family that lacks them (FAB082), with the family's nearest knob in the hint.

What `fabricd host apply` does not change itself (firmware flags, devlink parameters, module parameters) is a
*prerequisite*: the rendered host script checks it (and sets it where the command is verified), `fabricd host plan`
lists it, and `fabricd audit host` reports it as not read (HOST-PREREQ). Values marked **unverified** come from a
driver's source types or README without a capture or a documented range.

Transports per NIC: `roce_v2_lossless` gets PFC on the policy's priorities and global pause off; `roce_v2_lossy`
and `iwarp` get no PFC demand (PFC off on the NIC, pause left alone); `iwarp` gets no RDMA-CM RoCE settings and
the family's TCP ECN knob instead of DCQCN; `infiniband` gets no DCB and no sysfs/configfs writes (links only), and
its counters are exported from the RDMA sysfs `counters/` (the PMA counters; `perfquery` text is read by
`fabricd.readers.perfquery`). The PFC deadlock analysis (`fabricd validate`) counts as endpoints only the leaves
with a NIC that runs lossless RoCE.

Bundles: `rdma statistic show` (text, `-p`, `qp show`; `-j` unverified), `dcb pfc|ets|buffer|app show` and
`show_gids` text are read by `fabricd.readers.rdma_stat`, `fabricd.readers.dcb_text` and
`fabricd.readers.gids.parse_show_gids`, with located errors (captures in tests/golden/readers/host_text). In a
replay root, `rdma/statistic.txt` feeds `fabricd export host` (devices without sysfs) and `dcb/<if>.pfc|.ets|.app`
feed `fabricd audit host` (PFC, ETS and the DSCP map are then checked instead of skipped).

DCB held by NIC firmware or by lldpad rather than dcbnl (`fabricd.readers.dcb_tools`, real captures in
tests/golden/readers/host_text): a bundle's `dcb/<if>.mlnx_qos` (`mlnx_qos -i`, mlx5 with MLNX_OFED: trust, PFC,
ETS, the 64-entry dscp2prio table and the DCBX mode; verified on three captures, old and new formats),
`dcb/<if>.lldptool` (`lldptool -ti`, software DCBX: the IEEE ETS Configuration (never the Recommendation), PFC and
APP TLVs, or a CEE peer's PFC and priority groups; verified), `dcb/<if>.niccli` (Broadcom `niccli ... qos --ets
--show`, BCM57608 firmware DCB: as many TCs as the NIC runs, APP DSCP entries, TC rate limits; verified on one
capture) are read after the iproute2 files, so `fabricd audit host` checks PFC, ETS and the DSCP map (and, from
mlnx_qos, trust) on such a host. `dcb/<if>.dcbx` (`dcb dcbx show`) and `dcb/<if>.maxrate` (`dcb maxrate show`) go into
the checks' notes (who runs DCBX; per-TC rate caps); both verified on the iproute2 man-page examples only.

"""
TABLE = (
    "| family | drivers | transports | DCB (trust, PFC, ETS, APP) | TCs / PFC prios | congestion control "
    "| counters (ethtool / hw_counters) |\n|---|---|---|---|---|---|---|\n"
)


def _row(p: NicProfile) -> str:
    dcb = "no" if not p.dcb else ("dcb netlink, apptrust" if p.apptrust else "dcb netlink (no apptrust)")
    cc = p.cc_group or ("/sys/class/net/<if>/ecn" if p.role("np_enable") else "none")
    eth = p.ethtool_driver or "the netdev's driver"
    return (
        f"| {p.family} | {', '.join((*p.drivers, *p.rdma_drivers))} | "
        f"{', '.join(sorted(t.value for t in p.transports))} | {dcb} | {p.max_tcs} / {p.max_pfc_priorities} | "
        f"`{cc}` | {eth} / {len(p.hw_counters)} names |\n"
    )


def _knob(k: Knob, role: str | None = None) -> str:
    rng = f"{k.minimum}-{k.maximum}"
    flags = [] if k.runtime else ["module parameter (load time): not set by fabricd"]
    if not k.verified:
        flags.append("**unverified** range")
    if k.fmt == "hex":
        flags.append("written as 0x-hex")
    if k.default is not None:
        flags.append(f"default {k.default}")
    if k.transports is not None:
        flags.append("only " + " or ".join(sorted(t.value for t in k.transports)))
    name = f"{role} -> `{k.name}`" if role else f"`{k.name}`"
    return f"| {name} | `{k.path}` | {rng} | {k.unit} | {'; '.join(flags)} | {k.source} |\n"


def _readable(pattern: str) -> str:
    """A name rule as a reader sees it: ``(?P<dir>rx|tx)_prio(?P<prio>[0-7])_pause`` -> ``{rx,tx}_prioN_pause``."""
    return (
        pattern.replace("(?P<dir>rx|tx)", "{rx,tx}")
        .replace("(?P<prio>[0-7])", "N")
        .replace("\\.", ".")
        .replace("(?:", "(")
        .replace("(", "")
        .replace(")", "")
    )


def _configures(p: NicProfile) -> str:
    """What fabricd sets on this family, one sentence."""
    out = ["**fabricd configures:** links (MTU, VLAN, address" + (", global pause off" if p.global_pause else "") + ")"]
    if p.dcb:
        out.append(
            "; DCB: "
            + ("apptrust, " if p.apptrust else "")
            + "PFC, ETS, DSCP APP table"
            + (" (all 64 DSCPs)" if p.app_all_dscp else " (mapped DSCPs only, CNP last)")
        )
    if p.rdma_cm:
        out.append("; RDMA-CM default RoCE ToS and mode (configfs rdma_cm)")
    if p.traffic_class:
        out.append("; MLNX_OFED tc/<port>/traffic_class (optional)")
    if p.cc_group:
        out.append(f"; configfs group `{p.cc_group}` (mkdir)")
    if p.cc_commit:
        out.append(f"; commit `{p.cc_commit}` after its knobs")
    out.append(".\n\n")
    if p.tc_of_class or p.compact_tcs:
        how = (
            ", ".join(f"{role} on TC{tc}" for role, tc in p.tc_of_class.items())
            if p.tc_of_class
            else "the policy's classes renumbered to TC 0..n-1"
        )
        out.append(f"**Host TC layout:** {how}.\n\n")
    return "".join(out)


def _knobs(p: NicProfile) -> str:
    if not (p.roles or p.tunables):
        return ""
    return (
        "| knob | path | range | unit | notes | source |\n|---|---|---|---|---|---|\n"
        + "".join(_knob(k, role) for role, k in p.roles.items())
        + "".join(_knob(k) for k in p.tunables.values())
        + "\n"
    )


def _prerequisites(p: NicProfile) -> str:
    if not p.prerequisites:
        return ""
    out = ["**Prerequisites** (checked by the rendered script, listed by `host plan`):\n\n"]
    for pre in p.prerequisites:
        where = f" (only {', '.join(sorted(t.value for t in pre.transports))})" if pre.transports else ""
        ver = "" if pre.verified else " **unverified**"
        out.append(f"- {pre.what}{where}: `{pre.command}`{ver}. Source: {pre.source}\n")
    return "".join(out) + "\n"


def _reads(p: NicProfile) -> str:
    """What fabricd reads from this family: ethtool names by driver generation and the RDMA hw_counters."""
    out = [
        "**fabricd reads:** ethtool names of `"
        + (p.ethtool_driver or "the netdev's driver")
        + "` (its profile); hw_counters: "
        + ", ".join(f"`{n}`" for n in p.hw_counters)
        + ".\n\n"
    ]
    names = p.ethtool
    if names is None:
        return "".join(out)
    out.append("**ethtool names by driver generation** (a device is read with its own driver's map):\n\n")
    for g in names.generations:
        shown = ", ".join(f"`{_readable(r.pattern)}`" for r in g.rules[:4]) + (", ..." if len(g.rules) > 4 else "")
        out.append(f"- {g.releases}: {shown or 'nothing to normalise'} (source: {g.source})\n")
    if names.unverified:
        out.append(f"- **unverified**: {names.unverified}\n")
    return "".join(out) + "\n"


def _section(p: NicProfile) -> str:
    return (
        f"\n## {p.family}: {p.title}\n\n"
        + "**Sources:** "
        + "; ".join(p.sources)
        + "\n\n"
        + _configures(p)
        + _knobs(p)
        + _prerequisites(p)
        + _reads(p)
        + "**Cannot:**\n\n"
        + "".join(f"- {limit}\n" for limit in p.limits)
    )


def matrix_markdown() -> str:
    return "".join([HEAD, TABLE, *(_row(p) for p in PROFILES), *(_section(p) for p in PROFILES)])
