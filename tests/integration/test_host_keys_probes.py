"""Host-key probes of issue 15 that broke something, against the lab's SSH server (EOS simulator on 127.0.0.1,
netmiko/paramiko -> asyncssh)."""

from __future__ import annotations

from pathlib import Path

import paramiko
import pytest
from switchlab import switch_lab
from test_host_keys import NAME, OTHER_KEY, access, connect, host_name

from fabricd.errors import DriverError

pytestmark = pytest.mark.integration


def test_accept_new_never_joins_its_line_onto_an_unterminated_last_line(tmp_path: Path) -> None:
    """``--accept-new-host-keys FILE`` whose last line had no newline (a hand edit, ``echo -n``): the new key was
    appended onto that line, rewriting it into garbage that paramiko skips. The host it named became *unknown*, so
    the next accept-new run trusted whatever key an impostor showed for it."""
    with switch_lab(tmp_path, [NAME]) as lab:
        tofu = tmp_path / "tofu_known_hosts"
        kept = f"other.example {OTHER_KEY}"  # no final newline
        tofu.write_text(kept)
        connect(lab, access(lab, (), accept_new=tofu))
        lines = tofu.read_text().splitlines()
        assert lines[0] == kept, "the existing line was rewritten"
        assert len(lines) == 2 and lines[1].startswith(host_name(lab) + " ")
        # both entries parse: other.example is still known (a changed key for it fails, it is not "new")
        keys = paramiko.HostKeys(str(tofu))
        assert keys.lookup("other.example") is not None and keys.lookup(host_name(lab)) is not None
        connect(lab, access(lab, (tofu,)))


def test_a_known_hosts_file_that_is_not_utf8_is_named_as_such(tmp_path: Path) -> None:
    """It surfaced as "logged in ... but the CLI did not answer as arista_eos ('utf-8' codec can't decode ...)":
    paramiko's UnicodeDecodeError is a ValueError, which the driver reads as a CLI mismatch."""
    with switch_lab(tmp_path, [NAME]) as lab:
        bad = tmp_path / "kh"
        bad.write_bytes(b"\xff\xfe " + f"{host_name(lab)} {OTHER_KEY}\n".encode())
        with pytest.raises(DriverError) as info:
            connect(lab, access(lab, (bad,)))
        text = str(info.value)
        assert f"known_hosts {bad} cannot be read: not UTF-8" in text and "did not answer" not in text


def test_host_names_match_known_hosts_case_insensitively_like_openssh(tmp_path: Path) -> None:
    """OpenSSH lowercases the host name before it looks it up (and hashes it lowercased). fabricd compared it as
    written: with ``mgmt.host: LOCALHOST`` a key recorded for ``localhost`` went unseen, the device counted as
    *unknown*, and ``--accept-new-host-keys`` trusted whatever key it showed, an impostor's included."""
    from fabricd.platforms.access import Access
    from fabricd.platforms.registry import make_driver
    from fabricd.platforms.secrets import Secret

    with switch_lab(tmp_path, [NAME]) as lab:
        sw = lab.switches[NAME]
        known = tmp_path / "known"
        known.write_text(f"[localhost]:{sw.mgmt.port} {OTHER_KEY}\n")  # not the device's key: an impostor case
        tofu = tmp_path / "tofu"
        upper = sw.model_copy(update={"mgmt": sw.mgmt.model_copy(update={"host": "LOCALHOST"})})
        acc = Access(
            NAME,
            "LOCALHOST",
            sw.mgmt.port,
            sw.credentials.username,
            Secret(lab.password),
            (known,),
            accept_new_host_keys=tofu,
        )
        drv = make_driver(upper, acc)
        with pytest.raises(DriverError, match="does not match"):
            drv.open()
        assert not tofu.exists() or tofu.read_text() == ""


def test_a_mismatch_in_a_later_file_is_found_before_the_password_is_sent(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """paramiko checks the first entry, *authenticates*, and only then did fabricd compare the other files: when the
    first file held the key the server showed and a later file another one, the password had already gone to that
    server (an impostor, if the later file is right). OpenSSH refuses before authenticating."""
    import logging

    caplog.set_level(logging.DEBUG, logger="paramiko")
    with switch_lab(tmp_path, [NAME]) as lab:
        wrong = tmp_path / "wrong"
        wrong.write_text(f"{host_name(lab)} {OTHER_KEY}\n")
        with pytest.raises(DriverError, match="does not match"):
            connect(lab, access(lab, (lab.known_hosts, wrong)))
    auth = [r.getMessage() for r in caplog.records if "Authentication" in r.getMessage()]
    assert auth == [], auth


def _device_key_line(lab: object) -> str:
    """The lab device's own key as 'type base64' (from the lab's known_hosts file)."""
    kh = lab.known_hosts.read_text().split()  # type: ignore[attr-defined]
    return f"{kh[1]} {kh[2]}"


def test_a_revoked_key_is_refused_even_on_first_use(tmp_path: Path) -> None:
    """paramiko drops ``@revoked`` lines unread: the revoked key of a host no file lists by name was simply
    'unknown', and ``--accept-new-host-keys`` trusted and recorded it. OpenSSH refuses a revoked key always."""
    with switch_lab(tmp_path, [NAME]) as lab:
        revoked = tmp_path / "revoked"
        revoked.write_text(f"@revoked * {_device_key_line(lab)}\n")
        tofu = tmp_path / "tofu"
        with pytest.raises(DriverError, match="@revoked"):
            connect(lab, access(lab, (revoked,), accept_new=tofu))
        assert not tofu.exists()
        with pytest.raises(DriverError, match="@revoked"):  # listed by name elsewhere: still revoked
            connect(lab, access(lab, (lab.known_hosts, revoked)))
        hashed = tmp_path / "revoked-hashed"  # a hashed host field (ssh-keygen -H) names it too
        hashed.write_text(f"@revoked {paramiko.HostKeys.hash_host(host_name(lab))} {_device_key_line(lab)}\n")
        with pytest.raises(DriverError, match="@revoked"):
            connect(lab, access(lab, (lab.known_hosts, hashed)))


def test_host_pattern_entries_are_compared_like_openssh(tmp_path: Path) -> None:
    """``[127.0.0.?]:*``-style entries were invisible to paramiko's literal lookup: a pattern holding another key
    was no obstacle to ``--accept-new-host-keys``, and a pattern holding the right key did not count as known."""
    with switch_lab(tmp_path, [NAME]) as lab:
        port = lab.switches[NAME].mgmt.port
        wrong = tmp_path / "wrong-pattern"
        wrong.write_text(f"[127.0.0.?]:{port} {OTHER_KEY}\n")
        tofu = tmp_path / "tofu"
        with pytest.raises(DriverError, match="does not match"):
            connect(lab, access(lab, (wrong,), accept_new=tofu))
        assert not tofu.exists()
        right = tmp_path / "right-pattern"
        right.write_text(f"[127.0.0.*]:{port},!bastion {_device_key_line(lab)}\n")
        connect(lab, access(lab, (right,)))  # known through the pattern: no refusal, nothing written
        negated = tmp_path / "negated"
        negated.write_text(f"[127.0.0.*]:{port},![127.0.0.1]:{port} {_device_key_line(lab)}\n")
        with pytest.raises(DriverError, match="unknown"):
            connect(lab, access(lab, (negated,)))


def test_marker_and_undecodable_lines_are_skipped_not_fatal(tmp_path: Path) -> None:
    """paramiko's HostKeys.load raised InvalidHostKey on the first line it could not decode (an ``@cert-authority``
    line, common in managed ~/.ssh/known_hosts, or a truncated key), so every connection failed with an internal
    error. OpenSSH skips such lines; so does fabricd, and the good lines still verify."""
    with switch_lab(tmp_path, [NAME]) as lab:
        mixed = tmp_path / "mixed"
        mixed.write_text(
            f"@cert-authority *.example.net {OTHER_KEY}\n"
            f"truncated.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA3D\n"
            f"{host_name(lab)} {_device_key_line(lab)}\n"
        )
        connect(lab, access(lab, (mixed,)))
