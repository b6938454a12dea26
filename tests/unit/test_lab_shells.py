"""The simulated CLIs without SSH: each NOS's prompts, error wording and change mechanism."""

from __future__ import annotations

from collections.abc import Callable

from fabricd.model import Platform
from fabricd_lab.device import DeviceSpec
from fabricd_lab.eos import EosSwitch
from fabricd_lab.faults import parse_fault
from fabricd_lab.nvue import NvueSwitch
from fabricd_lab.nxos import NxosSwitch
from fabricd_lab.sonic import SonicSwitch

G400 = 400_000_000_000


class Timers:
    """Stands in for the lab's event loop: timers fire when the test says so."""

    def __init__(self) -> None:
        self.pending: list[tuple[float, Callable[[], None]]] = []

    def schedule(self, delay: float, fn: Callable[[], None]) -> Timers:
        self.pending.append((delay, fn))
        return self

    def cancel(self) -> None:
        self.pending.clear()

    def fire(self) -> None:
        for _, fn in self.pending:
            fn()
        self.pending.clear()


def spec(platform: Platform, ports: tuple[str, ...], faults: tuple[str, ...] = ()) -> DeviceSpec:
    return DeviceSpec(
        "sw1",
        platform,
        password="x",
        ports=tuple((p, G400) for p in ports),
        faults=tuple(parse_fault(f"sw1:{f}") for f in faults),
    )


def test_eos_prompts_terminal_and_invalid_input_wording() -> None:
    sh = EosSwitch(spec(Platform.ARISTA_EOS, ("Ethernet1",))).open_shell()
    assert sh.prompt() == "sw1#"
    assert sh.handle("terminal length 0").output == "Pagination disabled."
    assert sh.handle("terminal width 511").output == "Width set to 511 columns."
    assert sh.handle("frobnicate").output == "% Invalid input"
    assert sh.handle("show frobs").output == "% Invalid input (at token 1: 'frobs')"
    sh.handle("configure terminal")
    sh.handle("interface Et1")
    assert sh.prompt() == "sw1(config-if-Et1)#"
    assert sh.handle("mtu 99999").output == "% Invalid input (at token 1: '99999')"
    assert sh.handle("random-detect ecn").output == "% Invalid input"  # not an interface command
    assert sh.handle("tx-queue").output == "% Incomplete command"
    sh.handle("end")
    assert "interface Ethernet1" in sh.handle("show running-config").output


def test_eos_session_diff_abort_commit_and_commit_timer() -> None:
    sw = EosSwitch(spec(Platform.ARISTA_EOS, ("Ethernet1",)))
    timers = Timers()
    sw.schedule = timers.schedule  # type: ignore[method-assign, assignment]
    sh = sw.open_shell()
    before = sw.running_config()
    sh.handle("configure session s1")
    assert sh.prompt() == "sw1(config-s-s1)#"
    sh.handle("interface Ethernet1")
    sh.handle("mtu 9000")
    diff = sh.handle("show session-config diffs").output
    assert "--- system:/running-config" in diff and "+   mtu 9000" in diff
    assert sw.running_config() == before, "nothing applies before commit"
    sh.handle("abort")
    assert sh.prompt() == "sw1#" and sw.running_config() == before
    sh.handle("configure session s2")
    sh.handle("interface Ethernet1")
    sh.handle("mtu 9000")
    sh.handle("commit timer 00:00:05")
    assert "mtu 9000" in sw.running_config()
    assert "pendingCommitTimer" in sh.handle("show configuration sessions").output
    timers.fire()  # nobody confirmed
    assert sw.running_config() == before
    sh.handle("configure session s3")
    sh.handle("interface Ethernet1")
    sh.handle("mtu 9100")
    sh.handle("commit timer 00:01:00")
    assert sh.handle("configure session s3 commit").output == ""
    timers.fire()
    assert "mtu 9100" in sw.running_config()
    sh.handle("configure checkpoint save cp")
    sh.handle("configure")
    sh.handle("interface Ethernet1")
    sh.handle("no mtu")
    sh.handle("end")
    assert "mtu" not in sw.running_config()
    sh.handle("configure replace checkpoint:cp")
    assert "mtu 9100" in sw.running_config()


def test_eos_faults_reject_and_commit_fails() -> None:
    sh = EosSwitch(spec(Platform.ARISTA_EOS, ("Ethernet1",), ("reject-line=^mtu", "commit-fails"))).open_shell()
    sh.handle("configure session s")
    sh.handle("interface Ethernet1")
    assert sh.handle("mtu 9000").output.startswith("% Invalid input")
    assert sh.handle("commit").output.startswith("% Failed to commit")


def test_nxos_caret_checkpoint_rollback_patch() -> None:
    sw = NxosSwitch(spec(Platform.CISCO_NXOS, ("Ethernet1/1",)))
    sh = sw.open_shell()
    assert sh.prompt() == "sw1# "
    assert sh.handle("configure terminal").output.startswith("Enter configuration commands")
    sh.handle("interface e1/1")
    assert sh.prompt() == "sw1(config-if)# "
    out = sh.handle("mtu 12").output.splitlines()
    assert out[1] == "% Invalid command at '^' marker."
    assert out[0].index("^") == len("sw1(config-if)# mtu ")
    sh.handle("end")
    assert sh.handle("checkpoint cp1").output.endswith("Done")
    assert "already in use" in sh.handle("checkpoint cp1").output
    sh.handle("configure terminal")
    sh.handle("interface Ethernet1/1")
    sh.handle("mtu 9216")
    sh.handle("end")
    patch = sh.handle("show diff rollback-patch running-config checkpoint cp1").output
    assert "no mtu 9216" in patch
    assert sh.handle("rollback running-config checkpoint cp1").output.endswith("Rollback completed successfully.")
    assert "mtu 9216" not in sw.running_config()


def test_sonic_bash_gcu_and_cli_lines() -> None:
    sw = SonicSwitch(spec(Platform.SONIC, ("Ethernet0",)))
    sh = sw.open_shell()
    assert sh.prompt() == "admin@sw1:~$ "
    assert sh.handle("config interface mtu Ethernet0 9216").output == "Root privileges are required for this operation"
    assert sh.handle("frob").output == "-bash: frob: command not found"
    assert sh.handle("sudo config checkpoint cp").output.endswith("Checkpoint created successfully.")
    assert sh.handle("sudo config interface mtu Ethernet0 9216").output == ""
    assert sw.db["PORT"]["Ethernet0"]["mtu"] == "9216"
    import base64
    import json

    patch = base64.b64encode(json.dumps([{"op": "add", "path": "/PORT/Ethernet0/mtu", "value": "99999"}]).encode())
    sh.handle(f"echo '{patch.decode()}' | base64 -d > /tmp/p.json")
    out = sh.handle("sudo config apply-patch --dry-run /tmp/p.json").output
    assert "Failed to apply patch due to: Given patch will produce invalid config" in out and "out of range" in out
    assert sh.handle("sudo config rollback cp").output.endswith("Config rolled back successfully.")
    assert sw.db["PORT"]["Ethernet0"]["mtu"] == "9100"
    assert "Error: Checkpoint 'nope' does not exist" in sh.handle("sudo config rollback nope").output
    assert sh.handle("sudo -s").output == "" and sh.prompt() == "root@sw1:/home/admin# "


def test_nvue_pending_diff_apply_confirm_and_revert() -> None:
    sw = NvueSwitch(spec(Platform.CUMULUS_NVUE, ("swp1",)))
    timers = Timers()
    sw.schedule = timers.schedule  # type: ignore[method-assign, assignment]
    sh = sw.open_shell()
    assert sh.prompt() == "admin@sw1:mgmt:~$ "
    assert sh.handle("nv set interface swp1 link mtu 9216").output == ""
    assert "Error: Invalid Command" in sh.handle("nv set qos frob 1").output
    diff = sh.handle("nv config diff").output
    assert diff.startswith("- set:") and "mtu: '9216'" in diff
    assert sh.handle("nv config apply").output.startswith("Warning")
    assert sh.prompt() == "Are you sure? [y/N] "
    assert sh.handle("y").output == "applied [rev_id: 2]"
    sh.handle("nv set interface swp1 link mtu 1500")
    assert sh.handle("nv config apply --confirm 30s -y").output.startswith("applied [rev_id: 3]")
    assert "link mtu 1500" in sw.running_config()
    timers.fire()
    assert "link mtu 9216" in sw.running_config(), "an unconfirmed apply reverts"
    sh.handle("nv unset interface swp1 link mtu")
    sh.handle("nv config apply -y")
    assert "mtu" not in sw.running_config()
    assert sh.handle("nv config apply 2 -y").output.startswith("applied")
    assert "link mtu 9216" in sw.running_config()
    assert "ref: '2'" in sh.handle("nv config history").output
