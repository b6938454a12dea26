"""The lab's gNMI targets in process, without a socket (grpcio-testing): each NOS's documented refusals and SONiC's
answers from the counter engine.

grpcio-testing drives synchronous servicers; the lab's servicer is ``grpc.aio``. :class:`SyncFacade` runs each
coroutine of the real servicer to completion on a private event loop and hands ``context.abort`` to
grpcio-testing's real context, so the status codes and details asserted are the ones a client would get. It is
plumbing, not a stand-in: no behaviour of the servicer is replaced.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import grpc
import grpc_testing
import pytest

from fabricd.model import Platform
from fabricd.platforms.gnmi import decode_value, gnmi_pb2, parse_path, path_text
from fabricd_lab.counters import WatchdogSettings
from fabricd_lab.device import DeviceSpec
from fabricd_lab.gnmi import GnmiTarget, PathError
from fabricd_lab.runtime import switch_class

SERVICE = gnmi_pb2.DESCRIPTOR.services_by_name["gNMI"]
PASSWORD = "lab-secret"
PORTS = {Platform.SONIC: ("Ethernet0", "Ethernet8"), Platform.ARISTA_EOS: ("Ethernet1",),
         Platform.CISCO_NXOS: ("Ethernet1/1",), Platform.CUMULUS_NVUE: ("swp1",)}


class _Ctx:
    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx

    def invocation_metadata(self) -> Any:
        return self._ctx.invocation_metadata()

    async def abort(self, code: grpc.StatusCode, details: str) -> None:
        self._ctx.abort(code, details)


class SyncFacade:
    def __init__(self, target: GnmiTarget) -> None:
        self.target = target

    def Capabilities(self, request: Any, context: Any) -> Any:  # noqa: N802
        return asyncio.run(self.target.Capabilities(request, _Ctx(context)))

    def Get(self, request: Any, context: Any) -> Any:  # noqa: N802
        return asyncio.run(self.target.Get(request, _Ctx(context)))

    def Subscribe(self, requests: Iterator[Any], context: Any) -> Iterator[Any]:  # noqa: N802
        async def incoming() -> Any:
            for r in requests:
                yield r

        agen = self.target.Subscribe(incoming(), _Ctx(context))
        loop = asyncio.new_event_loop()  # one per call: grpcio-testing runs each call on its own thread
        try:
            while True:
                try:
                    yield loop.run_until_complete(agen.__anext__())
                except StopAsyncIteration:
                    return
        finally:
            loop.close()


def make(platform: Platform) -> tuple[Any, GnmiTarget]:
    sw = switch_class(platform)(DeviceSpec(name=f"lab-{platform.value}", platform=platform, password=PASSWORD,
                                           ports=tuple((p, 400_000_000_000) for p in PORTS[platform])))
    target = GnmiTarget(sw, password=PASSWORD)
    server = grpc_testing.server_from_dictionary({SERVICE: SyncFacade(target)}, grpc_testing.strict_real_time())
    return server, target


META = (("username", "admin"), ("password", PASSWORD))


def subscribe(server: Any, sl: Any, metadata: Any = META) -> tuple[list[Any], grpc.StatusCode, str]:
    rpc = server.invoke_stream_stream(SERVICE.methods_by_name["Subscribe"], metadata, None)
    rpc.send_request(gnmi_pb2.SubscribeRequest(subscribe=sl))
    rpc.requests_closed()
    out = []
    while True:
        try:
            out.append(rpc.take_response())
        except Exception:  # the stream ended (grpcio-testing raises when no response is left)
            break
    _, code, details = rpc.termination()
    return out, code, details


def sub_list(paths: list[str], *, target: str = "COUNTERS_DB", origin: str = "", interval_s: float = 1.0,
             mode: str = "ONCE", encoding: str = "JSON_IETF", path_origins: tuple[str, ...] = ()) -> Any:
    subs = [gnmi_pb2.Subscription(path=parse_path(p, origin=path_origins[i] if path_origins else ""),
                                  mode=gnmi_pb2.SubscriptionMode.Value("SAMPLE"),
                                  sample_interval=int(interval_s * 1e9)) for i, p in enumerate(paths)]
    return gnmi_pb2.SubscriptionList(prefix=gnmi_pb2.Path(target=target, origin=origin), subscription=subs,
                                     mode=gnmi_pb2.SubscriptionList.Mode.Value(mode),
                                     encoding=gnmi_pb2.Encoding.Value(encoding))


def test_sonic_once_answers_from_the_counter_engine() -> None:
    server, target = make(Platform.SONIC)
    sw = target.switch
    sw.counters.set_watchdog(WatchdogSettings(priorities=frozenset({3})))
    sw.counters.pause("Ethernet8", 3, 1234, direction="rx")
    sw.counters.ecn_mark("Ethernet8", 3, 55)
    responses, code, _ = subscribe(server, sub_list(["COUNTERS/Ethernet*", "COUNTERS/Ethernet*/Queues"]))
    assert code is grpc.StatusCode.OK
    assert responses[-1].sync_response
    values = {path_text(r.update.update[0].path): decode_value(r.update.update[0].val) for r in responses[:-1]}
    assert responses[0].update.prefix.target == "COUNTERS_DB"
    assert responses[0].update.update[0].val.WhichOneof("value") == "json_ietf_val"
    assert values["COUNTERS/Ethernet*"]["Ethernet8"]["SAI_PORT_STAT_PFC_3_RX_PKTS"] == "1234"
    queue = values["COUNTERS/Ethernet*/Queues"]["Ethernet8:3"]
    assert queue["SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS"] == "55" and queue["PFC_WD_STATUS"] == "operational"
    assert "PFC_WD_STATUS" not in values["COUNTERS/Ethernet*/Queues"]["Ethernet8:2"]  # not a watched queue


def test_sonic_refuses_sample_intervals_under_one_second() -> None:
    server, _ = make(Platform.SONIC)
    _, code, details = subscribe(server, sub_list(["COUNTERS/Ethernet*"], interval_s=0.5, mode="STREAM"))
    assert code is grpc.StatusCode.INVALID_ARGUMENT and "cannot be less than 1s" in details


def test_sonic_unknown_table_and_wrong_db_are_not_found() -> None:
    server, _ = make(Platform.SONIC)
    _, code, _ = subscribe(server, sub_list(["COUNTERS/Ethernet*/Nope"]))
    assert code is grpc.StatusCode.NOT_FOUND
    _, code, details = subscribe(server, sub_list(["COUNTERS/Ethernet*"], target="APPL_DB"))
    assert code is grpc.StatusCode.NOT_FOUND and "COUNTERS_DB" in details


def test_a_wrong_password_is_unauthenticated() -> None:
    server, _ = make(Platform.SONIC)
    _, code, _ = subscribe(server, sub_list(["COUNTERS/Ethernet*"]), (("username", "admin"), ("password", "no")))
    assert code is grpc.StatusCode.UNAUTHENTICATED


def test_cumulus_refuses_get() -> None:
    server, _ = make(Platform.CUMULUS_NVUE)
    rpc = server.invoke_unary_unary(SERVICE.methods_by_name["Get"], META, gnmi_pb2.GetRequest(
        path=[parse_path("interfaces/interface[name=swp1]/state/counters")]), None)
    _, _, code, details = rpc.termination()
    assert code is grpc.StatusCode.UNIMPLEMENTED and "Get" in details


def test_eos_native_paths_need_eos_native_and_no_mixing() -> None:
    server, _ = make(Platform.ARISTA_EOS)
    _, code, details = subscribe(server, sub_list(["LANZ"], target="", encoding="JSON"))
    assert code is grpc.StatusCode.NOT_FOUND and "eos_native" in details
    mixed = sub_list(["interfaces/interface[name=*]/state", "LANZ"], target="", encoding="JSON",
                     path_origins=("openconfig", "eos_native"))
    _, code, details = subscribe(server, mixed)
    assert code is grpc.StatusCode.INVALID_ARGUMENT and "mixing origins" in details


def test_nxos_streams_every_ten_seconds_by_default() -> None:
    _, target = make(Platform.CISCO_NXOS)
    assert target.sample_interval(0) == 10.0 and target.sample_interval(1_000_000_000) == 1.0
    with pytest.raises(PathError, match="cannot be less than 1s"):
        target.sample_interval(500_000_000)
    sl = sub_list(["System/intf-items"], target="", interval_s=0, mode="STREAM", encoding="JSON")
    with pytest.raises(PathError, match="does not simulate cisco_nxos"):
        target.plan(sl)  # its counter tree is not simulated (not mapped in fabricd): NOT_FOUND, said so


def test_capabilities_lists_the_nos_encodings() -> None:
    server, _ = make(Platform.SONIC)
    rpc = server.invoke_unary_unary(SERVICE.methods_by_name["Capabilities"], META, gnmi_pb2.CapabilityRequest(),
                                    None)
    response, _, code, _ = rpc.termination()
    assert code is grpc.StatusCode.OK
    assert gnmi_pb2.Encoding.Value("JSON_IETF") in response.supported_encodings
    assert json.loads(json.dumps(response.gNMI_version)) == "0.7.0"
