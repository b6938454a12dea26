"""The parser-role registry: every kind of device output fabricd parses, and whether a real capture proves it.

A *role* is one output shape one parser reads: a switch show command the exporter or the audit runs (per platform and
per output form: ``| json`` and text are two roles), a running-config parser, a version command, and each host reader
format (``ethtool -S`` per driver map, sysfs RDMA counter trees, ``perfquery``, DCB netlink, ...). Each role is
either **verified** (at least one real capture under ``tests/golden/`` is linked to it) or declared **unverified**
with the reason. ``fabricd doctor`` lists the unverified roles, docs/platforms.md carries the table
(:func:`markdown_table`, test-checked), and tests/golden/test_parser_roles.py (the meta-test) keeps it true: a role
with neither a real capture nor an ``unverified`` reason fails, so does a verified role without one, an unverified
role that has one, and a real capture under ``tests/golden/readers/`` or ``tests/golden/switch_config/`` that no role
claims (ntc-templates' rule: every template has real test data).

**Real capture**: a file (or a directory with a ``SOURCE`` file) whose first line names where it came from and does
not name fabricd's lab simulator nor say that no public capture exists (:func:`is_real_source`). Output written from
documented field names is not a capture.

**Linking a capture to a role** (the one place to extend): a capture named ``<role>--<source>.txt`` in the role's
folder (``tests/golden/readers/switch/<platform>/`` for switch show roles) is linked by its name alone, e.g.
``tests/golden/readers/switch/cisco_nxos/transceiver--ntc-details.txt``; older names are linked by the globs in the
role's ``captures``. A new capture either follows the convention or adds a glob to its role: switch roles are declared
by their pack (``fabricd/nos/<id>/roles.py``, built with :mod:`fabricd.nos.role`), host roles here.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from fabricd.nos.registry import SPECS
from fabricd.nos.role import Role

__all__ = [
    "Role",
    "all_roles",
    "captures_of",
    "host_roles",
    "is_real_source",
    "markdown_table",
    "real_captures_of",
    "source_line",
    "switch_roles",
    "unverified_roles",
]

LAB_MARKERS = (
    "fabricd lab simulator",
    "no public capture",
    "lab/fabricd_lab/",
    "not a device capture",
    "not known to be a device capture",
)
"""A source line containing one of these (case-insensitive) is not a real capture: lab output, output written from
documented names, and public text that is not known to come from a device (a test author's fixture, a regrouped
mock database)."""


def _host(
    name: str,
    command: str,
    parser: str,
    captures: Iterable[str],
    *,
    unverified: str | None = None,
    used_by: str = "export",
) -> Role:
    return Role("host", name, command, parser, used_by, tuple(captures), unverified)


def switch_roles() -> list[Role]:
    """Every switch parser role: each pack's own (``PlatformSpec.roles``), walking the platform registry."""
    return [role(spec) for spec in SPECS.values() for role in spec.roles]


def host_roles() -> list[Role]:
    """Every host reader format."""
    from fabricd.readers.ethtool_maps import DRIVER_NAMES

    prefixes = {"mlx5_core": "mlx5", "mlx4_en": "mlx4", "mlxsw_spectrum": "mlxsw"}
    ethtool = [
        _host(
            f"ethtool-S-{driver}",
            f"ethtool -S <if> (driver {driver})",
            "fabricd.readers.ethtool.normalise",
            (f"readers/ethtool/{prefixes.get(driver, driver)}-*.txt",),
            unverified=names.unverified,
        )
        for driver, names in DRIVER_NAMES.items()
    ]
    return [
        *ethtool,
        _host(
            "ethtool-S-unmapped",
            "ethtool -S <if> (a driver without a name map: raw names only)",
            "fabricd.readers.ethtool.parse_ethtool_stats",
            ("readers/ethtool/ethtool-S-*.txt",),
        ),
        _host(
            "ethtool-i",
            "ethtool -i <if>",
            "fabricd.readers.ethtool.parse_ethtool_info",
            (),
            unverified="no real `ethtool -i` capture in tests/golden/readers (the replay roots write the documented "
            "`driver:`/`firmware-version:` lines)",
        ),
        _host(
            "sysfs-ib-counters",
            "/sys/class/infiniband/<dev>/ports/<p>/counters[_ext]",
            "fabricd.readers.rdma.read_rdma",
            ("readers/sysfs/node_exporter-sys", "readers/sysfs/procfs-testdata"),
        ),
        _host(
            "sysfs-ib-hw_counters-mlx5",
            "/sys/class/infiniband/<mlx5 dev>/ports/<p>/hw_counters",
            "fabricd.readers.rdma.read_rdma",
            ("readers/sysfs/procfs-testdata", "readers/sysfs/mlx5_bond_0-show_counters-notes"),
        ),
        _host(
            "sysfs-ib-hw_counters-rxe",
            "/sys/class/infiniband/<rxe dev>/ports/1/hw_counters",
            "fabricd.readers.rdma.read_rdma",
            ("traffic/rxe-clean", "traffic/rxe-lossy-udp"),
        ),
        _host(
            "sysfs-gids",
            "/sys/class/infiniband/<dev>/ports/<p>/gids, gid_attrs/{types,ndevs}",
            "fabricd.readers.gids.list_gids",
            (),
            unverified="no real gids tree: tests/golden/host builds one so that show_gids prints a quoted README "
            "output",
        ),
        _host(
            "sysfs-ecn",
            "/sys/class/net/<if>/ecn/roce_np|roce_rp/*",
            "fabricd.readers.nic_config.read_nic_config",
            ("host/net-class-eth0-ecn-procfs.txt",),
        ),
        _host(
            "configfs-rdma_cm",
            "/sys/kernel/config/rdma_cm/<dev>/ports/<p>/default_roce_tos|default_roce_mode",
            "fabricd.readers.nic_config.read_roce_tos",
            (),
            unverified="no capture exists; written from the kernel ABI document (tests/golden/host/SOURCES.md)",
        ),
        _host(
            "perfquery",
            "perfquery -x / -l -x / -E",
            "fabricd.readers.perfquery.parse_perfquery",
            ("readers/perfquery/*.txt",),
            used_by="export ib",
        ),
        _host(
            "ibnetdiscover-ports",
            "ibnetdiscover --ports",
            "fabricd.readers.ibnetdiscover.parse_ibnetdiscover_ports",
            ("readers/ibnetdiscover/*.txt",),
            used_by="export ib",
        ),
        _host(
            "dcb-netlink",
            "DCB netlink RTM_GETDCB IEEE replies",
            "fabricd.hosts.dcbnl",
            ("dcb/ieee-get.txt",),
            used_by="host apply, audit host",
        ),
        _host(
            "rdma-statistic",
            "rdma statistic show (plain, wrapped, -p, qp show)",
            "fabricd.readers.rdma_stat.parse_rdma_statistic",
            ("readers/host_text/rdma-stat*.txt",),
            used_by="export host (bundles), audit host",
        ),
        _host(
            "rdma-statistic-json",
            "rdma -j statistic show",
            "fabricd.readers.rdma_stat.parse_rdma_statistic_json",
            (),
            unverified="no device capture of the JSON form: the golden is reshaped from a text capture",
            used_by="reference",
        ),
        _host(
            "dcb-pfc-text",
            "dcb pfc show dev <if> [stats]",
            "fabricd.readers.dcb_text.parse_dcb_pfc",
            ("readers/host_text/dcb-pfc-*.txt",),
            used_by="audit host (bundles)",
        ),
        _host(
            "dcb-ets-text",
            "dcb ets show dev <if>",
            "fabricd.readers.dcb_text.parse_dcb_ets",
            ("readers/host_text/dcb-ets-*.txt",),
            used_by="audit host (bundles)",
        ),
        _host(
            "dcb-buffer-text",
            "dcb buffer show dev <if>",
            "fabricd.readers.dcb_text.parse_dcb_buffer",
            ("readers/host_text/dcb-buffer-*.txt",),
            used_by="reference",
        ),
        _host(
            "dcb-app-text",
            "dcb app show dev <if> dscp-prio",
            "fabricd.readers.dcb_text.parse_dcb_app",
            ("readers/host_text/dcb-app-*.txt",),
            used_by="audit host (bundles)",
        ),
        _host(
            "dcb-apptrust-text",
            "dcb apptrust show dev <if>",
            "fabricd.readers.dcb_apptrust.parse_dcb_apptrust",
            ("readers/host_text/dcb-apptrust-*.txt",),
            used_by="audit host (bundles)",
        ),
        _host(
            "mlnx_qos",
            "mlnx_qos -i <if>",
            "fabricd.readers.dcb_tools.parse_mlnx_qos",
            ("readers/host_text/mlnx_qos-*.txt",),
            used_by="audit host (bundles)",
        ),
        _host(
            "lldptool-ti",
            "lldptool -ti <if> (lldpad IEEE/CEE DCBX TLVs)",
            "fabricd.readers.dcb_tools.parse_lldptool",
            ("readers/host_text/lldptool-*.txt",),
            used_by="audit host (bundles)",
        ),
        _host(
            "niccli-qos",
            "niccli --dev N qos --ets --show (Broadcom firmware DCB)",
            "fabricd.readers.dcb_tools.parse_niccli_qos",
            ("readers/host_text/niccli-*.txt",),
            used_by="audit host (bundles)",
        ),
        _host(
            "dcb-maxrate-text",
            "dcb maxrate show dev <if>",
            "fabricd.readers.dcb_tools.parse_dcb_maxrate",
            ("readers/host_text/dcb-maxrate-*.txt",),
            used_by="audit host (bundles, notes)",
        ),
        _host(
            "dcb-dcbx-text",
            "dcb dcbx show dev <if>",
            "fabricd.readers.dcb_tools.parse_dcb_dcbx",
            ("readers/host_text/dcb-dcbx-*.txt",),
            used_by="audit host (bundles, notes)",
        ),
        _host(
            "show_gids-text",
            "show_gids",
            "fabricd.readers.gids.parse_show_gids",
            ("readers/host_text/show_gids-*.txt",),
            used_by="reference",
        ),
        _host(
            "ethtool-m",
            "ethtool -m <if> (SFF-8472 SFP, SFF-8636 QSFP, their hex dumps; CMIS lines and hex dumps unverified)",
            "fabricd.readers.module.read_ethtool_module",
            ("readers/host/ethtool-m-*.txt",),
            used_by="export host (link: live, or replay roots)",
        ),
        _host(
            "ethtool-show-fec",
            "ethtool -I --show-fec <if>",
            "fabricd.readers.module.parse_ethtool_fec",
            ("readers/host/ethtool-show-fec-*.txt",),
            used_by="export host (link: live, or replay roots)",
        ),
        _host(
            "lldpctl-text",
            "lldpctl / lldpcli show neighbors (text; SONiC show lldp neighbors)",
            "fabricd.readers.lldp.parse_lldpctl_text",
            ("readers/lldp/sonic-show-lldp-neighbors-*.txt",),
            used_by="audit cabling (the hosts' side)",
        ),
        _host(
            "lldpctl-json",
            "lldpctl -f json (or -f json0; lldpd)",
            "fabricd.readers.lldp.parse_lldpctl_json",
            ("readers/lldp/host-lldpctl-*.txt",),
            used_by="audit cabling (the hosts' side)",
        ),
        _host(
            "dcb-apptrust-json",
            "dcb -j apptrust show dev <if>",
            "fabricd.hosts.dcb",
            (),
            unverified="no real capture of the fallback's JSON (kernels before 6.1 only)",
            used_by="host apply, audit host",
        ),
    ]


def all_roles() -> list[Role]:
    """Switch roles then host roles; ids are unique (checked by the meta-test)."""
    return [*switch_roles(), *host_roles()]


def unverified_roles() -> list[Role]:
    return [r for r in all_roles() if not r.verified]


# -- captures --------------------------------------------------------------------------------------------------


def source_line(path: Path) -> str:
    """The provenance line of a capture: a file's first line, or the first line of a directory's ``SOURCE``."""
    target = path / "SOURCE" if path.is_dir() else path
    try:
        with target.open(encoding="utf-8", errors="replace") as fh:
            return fh.readline().strip()
    except OSError:
        return ""


def is_real_source(line: str) -> bool:
    """True when a provenance line names a real source: not fabricd's lab simulator, not "no public capture"."""
    low = line.lower()
    return bool(line.strip()) and not any(m in low for m in LAB_MARKERS)


def is_capture(path: Path) -> bool:
    """A capture file (``.txt``) or a capture tree (a directory with a ``SOURCE`` file)."""
    return (path.is_file() and path.suffix == ".txt") or (path.is_dir() and (path / "SOURCE").is_file())


def captures_of(role: Role, golden: Path) -> list[Path]:
    """Every capture under ``golden`` (tests/golden) linked to ``role``, real or not."""
    found: set[Path] = set()
    for pattern in role.globs():
        found.update(p for p in golden.glob(pattern) if is_capture(p))
    return sorted(found)


def real_captures_of(role: Role, golden: Path) -> list[Path]:
    return [p for p in captures_of(role, golden) if is_real_source(source_line(p))]


# -- docs ------------------------------------------------------------------------------------------------------


def markdown_table(golden: Path | None = None) -> str:
    """The roles as a markdown table (docs/platforms.md carries it; a test keeps it equal). With ``golden``, the
    real captures' names are listed."""
    lines = ["| role | command / format | parser | used by | verified |", "|---|---|---|---|---|"]
    for r in all_roles():
        if r.verified:
            names = ", ".join(p.name for p in real_captures_of(r, golden)) if golden is not None else ""
            verdict = f"yes: {names}" if names else "yes"
        else:
            verdict = f"**unverified**: {r.unverified}"
        parser = r.parser.removeprefix("fabricd.")
        command = r.command.replace("|", "\\|")
        lines.append(f"| `{r.id}` | `{command}` | `{parser}` | {r.used_by} | {verdict.replace('|', '/')} |")
    return "\n".join(lines) + "\n"
