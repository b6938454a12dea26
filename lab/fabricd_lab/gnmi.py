"""gNMI targets for the simulated switches: one ``grpc.aio`` server per switch on 127.0.0.1, TLS with the lab's CA,
the switch's login checked from the ``username``/``password`` metadata, its values read from the same counter engine
(:mod:`fabricd_lab.counters`) the SSH shells print, so an injected storm looks the same over both transports.

Each target copies its NOS's documented behaviour (the sources are in each pack's fabricd/nos/<id>/gnmi.py):

- SONiC (sonic-gnmi): ``prefix.target`` names the DB; ``COUNTERS_DB`` serves the virtual paths
  ``COUNTERS/Ethernet*`` (and ``COUNTERS/<port>``), ``COUNTERS/Ethernet*/Queues``,
  ``PERIODIC_WATERMARKS/Ethernet*/PriorityGroups`` and the tables ``COUNTERS_QUEUE_NAME_MAP`` /
  ``COUNTERS_QUEUE_TYPE_MAP``; a SAMPLE interval under 1 s is refused ("invalid interval ... cannot be less than
  1s", ``sonic_data_client/db_client.go``), 0 means 1 s; JSON_IETF or JSON only. Value shapes follow sonic-gnmi
  ``testdata/COUNTERS:Ethernet_wildcard_expected.txt``, ``COUNTERS:Ethernet68:Queues_expected.txt``,
  ``PERIODIC_WATERMARKS:Ethernet16:PriorityGroups_expected.txt`` and ``COUNTERS_QUEUE_NAME_MAP.txt`` (OIDs here are
  the lab's own); ``COUNTERS_QUEUE_TYPE_MAP``'s shape is **unverified** (no published payload). The port object
  carries only the fields the counter engine has (a real one has ~100 ``SAI_PORT_STAT_*``); the pause duration is
  Mellanox's ``..._RX_PAUSE_DURATION_US`` (the lab's hwsku is an SN4700).
- Cumulus: Get refused (UNIMPLEMENTED, "no Get/Set"); SAMPLE under 1 s refused.
- NX-OS: a SAMPLE interval of 0 (none given) streams every 10 s, the documented default.
- EOS: a native path (``LANZ``, ``Smash``, ``Sysdb``) without the ``eos_native`` origin is NOT_FOUND, and one request
  mixing origins is refused (aristanetworks.github.io/openmgmt/configuration/openconfig).

Only SONiC's tree is simulated: the EOS, NX-OS and Cumulus targets enforce the rules above and then answer
NOT_FOUND for their counter paths, because fabricd does not map those NOSes' notifications yet
(fabricd/nos/<id>/gnmi.py) and no published payload of them was available to copy. Fault ``gnmi-stall``
(:mod:`fabricd_lab.faults`) stalls the first stream after its first sample.
"""

from __future__ import annotations

import asyncio
import datetime
import functools
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
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=days))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    san = x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=days))
            .add_extension(san, critical=False).sign(ca_key, hashes.SHA256()))
    return LabTls(
        ca.public_bytes(serialization.Encoding.PEM), cert.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                          serialization.NoEncryption()))


def _natural(name: str) -> list[object]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


# -- SONiC's COUNTERS_DB, from the counter engine -----------------------------------------------------------------

MC_QUEUES = range(8, 16)
"""Multicast queues MC8..MC15, as the lab's ``show queue counters`` prints them (their counters stay 0)."""


def _oid(port_index: int, queue: int) -> str:
    return f"oid:0x15{port_index:08x}{queue:04x}"


SONIC_PATHS = ("COUNTERS/Ethernet*", "COUNTERS/Ethernet*/Queues", "PERIODIC_WATERMARKS/Ethernet*/PriorityGroups",
               "COUNTERS_QUEUE_NAME_MAP", "COUNTERS_QUEUE_TYPE_MAP")


def sonic_tables(sw: SimSwitch, only: str | None = None) -> dict[str, Any]:
    """The COUNTERS_DB values the lab's SONiC serves, by path (what ``show pfc counters`` & co. print, as fields);
    ``only``: just that path's (a stream of 500 switches asks one path at a time)."""
    if only in SONIC_PATHS[3:]:  # the maps depend on the port names only
        return _queue_maps(tuple(sw.counters.ports))
    want_ports = only in (None, SONIC_PATHS[0])
    want_queues = only is None or only in SONIC_PATHS[1:]
    ports = sw.counters.read()
    names = _sorted_ports(tuple(ports))
    settings = sw.counters.watchdog
    port_obj: dict[str, dict[str, str]] = {}
    queues: dict[str, dict[str, str]] = {}
    pgs: dict[str, dict[str, str]] = {}
    qnames: dict[str, str] = {}
    qtypes: dict[str, str] = {}
    for pi, name in enumerate(names):
        p = ports[name]
        if want_ports:
            port_obj[name] = _port_fields(p)
        if want_queues:
            _queue_fields(name, pi, p, settings, queues, qnames, qtypes, pgs)
    return {
        "COUNTERS/Ethernet*": port_obj,
        "COUNTERS/Ethernet*/Queues": queues,  # built in port and queue order
        "PERIODIC_WATERMARKS/Ethernet*/PriorityGroups": pgs,
        "COUNTERS_QUEUE_NAME_MAP": dict(sorted(qnames.items())),
        "COUNTERS_QUEUE_TYPE_MAP": dict(sorted(qtypes.items())),
    }


@functools.lru_cache(maxsize=4096)
def _sorted_ports(ports: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted(ports, key=_natural))


@functools.lru_cache(maxsize=4096)
def _queue_maps(ports: tuple[str, ...]) -> dict[str, Any]:
    names_map = {f"{n}:{i}": _oid(pi, i) for pi, n in enumerate(_sorted_ports(ports))
                 for i in (*range(8), *MC_QUEUES)}
    types_map = {oid: "SAI_QUEUE_TYPE_UNICAST" if int(k.rsplit(":", 1)[1]) < 8 else "SAI_QUEUE_TYPE_MULTICAST"
                 for k, oid in names_map.items()}
    return {SONIC_PATHS[3]: dict(sorted(names_map.items())), SONIC_PATHS[4]: dict(sorted(types_map.items()))}


def _port_fields(p: Any) -> dict[str, str]:
    fields = {
        "SAI_PORT_STAT_IF_IN_UCAST_PKTS": str(p.rx_packets), "SAI_PORT_STAT_IF_OUT_UCAST_PKTS": str(p.tx_packets),
        "SAI_PORT_STAT_IF_IN_OCTETS": str(p.rx_bytes), "SAI_PORT_STAT_IF_OUT_OCTETS": str(p.tx_bytes),
        "SAI_PORT_STAT_IF_IN_DISCARDS": str(p.rx_drops), "SAI_PORT_STAT_IF_OUT_DISCARDS": str(p.tx_drops),
        "SAI_PORT_STAT_IF_IN_ERRORS": "0", "SAI_PORT_STAT_IF_OUT_ERRORS": "0",
    }
    for prio, c in enumerate(p.pfc):
        fields[f"SAI_PORT_STAT_PFC_{prio}_RX_PKTS"] = str(c.rx_frames)
        fields[f"SAI_PORT_STAT_PFC_{prio}_TX_PKTS"] = str(c.tx_frames)
        fields[f"SAI_PORT_STAT_PFC_{prio}_RX_PAUSE_DURATION_US"] = str(c.rx_pause_us)
    return dict(sorted(fields.items()))


def _queue_fields(name: str, pi: int, p: Any, settings: Any, queues: dict[str, dict[str, str]],
                  qnames: dict[str, str], qtypes: dict[str, str], pgs: dict[str, dict[str, str]]) -> None:
    wm = p.watermarks
    for i, q in enumerate(p.queues):
        entry = {
            "SAI_QUEUE_STAT_PACKETS": str(q.tx_packets), "SAI_QUEUE_STAT_BYTES": str(q.tx_bytes),
            "SAI_QUEUE_STAT_DROPPED_PACKETS": str(q.dropped_packets),
            "SAI_QUEUE_STAT_DROPPED_BYTES": str(q.dropped_bytes),
            "SAI_QUEUE_STAT_WRED_DROPPED_PACKETS": str(q.wred_dropped_packets),
            "SAI_QUEUE_STAT_WRED_DROPPED_BYTES": str(q.wred_dropped_bytes),
            "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS": str(q.ecn_marked_packets),
            "SAI_QUEUE_STAT_WRED_ECN_MARKED_BYTES": str(q.ecn_marked_bytes),
        }
        wd = p.watchdog.get(i)
        if wd is not None and settings is not None:
            entry.update({
                "PFC_WD_ACTION": settings.action, "PFC_WD_DETECTION_TIME": str(settings.detection_ms * 1000),
                "PFC_WD_RESTORATION_TIME": str(settings.restoration_ms * 1000),
                "PFC_WD_STATUS": "stormed" if wd.stormed else "operational",
                "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED": str(wd.detected),
                "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED": str(wd.restored),
                "PFC_WD_QUEUE_STATS_TX_PACKETS": str(wd.tx_ok),
                "PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS": str(wd.tx_drop),
                "PFC_WD_QUEUE_STATS_RX_PACKETS": str(wd.rx_ok),
                "PFC_WD_QUEUE_STATS_RX_DROPPED_PACKETS": str(wd.rx_drop),
                "PFC_WD_QUEUE_STATS_TX_PACKETS_LAST": str(wd.last_tx_ok),
                "PFC_WD_QUEUE_STATS_TX_DROPPED_PACKETS_LAST": str(wd.last_tx_drop),
                "PFC_WD_QUEUE_STATS_RX_PACKETS_LAST": str(wd.last_rx_ok),
                "PFC_WD_QUEUE_STATS_RX_DROPPED_PACKETS_LAST": str(wd.last_rx_drop),
            })
        queues[f"{name}:{i}"] = dict(sorted(entry.items()))
        queues[f"{name}:{i}:periodic"] = {"SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES": str(wm["queue"][i])}
        qnames[f"{name}:{i}"] = _oid(pi, i)
        qtypes[_oid(pi, i)] = "SAI_QUEUE_TYPE_UNICAST"
        pgs[f"{name}:{i}"] = {
            "SAI_INGRESS_PRIORITY_GROUP_STAT_SHARED_WATERMARK_BYTES": str(wm["pg_shared"][i]),
            "SAI_INGRESS_PRIORITY_GROUP_STAT_XOFF_ROOM_WATERMARK_BYTES": str(wm["pg_headroom"][i]),
        }
    for i in MC_QUEUES:
        queues[f"{name}:{i}"] = {f"SAI_QUEUE_STAT_{f}": "0" for f in (
            "BYTES", "DROPPED_BYTES", "DROPPED_PACKETS", "PACKETS", "WRED_DROPPED_BYTES", "WRED_DROPPED_PACKETS",
            "WRED_ECN_MARKED_BYTES", "WRED_ECN_MARKED_PACKETS")}
        queues[f"{name}:{i}:periodic"] = {"SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES": "0"}
        qnames[f"{name}:{i}"] = _oid(pi, i)
        qtypes[_oid(pi, i)] = "SAI_QUEUE_TYPE_MULTICAST"


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
    Platform.CUMULUS_NVUE: Behaviour(1.0, 1.0, False, ("JSON", "PROTO"),
                                     models=(("openconfig-interfaces", "OpenConfig", "3.0.0"),)),
    Platform.CISCO_NXOS: Behaviour(1.0, 10.0, True, ("JSON", "PROTO"), models=(("Cisco-NX-OS-device", "Cisco",
                                                                                 "2024-01-01"),)),
    Platform.ARISTA_EOS: Behaviour(0.0, 10.0, True, ("JSON", "JSON_IETF", "ASCII", "PROTO"),
                                   native_roots=("LANZ", "Smash", "Sysdb"), native_origin="eos_native", one_origin=True,
                                   models=(("openconfig-interfaces", "OpenConfig", "3.0.0"),)),
}


@dataclass
class _Sub:
    path: str
    mode: str
    interval_s: float
    due: float = 0.0
    last: Any = None


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
        ok = (user == self.switch.spec.username and hmac.compare_digest(password.encode(), self._password.encode())
              and not self.switch.faults.auth_fails)
        return ok

    def values(self, target: str, path: str) -> Any:
        """The JSON value of ``path`` in ``target`` (SONiC's DB), or :class:`PathError`."""
        platform = self.switch.platform
        if platform is not Platform.SONIC:
            raise PathError(grpc.StatusCode.NOT_FOUND, f"{path}: the lab does not simulate {platform.value}'s gNMI "
                            "tree (fabricd does not map it yet: fabricd/nos/<id>/gnmi.py)")
        if target != "COUNTERS_DB":
            raise PathError(grpc.StatusCode.NOT_FOUND, f"{target or '(no target)'}/{path}: the lab serves only "
                            "COUNTERS_DB (prefix.target names the DB)")
        if path in SONIC_PATHS:
            return sonic_tables(self.switch, path)[path]
        m = re.fullmatch(r"COUNTERS/([^/*]+)", path)
        if m is not None and m.group(1) in self.switch.counters.ports:
            return sonic_tables(self.switch, SONIC_PATHS[0])[SONIC_PATHS[0]][m.group(1)]
        raise PathError(grpc.StatusCode.NOT_FOUND, f"COUNTERS_DB/{path}: no such table or virtual path")

    def _check_origins(self, prefix: Any, paths: list[Any]) -> None:
        b = self.behaviour
        origins = {p.origin or prefix.origin for p in paths}
        if b.one_origin and len(origins) > 1:
            raise PathError(grpc.StatusCode.INVALID_ARGUMENT, "mixing origins in one request is not supported: "
                            + ", ".join(sorted(o or "(openconfig)" for o in origins)))
        for p in paths:
            origin = p.origin or prefix.origin
            first = path_text(p, prefix).split("/", 1)[0]
            if b.native_roots and first in b.native_roots and origin != b.native_origin:
                raise PathError(grpc.StatusCode.NOT_FOUND, f"/{first}: an EOS-native path needs origin "
                                f"{b.native_origin!r}")

    def sample_interval(self, nanos: int) -> float:
        """A requested SAMPLE interval (ns; 0 = none given) in seconds as the NOS takes it, or :class:`PathError`."""
        b = self.behaviour
        if nanos == 0:
            return b.default_interval_s
        seconds = nanos / 1e9
        if seconds < b.min_interval_s:
            raise PathError(grpc.StatusCode.INVALID_ARGUMENT, f"invalid interval {seconds:g}s; it cannot be less "
                            f"than {b.min_interval_s:g}s")
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
            self.values(sl.prefix.target, path)  # NOT_FOUND before the stream starts
            subs.append(_Sub(path, mode, interval))
        return subs

    def _notification(self, prefix: Any, path: str, value: Any, ietf: bool) -> Any:
        from fabricd.platforms.gnmi import parse_path

        update = gnmi_pb2.Update(path=parse_path(path), val=json_value(value, ietf=ietf))
        return gnmi_pb2.Notification(timestamp=time.time_ns(), prefix=gnmi_pb2.Path(target=prefix.target,
                                                                                     origin=prefix.origin),
                                     update=[update])

    # -- RPCs -----------------------------------------------------------------------------------------------------

    async def Capabilities(self, request: Any, context: Any) -> Any:  # noqa: N802 - the gRPC method name
        if not self._authenticated(context):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "authentication failed")
        return gnmi_pb2.CapabilityResponse(
            supported_models=[gnmi_pb2.ModelData(name=n, organization=o, version=v) for n, o, v in
                              self.behaviour.models],
            supported_encodings=[gnmi_pb2.Encoding.Value(e) for e in self.behaviour.encodings], gNMI_version="0.7.0")

    async def Get(self, request: Any, context: Any) -> Any:  # noqa: N802
        if not self._authenticated(context):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "authentication failed")
        if not self.behaviour.supports_get:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "Get is not supported (Subscribe only)")
        try:
            self._check_origins(request.prefix, list(request.path))
            notes = [self._notification(request.prefix, path_text(p, request.prefix),
                                        self.values(request.prefix.target, path_text(p, request.prefix)),
                                        request.encoding == gnmi_pb2.Encoding.Value("JSON_IETF"))
                     for p in request.path]
        except PathError as exc:
            await context.abort(exc.code, exc.message)
        return gnmi_pb2.GetResponse(notification=notes)

    async def Set(self, request: Any, context: Any) -> Any:  # noqa: N802
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "Set is not supported by the lab")

    async def Subscribe(self, request_iterator: AsyncIterator[Any], context: Any) -> AsyncIterator[Any]:  # noqa: N802
        if not self._authenticated(context):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "authentication failed")
        try:
            first = await request_iterator.__anext__()
        except StopAsyncIteration:
            return
        if not first.HasField("subscribe"):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first SubscribeRequest must be a subscribe")
        sl = first.subscribe
        encoding = gnmi_pb2.Encoding.Name(sl.encoding)
        prefix = sl.prefix
        try:
            subs = self.plan(sl)
        except PathError as exc:
            await context.abort(exc.code, exc.message)
        ietf = encoding == "JSON_IETF"
        list_mode = gnmi_pb2.SubscriptionList.Mode.Name(sl.mode)
        self.subscribes += 1
        stall = list_mode == "STREAM" and self.switch.faults.take_gnmi_stall()
        now = self._clock()
        for sub in subs:
            sub.last = self.values(prefix.target, sub.path)
            sub.due = now + sub.interval_s
            yield gnmi_pb2.SubscribeResponse(update=self._notification(prefix, sub.path, sub.last, ietf))
        yield gnmi_pb2.SubscribeResponse(sync_response=True)
        if list_mode == "ONCE":
            return
        if list_mode == "POLL":
            async for req in request_iterator:
                if req.HasField("poll"):
                    for sub in subs:
                        yield gnmi_pb2.SubscribeResponse(update=self._notification(
                            prefix, sub.path, self.values(prefix.target, sub.path), ietf))
                    yield gnmi_pb2.SubscribeResponse(sync_response=True)
            return
        self.streams += 1
        try:
            if stall:
                log.info("gNMI %s: stream stalled after its first sample (fault gnmi-stall)", self.switch.name)
                await asyncio.Event().wait()  # open, silent, until the client gives up
            while True:
                now = self._clock()
                wake = min(s.due for s in subs)
                if wake > now:
                    await asyncio.sleep(wake - now)
                    now = self._clock()
                for sub in subs:
                    if sub.due > now:
                        continue
                    sub.due = max(sub.due + sub.interval_s, now)
                    value = self.values(prefix.target, sub.path)
                    if sub.mode == "ON_CHANGE" and value == sub.last:
                        continue
                    sub.last = value
                    yield gnmi_pb2.SubscribeResponse(update=self._notification(prefix, sub.path, value, ietf))
        finally:
            self.streams -= 1


async def serve(switch: SimSwitch, tls: LabTls, *, password: str, host: str = "127.0.0.1",
                port: int = 0) -> tuple[Any, int, GnmiTarget]:
    """Start one switch's gNMI server (TLS) on the running loop; returns (server, bound port, servicer)."""
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    target = GnmiTarget(switch, password=password)
    gnmi_pb2_grpc.add_gNMIServicer_to_server(target, server)
    creds = grpc.ssl_server_credentials([(tls.key_pem, tls.cert_pem)])
    try:  # grpcio returns 0 on a failed bind in some versions and raises RuntimeError in others
        bound = server.add_secure_port(f"{host}:{port}", creds)
    except RuntimeError as exc:
        raise OSError(f"{switch.name}: cannot listen for gNMI on {host}:{port} ({exc}); is another lab or "
                      "process using the port?") from None
    if bound == 0:
        raise OSError(f"{switch.name}: cannot listen for gNMI on {host}:{port}; is another lab or process using "
                      "the port?")
    await server.start()
    return server, bound, target


__all__ = ["BEHAVIOUR", "GnmiTarget", "LabTls", "decode_value", "generate_tls", "serve", "sonic_tables"]
