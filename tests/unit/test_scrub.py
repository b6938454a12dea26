"""The capture scrubber (fabricd/readers/switch/scrub.py) on real config lines: every secret goes, every other
character stays.

Real lines in tests/golden/scrub/ (public GitHub files in the code index, by file id, quoted verbatim; each file's
first line names them):
- NX-OS 9.3(3) `show running-config` of dc-lif-01 (file id 2697865097): username hash, SNMPv3 user keys;
- NX-OS 9.3(10) Spine_02 (file id 7899298275): the same SNMPv3 line wrapped by the terminal, `localizedV2key`;
- vEOS-lab EOS-4.27.3F brm-leaf-001 (file id 33692069872) and vEOS EOS-4.32.2F DCI-2 (file id 17258429017):
  `username ... secret sha512 $6$...`;
- cEOSLab EOS-4.25.5M leaf4 (file id 45527656537): TerminAttr's `-cvauth=key,` (not a secret; must stay);
- IOSv config (file id 36320922617): `snmp-server community public RO`;
- an NVUE provisioning script (file id 49166947958): `nv set system aaa user cumulus password cumulus`.
Written from documentation, not captured (no public capture found): the NX-OS TACACS+ line (the running-config
form `tacacs-server host 10.10.1.10 key 7 <encrypted-string>` a public guide documents, file id 59777679193), the
NVUE `hashed-password` line (NVIDIA's documented `nv set system aaa user <username> hashed-password <password>`)
and the SONiC CONFIG_DB TACPLUS/RADIUS/SNMP_COMMUNITY rows (field names from sonic-buildimage's YANG models
sonic-system-tacacs/radius and sonic-snmp: `passkey`, SNMP_COMMUNITY keyed by the community).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabricd.readers.switch.scrub import REDACTED, scrub, scrub_text

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def _capture(name: str) -> str:
    return (GOLDEN / "scrub" / name).read_text().partition("\n")[2]


NXOS = _capture("nxos-9.3.3-dc-lif-01.txt")
NXOS_WRAPPED = _capture("nxos-9.3.10-spine-02-wrapped.txt")
EOS = _capture("eos-4.27-4.32-users.txt")
SECRETS = [
    "$5$TMpxKPov$Yjw1tbCD70N5kPVD7DeiNsBvjMUG854cRuu9D0uhvY6",
    "0x1efb138d6c1c3484b18ae65ad9714254",
    "$5$LAFMGC$.o7EDHC9gbsMuUMS4NcxtqlXbgFC9L76BPdL95kbFvC",
    "056AB029D8C9D291C7DDD6F878C3FE3C77",
    "056FF824DA9DF8DB86F583B366C8F0276184",
    "$6$z.TJkV2efu34lwMM$3eZg0Xqi1I6PtVfmFyjHFvRDAs8k7EQx0w",
    "$6$arista$hvhzPKMNzxDEPi2",
]


@pytest.mark.parametrize("text", [NXOS, NXOS_WRAPPED, EOS], ids=["nxos", "nxos-wrapped", "eos"])
def test_cli_config_secrets_go_and_the_rest_stays(text: str) -> None:
    out = scrub(text)
    for secret in SECRETS:
        assert secret not in out.text
    assert out.redactions >= 2
    assert len(out.text.splitlines()) == len(text.splitlines())
    kept = [a for a, b in zip(text.splitlines(), out.text.splitlines(), strict=True) if a == b]
    for line in text.splitlines():
        if not any(s[:12] in line for s in SECRETS):
            assert line in kept, f"a line without a secret changed: {line!r}"


def test_line_shapes_are_kept() -> None:
    out = scrub(NXOS).text.splitlines()
    assert out[1] == f"username admin password 5 {REDACTED}  role network-admin"
    assert out[4] == (f"snmp-server user admin network-admin auth md5 {REDACTED} priv {REDACTED} localizedkey")
    eos = scrub(EOS).text
    assert f"username admin role network-admin secret sha512 {REDACTED}\n" in eos
    assert "-cvauth=key, -cvvrf=MGMT" in eos


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("snmp-server community public RO", "public"),
        ("nv set system aaa user cumulus password cumulus", "cumulus\n"),
        ("tacacs-server host 10.10.1.10 key 7 0835495D1D", "0835495D1D"),
        ('radius-server host 10.1.1.1 key 7 "05080F1C2243"', "05080F1C2243"),
        ("nv set system aaa user admin hashed-password '$6$rounds=5000$abc$def'", "$6$rounds"),
        ("nv set service snmp-server readonly-community s3cret access any", "s3cret"),
        ("nv set system aaa tacacs server 1 secret t4cacs", "t4cacs"),
        ("ntp authentication-key 1 md5 k3yMaterial 7", "k3yMaterial"),
    ],
)
def test_secret_lines(line: str, secret: str) -> None:
    out = scrub_text(line + "\n").text
    assert secret not in out and REDACTED in out, out


def test_qos_lines_are_untouched() -> None:
    """What fabricd parses carries none of the keywords: the lab's pushed configs scrub to themselves."""
    for path in sorted((GOLDEN / "switch_config").glob("*/lab-pushed.txt")):
        text = path.read_text().partition("\n")[2]
        assert scrub(text).text == text, path


def test_sonic_config_db_secrets() -> None:
    db = {
        "TACPLUS": {"global": {"auth_type": "pap", "passkey": "gl0bal", "timeout": "5"}},
        "TACPLUS_SERVER": {"10.0.0.9": {"priority": "1", "tcp_port": "49", "passkey": "s3rver"}},
        "RADIUS": {"global": {"passkey": "r4dius"}},
        "SNMP_COMMUNITY": {"c0mmunity": {"TYPE": "RO"}},
        "PORT": {"Ethernet0": {"mtu": "9100", "description": "key password community"}},
    }
    text = json.dumps(db, indent=4)
    out = scrub(text)
    for secret in ("gl0bal", "s3rver", "r4dius", "c0mmunity"):
        assert secret not in out.text
    back = json.loads(out.text)
    assert back["PORT"] == db["PORT"] and back["TACPLUS"]["global"]["timeout"] == "5"
    assert out.redactions == 4


def test_capture_checks_that_scrubbing_keeps_the_parse() -> None:
    """fabricd capture compares what the parsers read before and after scrubbing (a difference is noted in the
    manifest): on real configs with secrets the lossless settings read are the same."""
    from fabricd.capture import Step, same_parse
    from fabricd.inventory import load_inventory

    fabric = load_inventory(Path(__file__).resolve().parents[2] / "inventory" / "lab").fabric
    nxos, eos = fabric.switch("leaf3-nxos"), fabric.switch("leaf2-eos")
    assert nxos is not None and eos is not None
    step = Step("running-config", "show running-config", None, True)
    for switch, text in ((nxos, NXOS), (nxos, NXOS_WRAPPED), (eos, EOS)):
        out = scrub(text)
        assert out.redactions and same_parse(switch, step, text, out.text)
    pushed = (GOLDEN / "switch_config" / "cisco_nxos" / "lab-pushed.txt").read_text().partition("\n")[2]
    assert same_parse(nxos, step, NXOS + pushed, scrub(NXOS + pushed).text)
    assert not same_parse(nxos, step, pushed, "")  # the check does see a difference
