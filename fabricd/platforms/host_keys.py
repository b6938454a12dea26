"""Host-key verification for every SSH client fabricd opens: the switch drivers (netmiko, through
:mod:`fabricd.platforms.netmiko_base`) and the host fan-out and SSH traffic runner (paramiko directly, through
:mod:`fabricd.deploy.hostfanout`). One rule for both:

- the device's key is compared with **every** entry for the host in **every** consulted known_hosts file (the
  OpenSSH ``UserKnownHostsFile`` list), before authenticating; a different key in any file is a
  :class:`HostKeyMismatch` naming that file (a match in another file does not outweigh it);
- ``@revoked`` keys and host-pattern entries, which paramiko skips, are checked as OpenSSH does
  (:mod:`fabricd.platforms.known_hosts`); hashed names (``ssh-keygen -H``) are compared by their HMAC;
- a host no file knows is refused (:class:`HostKeyUnknown`), or, for trust on first use, appended to one named file;
- with verification off nothing is read or written.

:func:`refusal` words a refused key the same way on both sides (what, and the ``ssh-keygen -R`` fix).
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
from pathlib import Path
from typing import Any

import paramiko

from fabricd.safepath import open_private

from .known_hosts import KnownHostsExtras, read_known_hosts

log = logging.getLogger(__name__)


def _quiet_paramiko() -> None:
    """paramiko's transport thread logs each failure (a traceback at ERROR, line by line) and has no handler of its
    own, so with logging unconfigured Python's last-resort handler printed them on stderr beside fabricd's own
    error. A NullHandler stops that only: where the caller configured logging, the records still propagate."""
    logger = logging.getLogger("paramiko")
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())


class HostKeyMismatch(paramiko.BadHostKeyException):  # type: ignore[misc]
    """The device's key differs from the one a known_hosts file holds for it (OpenSSH: "REMOTE HOST IDENTIFICATION
    HAS CHANGED"). Raised whichever consulted file holds the other key."""

    def __init__(self, hostname: str, got: paramiko.PKey, expected: paramiko.PKey, path: str) -> None:
        super().__init__(hostname, got, expected)
        self.path = path


class HostKeyRevoked(HostKeyMismatch):
    """The device shows a key that a consulted known_hosts file marks ``@revoked`` (OpenSSH refuses it always)."""


class HostKeyUnknown(paramiko.SSHException):  # type: ignore[misc]
    """No consulted known_hosts file knows the host, and no pattern entry holds its key (OpenSSH refuses it)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"Server {name!r} not found in known_hosts")  # netmiko_base matches this text
        self.name = name


def known_name(hostname: str, port: int) -> str:
    """The name OpenSSH files a host under: ``host`` on port 22, ``[host]:port`` otherwise."""
    return hostname if port == 22 else f"[{hostname}]:{port}"


class _AcceptUnchecked(paramiko.MissingHostKeyPolicy):  # type: ignore[misc]
    """``--insecure-no-host-key-check``: accept any key, check nothing, remember and write nothing."""

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        return None


def _ends_unterminated(path: Path) -> bool:
    """Whether ``path`` is non-empty and its last byte is not a newline."""
    with open(path, "rb") as fh:
        if fh.seek(0, os.SEEK_END) == 0:
            return False
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) != b"\n"


class _RejectUnknown(paramiko.MissingHostKeyPolicy):  # type: ignore[misc]
    """The default: a host that no consulted file knows is refused, unless a host pattern entry holds its key."""

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        if isinstance(client, VerifyingClient) and client.fabricd_vouched(hostname, key):
            return
        raise HostKeyUnknown(hostname)


class _AcceptNewInto(paramiko.MissingHostKeyPolicy):  # type: ignore[misc]
    """OpenSSH's ``StrictHostKeyChecking=accept-new`` into one named file: a host that no consulted file knows is
    accepted and its key *appended* to ``path`` (created 0600; existing lines are never rewritten)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        if isinstance(client, VerifyingClient) and client.fabricd_vouched(hostname, key):
            return  # a host pattern entry (*.lab) holds this key: known, nothing to add
        line = f"{hostname} {key.get_name()} {key.get_base64()}\n"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open_private(self.path, "a") as fh:
            if _ends_unterminated(self.path):  # never join onto (and so rewrite) a last line without a newline
                line = "\n" + line
            fh.write(line)
        log.warning(
            "accepted the new host key of %s (%s %s) into %s", hostname, key.get_name(), key.fingerprint, self.path
        )


class VerifyingClient(paramiko.SSHClient):  # type: ignore[misc]
    """An SSHClient that checks the device's key against **every** consulted known_hosts file, as OpenSSH's
    UserKnownHostsFile list does, and never saves a key on its own.

    paramiko's own ``load_host_keys`` merges files so that the first file naming a host wins (a wrong key in a
    later file goes unseen), and remembers the last file loaded so that ``AutoAddPolicy`` rewrites it. Here the
    files are only read: the merged table steers key negotiation (a known key type is asked for first), paramiko
    compares the first entry, and then, before authenticating (the password is not sent to a refused key), every
    file's entry for the host is compared too; any difference is a :class:`HostKeyMismatch`. ``@revoked`` keys and
    host-pattern entries, which paramiko skips, are checked as OpenSSH does (:mod:`fabricd.platforms.known_hosts`).
    An unknown host goes to the policy: reject (the default), accept into an explicitly named file, or, with
    verification off, accept without reading or writing any file.
    """

    def __init__(self, known_hosts: tuple[Path, ...], *, verify: bool, accept_new: Path | None = None) -> None:
        super().__init__()
        _quiet_paramiko()
        self.fabricd_files: list[tuple[str, paramiko.HostKeys]] = []
        self.fabricd_extras = KnownHostsExtras()
        """@revoked keys and host-pattern entries, which paramiko's HostKeys skips."""
        if verify:
            for path in (*known_hosts, *((accept_new,) if accept_new else ())):
                if not path.exists():
                    continue
                try:
                    keys, text = read_known_hosts(path)
                except OSError as exc:
                    raise paramiko.SSHException(f"known_hosts {path} cannot be read: {exc}") from exc
                except UnicodeDecodeError:  # a ValueError: netmiko's caller would take it for a CLI problem
                    raise paramiko.SSHException(f"known_hosts {path} cannot be read: not UTF-8 text") from None
                self.fabricd_files.append((str(path), keys))
                self.fabricd_extras.load(path, text)
                for entry in keys._entries:
                    self._host_keys._entries.append(entry)
        self._host_keys_filename = None  # nothing is ever saved by paramiko itself
        self.fabricd_verify = verify
        self.fabricd_name = ""
        """The name the host is filed under in known_hosts (``host`` or ``[host]:port``), set by :meth:`connect`."""
        self.fabricd_mismatch: HostKeyMismatch | None = None
        """Set when the key did not match (netmiko re-raises every SSHException as a timeout, losing the file)."""
        if not verify:
            self.set_missing_host_key_policy(_AcceptUnchecked())
        elif accept_new is not None:
            self.set_missing_host_key_policy(_AcceptNewInto(accept_new))
        else:
            self.set_missing_host_key_policy(_RejectUnknown())

    def connect(self, hostname: str, port: int = 22, *args: Any, **kwargs: Any) -> None:
        # OpenSSH looks host names up (and hashes them) lowercased; paramiko compares them as given, so a device
        # written "LEAF1" would miss its "leaf1" entry and count as unknown (then accept-new trusts any key)
        hostname = hostname.lower()
        name = self.fabricd_name = known_name(hostname, port)
        try:
            super().connect(hostname, port, *args, **kwargs)
        except paramiko.BadHostKeyException as exc:  # paramiko compared the first entry: name its file
            if exc is self.fabricd_mismatch:
                raise
            where = next(
                (
                    path
                    for path, keys in self.fabricd_files
                    for entry in keys._entries
                    if entry.key == exc.expected_key and _names_host(entry, name)
                ),
                "known_hosts",
            )
            self.fabricd_mismatch = HostKeyMismatch(name, exc.key, exc.expected_key, where)
            raise self.fabricd_mismatch from None

    def _auth(self, *args: Any, **kwargs: Any) -> Any:
        """paramiko calls this right after its own (first-entry) host key check: every other consulted file is
        compared here, *before* the password is sent, as OpenSSH does."""
        if self.fabricd_verify:
            transport = self.get_transport()
            if transport is None:  # pragma: no cover - connect() reached _auth without a transport
                raise paramiko.SSHException("no SSH transport before authentication")
            key = transport.get_remote_server_key()
            for path, keys in self.fabricd_files:
                for entry in keys._entries:
                    if entry.key.get_name() != key.get_name() or not _names_host(entry, self.fabricd_name):
                        continue
                    if entry.key != key:
                        self.close()
                        self.fabricd_mismatch = HostKeyMismatch(self.fabricd_name, key, entry.key, path)
                        raise self.fabricd_mismatch
            self.fabricd_vouched(self.fabricd_name, key)
        return super()._auth(*args, **kwargs)

    def fabricd_vouched(self, name: str, key: paramiko.PKey) -> bool:
        """What OpenSSH also reads: a ``@revoked`` key is refused (:class:`HostKeyRevoked`), a host pattern entry
        with another key is a :class:`HostKeyMismatch`; True when a pattern entry holds this key."""
        revoked = self.fabricd_extras.revoked_in(name, key.get_name(), key.get_base64())
        if revoked is not None:
            self.close()
            self.fabricd_mismatch = HostKeyRevoked(name, key, key, revoked)
            raise self.fabricd_mismatch
        verdict = self.fabricd_extras.pattern_verdict(name, key.get_name(), key.get_base64())
        if verdict is None:
            return False
        ok, entry = verdict
        if not ok:
            self.close()
            try:
                expected = paramiko.PKey.from_type_string(entry.key_type, base64.b64decode(entry.key_b64))
            except (ValueError, paramiko.SSHException, binascii.Error):
                expected = key  # an unreadable pattern line: still a mismatch, named by its file
            self.fabricd_mismatch = HostKeyMismatch(name, key, expected, entry.path)
            raise self.fabricd_mismatch
        return True


def _names_host(entry: paramiko.hostkeys.HostKeyEntry, name: str) -> bool:
    for pattern in entry.hostnames:
        if pattern.startswith("|1|"):
            if paramiko.HostKeys.hash_host(name, pattern) == pattern:
                return True
        elif pattern == name:
            return True
    return False


def refusal(exc: HostKeyMismatch, host: str, port: int) -> tuple[str, str]:
    """``(what, hint)`` for a refused key: ``what`` follows "host key of HOST" (e.g. "does not match the one in FILE
    (possible impostor; got ..., expected ...)"), ``hint`` says how to fix it."""
    if isinstance(exc, HostKeyRevoked):
        return (
            f"is marked @revoked in {exc.path} (got {exc.key.get_name()} {exc.key.fingerprint})",
            "the device must get a new host key; add the new, verified key to known_hosts",
        )
    return (
        f"does not match the one in {exc.path} (possible impostor; got {exc.key.get_name()} "
        f"{exc.key.fingerprint}, expected {exc.expected_key.fingerprint})",
        f"if the device was reinstalled, remove its old line from {exc.path} "
        f"(`ssh-keygen -R '{known_name(host, port)}' -f {exc.path}`) and add the new, verified key",
    )
