"""Shards of the switches (``--shard K/N``, fabricd/inventory/shard.py) over 200 simulated switches.

The 200 switches are a generated inventory: the lab fabric's six switches (SONiC, EOS, NX-OS, NVUE) copied under 200
names. Each is a fabricd-lab simulator (its own counter model and CLI, driven in-process through its shell, no SSH:
200 SSH servers would be the costly part and prove nothing about sharding), recorded by ``fabricd capture``'s own
code into one replay folder per switch. The replicas are real ``fabricd export switches --replay`` processes: two
with ``--once``, then two serving /metrics that a real Prometheus (Debian's) scrapes, relabelling every series with
its own ``hashmod`` of the switch name, so Prometheus itself judges that each replica exports exactly the switches
whose hashmod is its shard."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.parse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml
from wdhelpers import get, wait_for

from fabricd.capture import capture_all
from fabricd.inventory import load_inventory
from fabricd.inventory.shard import hashmod
from fabricd.model import Switch
from fabricd_lab.device import Shell
from fabricd_lab.runtime import spec_for, switch_class

pytestmark = [pytest.mark.integration, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
FABRICD = str(Path(sys.executable).with_name("fabricd"))
PROMETHEUS = shutil.which("prometheus")
N_SWITCHES = 200


class ShellDriver:
    """A capture driver over a fabricd-lab simulator's shell, in-process (the simulator's CLI, no SSH)."""

    def __init__(self, switch: Switch) -> None:
        self.sim = switch_class(switch.platform)(spec_for(switch, password="unused", port=0))
        self.shell: Shell | None = None

    def open(self) -> None:
        self.shell = self.sim.open_shell()

    def close(self) -> None:
        self.shell = None

    def run(self, commands: list[str]) -> dict[str, str]:
        assert self.shell is not None
        return {c: self.shell.handle(c).output for c in commands}

    def get_config(self) -> str:
        return self.sim.running_config()


def generated_switches(count: int, start: int = 0) -> list[Switch]:
    """``count`` switches of the lab fabric's platforms under generated names (``rack017-leaf2-eos``...)."""
    lab = load_inventory(REPO / "inventory" / "lab").fabric.switches
    return [
        lab[i % len(lab)].model_copy(update={"name": f"rack{i:03d}-{lab[i % len(lab)].name}"})
        for i in range(start, start + count)
    ]


def capture(switches: Sequence[Switch], out: Path) -> None:
    results = capture_all(switches, out, ShellDriver)
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]


def export_once(replay: Path, shard: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    argv = [FABRICD, "export", "switches", "--replay", str(replay), "--once", "--output", "json"]
    if shard:
        argv += ["--shard", shard]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def up_switches(proc: subprocess.Popen[str]) -> list[str]:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    rows = json.loads(out)
    up = [r for r in rows if r["name"] == "fabricd_switch_up"]
    assert all(r["value"] == 1 for r in up), [r for r in up if r["value"] != 1]
    return [r["labels"]["switch"] for r in up]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fleet200")
    capture(generated_switches(N_SWITCHES), out)
    return out


def test_two_shards_export_every_switch_exactly_once(fleet: Path) -> None:
    procs = [export_once(fleet, f"{k}/2") for k in range(2)]  # both replicas run at the same time
    shards = [up_switches(p) for p in procs]
    names = [s.name for s in generated_switches(N_SWITCHES)]
    assert sorted(shards[0] + shards[1]) == sorted(names)  # every switch, none twice
    assert not set(shards[0]) & set(shards[1])
    assert all(shards) and min(len(s) for s in shards) > N_SWITCHES // 4  # a split, not one replica doing it all
    for k, mine in enumerate(shards):
        assert all(hashmod(n, 2) == k for n in mine)
    # the same split from FABRICD_SHARD, as a StatefulSet without args would set it
    env = {**os.environ, "FABRICD_SHARD": "1/2"}
    assert sorted(up_switches(export_once(fleet, "", env))) == sorted(shards[1])


def test_adding_a_switch_moves_no_other_switch(fleet: Path, tmp_path: Path) -> None:
    before = {k: set(up_switches(export_once(fleet, f"{k}/3"))) for k in range(3)}
    grown = tmp_path / "grown"
    shutil.copytree(fleet, grown)
    (new,) = generated_switches(1, start=N_SWITCHES)
    capture([new], grown)
    after = {k: set(up_switches(export_once(grown, f"{k}/3"))) for k in range(3)}
    changed = {k: after[k] ^ before[k] for k in range(3)}
    assert {n for c in changed.values() for n in c} == {new.name}  # only the new switch's assignment is new
    assert new.name in after[hashmod(new.name, 3)]


@pytest.mark.skipif(PROMETHEUS is None, reason="prometheus not installed (Debian package prometheus)")
def test_prometheus_hashmod_agrees_with_each_replica(
    fleet: Path, tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    """Two serving replicas scraped by a real Prometheus that relabels each series with its own hashmod of the
    switch name (``shard_by_prometheus``) next to the replica's shard (``replica``): they must be equal for every
    switch, and every switch must be up exactly once."""
    ports = [reserve_port() for _ in range(2)]
    prom_port = reserve_port()
    cfg = {
        "global": {"scrape_interval": "2s", "scrape_timeout": "2s", "evaluation_interval": "2s"},
        "scrape_configs": [
            {
                "job_name": "fabricd-switches",
                "static_configs": [
                    {"targets": [f"127.0.0.1:{p}"], "labels": {"replica": str(k)}} for k, p in enumerate(ports)
                ],
                "metric_relabel_configs": [
                    {
                        "source_labels": ["switch"],
                        "action": "hashmod",
                        "modulus": 2,
                        "target_label": "shard_by_prometheus",
                    }
                ],
            }
        ],
    }
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(cfg))
    procs: list[subprocess.Popen[bytes]] = []
    logs = [tmp_path / f"replica{k}.log" for k in range(2)] + [tmp_path / "prometheus.log"]
    try:
        for k, port in enumerate(ports):
            procs.append(
                subprocess.Popen(
                    [
                        FABRICD,
                        "export",
                        "switches",
                        "--replay",
                        str(fleet),
                        "--listen",
                        f"127.0.0.1:{port}",
                        "--scrape-wait",
                        "1.5",
                        "--shard",
                        f"{k}/2",
                    ],
                    stdout=logs[k].open("w"),
                    stderr=subprocess.STDOUT,
                )
            )
        procs.append(
            subprocess.Popen(
                [
                    PROMETHEUS,
                    f"--config.file={tmp_path / 'prometheus.yml'}",
                    f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                    f"--web.listen-address=127.0.0.1:{prom_port}",
                ],
                stdout=logs[2].open("w"),
                stderr=subprocess.STDOUT,
            )
        )
        prom = f"http://127.0.0.1:{prom_port}"

        def query(expr: str) -> list[dict[str, Any]]:
            try:
                code, body = get(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
            except OSError:  # Prometheus still starting
                return []
            return list(json.loads(body)["data"]["result"]) if code == 200 else []

        def all_up() -> bool:
            res = query("count(fabricd_switch_up == 1)")
            return bool(res) and res[0]["value"][1] == str(N_SWITCHES)

        assert wait_for(all_up, 120, 1.0), "\n".join(p.read_text()[-1500:] for p in logs)
        per_switch = query("count by (switch) (fabricd_switch_up)")
        assert len(per_switch) == N_SWITCHES and all(r["value"][1] == "1" for r in per_switch)
        rows = query("fabricd_switch_up")
        assert len(rows) == N_SWITCHES
        assert all(r["metric"]["shard_by_prometheus"] == r["metric"]["replica"] for r in rows), [
            r["metric"] for r in rows if r["metric"]["shard_by_prometheus"] != r["metric"]["replica"]
        ][:5]
        assert {r["metric"]["replica"] for r in rows} == {"0", "1"}
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


def test_serve_polls_only_its_shard_of_the_inventory(tmp_path: Path) -> None:
    """`fabricd serve --shard K/N` on the lab inventory (its switches are not running: each is polled and fails,
    which is enough to see which ones this replica polls); three replicas together poll each switch once."""
    inv = REPO / "inventory" / "lab"
    names = [s.name for s in load_inventory(inv).fabric.switches]
    polled: list[list[str]] = []
    for k in range(3):
        res = subprocess.run(
            [
                FABRICD,
                "serve",
                str(inv),
                "--shard",
                f"{k}/3",
                "--no-drift",
                "--duration",
                "1.5",
                "--listen",
                "127.0.0.1:0",  # the test never connects: the OS picks
                "--switch-timeout-s",
                "0.5",
                "--output",
                "json",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=tmp_path,
        )
        assert res.returncode == 0, res.stderr[-2000:]
        mine = sorted(s["name"] for s in json.loads(res.stdout)["switches"])
        assert f"shard {k}/3: {len(mine)} of {len(names)} switches" in res.stderr
        assert mine == sorted(n for n in names if hashmod(n, 3) == k)
        polled.append(mine)
    assert sorted(n for p in polled for n in p) == sorted(names)
