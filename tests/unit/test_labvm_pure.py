"""Soft-RoCE lab VM logic that needs no VM: apt source discovery, endpoint choice from the inventory, the guest setup
script, the qemu command line and the image recipe key. (Booting is tested in tests/lab, marker ``vm``.)"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from fabricd.errors import UsageError
from fabricd.inventory import load_inventory
from fabricd_lab.vm import apt, image, instance, qemu

REPO = Path(__file__).resolve().parents[2]

# This machine's own /etc/apt/sources.list.d/debian.sources (Debian 12 default layout).
DEBIAN_SOURCES = """\
Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
# http://snapshot.debian.org/archive/debian-security/20250520T000000Z
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""


def test_deb822_sources_give_the_mirror_and_keyring() -> None:
    found = apt.parse_deb822(DEBIAN_SOURCES, "debian.sources")
    assert [(s.uri, s.suites) for s in found] == [
        ("http://deb.debian.org/debian", ("bookworm", "bookworm-updates")),
        ("http://deb.debian.org/debian-security", ("bookworm-security",)),
    ]
    src = apt.pick_mirror(found, "bookworm")
    assert src.uri == "http://deb.debian.org/debian"
    assert src.signed_by == "/usr/share/keyrings/debian-archive-keyring.gpg"


def test_one_line_sources_and_a_full_etc_tree(tmp_path: Path) -> None:
    etc = tmp_path / "etc" / "apt"
    (etc / "sources.list.d").mkdir(parents=True)
    (etc / "sources.list").write_text(
        "# local mirror\ndeb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian/ trixie main contrib\n"
        "deb-src http://mirror.example/debian trixie main\n"
    )
    (etc / "sources.list.d" / "debian.sources").write_text(DEBIAN_SOURCES)
    (etc / "sources.list.d" / "off.sources").write_text(
        "Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\nComponents: main\nEnabled: no\n"
    )
    (tmp_path / "etc" / "os-release").write_text('ID=debian\nVERSION_CODENAME="bookworm"\n')
    found = apt.read_sources(tmp_path)
    assert [s.uri for s in found] == [
        "http://mirror.example/debian",
        "http://deb.debian.org/debian",
        "http://deb.debian.org/debian-security",
    ]
    assert found[0].signed_by == "/k.gpg" and found[0].components == ("main", "contrib")
    assert apt.host_codename(tmp_path) == "bookworm"
    assert apt.pick_mirror(found, "trixie").uri == "http://mirror.example/debian"
    with pytest.raises(UsageError, match="no apt source on this machine carries Debian 'sid' main") as err:
        apt.pick_mirror(found, "sid")
    assert "--mirror" in err.value.render()


def test_non_debian_host_has_no_codename(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "os-release").write_text("ID=fedora\nVERSION_CODENAME=\n")
    assert apt.host_codename(tmp_path) is None


def test_default_pair_crosses_leaves_and_plays_the_inventory() -> None:
    fabric = load_inventory(REPO / "inventory" / "lab").fabric
    a, b = instance.endpoints_for(fabric)
    assert (a.host, b.host) == ("gpu1", "gpu3")  # gpu2 shares gpu1's leaf
    assert (a.netdev, a.rdma_device, a.vlan, a.ip_netdev, a.ip) == (
        "ens1f0np0",
        "mlx5_0",
        100,
        "ens1f0np0.100",
        "10.100.0.11/16",
    )
    assert a.peer_ip == "10.100.0.13" and b.peer_ip == "10.100.0.11" and a.mac != b.mac


def test_explicit_hosts_and_their_errors() -> None:
    fabric = load_inventory(REPO / "inventory" / "lab").fabric
    assert [e.host for e in instance.endpoints_for(fabric, ["gpu5", "gpu2"])] == ["gpu5", "gpu2"]
    with pytest.raises(UsageError, match="host 'gpu9' is not in the inventory"):
        instance.endpoints_for(fabric, ["gpu1", "gpu9"])
    with pytest.raises(UsageError, match="the lab has two endpoints"):
        instance.endpoints_for(fabric, ["gpu1"])


def test_setup_script_builds_the_host_with_quoting_and_a_route_across_subnets() -> None:
    fabric = load_inventory(REPO / "inventory" / "examples" / "softroce.yml").fabric
    a, _ = instance.endpoints_for(fabric)
    script = instance.setup_script(a)
    assert "modprobe rdma_rxe" in script and "modprobe 8021q" in script
    assert "ip link add link eth0 name eth0.100 type vlan id 100" in script
    assert "ip addr add 198.18.100.1/24 dev eth0.100" in script
    assert "rdma link add rxe0 type rxe netdev eth0" in script
    assert "want_gid=0000:0000:0000:0000:0000:ffff:c612:6401" in script
    assert "ip route add" not in script  # the peer is in the same /24
    far = replace(a, peer_ip="10.9.9.9")
    assert "ip route add 10.9.9.9/32 dev eth0.100" in instance.setup_script(far)
    untagged = replace(a, vlan=None, ip_netdev="eth0")
    assert "type vlan" not in instance.setup_script(untagged)


def test_qemu_command_line(tmp_path: Path) -> None:
    img = image.Image(tmp_path / "img", {"key": "k"})
    spec = qemu.VmSpec(role="a", hostname="rxe-a", mac="52:54:00:fd:00:0a", run_dir=tmp_path, wire="stream", wire_fd=7)
    argv = qemu.qemu_argv(spec, img)
    line = " ".join(argv)
    assert argv[:1] == ["qemu-system-x86_64"] and "-accel tcg -cpu max -smp 1 -m 1024" in line
    assert f"file={img.rootfs},format=raw,if=virtio,snapshot=on" in line
    assert "clocksource=tsc tsc=reliable" in line and "init=/sbin/fabricd-init fabricd.name=rxe-a" in line
    assert "socket,id=n0,fd=7" in line and "virtio-net-pci,netdev=n0,mac=52:54:00:fd:00:0a,host_mtu=9000" in line
    assert "virtserialport,chardev=qga0,name=org.qemu.guest_agent.0" in line
    udp = qemu.qemu_argv(
        replace(spec, wire="udp", wire_fd=None, wire_local_port=4001, wire_peer_port=4002, accel="kvm"), img
    )
    assert "socket,id=n0,udp=127.0.0.1:4002,localaddr=127.0.0.1:4001" in " ".join(udp) and "host" in udp


def test_recipe_key_follows_what_goes_into_the_image() -> None:
    r = image.ImageRecipe(
        suite="bookworm",
        mirror="http://deb.debian.org/debian",
        keyring=None,
        python_requirements=("pydantic==2.0",),
        guest_files_sha="abc",
    )
    assert r.key() == replace(r).key() and len(r.key()) == 12
    assert r.key() != replace(r, packages=(*r.packages, "tcpdump")).key()
    assert r.key() != replace(r, guest_files_sha="abd").key()
    assert "python3-pyverbs" in r.packages and "qemu-guest-agent" in r.packages


def test_fabricd_requirements_are_pinned_to_what_runs_here() -> None:
    reqs = image.fabricd_requirements()
    assert any(r.startswith("pydantic==") for r in reqs) and all("==" in r or ">=" in r for r in reqs)


def test_copy_fabricd_tree_ships_code_and_data(tmp_path: Path) -> None:
    pkg = image.copy_fabricd_tree(tmp_path)
    assert (pkg / "traffic" / "engine.py").is_file() and not (pkg / "lab").exists()
    assert (pkg / "_data" / "inventory" / "lab" / "hosts.yml").is_file()
    assert any((pkg / "traffic" / "__pycache__").glob("engine.cpython-311*.pyc"))


@pytest.mark.integration  # binds loopback UDP ports
def test_udp_ports_are_distinct() -> None:
    a, b = qemu.free_udp_ports(2)
    assert a != b and a > 0 and b > 0


class _ScriptedChannel:
    """The agent's side of the channel as recv() hands it over, one chunk per call: a stand-in for the VM's
    virtio-serial port, which only the VM tier has (recv boundaries are what the bug depended on)."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.sent = b""

    def sendall(self, data: bytes) -> None:
        self.sent += data

    def recv(self, _size: int) -> bytes:
        return self.chunks.pop(0) if self.chunks else b""


def test_guest_agent_sync_skips_earlier_sessions_answers(tmp_path: Path) -> None:
    """The agent answers syncs queued while it was starting, each after its own 0xFF sentinel, before this session's
    answer; a sentinel arriving in a later recv than the first made the sync crash with UnicodeDecodeError and failed
    the VM tier's boot. The sync must skip those answers and anything that is not JSON, and return on its own id."""
    from fabricd_lab.vm.qga import GuestAgent

    agent = GuestAgent(tmp_path / "qga.sock", name="rxe-a")
    expected = (agent._sync_id + 1) & 0x3FFFFFFF
    channel = _ScriptedChannel(
        [
            b'\xff{"return": 11}\n',
            b'\xff{"return": 12}\n\xffnot json\n\n',
            b'\xff{"return": ' + str(expected).encode() + b"}\n",
        ]
    )
    agent._sync(channel)  # type: ignore[arg-type]
    assert channel.sent.startswith(b'\xff{"execute": "guest-sync-delimited"')
    assert channel.chunks == []  # it read up to its own answer


def test_guest_agent_sync_fails_on_a_closed_channel(tmp_path: Path) -> None:
    from fabricd_lab.vm.qga import AgentError, GuestAgent

    with pytest.raises(AgentError, match="closed the connection during sync"):
        GuestAgent(tmp_path / "qga.sock", name="rxe-a")._sync(_ScriptedChannel([b'\xff{"return": 1}\n']))  # type: ignore[arg-type]
