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
role's ``captures``. A new capture either follows the convention or adds a glob here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from fabricd.model import Platform
from fabricd.nos.registry import SPECS
from fabricd.nos.spec import ShowTable

SWITCH_TABLES: dict[str, ShowTable] = {platform.value: spec.show for platform, spec in SPECS.items()}
"""Platform id -> its pack's show table (commands and parsers by role)."""

RUNNING_CONFIG_COMMANDS: dict[str, str] = {platform.value: spec.running_config for platform, spec in SPECS.items()}
"""What each platform driver's ``get_config`` runs (``PlatformSpec.running_config``), for the audit and drift."""

LAB_MARKERS = (
    "fabricd lab simulator", "no public capture", "lab/fabricd_lab/", "not a device capture",
    "not known to be a device capture",
)
"""A source line containing one of these (case-insensitive) is not a real capture: lab output, output written from
documented names, and public text that is not known to come from a device (a test author's fixture, a regrouped
mock database)."""


@dataclass(frozen=True, slots=True)
class Role:
    """One parser role. ``platform`` is a switch platform id or ``host``; ``name`` is the role key (the
    ``COMMANDS``/``OPTIONAL_COMMANDS`` key for exporter roles); ``command`` is what produces the output;
    ``parser`` the dotted path of the parsing function; ``used_by`` who reads it (``export``, ``export
    (optional)``, ``audit``, ``capture``, ``reference``: a parser kept for captured output fabricd does not
    poll); ``captures`` globs relative to tests/golden/; ``unverified`` the reason, None when verified."""

    platform: str
    name: str
    command: str
    parser: str
    used_by: str
    captures: tuple[str, ...] = ()
    unverified: str | None = None

    @property
    def id(self) -> str:
        return f"{self.platform}/{self.name}"

    @property
    def verified(self) -> bool:
        return self.unverified is None

    @property
    def folder(self) -> str:
        """Where captures named ``<name>--<source>.txt`` are linked by the naming convention (under tests/golden)."""
        if self.platform == "host":
            return "readers/host"
        if self.name == "running-config":
            return f"switch_config/{self.platform}"
        if self.name == "version":
            return f"readers/switch_version/{self.platform}"
        return f"readers/switch/{self.platform}"

    def globs(self) -> tuple[str, ...]:
        return (f"{self.folder}/{self.name}--*", *self.captures)


def _command(show: ShowTable, key: str) -> str:
    table: Mapping[str, str] = {**show.optional, **show.commands}
    return table.get(key, f"(no {key!r} command in {show.module})")


def _sw(platform: str, key: str, parser: str, captures: Iterable[str] = (), unverified: str | None = None, *,
        form: str | None = None) -> Role:
    """An exporter role: command from the platform's COMMANDS/OPTIONAL_COMMANDS; ``form`` names another output form
    of the same command (``text``, or ``json`` where the exporter polls the text) parsed by the same function, as a
    reference role of its own."""
    show = SWITCH_TABLES[platform]
    optional = key in show.optional and key not in show.commands
    command = _command(show, key)
    name = key if form is None else f"{key}-{form}"
    used_by = "export (optional)" if optional else "export"
    if key == "pfcwd":
        used_by += ", audit"
    if form is not None:
        base = command.replace(" | json", "").replace(" -o json", "")
        command = (f"{base} | json" if form == "json" else base) + f" ({form} form)"
        used_by = "reference"
    return Role(platform, name, command, f"{SWITCH_TABLES[platform].module}.{parser}", used_by,
                tuple(f"readers/switch/{platform}/{c}" for c in captures), unverified)


def _ref(platform: str, name: str, command: str, parser: str, captures: Iterable[str],
         unverified: str | None = None) -> Role:
    """A parser fabricd keeps for captured output of a command it does not poll."""
    return Role(platform, name, command, f"{SWITCH_TABLES[platform].module}.{parser}", "reference",
                tuple(f"readers/switch/{platform}/{c}" for c in captures), unverified)


def _config(platform: str, captures: Iterable[str], unverified: str | None = None) -> Role:
    return Role(platform, "running-config", RUNNING_CONFIG_COMMANDS[platform],
                f"fabricd.nos.{platform}.running.parse_running_config", "audit, capture",
                tuple(f"switch_config/{platform}/{c}" for c in captures), unverified)


def _version(platform: str, captures: Iterable[str] = (), unverified: str | None = None) -> Role:
    command = SPECS[Platform(platform)].version_command
    return Role(platform, "version", command, f"fabricd.nos.{platform}.version.parse_version",
                "capture", tuple(f"readers/switch_version/{platform}/{c}" for c in captures), unverified)


def _lldp(platform: str, captures: Iterable[str] = (), unverified: str | None = None) -> Role:
    """The platform's LLDP neighbour command (``PlatformSpec.lldp``), read by ``fabricd audit cabling``; captures in
    tests/golden/readers/lldp/ (they are not counter outputs, so not beside the show captures)."""
    table = SPECS[Platform(platform)].lldp
    assert table is not None, platform
    parser = getattr(table.parse, "__name__", "parse")
    return Role(platform, "lldp", table.command, f"{table.module}.{parser}", "audit cabling, capture",
                tuple(f"readers/lldp/{c}" for c in captures), unverified)


def _host(name: str, command: str, parser: str, captures: Iterable[str], unverified: str | None = None,
          used_by: str = "export") -> Role:
    return Role("host", name, command, parser, used_by, tuple(captures), unverified)


LAB_ONLY = "no real capture in the repository: only fabricd's lab simulator output"

_NXOS_SEARCHED = (
    "searched 2026-11-26 without finding one: Cisco's N9K QoS guides 9.2x-10.5x and NX-API pages (only the stored "
    "openings of the guides' PFC chapters were readable), genieparser, ntc-templates, ansible cisco.nxos fixtures, "
    "SuzieQ, fakenos, datacenter/nexus9000, allenrobel/nxapi-netbox, paregupt/nexus_traffic_monitor, GitHub code "
    "and issue indexes"
)
NXOS_PFC_JSON = (
    "no public capture or schema of `show interface priority-flow-control | json` (the golden is the lab's "
    "TABLE_entity JSON; third-party NX-API scripts read TABLE_pfc_interface rows with rx-stats/tx-stats, unconfirmed); "
    "the exporter polls the verified text form; " + _NXOS_SEARCHED
)
NXOS_QUEUING_JSON = (
    "no public `show queuing interface | json` capture with values: the parser walks Cisco's NX-API schema "
    "(TABLE_module/ROW_module/TABLE_queuing_interface/...); the exporter polls the verified text form; "
    + _NXOS_SEARCHED
)
NXOS_PFCWD = (
    "no device capture of `show queuing pfc-queue [detail]` in any form: JSON keys from Cisco's NX-API schema "
    "(confirmed only by paregupt/nexus_traffic_monitor's collector code, no output), the text only from an "
    "OpenTelemetry test author's fixture; " + _NXOS_SEARCHED
)
"""Why the NX-OS JSON and watchdog roles stay unverified (issue 16), and where the search looked."""


def switch_roles() -> list[Role]:
    """Every switch parser role, per platform."""
    return [
        # -- SONiC --------------------------------------------------------------------------------------------
        _sw("sonic", "pfc", "parse_show_pfc_counters",
            ("show-pfc-counters-ntc.txt", "show-pfcwd-stats-and-pfc-counters-tx-*.txt",
             "show-pfc-counters-sonic-utilities-*.txt")),
        _sw("sonic", "queue", "parse_show_queue_counters", ("show-queue-counters-*.txt",)),
        _sw("sonic", "wred", "parse_show_queue_wredcounters", ("show-queue-wredcounters-*.txt",)),
        _sw("sonic", "pfcwd", "parse_show_pfcwd_stats",
            ("show-pfcwd-stats-*.txt", "pfcwd-show-stats-*.txt")),
        _sw("sonic", "pfc_history", "parse_show_pfc_counters_history", ("show-pfc-counters-history-*.txt",)),
        _ref("sonic", "interfaces-counters", "show interfaces counters", "parse_show_interfaces_counters",
             ("portstat-show-interfaces-counters-*.txt", "show-interfaces-counters-cmdref.txt",
              "show-interface-counters-errors-*.txt")),
        _ref("sonic", "interfaces-counters-detailed", "show interfaces counters detailed <port>",
             "parse_show_interfaces_counters_detailed", ("show-interfaces-counters-detailed-*.txt",)),
        _ref("sonic", "pfcwd-config", "show pfcwd config", "parse_show_pfcwd_config", ("show-pfcwd-config-*.txt",)),
        _sw("sonic", "pg_watermark_shared", "parse_pg_watermark_shared"),
        _sw("sonic", "pg_watermark_headroom", "parse_pg_watermark_headroom"),
        _sw("sonic", "queue_watermark_unicast", "parse_queue_watermark_unicast"),
        _sw("sonic", "queue_watermark_multicast", "parse_queue_watermark_multicast"),
        _sw("sonic", "fec", "parse_fec_stats"),
        _sw("sonic", "transceiver", "parse_transceiver_dom"),
        _ref("sonic", "pg-persistent-watermark", "show priority-group persistent-watermark shared|headroom",
             "parse_pg_persistent_watermark", ()),
        _ref("sonic", "queue-persistent-watermark", "show queue persistent-watermark unicast|multicast|all",
             "parse_queue_persistent_watermark", ()),
        _config("sonic", ("sonic-utilities-mock-config-db.txt",),
                "no device dump of `show runningconfiguration all`: the capture is sonic-utilities' test CONFIG_DB "
                "regrouped by table as the command prints it (a real database, not a device's output)"),
        _version("sonic"),
        _lldp("sonic", ("sonic-show-lldp-table-*.txt",)),
        Role("sonic", "lldp-neighbors", "show lldp neighbors (lldpd's text form)",
             "fabricd.nos.sonic.lldp.parse_show_lldp_table", "audit cabling (reference)",
             ("readers/lldp/sonic-show-lldp-neighbors-*.txt",)),
        # -- Arista EOS ---------------------------------------------------------------------------------------
        _sw("arista_eos", "pfc", "parse_show_priority_flow_control_counters", (),
            "no public capture of the `detail | json` form: key path from facebook/DNE-TaaC's health check; the "
            "totals form (pfc-totals) is verified on ANTA's eAPI output with the same parser"),
        _ref("arista_eos", "pfc-totals", "show priority-flow-control counters | json",
             "parse_show_priority_flow_control_counters", ("show-pfc-counters-json-anta.txt",)),
        _sw("arista_eos", "pfc", "parse_show_priority_flow_control_counters", (),
            "no public capture: the golden is written from EOS's documented columns", form="text"),
        _sw("arista_eos", "queue", "parse_show_interfaces_counters_queue_detail",
            ("show-interfaces-counters-queue-detail-*.txt",)),
        _sw("arista_eos", "queue", "parse_show_interfaces_counters_queue_detail", (),
            "no device capture of the `| json` forms in this repository: key paths from ANTA's queue-drop tests "
            "(egressQueueCounters, interfaces.<if>.trafficClasses) and Arista's snmpext sample (ingressVoqCounters, "
            "values edited there)", form="json"),
        _sw("arista_eos", "ecn", "parse_show_qos_ecn_counters", ("show-qos-ecn-counters-json-anta.txt",)),
        _sw("arista_eos", "pfcwd", "parse_show_pfc_counters_watchdog", (),
            "no public `| json` capture: key names from facebook/DNE-TaaC's health check, not a device"),
        _sw("arista_eos", "discards", "parse_show_interfaces_counters_discards"),
        _sw("arista_eos", "transceiver", "parse_show_interfaces_transceiver"),
        _sw("arista_eos", "flaps", "parse_show_interfaces_flaps"),
        _sw("arista_eos", "fec", "parse_show_interfaces_phy_detail", (),
            "no public capture of `show interfaces phy detail | json` found (searched ANTA's unit tests, napalm, the "
            "code index): key paths from ANTA's VerifyInterfacesBER (interfacePhyStatuses.<if>.phyStatuses[].fec."
            "correctedCodewords.value, uncorrectedCodewords.value, preFecBer.value)"),
        _ref("arista_eos", "hardware-counter-drop", "show hardware counter drop", "parse_show_hardware_counter_drop",
             ("show-hardware-counter-drop-*.txt",)),
        _config("arista_eos", ("avd-qos-profiles.txt", "ceoslab-*.txt")),
        _version("arista_eos"),
        _lldp("arista_eos", ("arista_eos-show-lldp-neighbors-detail-json-*.txt",)),
        Role("arista_eos", "lldp-text", "show lldp neighbors detail (text form)",
             "fabricd.nos.arista_eos.lldp.parse_show_lldp_neighbors", "audit cabling (reference)",
             ("readers/lldp/arista_eos-show-lldp-neighbors-detail-text-*.txt",)),
        # -- Cisco NX-OS --------------------------------------------------------------------------------------
        _sw("cisco_nxos", "pfc", "parse_show_interface_priority_flow_control",
            ("show-interface-priority-flow-control-*.txt",)),
        _sw("cisco_nxos", "pfc", "parse_show_interface_priority_flow_control", (), NXOS_PFC_JSON, form="json"),
        _sw("cisco_nxos", "queuing", "parse_show_queuing", ("show-queuing-interface-*-n9k-*.txt",)),
        _sw("cisco_nxos", "queuing", "parse_show_queuing", (), NXOS_QUEUING_JSON, form="json"),
        _sw("cisco_nxos", "pfcwd", "parse_show_queuing_pfc_queue", (), NXOS_PFCWD),
        _sw("cisco_nxos", "errors", "parse_show_interface_counters_errors",
            ("show-interface-counters-errors-*.txt",)),
        _sw("cisco_nxos", "transceiver", "parse_show_interface_transceiver_details"),
        _ref("cisco_nxos", "queuing-interface", "show queuing interface <port>", "parse_show_queuing_interface",
             ("show-queuing-interface-n5k-*.txt",)),
        _ref("cisco_nxos", "interface", "show interface <port>", "parse_show_interface", ("show-int-*.txt",)),
        _config("cisco_nxos", ("azurelocal-tor.txt",)),
        _version("cisco_nxos"),
        _lldp("cisco_nxos", ("cisco_nxos-show-lldp-neighbors-detail-*.txt",)),
        Role("cisco_nxos", "lldp-summary", "show lldp neighbors (summary table)",
             "fabricd.nos.cisco_nxos.lldp.parse_show_lldp_neighbors_detail", "audit cabling (reference)",
             ("readers/lldp/cisco_nxos-show-lldp-neighbors-multiline-*.txt",)),
        Role("cisco_nxos", "lldp-json", "show lldp neighbors detail | json",
             "fabricd.nos.cisco_nxos.lldp.parse_show_lldp_neighbors_detail", "audit cabling (reference)", (),
             "no device capture of the NX-API JSON: TABLE_nbor_detail/ROW_nbor_detail keys as public NX-API "
             "collectors read them; the text form is polled"),
        # -- NVIDIA Cumulus NVUE ------------------------------------------------------------------------------
        _sw("cumulus_nvue", "qos", "parse_counters_qos", (),
            "no public `-o json` capture: the golden is written from the text capture's columns"),
        _sw("cumulus_nvue", "qos", "parse_counters_qos", ("nv-show-interface-counters-qos-cl*-docs.txt",),
            form="text"),
        _sw("cumulus_nvue", "pfcwd", "parse_pfc_watchdog", ("nv-show-interface-qos-pfc-watchdog-*.txt",)),
        _sw("cumulus_nvue", "transceiver", "parse_nv_show_interface_transceiver"),
        _sw("cumulus_nvue", "flaps", "parse_nv_show_interface_counters_flaps"),
        _ref("cumulus_nvue", "qos-roce-counters", "nv show interface <port> qos roce counters",
             "parse_qos_roce_counters", ("nv-show-interface-qos-roce-counters-*.txt",)),
        _ref("cumulus_nvue", "counters-errors", "nv show interface <port> counters errors", "parse_counters_errors",
             ("nv-show-interface-counters-errors-*.txt",)),
        _ref("cumulus_nvue", "interface-counters-table", "nv show interface --view=counters (and cl-netstat)",
             "parse_interface_counters_table", ("nv-show-interface-view-counters-*.txt", "cl-netstat-*.txt")),
        _config("cumulus_nvue", (), LAB_ONLY + ": no public `nv config show -o commands` of a QoS config"),
        _version("cumulus_nvue"),
        _lldp("cumulus_nvue", ("cumulus_nvue-nv-show-interface-*-lldp-neighbor-*.txt",)),
    ]


def host_roles() -> list[Role]:
    """Every host reader format."""
    from fabricd.readers.ethtool_maps import DRIVER_NAMES

    prefixes = {"mlx5_core": "mlx5", "mlx4_en": "mlx4", "mlxsw_spectrum": "mlxsw"}
    ethtool = [
        _host(f"ethtool-S-{driver}", f"ethtool -S <if> (driver {driver})", "fabricd.readers.ethtool.normalise",
              (f"readers/ethtool/{prefixes.get(driver, driver)}-*.txt",), names.unverified)
        for driver, names in DRIVER_NAMES.items()
    ]
    return [
        *ethtool,
        _host("ethtool-S-unmapped", "ethtool -S <if> (a driver without a name map: raw names only)",
              "fabricd.readers.ethtool.parse_ethtool_stats", ("readers/ethtool/ethtool-S-*.txt",)),
        _host("ethtool-i", "ethtool -i <if>", "fabricd.readers.ethtool.parse_ethtool_info", (),
              "no real `ethtool -i` capture in tests/golden/readers (the replay roots write the documented "
              "`driver:`/`firmware-version:` lines)"),
        _host("sysfs-ib-counters", "/sys/class/infiniband/<dev>/ports/<p>/counters[_ext]",
              "fabricd.readers.rdma.read_rdma", ("readers/sysfs/node_exporter-sys", "readers/sysfs/procfs-testdata")),
        _host("sysfs-ib-hw_counters-mlx5", "/sys/class/infiniband/<mlx5 dev>/ports/<p>/hw_counters",
              "fabricd.readers.rdma.read_rdma",
              ("readers/sysfs/procfs-testdata", "readers/sysfs/mlx5_bond_0-show_counters-notes")),
        _host("sysfs-ib-hw_counters-rxe", "/sys/class/infiniband/<rxe dev>/ports/1/hw_counters",
              "fabricd.readers.rdma.read_rdma", ("traffic/rxe-clean", "traffic/rxe-lossy-udp")),
        _host("sysfs-gids", "/sys/class/infiniband/<dev>/ports/<p>/gids, gid_attrs/{types,ndevs}",
              "fabricd.readers.gids.list_gids", (),
              "no real gids tree: tests/golden/host builds one so that show_gids prints a quoted README output"),
        _host("sysfs-ecn", "/sys/class/net/<if>/ecn/roce_np|roce_rp/*", "fabricd.readers.nic_config.read_nic_config",
              ("host/net-class-eth0-ecn-procfs.txt",)),
        _host("configfs-rdma_cm", "/sys/kernel/config/rdma_cm/<dev>/ports/<p>/default_roce_tos|default_roce_mode",
              "fabricd.readers.nic_config.read_roce_tos", (),
              "no capture exists; written from the kernel ABI document (tests/golden/host/SOURCES.md)"),
        _host("perfquery", "perfquery -x / -l -x / -E", "fabricd.readers.perfquery.parse_perfquery",
              ("readers/perfquery/*.txt",), used_by="export ib"),
        _host("ibnetdiscover-ports", "ibnetdiscover --ports", "fabricd.readers.ibnetdiscover.parse_ibnetdiscover_ports",
              ("readers/ibnetdiscover/*.txt",), used_by="export ib"),
        _host("dcb-netlink", "DCB netlink RTM_GETDCB IEEE replies", "fabricd.hosts.dcbnl", ("dcb/ieee-get.txt",),
              used_by="host apply, audit host"),
        _host("rdma-statistic", "rdma statistic show (plain, wrapped, -p, qp show)",
              "fabricd.readers.rdma_stat.parse_rdma_statistic", ("readers/host_text/rdma-stat*.txt",),
              used_by="export host (bundles), audit host"),
        _host("rdma-statistic-json", "rdma -j statistic show", "fabricd.readers.rdma_stat.parse_rdma_statistic_json",
              (), "no device capture of the JSON form: the golden is reshaped from a text capture",
              used_by="reference"),
        _host("dcb-pfc-text", "dcb pfc show dev <if> [stats]", "fabricd.readers.dcb_text.parse_dcb_pfc",
              ("readers/host_text/dcb-pfc-*.txt",), used_by="audit host (bundles)"),
        _host("dcb-ets-text", "dcb ets show dev <if>", "fabricd.readers.dcb_text.parse_dcb_ets",
              ("readers/host_text/dcb-ets-*.txt",), used_by="audit host (bundles)"),
        _host("dcb-buffer-text", "dcb buffer show dev <if>", "fabricd.readers.dcb_text.parse_dcb_buffer",
              ("readers/host_text/dcb-buffer-*.txt",), used_by="reference"),
        _host("dcb-app-text", "dcb app show dev <if> dscp-prio", "fabricd.readers.dcb_text.parse_dcb_app",
              ("readers/host_text/dcb-app-*.txt",), used_by="audit host (bundles)"),
        _host("dcb-apptrust-text", "dcb apptrust show dev <if>", "fabricd.readers.dcb_apptrust.parse_dcb_apptrust",
              ("readers/host_text/dcb-apptrust-*.txt",), used_by="audit host (bundles)"),
        _host("mlnx_qos", "mlnx_qos -i <if>", "fabricd.readers.dcb_tools.parse_mlnx_qos",
              ("readers/host_text/mlnx_qos-*.txt",), used_by="audit host (bundles)"),
        _host("lldptool-ti", "lldptool -ti <if> (lldpad IEEE/CEE DCBX TLVs)",
              "fabricd.readers.dcb_tools.parse_lldptool",
              ("readers/host_text/lldptool-*.txt",), used_by="audit host (bundles)"),
        _host("niccli-qos", "niccli --dev N qos --ets --show (Broadcom firmware DCB)",
              "fabricd.readers.dcb_tools.parse_niccli_qos", ("readers/host_text/niccli-*.txt",),
              used_by="audit host (bundles)"),
        _host("dcb-maxrate-text", "dcb maxrate show dev <if>", "fabricd.readers.dcb_tools.parse_dcb_maxrate",
              ("readers/host_text/dcb-maxrate-*.txt",), used_by="audit host (bundles, notes)"),
        _host("dcb-dcbx-text", "dcb dcbx show dev <if>", "fabricd.readers.dcb_tools.parse_dcb_dcbx",
              ("readers/host_text/dcb-dcbx-*.txt",), used_by="audit host (bundles, notes)"),
        _host("show_gids-text", "show_gids", "fabricd.readers.gids.parse_show_gids",
              ("readers/host_text/show_gids-*.txt",), used_by="reference"),
        _host("ethtool-m", "ethtool -m <if> (SFF-8472 SFP, SFF-8636 QSFP; CMIS lane lines unverified)",
              "fabricd.readers.module.parse_ethtool_module", ("readers/host/ethtool-m-*.txt",),
              used_by="export host (link, replay roots)"),
        _host("ethtool-show-fec", "ethtool -I --show-fec <if>", "fabricd.readers.module.parse_ethtool_fec",
              ("readers/host/ethtool-show-fec-*.txt",), used_by="export host (link, replay roots)"),
        _host("lldpctl-text", "lldpctl / lldpcli show neighbors (text; SONiC show lldp neighbors)",
              "fabricd.readers.lldp.parse_lldpctl_text", ("readers/lldp/sonic-show-lldp-neighbors-*.txt",),
              used_by="audit cabling (the hosts' side)"),
        _host("lldpctl-json", "lldpctl -f json (or -f json0; lldpd)", "fabricd.readers.lldp.parse_lldpctl_json",
              ("readers/lldp/host-lldpctl-*.txt",), used_by="audit cabling (the hosts' side)"),
        _host("dcb-apptrust-json", "dcb -j apptrust show dev <if>", "fabricd.hosts.dcb", (),
              "no real capture of the fallback's JSON (kernels before 6.1 only)", used_by="host apply, audit host"),
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
