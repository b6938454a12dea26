"""expected.prom goldens of the collectors, each also checked by Debian's ``promtool check metrics``.

Cases:
- ``captures-host``: a replay root built only from real captures (ethtool text of mlx5, mlx4, bnxt_en, ice, i40e,
  ixgbe and virtio_net NICs; the procfs/node_exporter/show_counters sysfs trees; procfs' eth0 ECN tree);
- ``replay-mlx5``: two mlx5-like NICs from :class:`fabricd_lab.replay.ReplayHost`, driven with pause and traffic;
- ``switch-<platform>``: the switch collector over each platform's captures. The switch session here is a stand-in
  (:class:`CapturedSwitch`) that answers each show command with a real capture, because these exact outputs need
  no SSH; tests/integration/test_export_switches_lab.py drives the lab simulators over real SSH.

Durations come from an injected clock that never advances, so the goldens are stable.
Regenerate with ``pytest tests/golden/test_collectors_golden.py --update-goldens`` and review.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from capture_host import build_capture_host, strip_source

from fabricd.collectors.core import Registry, render
from fabricd.collectors.host import host_collectors
from fabricd.collectors.switch import SwitchCollector, SwitchPoller, SwitchTarget, commands_for
from fabricd_lab.replay import ReplayHost

HERE = Path(__file__).parent
READERS = HERE / "readers"
CASES = HERE / "collectors"
PROMTOOL = shutil.which("promtool")


def frozen_clock() -> float:
    return 0.0


def check_prom(case: str, text: str, update: bool) -> None:
    path = CASES / case / "expected.prom"
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"missing {path}; run pytest --update-goldens and review it"
    assert text == path.read_text(), f"{path} differs"
    # the exposition is byte for byte the golden, which test_goldens_pass_promtool checks with promtool


@pytest.mark.integration  # runs promtool check metrics
@pytest.mark.parametrize("case", sorted(p.parent.name for p in CASES.glob("*/expected.prom")))
def test_goldens_pass_promtool(case: str) -> None:
    """Every collector golden (each test above compares its exposition with one byte for byte) passes Debian's
    ``promtool check metrics``."""
    if PROMTOOL is None:
        pytest.skip("promtool not installed (Debian package prometheus; scripts/sysdeps.sh installs it)")
    text = (CASES / case / "expected.prom").read_text()
    res = subprocess.run(
        [PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60, check=False
    )
    assert res.returncode == 0, f"promtool check metrics failed for {case}:\n{res.stdout}{res.stderr}"


def test_captures_host(tmp_path: Path, update_goldens: bool) -> None:
    root = build_capture_host(tmp_path)
    registry = Registry(host_collectors(root, replay=True), clock=frozen_clock)
    check_prom("captures-host", registry.exposition(), update_goldens)


def test_replay_mlx5(tmp_path: Path, update_goldens: bool) -> None:
    host = ReplayHost.mlx5(tmp_path, 2, channels=2)
    host.build()
    host.pause("eth0", 3, direction="rx", frames=1200, duration_us=350_000, transitions=4)
    host.pause("eth1", 3, direction="tx", frames=40, duration_us=2_000)
    host.traffic("eth0", 3, direction="tx", packets=1000, packet_bytes=4096)
    host.hw_add("mlx5_0", "np_cnp_sent", 17)
    host.hw_add("mlx5_1", "rp_cnp_handled", 17)
    host.hw_add("mlx5_1", "np_ecn_marked_roce_packets", 17)
    host.add("eth1", "rx_out_of_buffer", 5)
    host.flush()
    registry = Registry(host_collectors(tmp_path, replay=True), clock=frozen_clock)
    check_prom("replay-mlx5", registry.exposition(), update_goldens)


class CapturedSwitch:
    """Stand-in switch session: answers each show command with a real capture (see the module docstring)."""

    def __init__(self, outputs: dict[str, str]) -> None:
        self.outputs = outputs
        self.closed = False

    def run(self, commands: list[str]) -> dict[str, str]:
        return {c: self.outputs[c] for c in commands}

    def close(self) -> None:
        self.closed = True


SWITCH_CASES: dict[str, tuple[SwitchTarget, dict[str, str]]] = {
    # real captures where they exist for the commands the exporter runs; the lab simulators' output (lab-*.txt,
    # tests/golden/readers/switch/capture_lab.py) for the forms no public capture has
    "sonic": (
        SwitchTarget("leaf-sonic", "sonic"),
        {
            "show pfc counters": "sonic/show-pfc-counters-ntc.txt",
            "show queue counters": "sonic/show-queue-counters-nonzero-drops-issue2393.txt",
            "show queue wredcounters": "sonic/show-queue-wredcounters-sonic-utilities-test.txt",
            "show pfcwd stats": "sonic/show-pfcwd-stats-and-pfc-counters-tx-z9332-issue9430.txt",
            "show pfc counters --history": "sonic/lab-pfc_history.txt",
            "show priority-group watermark shared": "sonic/pg_watermark_shared--sonic-utilities-test.txt",
            "show priority-group watermark headroom": "sonic/pg_watermark_headroom--masic-sonic-utilities-test.txt",
            "show queue watermark unicast": "sonic/queue_watermark_unicast--sonic-utilities-test.txt",
            "show queue watermark multicast": "sonic/queue_watermark_multicast--masic-sonic-utilities-test.txt",
            "show interfaces counters fec-stats": "sonic/fec--sonic-port-fec-ber-design-ctd615.txt",
            "show interfaces transceiver eeprom --dom": "sonic/transceiver--sonic-qsfpdd-cmis-design.txt",
            "show interfaces flap": "sonic/flaps--sonic-utilities-test.txt",
        },
    ),
    "arista_eos": (
        SwitchTarget("leaf-eos", "arista_eos"),
        {
            "show priority-flow-control counters detail | json": "arista_eos/lab-pfc.txt",
            "show interfaces counters queue detail": "arista_eos/show-interfaces-counters-queue-detail-egress-ntc.txt",
            "show qos interfaces ecn counters queue | json": "arista_eos/lab-ecn.txt",
            "show priority-flow-control counters watchdog | json": "arista_eos/lab-pfcwd.txt",
            "show interfaces counters discards | json": "arista_eos/discards--anta.txt",
            "show interfaces transceiver": "arista_eos/transceiver--ntc.txt",
            "show interfaces | json": "arista_eos/flaps--napalm.txt",
            "show interfaces phy detail | json": "arista_eos/show-interfaces-phy-detail-json-documented.txt",
        },
    ),
    "cisco_nxos": (
        SwitchTarget("leaf-nxos", "cisco_nxos"),
        {
            "show interface priority-flow-control": (
                "cisco_nxos/show-interface-priority-flow-control-n5k-mierdin-blog.txt"
            ),
            "show queuing interface": "cisco_nxos/show-queuing-interface-ingress-n9k-zartbot.txt",
            "show queuing pfc-queue detail | json": "cisco_nxos/lab-pfcwd.txt",
            "show interface counters errors": "cisco_nxos/show-interface-counters-errors-genieparser.txt",
            "show interface transceiver details": "cisco_nxos/transceiver--ntc-details.txt",
        },
    ),
    "cumulus_nvue": (
        SwitchTarget("leaf-nvue", "cumulus_nvue", ("swp1",)),
        {
            "nv show interface swp1 counters qos -o json": "cumulus_nvue/lab-qos.txt",
            "nv show interface swp1 qos pfc-watchdog": "cumulus_nvue/nv-show-interface-qos-pfc-watchdog-cl511-docs.txt",
            "nv show interface swp1 transceiver": "cumulus_nvue/transceiver--nvue-reference-docs.txt",
            "nv show interface swp1 counters": "cumulus_nvue/flaps--cl56-docs.txt",
            "nv show interface swp1 link phy-detail": "cumulus_nvue/fec--nvue-reference-docs.txt",
        },
    ),
}


@pytest.mark.parametrize("platform", sorted(SWITCH_CASES))
def test_switch_captures(platform: str, update_goldens: bool) -> None:
    target, files = SWITCH_CASES[platform]
    commands = [c for opt in (False, True) for _, c, _ in commands_for(target, optional=opt)]
    assert sorted(commands) == sorted(files), "the collector's commands changed"
    outputs = {cmd: strip_source((READERS / "switch" / rel).read_text()) for cmd, rel in files.items()}
    session = CapturedSwitch(outputs)
    poller = SwitchPoller([target], lambda t: session, clock=frozen_clock, wall=frozen_clock)
    try:
        registry = Registry([SwitchCollector(poller)], clock=frozen_clock)
        text = registry.exposition()
    finally:
        poller.close()
    assert session.closed
    assert f'fabricd_switch_up{{switch="{target.name}"}} 1' in text
    check_prom(f"switch-{platform}", text, update_goldens)


def test_render_roundtrip_through_prometheus_client(tmp_path: Path) -> None:
    """Our fast exposition parses back, series for series, with prometheus_client's own text parser."""
    from prometheus_client.parser import text_string_to_metric_families

    root = build_capture_host(tmp_path)
    families = Registry(host_collectors(root, replay=True), clock=frozen_clock).scrape()
    ours = {(f.spec.name, labels): float(v) for f in families for labels, v in f.samples}
    parsed = {}
    for fam in text_string_to_metric_families(render(families)):
        for s in fam.samples:
            spec = next(f.spec for f in families if f.spec.name == s.name)
            parsed[(s.name, tuple(s.labels[n] for n in spec.labels))] = s.value
    assert parsed == ours
