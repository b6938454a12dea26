"""One-shot SSH fan-out audit over namespace hosts: ``fabricd audit host --hosts all`` against an Ansible ad-hoc run
of the same audit command over the same hosts, same run (Debian's ansible-core, OpenSSH client, pipelining on).

24 namespace hosts (a network namespace with the NIC netdev on a veth pair, plus a fake mlx5 sysfs/configfs tree
from real captures: tests/integration/nshost.py), each behind its own SSH server on 127.0.0.1 (asyncssh, its own
host key, verified by both sides from one known_hosts file: tests/integration/sshhosts.py). Each host's environment
names its namespace and tree (FABRICD_NETNS, FABRICD_ROOT), so the command run on every host is the same for both
tools: ``fabricd audit host INVENTORY --host NAME --skip vlan,dcb --output json``. The hosts are first brought to
their intent with ``fabricd host apply --hosts all`` (timed once, reported).

Both run with 24 at a time (fabricd --concurrency, ansible -f), alternating, 3 runs each; value and anchor are
hosts per second (median). Every run must return every host's audit JSON. Needs root and ansible-core
(``scripts/sysdeps.sh bench``).

Run from the repo root: ``python bench/fleet_fanout.py``. The last line is the JSON result.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import asyncssh
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "integration"))

from nshost import NsHost, can_netns  # noqa: E402
from sshhosts import SshHosts  # noqa: E402

from fabricd import settings  # noqa: E402
from fabricd.intent.host import host_intent  # noqa: E402
from fabricd.inventory import load_inventory  # noqa: E402

HOSTS = 24
RUNS = 3
FABRICD = str(Path(sys.executable).with_name("fabricd"))


def make_inventory(dst: Path) -> list[str]:
    """The lab inventory with HOSTS hosts (the extra ones like the lab's, on no switch port)."""
    shutil.copytree(settings.default_inventory(), dst)
    doc = yaml.safe_load((dst / "hosts.yml").read_text())
    for i in range(len(doc["hosts"]), HOSTS):
        doc["hosts"].append(
            {
                "name": f"gpu{i + 1}",
                "groups": ["gpu"],
                "nics": [{"netdev": "ens1f0np0", "rdma_device": "mlx5_0", "ip": f"10.100.1.{i + 1}/16"}],
            }
        )
    (dst / "hosts.yml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return [h["name"] for h in doc["hosts"]][:HOSTS]


def main() -> None:
    why = can_netns()
    ansible = shutil.which("ansible")
    if why or ansible is None:
        sys.exit(f"bench/fleet_fanout.py: {why or 'needs ansible-core (scripts/sysdeps.sh bench)'}")
    work = Path(tempfile.mkdtemp(prefix="fabricd-bench-fanout-"))
    hosts: list[NsHost] = []
    try:
        inv = work / "inventory"
        names = make_inventory(inv)
        fabric = load_inventory(inv).fabric
        key = asyncssh.generate_private_key("ssh-ed25519")
        ident = work / "id_ed25519"
        ident.write_bytes(key.export_private_key())
        ident.chmod(0o600)
        with SshHosts(key.export_public_key("openssh").decode(), work) as ssh:
            ports = {}
            for name in names:
                h = NsHost.create(host_intent(fabric, name), work)
                hosts.append(h)
                env = dict(
                    os.environ,
                    FABRICD_NETNS=h.ns,
                    FABRICD_ROOT=str(h.root),
                    FABRICD_STATE_DIR=str(work / "state" / name),
                    FABRICD_APPLY_LOCK_DIR=str(work / "lock"),
                )
                ports[name] = ssh.add(name, env).port
            doc = yaml.safe_load((inv / "hosts.yml").read_text())
            for h in doc["hosts"]:
                if h["name"] in ports:
                    h["mgmt"] = {"host": "127.0.0.1", "port": ports[h["name"]]}
            (inv / "hosts.yml").write_text(yaml.safe_dump(doc, sort_keys=False))
            known = ssh.known_hosts(work / "known_hosts")
            selector = ",".join(names)
            common = [
                str(inv),
                "--hosts",
                selector,
                "--known-hosts",
                str(known),
                "--identity",
                str(ident),
                "--remote-inventory",
                str(inv),
                "--remote-fabricd",
                FABRICD,
                "--skip",
                "vlan,dcb",
                "--concurrency",
                str(HOSTS),
                "--output",
                "json",
            ]
            t0 = time.perf_counter()
            res = subprocess.run([FABRICD, "host", "apply", *common], capture_output=True, text=True, check=False)
            apply_s = time.perf_counter() - t0
            if res.returncode != 0:
                sys.exit("apply fan-out failed: " + res.stderr[-2000:])

            (work / "hosts.ini").write_text(
                "[fleet]\n" + "".join(f"{n} ansible_host=127.0.0.1 ansible_port={ports[n]}\n" for n in names)
            )
            aenv = dict(
                os.environ,
                ANSIBLE_PIPELINING="1",
                ANSIBLE_HOST_KEY_CHECKING="True",
                ANSIBLE_SSH_ARGS=f"-o UserKnownHostsFile={known} -o StrictHostKeyChecking=yes "
                "-o ControlMaster=auto -o ControlPersist=60s",
                ANSIBLE_PYTHON_INTERPRETER="/usr/bin/python3",
                ANSIBLE_LOCAL_TEMP=str(work / "ansible-tmp"),
                ANSIBLE_REMOTE_TEMP=str(work / "ansible-remote"),
                ANSIBLE_NOCOLOR="1",
                ANSIBLE_STDOUT_CALLBACK="oneline",
                ANSIBLE_GATHERING="explicit",
            )
            cmd = f"{FABRICD} audit host {inv} --host {{{{ inventory_hostname }}}} --skip vlan,dcb --output json"
            fab_t, ans_t = [], []
            for _ in range(RUNS):
                t0 = time.perf_counter()
                res = subprocess.run([FABRICD, "audit", "host", *common], capture_output=True, text=True, check=False)
                fab_t.append(time.perf_counter() - t0)
                data = json.loads(res.stdout)
                ok = sum(1 for r in data["hosts"] if r["state"] == "ok")
                if res.returncode != 0 or ok != HOSTS:
                    sys.exit(f"fabricd fan-out audit: {ok}/{HOSTS} ok: {res.stderr[-2000:]}")
                t0 = time.perf_counter()
                res = subprocess.run(
                    [
                        ansible,
                        "fleet",
                        "-i",
                        str(work / "hosts.ini"),
                        "-u",
                        "root",
                        "--private-key",
                        str(ident),
                        "-f",
                        str(HOSTS),
                        "-m",
                        "command",
                        "-a",
                        cmd,
                    ],
                    capture_output=True,
                    text=True,
                    env=aenv,
                    check=False,
                )
                ans_t.append(time.perf_counter() - t0)
                done = len(re.findall(r'"target": "gpu\d+"', res.stdout.replace('\\"', '"')))
                if res.returncode != 0 or done != HOSTS:
                    sys.exit(
                        f"ansible audit: {done}/{HOSTS} answered (rc {res.returncode}): "
                        f"{res.stdout[-1500:]} {res.stderr[-1500:]}"
                    )
        fab, ans = statistics.median(fab_t), statistics.median(ans_t)
        value, anchor = HOSTS / fab, HOSTS / ans
        print(
            f"fan-out audit of {HOSTS} namespace hosts: fabricd {fab:.2f} s ({value:.1f} hosts/s; runs "
            f"{', '.join(f'{t:.1f}' for t in fab_t)}), ansible {ans:.2f} s ({anchor:.1f} hosts/s; runs "
            f"{', '.join(f'{t:.1f}' for t in ans_t)}); apply fan-out {apply_s:.1f} s",
            file=sys.stderr,
        )
        print(
            json.dumps(
                {
                    "bench": "fleet_fanout",
                    "value": round(value, 2),
                    "unit": "hosts/s",
                    "anchor": "ansible ad-hoc (ansible-core 2.14, command module, pipelining, same forks) of "
                    "the same audit command over the same hosts",
                    "anchor_value": round(anchor, 2),
                    "ratio": round(value / anchor, 2),
                    "hosts": HOSTS,
                    "fabricd_runs_s": [round(t, 2) for t in fab_t],
                    "ansible_runs_s": [round(t, 2) for t in ans_t],
                    "apply_fanout_s": round(apply_s, 2),
                    "load_average_1m": round(os.getloadavg()[0], 2),
                }
            )
        )
    finally:
        for h in hosts:
            h.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
