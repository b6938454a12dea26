"""The netmiko session shared by all drivers: verified host keys, fast prompt waits, bulk config, error mapping.

netmiko settings (measured against the lab simulators): ``fast_cli=True`` and ``global_delay_factor=1`` keep login at
~0.3 s; ``cmd_verify`` stays on wherever netmiko's own send paths are used. Commands are written with
``write_channel`` and read back with ``read_channel`` until the prompt regex matches; instead of netmiko's 10 ms
sleep-poll loop the driver waits on the paramiko channel with ``select`` so it wakes the moment data arrives
(no busy polling across dozens of threads). Config lines go in bursts of ``chunk_lines``; the reply to each line is
cut out by counting prompts, and every line's reply is checked against the platform's error pattern, so a rejected
line is never silent (netmiko PR #1609). After an error the session leaves config mode.
"""

from __future__ import annotations

import contextlib
import logging
import re
import select
import time
from abc import abstractmethod
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar, Literal, TypeVar

import paramiko
from netmiko import BaseConnection
from netmiko.exceptions import NetmikoAuthenticationException, NetmikoBaseException, NetmikoTimeoutException
from netmiko.ssh_dispatcher import CLASS_MAPPER

from fabricd.errors import DriverError
from fabricd.model import Platform, Switch
from fabricd.safepath import inside, open_private

from .access import Access
from .base import Capabilities, ConfigDelta, ConnectionLostError, DriverOptions
from .host_keys import HostKeyMismatch, VerifyingClient, refusal
from .secrets import REDACTOR, install_redaction

log = logging.getLogger(__name__)
T = TypeVar("T")


def _mismatch_of(conn: Any) -> HostKeyMismatch | None:
    client = getattr(conn, "fabricd_client", None)
    return client.fabricd_mismatch if isinstance(client, VerifyingClient) else None


class _VerifiedHostKeys:
    """netmiko connection mixin: verify the device's host key against every known_hosts file (VerifyingClient);
    fail fast when the device closes the session (netmiko would otherwise poll an empty channel until its
    read timeout)."""

    fabricd_known_hosts: tuple[Path, ...] = ()
    fabricd_verify: bool = True
    fabricd_accept_new: Path | None = None
    fabricd_client: VerifyingClient | None = None
    fabricd_lines_sent: int = 0
    """Lines written so far (each one is answered by a prompt), netmiko's own session preparation included."""
    fabricd_raw: list[str] | None = None
    """While a list: everything read from the channel is appended, once (netmiko re-serves data from its own read
    buffer, so ``read_channel`` may return some twice): the session preparation, to count the prompts it got."""
    remote_conn: Any

    def read_channel(self) -> str:
        data: str = super().read_channel()  # type: ignore[misc]
        chan = self.remote_conn
        if not data and chan is not None and (chan.closed or chan.eof_received):
            raise EOFError("the device closed the SSH session")
        return data

    def establish_connection(self, width: int = 511, height: int = 1000) -> None:
        """netmiko's, then the channel's reads are recorded while :attr:`fabricd_raw` is a list."""
        super().establish_connection(width, height)  # type: ignore[misc]
        channel = self.channel  # type: ignore[attr-defined]
        raw_read = channel.read_channel

        def counted() -> str:
            data: str = raw_read()
            if data and self.fabricd_raw is not None:
                self.fabricd_raw.append(data)
            return data

        channel.read_channel = counted

    def write_channel(self, out_data: str) -> None:
        self.fabricd_lines_sent += out_data.count("\n") + out_data.count("\r") - out_data.count("\r\n")
        super().write_channel(out_data)  # type: ignore[misc]

    def _build_ssh_client(self) -> paramiko.SSHClient:
        self.fabricd_client = VerifyingClient(
            self.fabricd_known_hosts, verify=self.fabricd_verify, accept_new=self.fabricd_accept_new
        )
        return self.fabricd_client


_CLASSES: dict[str, type[BaseConnection]] = {}


def connection_class(device_type: str) -> type[BaseConnection]:
    """netmiko's class for ``device_type`` with host-key verification mixed in (cached)."""
    cls = _CLASSES.get(device_type)
    if cls is None:
        base = CLASS_MAPPER[device_type]
        cls = type(f"Fabricd{base.__name__}", (_VerifiedHostKeys, base), {})
        _CLASSES[device_type] = cls
    return cls


class NetmikoDriver:
    """Base of the four platform drivers. Subclasses name their pack's patterns module (:meth:`__init_subclass__`),
    set ``platform`` and ``capabilities`` and implement the change verbs."""

    platform: ClassVar[Platform]
    device_type: ClassVar[str]
    capabilities: ClassVar[Capabilities]
    error_pattern: ClassVar[re.Pattern[str]]
    checkpoint_name: ClassVar[str] = "fabricd-last"
    running_config_mark: ClassVar[re.Pattern[str] | None] = None
    """What every running config of the platform contains (the pack's ``patterns.RUNNING_CONFIG_MARK``): a read
    without it is a failed read (:meth:`plausible_config`), never an empty config to diff against."""
    running_config_rule: ClassVar[str] = ""
    rollback_token: str | None = None
    """Platform state a fresh connection needs to roll back what this one started (NVUE: the revision applied
    before the push). The pipeline copies it to the new driver when it reconnects to recover."""

    def __init_subclass__(cls, patterns: ModuleType | None = None, **kwargs: Any) -> None:
        """A platform driver names its pack's quirks module (``class EosDriver(NetmikoDriver, patterns=patterns)``):
        the netmiko device type, the error pattern, the running-config mark and its rule and the checkpoint name
        (``CHECKPOINT``, where the pack has one) are read from it, so each is written once, in the pack's
        patterns.py."""
        super().__init_subclass__(**kwargs)
        if patterns is not None:
            cls.device_type = patterns.DEVICE_TYPE
            cls.error_pattern = patterns.ERROR
            cls.running_config_mark = patterns.RUNNING_CONFIG_MARK
            cls.running_config_rule = patterns.RUNNING_CONFIG_RULE
            cls.checkpoint_name = getattr(patterns, "CHECKPOINT", cls.checkpoint_name)

    def __init__(self, switch: Switch, access: Access, options: DriverOptions | None = None) -> None:
        self.switch = switch
        self.name = switch.name
        self.access = access
        self.options = options or DriverOptions()
        self.conn: Any = None
        self.prompt_re: re.Pattern[str] = re.compile(r"[#>$]\s*$")
        self.any_prompt_re: re.Pattern[str] = self.prompt_re
        self._owed = 0
        """Prompts of earlier lines still due (a read that timed out): the next read skips them first."""
        self._late_seen = 0
        """Prompts the last read that timed out had seen."""

    @property
    def connected(self) -> bool:
        """A session is open."""
        return self.conn is not None

    # -- session -------------------------------------------------------------------------------------------------

    def open(self) -> None:
        install_redaction()
        a = self.access
        cls = connection_class(self.device_type)
        params: dict[str, Any] = {
            "device_type": self.device_type,
            "host": a.host,
            "port": a.port,
            "username": a.username,
            "password": a.password.reveal(),
            "fast_cli": True,
            "conn_timeout": self.options.conn_timeout_s,
            "auth_timeout": self.options.conn_timeout_s,
            "banner_timeout": self.options.conn_timeout_s,
            "read_timeout_override": None,
            "allow_agent": False,
            "use_keys": False,
            "auto_connect": False,
        }
        if self.options.session_log_dir is not None:
            params["session_log"] = str(self._session_log(self.options.session_log_dir))
        conn: Any = None
        try:
            conn = cls(**params)
            conn.fabricd_known_hosts = a.known_hosts
            conn.fabricd_verify = a.verify_host_key
            conn.fabricd_accept_new = a.accept_new_host_keys
            conn.fabricd_raw = []
            conn._open()
        except NetmikoAuthenticationException:
            raise DriverError(
                self.name,
                "connect",
                f"authentication failed for user {a.username} at {a.host}:{a.port}",
                hint=f"check the password ({a.password_source or 'no source'}); for the lab, `fabricd lab status`",
            ) from None
        except (HostKeyMismatch, NetmikoTimeoutException) as error:
            exc = error if isinstance(error, HostKeyMismatch) else _mismatch_of(conn)
            if exc is None:
                raise self._connect_error(str(error)) from None
            what, hint = refusal(exc, a.host, a.port)
            raise DriverError(self.name, "connect", f"host key of [{a.host}]:{a.port} {what}", hint=hint) from None
        except (OSError, paramiko.SSHException, EOFError) as exc:
            raise self._connect_error(str(exc)) from None
        except (NetmikoBaseException, ValueError) as exc:
            # netmiko's session preparation: no prompt (ReadTimeout) or an unexpected one (ValueError)
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.disconnect()
            first = str(exc).strip().splitlines()
            raise DriverError(
                self.name,
                "connect",
                f"logged in to [{a.host}]:{a.port} but the CLI did not answer as {self.device_type} "
                f"({first[0] if first else type(exc).__name__})",
                hint="the session dropped during login, or the device is not this platform; check `platform:` "
                "in the inventory and the session log",
            ) from None
        self.conn = conn
        try:
            self.prepare()
        except (NetmikoBaseException, ValueError) as exc:
            self.close()
            raise DriverError(self.name, "connect", f"session preparation failed: {exc}") from None

    def _session_log(self, folder: Path) -> Path:
        """``folder/<switch>.log``, created 0600 before netmiko opens it (it holds configuration); a name that would
        land outside ``folder`` is refused (:func:`fabricd.safepath.inside`)."""
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = inside(folder, f"{self.name}.log")
            open_private(path).close()
        except OSError as exc:
            raise DriverError(
                self.name,
                "connect",
                f"cannot write the session log under {folder}: {exc.strerror}",
                hint="give --session-log a directory you can write to",
            ) from None
        return path

    def _connect_error(self, text: str) -> DriverError:
        a = self.access
        where = f"[{a.host}]:{a.port}"
        if "not found in known_hosts" in text:
            files = ", ".join(str(p) for p in a.known_hosts) or "none"
            return DriverError(
                self.name,
                "connect",
                f"host key of {where} is unknown (known_hosts files read: {files})",
                hint=f"verify the key and add it: `ssh-keyscan -p {a.port} {a.host} >> ~/.ssh/known_hosts`; "
                "or trust it on first use with --accept-new-host-keys FILE (appends it to FILE); "
                "for the lab run `fabricd lab up`, which writes its known_hosts",
            )
        if "does not match" in text or "BadHostKey" in text:
            return DriverError(
                self.name,
                "connect",
                f"host key of {where} does not match known_hosts (possible impostor)",
                hint="if the device was reinstalled, remove its old line from known_hosts and add the new key",
            )
        if "TCP connection to device failed" in text or "Connection refused" in text or "timed out" in text:
            return DriverError(
                self.name,
                "connect",
                f"cannot reach {where} over TCP",
                hint="check mgmt.host/mgmt.port in the inventory; for the lab, `fabricd lab up` and `lab status`",
            )
        first = REDACTOR.redact(text.strip().splitlines()[-1] if text.strip() else "connection failed")
        return DriverError(self.name, "connect", f"SSH to {where} failed: {first}")

    def prepare(self) -> None:
        """After login: learn the prompt. Platforms extend this (enable, terminal settings)."""
        base = re.escape(self.conn.base_prompt)
        self.prompt_re = re.compile(rf"(?m)^{base}[^\n]*?[#>$]\s*$")
        self.any_prompt_re = re.compile(rf"(?m)^{base}[^\n#>$]*[#>$]")
        self._settle()

    def _settle(self) -> None:
        """Catch up with the prompts netmiko's session preparation still owes.

        A device prints one prompt at login and one per line it is sent. netmiko's preparation (finding the
        prompt, terminal width and length, enable) may send a line again when the device is slow to answer and
        return before every answer has arrived; such a late prompt would end a later read before its command's
        output came (a slow NX-OS read an empty running config). The lines written and the prompts read during
        the preparation are counted (at the channel, once each); the prompts still owed are read and dropped here,
        so every later read starts in step. :meth:`_read_reply` keeps that count for fabricd's own commands."""
        conn = self.conn
        raw, conn.fabricd_raw = conn.fabricd_raw, None
        seen = len(self.any_prompt_re.findall("".join(raw or []).replace("\r", "")))
        conn._read_buffer = ""  # already counted above; netmiko would hand it to the next read
        owed = conn.fabricd_lines_sent + 1 - seen
        if owed <= 0:
            return
        log.debug(
            "%s: %d prompt(s) of the session preparation still due; waiting for them",
            self.name,
            owed,
            extra={"target": self.name},
        )
        self._late_seen = 0
        try:
            self._read_until(self.any_prompt_re, "connect", count=owed)
        except DriverError:
            self._owed = max(0, owed - self._late_seen)  # the next read skips them if they come after all
            log.debug("%s: %d owed prompt(s) did not come in time", self.name, self._owed, extra={"target": self.name})

    def close(self) -> None:
        conn, self.conn = self.conn, None
        if conn is None:
            return
        try:
            # Close the channel and transport first: the device ends the session on channel close, and netmiko's
            # own "exit" would race the close (paramiko then logs "Socket exception: Broken pipe"). disconnect()
            # afterwards only closes netmiko's session log and removes its secrets filter.
            conn.paramiko_cleanup()
            conn.disconnect()
        except (OSError, EOFError, paramiko.SSHException, AttributeError) as exc:
            log.debug("%s: disconnect: %s", self.name, exc, extra={"target": self.name})

    # -- I/O ---------------------------------------------------------------------------------------------------

    def _lost(self, op: str, exc: BaseException | str) -> ConnectionLostError:
        self.conn = None
        return ConnectionLostError(
            self.name,
            op,
            f"SSH session lost ({exc}); device state must be re-read",
            hint="fabricd re-reads and rolls back automatically during push; otherwise run `fabricd diff`",
        )

    def _write(self, text: str, op: str) -> None:
        if self.conn is None:
            raise self._lost(op, "not connected")
        try:
            self.conn.write_channel(text)
        except (OSError, EOFError, paramiko.SSHException) as exc:
            raise self._lost(op, exc) from None

    def _read_until(
        self, done: re.Pattern[str], op: str, *, count: int = 1, timeout: float | None = None, skip: int = 0
    ) -> str:
        """Read until ``done`` has matched ``count`` times after the first ``skip`` prompts (of earlier lines, see
        :meth:`_read_reply`); return what came after those. Waits on the channel (select), no busy polling."""
        conn = self.conn
        if conn is None:
            raise self._lost(op, "not connected")
        chan = conn.remote_conn
        deadline = time.monotonic() + (timeout or self.options.read_timeout_s)
        buf = ""
        start = 0 if not skip else -1
        while True:
            try:
                chunk: str = conn.read_channel()
            except (OSError, EOFError, paramiko.SSHException) as exc:
                raise self._lost(op, exc) from None
            if chunk:
                buf += chunk
                if start < 0:
                    ends = [m.end() for m in self.any_prompt_re.finditer(buf)]
                    if len(ends) < skip:
                        continue
                    start = ends[skip - 1]
                if count == 1:
                    if done.search(buf, max(start, len(buf) - len(chunk) - 256)):
                        return buf[start:]
                elif len(done.findall(buf, start)) >= count:
                    return buf[start:]
                continue
            if chan.closed or chan.exit_status_ready() or not chan.get_transport().is_active():
                raise self._lost(op, "connection closed by the device")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._late_seen = len(self.any_prompt_re.findall(buf))
                raise DriverError(
                    self.name,
                    op,
                    f"no prompt within {timeout or self.options.read_timeout_s:.0f} s",
                    hint="the device is slow or the prompt changed; raise --read-timeout or check the session log",
                )
            try:
                select.select([chan], [], [], min(remaining, 0.5))
            except (OSError, ValueError) as exc:
                raise self._lost(op, exc) from None

    def _read_reply(self, done: re.Pattern[str], op: str, *, count: int = 1, timeout: float | None = None) -> str:
        """Read the reply to the ``count`` lines just written: first the prompts of earlier lines still owed
        (counted, never taken for this reply's end), then until ``done`` has matched ``count`` times. A read that
        times out leaves its prompts owed to the next one."""
        owed = self._owed
        self._owed = owed + count  # kept as is if the session is lost (it is not used again)
        self._late_seen = 0
        try:
            raw = self._read_until(done, op, count=count, timeout=timeout, skip=owed)
        except DriverError:
            self._owed = max(0, owed + count - self._late_seen)  # a timeout: what did not come is still due
            raise
        self._owed = 0
        return raw

    def exec(self, command: str, *, op: str = "command", timeout: float | None = None) -> str:
        """Run one command and return its output without the echo and the trailing prompt."""
        self._write(command + "\n", op)
        raw = self._read_reply(self.prompt_re, op, timeout=timeout)
        return self._strip(raw, command)

    def _strip(self, raw: str, command: str) -> str:
        lines = raw.split("\n")
        if lines and command and command.strip() in lines[0]:
            lines = lines[1:]
        if lines and self._is_prompt_line(lines[-1]):
            lines = lines[:-1]
        return str("\n".join(lines).rstrip())

    def _is_prompt_line(self, line: str) -> bool:
        """Whether the last line of a reply is the prompt the device printed after it (left out of the output)."""
        return bool(self.prompt_re.search(line))

    def send_lines(self, lines: list[str], *, op: str, prompt: re.Pattern[str]) -> list[tuple[str, str]]:
        """Write ``lines`` in bursts; return (line, reply) pairs. ``prompt`` matches any prompt the lines lead to."""
        results: list[tuple[str, str]] = []
        size = max(1, self.options.chunk_lines)
        for start in range(0, len(lines), size):
            chunk = lines[start : start + size]
            self._write("\n".join(chunk) + "\n", op)
            raw = self._read_reply(prompt, op, count=len(chunk))
            segments = prompt.split(raw)
            for i, line in enumerate(chunk):
                seg = segments[i] if i < len(segments) else ""
                seg_lines = seg.split("\n")
                if seg_lines and line.strip() and line.strip() in seg_lines[0]:
                    seg_lines = seg_lines[1:]
                results.append((line, "\n".join(seg_lines).strip()))
        return results

    def exec_checked(self, command: str, op: str, timeout: float | None = None) -> str:
        """:meth:`exec` one command and :meth:`check` its reply; the reply."""
        out = self.exec(command, op=op, timeout=timeout)
        self.check(op, [(command, out)])
        return out

    def check(self, op: str, pairs: list[tuple[str, str]]) -> None:
        """Raise on the first reply matching the platform's error pattern, naming the line and the device's words."""
        for line, reply in pairs:
            if self.error_pattern.search(reply):
                lines = [ln.strip() for ln in reply.splitlines() if ln.strip() and set(ln.strip()) != {"^"}]
                errors = [ln for ln in lines if self.error_pattern.search(ln)] or lines[-3:]
                words = " / ".join(dict.fromkeys(errors))
                if len(words) > 400:
                    words = words[:400] + "..."
                sent = line.strip() if len(line.strip()) <= 200 else line.strip()[:200] + "..."
                raise DriverError(
                    self.name,
                    op,
                    f"device rejected {sent!r}: {words}",
                    hint="fix the template or intent that produced this line (a push discards or rolls back "
                    "what it started)",
                )

    def plausible_config(self, text: str) -> str:
        """``text`` when it holds :attr:`running_config_mark`; otherwise a :class:`DriverError` (a slow or
        out-of-step session read nothing or a fragment: diffing it would report every owned line missing)."""
        mark = self.running_config_mark
        if mark is None or mark.search(text):
            return text
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        got = f"{len(text)} characters" + (f", starting {first[:60]!r}" if first else "")
        raise DriverError(
            self.name,
            "get_config",
            f"the running config read back is not plausible ({got}): it lacks {self.running_config_rule}",
            hint="the device answered late or the session fell out of step; try again, raise --read-timeout, and "
            "check the session log (--session-log DIR)",
        )

    def fingerprint(self, config: str) -> str:
        """``config`` without volatile lines (timestamps), to tell whether two reads show the same config."""
        return config

    def run(self, commands: list[str]) -> dict[str, str]:
        return {cmd: self.exec(cmd, op="command") for cmd in commands}

    def require_candidate(self, staged: T | Literal[False] | None, op: str) -> T:
        """``staged`` (what the driver keeps of the loaded candidate); a :class:`DriverError` when there is none
        (None or False: ``diff`` or ``commit`` before ``load_candidate``)."""
        if staged is None or staged is False:
            raise DriverError(self.name, op, "no candidate is loaded", hint="call load_candidate first")
        return staged

    def send_candidate(self, lines: list[str], prompt: re.Pattern[str]) -> None:
        """Send the candidate's ``lines`` (``load_candidate``); on a line the device rejects, :meth:`discard` what
        was staged and raise."""
        pairs = self.send_lines(lines, op="load_candidate", prompt=prompt)
        try:
            self.check("load_candidate", pairs)
        except DriverError:
            self.discard()
            raise

    # -- verbs the platforms implement -------------------------------------------------------------------------

    @abstractmethod
    def get_config(self) -> str: ...

    @abstractmethod
    def compare(self, running: str, candidate: str) -> ConfigDelta: ...

    @abstractmethod
    def checkpoint(self) -> None: ...

    @abstractmethod
    def load_candidate(self, candidate: str, *, replace: bool = True) -> None: ...

    @abstractmethod
    def diff(self) -> str: ...

    @abstractmethod
    def commit(self, *, confirm_in_s: int | None = None) -> None: ...

    @abstractmethod
    def confirm(self) -> None: ...

    @abstractmethod
    def discard(self) -> None: ...

    @abstractmethod
    def rollback(self) -> None: ...
