"""gNMI targets for the simulated switches: one ``grpc.aio`` server per switch on 127.0.0.1, TLS with the lab's CA,
the switch's login checked from the ``username``/``password`` metadata, its values read from the same counter engine
(:mod:`fabricd_lab.counters`) the SSH shells print, so an injected storm looks the same over both transports.

Each target copies its NOS's documented behaviour (the sources are in each pack's fabricd/nos/<id>/gnmi.py):

- SONiC (sonic-gnmi): ``prefix.target`` names the DB and only ``COUNTERS_DB`` is served, its virtual paths
  ``COUNTERS/Ethernet*`` (and ``COUNTERS/<port>``), ``COUNTERS/Ethernet*/Queues``,
  ``PERIODIC_WATERMARKS/Ethernet*/PriorityGroups`` and the tables ``COUNTERS_QUEUE_NAME_MAP`` /
  ``COUNTERS_QUEUE_TYPE_MAP``; a SAMPLE interval under 1 s is refused ("invalid interval ... cannot be less than
  1s", ``sonic_data_client/db_client.go``), 0 means 1 s; JSON_IETF or JSON only.
- Cumulus: Get refused (UNIMPLEMENTED: Capabilities and Subscribe only, "no Get/Set"); SAMPLE under 1 s refused;
  origin ignored.
- NX-OS: a SAMPLE interval of 0 (none given) streams every 10 s, the documented default; under 1 s refused.
- EOS: a native path (``LANZ``, ``Smash``, ``Sysdb``) without the ``eos_native`` origin is NOT_FOUND, and one request
  mixing origins is refused (aristanetworks.github.io/openmgmt/configuration/openconfig). EOS's floor is
  unverified: the lab takes any interval.

What each target serves is :mod:`fabricd_lab.gnmi_trees` (SONiC's COUNTERS_DB in sonic-gnmi's published shapes; the
EOS, NX-OS and Cumulus containers of their packs' tables, shapes **unverified**, said there); a path outside it is
NOT_FOUND (EOS's native trees are not simulated). Fault ``gnmi-stall`` (:mod:`fabricd_lab.faults`) stalls the first
stream after its first sample.
"""

from __future__ import annotations

import asyncio
import datetime
import hmac
import ipaddress
import logging
import re
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from fabricd.model import Platform
from fabricd.platforms.gnmi import decode_value, gnmi_pb2, gnmi_pb2_grpc, json_value, path_text

from .device import SimSwitch
from .gnmi_trees import SONIC_PATHS, Tree, oc_tree, sonic_tables

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LabTls:
    """The lab's gNMI TLS material: a CA (its PEM is what an inventory's ``telemetry.gnmi.tls_ca`` names) and one
    server certificate for 127.0.0.1/localhost signed by it."""

    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes


def generate_tls(days: int = 30) -> LabTls:
    """A fresh CA and server certificate (P-256) for 127.0.0.1 and localhost."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fabricd-lab gNMI CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    san = x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(san, critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return LabTls(
        ca.public_bytes(serialization.Encoding.PEM),
        cert.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
    )


class PathError(Exception):
    """A path the target does not serve: (gRPC status, message)."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# -- per-NOS behaviour --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Behaviour:
    """What a NOS's gNMI server accepts (telemetry.md §1): ``min_interval_s`` (a shorter non-zero SAMPLE interval is
    refused), ``default_interval_s`` (what 0 means), whether Get is served, the encodings, and the native roots that
    need the ``eos_native`` origin."""

    min_interval_s: float
    default_interval_s: float
    supports_get: bool
    encodings: tuple[str, ...]
    native_roots: tuple[str, ...] = ()
    native_origin: str = ""
    one_origin: bool = False
    models: tuple[tuple[str, str, str], ...] = ()


BEHAVIOUR: dict[Platform, Behaviour] = {
    Platform.SONIC: Behaviour(1.0, 1.0, True, ("JSON", "JSON_IETF"), models=(("sonic-db", "SONiC", "0.1.0"),)),
    Platform.CUMULUS_NVUE: Behaviour(
        1.0, 1.0, False, ("JSON", "PROTO"), models=(("openconfig-interfaces", "OpenConfig", "3.0.0"),)
    ),
    Platform.CISCO_NXOS: Behaviour(
        1.0, 10.0, True, ("JSON", "PROTO"), models=(("Cisco-NX-OS-device", "Cisco", "2024-01-01"),)
    ),
    Platform.ARISTA_EOS: Behaviour(
        0.0,
        10.0,
        True,
        ("JSON", "JSON_IETF", "ASCII", "PROTO"),
        native_roots=("LANZ", "Smash", "Sysdb"),
        native_origin="eos_native",
        one_origin=True,
        models=(("openconfig-interfaces", "OpenConfig", "3.0.0"),),
    ),
}


@dataclass
class _Sub:
    path: str
    mode: str
    interval_s: float
    due: float = 0.0
    last: Any = None


@dataclass(frozen=True)
class _Request:
    """One accepted Subscribe: its prefix, streams, list mode and whether JSON values are JSON_IETF."""

    prefix: Any
    subs: list[_Sub]
    mode: str
    ietf: bool


class GnmiTarget(gnmi_pb2_grpc.gNMIServicer):
    """The gNMI servicer of one simulated switch. Runs on the lab's event loop (the counter engine is not
    thread-safe); ``clock`` is monotonic seconds (streams are paced by it)."""

    def __init__(self, switch: SimSwitch, *, password: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.switch = switch
        self.behaviour = BEHAVIOUR[switch.platform]
        self._password = password
        self._clock = clock
        self.streams = 0
        self.subscribes = 0

    # -- helpers ------------------------------------------------------------------------------------------------

    def _authenticated(self, context: Any) -> bool:
        md = dict(context.invocation_metadata() or ())
        user, password = str(md.get("username", "")), str(md.get("password", ""))
        ok = (
            user == self.switch.spec.username
            and hmac.compare_digest(password.encode(), self._password.encode())
            and not self.switch.faults.auth_fails
        )
        return ok

    def values(self, target: str, path: str) -> Any:
        """SONiC: the JSON value of ``path`` in ``target`` (the DB), or :class:`PathError`."""
        if target != "COUNTERS_DB":
            raise PathError(
                grpc.StatusCode.NOT_FOUND,
                f"{target or '(no target)'}/{path}: the lab serves only COUNTERS_DB (prefix.target names the DB)",
            )
        if path in SONIC_PATHS:
            return sonic_tables(self.switch, path)[path]
        m = re.fullmatch(r"COUNTERS/([^/*]+)", path)
        if m is not None and m.group(1) in self.switch.counters.ports:
            return sonic_tables(self.switch, SONIC_PATHS[0])[SONIC_PATHS[0]][m.group(1)]
        raise PathError(grpc.StatusCode.NOT_FOUND, f"COUNTERS_DB/{path}: no such table or virtual path")

    def tree(self, target: str, path: str) -> Tree:
        """What ``path`` selects, as (container path, {leaf: value}) (:mod:`fabricd_lab.gnmi_trees`), or
        :class:`PathError`."""
        if self.switch.platform is Platform.SONIC:
            return [("", {path: self.values(target, path)})]
        found = oc_tree(self.switch, path)
        if found is None:
            raise PathError(
                grpc.StatusCode.NOT_FOUND,
                f"{path}: not served by the lab's {self.switch.platform.value}"
                " target (it serves the containers of fabricd/nos/<id>/gnmi.py)",
            )
        return found

    def _check_origins(self, prefix: Any, paths: list[Any]) -> None:
        b = self.behaviour
        origins = {p.origin or prefix.origin for p in paths}
        if b.one_origin and len(origins) > 1:
            raise PathError(
                grpc.StatusCode.INVALID_ARGUMENT,
                "mixing origins in one request is not supported: "
                + ", ".join(sorted(o or "(openconfig)" for o in origins)),
            )
        for p in paths:
            origin = p.origin or prefix.origin
            first = path_text(p, prefix).split("/", 1)[0]
            if b.native_roots and first in b.native_roots and origin != b.native_origin:
                raise PathError(
                    grpc.StatusCode.NOT_FOUND, f"/{first}: an EOS-native path needs origin {b.native_origin!r}"
                )

    def sample_interval(self, nanos: int) -> float:
        """A requested SAMPLE interval (ns; 0 = none given) in seconds as the NOS takes it, or :class:`PathError`."""
        b = self.behaviour
        if nanos == 0:
            return b.default_interval_s
        seconds = nanos / 1e9
        if seconds < b.min_interval_s:
            raise PathError(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"invalid interval {seconds:g}s; it cannot be less than {b.min_interval_s:g}s",
            )
        return seconds

    def plan(self, sl: Any) -> list[_Sub]:
        """The streams a ``SubscriptionList`` asks for, each with its interval, after the NOS's checks (encoding,
        origins, interval floor, every path served); :class:`PathError` says why a request is refused."""
        encoding = gnmi_pb2.Encoding.Name(sl.encoding)
        if encoding not in self.behaviour.encodings:
            raise PathError(grpc.StatusCode.INVALID_ARGUMENT, f"unsupported encoding {encoding}")
        self._check_origins(sl.prefix, [s.path for s in sl.subscription])
        subs = []
        for s in sl.subscription:
            mode = gnmi_pb2.SubscriptionMode.Name(s.mode)
            interval = self.sample_interval(s.sample_interval) if mode == "SAMPLE" else 1.0
            path = path_text(s.path, sl.prefix)
            self.tree(sl.prefix.target, path)  # NOT_FOUND before the stream starts
            subs.append(_Sub(path, mode, interval))
        return subs

    def notifications(self, prefix: Any, tree: Tree, ietf: bool) -> list[Any]:
        """One notification per container: its path in the prefix (after the request's target and origin), its
        leaves as updates."""
        from fabricd.platforms.gnmi import parse_path

        now = time.time_ns()
        return [
            gnmi_pb2.Notification(
                timestamp=now,
                prefix=parse_path(container, origin=prefix.origin, target=prefix.target),
                update=[
                    gnmi_pb2.Update(path=parse_path(leaf), val=json_value(value, ietf=ietf))
                    for leaf, value in leaves.items()
                ],
            )
            for container, leaves in tree
        ]

    # -- RPCs -----------------------------------------------------------------------------------------------------

    async def Capabilities(self, request: Any, context: Any) -> Any:  # noqa: N802 - the gRPC method name
        if not self._authenticated(context):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "authentication failed")
        return gnmi_pb2.CapabilityResponse(
            supported_models=[
                gnmi_pb2.ModelData(name=n, organization=o, version=v) for n, o, v in self.behaviour.models
            ],
            supported_encodings=[gnmi_pb2.Encoding.Value(e) for e in self.behaviour.encodings],
            gNMI_version="0.7.0",
        )

    async def Get(self, request: Any, context: Any) -> Any:  # noqa: N802
        if not self._authenticated(context):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "authentication failed")
        if not self.behaviour.supports_get:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "Get is not supported (Subscribe only)")
        ietf = request.encoding == gnmi_pb2.Encoding.Value("JSON_IETF")
        try:
            self._check_origins(request.prefix, list(request.path))
            notes = [
                n
                for p in request.path
                for n in self.notifications(
                    request.prefix, self.tree(request.prefix.target, path_text(p, request.prefix)), ietf
                )
            ]
        except PathError as exc:
            await context.abort(exc.code, exc.message)
        return gnmi_pb2.GetResponse(notification=notes)

    async def Set(self, request: Any, context: Any) -> Any:  # noqa: N802
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "Set is not supported by the lab")

    async def _accept(self, request_iterator: AsyncIterator[Any], context: Any) -> _Request | None:
        """The first SubscribeRequest, checked (login, shape, the NOS's rules), or None when the client sent none;
        a refusal aborts the call with the NOS's status."""
        if not self._authenticated(context):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "authentication failed")
        try:
            first = await request_iterator.__anext__()
        except StopAsyncIteration:
            return None
        if not first.HasField("subscribe"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first SubscribeRequest must be a subscribe")
        sl = first.subscribe
        try:
            subs = self.plan(sl)
        except PathError as exc:
            await context.abort(exc.code, exc.message)
        return _Request(
            sl.prefix,
            subs,
            gnmi_pb2.SubscriptionList.Mode.Name(sl.mode),
            gnmi_pb2.Encoding.Name(sl.encoding) == "JSON_IETF",
        )

    def _responses(self, req: _Request, tree: Tree) -> list[Any]:
        return [gnmi_pb2.SubscribeResponse(update=n) for n in self.notifications(req.prefix, tree, req.ietf)]

    async def Subscribe(self, request_iterator: AsyncIterator[Any], context: Any) -> AsyncIterator[Any]:  # noqa: N802
        req = await self._accept(request_iterator, context)
        if req is None:
            return
        self.subscribes += 1
        stall = req.mode == "STREAM" and self.switch.faults.take_gnmi_stall()
        now = self._clock()
        for sub in req.subs:
            sub.last = self.tree(req.prefix.target, sub.path)
            sub.due = now + sub.interval_s
            for response in self._responses(req, sub.last):
                yield response
        yield gnmi_pb2.SubscribeResponse(sync_response=True)
        if req.mode == "POLL":
            async for response in self._polled(req, request_iterator):
                yield response
        if req.mode != "STREAM":
            return
        self.streams += 1
        try:
            if stall:
                log.info("gNMI %s: stream stalled after its first sample (fault gnmi-stall)", self.switch.name)
                await asyncio.Event().wait()  # open, silent, until the client gives up
            async for response in self._streamed(req):
                yield response
        finally:
            self.streams -= 1

    async def _polled(self, req: _Request, request_iterator: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """POLL: every path again, then sync, on each poll request."""
        async for message in request_iterator:
            if message.HasField("poll"):
                for sub in req.subs:
                    for response in self._responses(req, self.tree(req.prefix.target, sub.path)):
                        yield response
                yield gnmi_pb2.SubscribeResponse(sync_response=True)

    async def _streamed(self, req: _Request) -> AsyncIterator[Any]:
        """STREAM: each SAMPLE path every interval, each ON_CHANGE path when its value changed (checked at its
        interval)."""
        while True:
            now = self._clock()
            wake = min(s.due for s in req.subs)
            if wake > now:
                await asyncio.sleep(wake - now)
                now = self._clock()
            for sub in req.subs:
                if sub.due > now:
                    continue
                sub.due += sub.interval_s
                if sub.due <= now:  # late by more than an interval: the next sample one interval from now, not at once
                    sub.due = now + sub.interval_s
                value = self.tree(req.prefix.target, sub.path)
                if sub.mode == "ON_CHANGE" and value == sub.last:
                    continue
                sub.last = value
                for response in self._responses(req, value):
                    yield response


async def serve(
    switch: SimSwitch, tls: LabTls, *, password: str, host: str = "127.0.0.1", port: int = 0
) -> tuple[Any, int, GnmiTarget]:
    """Start one switch's gNMI server (TLS) on the running loop; returns (server, bound port, servicer)."""
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    target = GnmiTarget(switch, password=password)
    gnmi_pb2_grpc.add_gNMIServicer_to_server(target, server)
    creds = grpc.ssl_server_credentials([(tls.key_pem, tls.cert_pem)])
    try:  # grpcio returns 0 on a failed bind in some versions and raises RuntimeError in others
        bound = server.add_secure_port(f"{host}:{port}", creds)
    except RuntimeError as exc:
        raise OSError(
            f"{switch.name}: cannot listen for gNMI on {host}:{port} ({exc}); is another lab or process using the port?"
        ) from None
    if bound == 0:
        raise OSError(
            f"{switch.name}: cannot listen for gNMI on {host}:{port}; is another lab or process using the port?"
        )
    await server.start()
    return server, bound, target


__all__ = ["BEHAVIOUR", "GnmiTarget", "LabTls", "decode_value", "generate_tls", "serve", "sonic_tables"]
