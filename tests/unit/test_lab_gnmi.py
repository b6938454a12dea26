"""The lab's gNMI targets in process, without a socket (grpcio-testing): each NOS's documented refusals and SONiC's
answers from the counter engine.

The EOS, NX-OS and Cumulus targets serve their packs' containers from the counter engine; the reply shapes are
**unverified** (no published reply of those leaves exists), so the test that reads them back compares them with what
the same simulated switch prints over SSH, parsed by the pack's SSH parsers, not with a real device's reply.

grpcio-testing drives synchronous servicers; the lab's servicer is ``grpc.aio``. :class:`SyncFacade` runs each
coroutine of the real servicer to completion on a private event loop and hands ``context.abort`` to
grpcio-testing's real context, so the status codes and details asserted are the ones a client would get. It is
plumbing, not a stand-in: no behaviour of the servicer is replaced.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import json
from collections.abc import Iterator
from typing import Any

import grpc
import grpc_testing
import pytest

from fabricd.model import Platform
from fabricd.nos.cisco_nxos import gnmi as nxos_gnmi
from fabricd.nos.gnmi import path_key
from fabricd.nos.gnmi_registry import table_for
from fabricd.platforms.gnmi import decode_value, gnmi_pb2, parse_path, path_text
from fabricd.readers.switch.model import SwitchCounters, merge
from fabricd_lab.counters import WatchdogSettings
from fabricd_lab.device import DeviceSpec
from fabricd_lab.gnmi import GnmiTarget, PathError
from fabricd_lab.runtime import switch_class

SERVICE = gnmi_pb2.DESCRIPTOR.services_by_name["gNMI"]
PASSWORD = "lab-secret"
PORTS = {
    Platform.SONIC: ("Ethernet0", "Ethernet8"),
    Platform.ARISTA_EOS: ("Ethernet1",),
    Platform.CISCO_NXOS: ("Ethernet1/1",),
    Platform.CUMULUS_NVUE: ("swp1",),
}


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
        finally:  # a test that stops reading leaves the servicer mid-stream: end it on its loop, then close that
            loop.run_until_complete(agen.aclose())
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()


class Clock:
    """The simulated switch's clock, stepped by the test (storms advance with it, no sleeping)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(platform: Platform, clock: Clock | None = None) -> tuple[Any, GnmiTarget]:
    sw = switch_class(platform)(
        DeviceSpec(
            name=f"lab-{platform.value}",
            platform=platform,
            password=PASSWORD,
            ports=tuple((p, 400_000_000_000) for p in PORTS[platform]),
        ),
        clock=clock or Clock(),
    )
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


def sub_list(
    paths: list[str],
    *,
    target: str = "COUNTERS_DB",
    origin: str = "",
    interval_s: float = 1.0,
    mode: str = "ONCE",
    encoding: str = "JSON_IETF",
    path_origins: tuple[str, ...] = (),
) -> Any:
    subs = [
        gnmi_pb2.Subscription(
            path=parse_path(p, origin=path_origins[i] if path_origins else ""),
            mode=gnmi_pb2.SubscriptionMode.Value("SAMPLE"),
            sample_interval=int(interval_s * 1e9),
        )
        for i, p in enumerate(paths)
    ]
    return gnmi_pb2.SubscriptionList(
        prefix=gnmi_pb2.Path(target=target, origin=origin),
        subscription=subs,
        mode=gnmi_pb2.SubscriptionList.Mode.Value(mode),
        encoding=gnmi_pb2.Encoding.Value(encoding),
    )


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
    rpc = server.invoke_unary_unary(
        SERVICE.methods_by_name["Get"],
        META,
        gnmi_pb2.GetRequest(path=[parse_path("interfaces/interface[name=swp1]/state/counters")]),
        None,
    )
    _, _, code, details = rpc.termination()
    assert code is grpc.StatusCode.UNIMPLEMENTED and "Get" in details


def test_eos_native_paths_need_eos_native_and_no_mixing() -> None:
    server, _ = make(Platform.ARISTA_EOS)
    _, code, details = subscribe(server, sub_list(["LANZ"], target="", encoding="JSON"))
    assert code is grpc.StatusCode.NOT_FOUND and "eos_native" in details
    mixed = sub_list(
        ["interfaces/interface[name=*]/state", "LANZ"],
        target="",
        encoding="JSON",
        path_origins=("openconfig", "eos_native"),
    )
    _, code, details = subscribe(server, mixed)
    assert code is grpc.StatusCode.INVALID_ARGUMENT and "mixing origins" in details


def test_nxos_streams_every_ten_seconds_by_default() -> None:
    _, target = make(Platform.CISCO_NXOS)
    assert target.sample_interval(0) == 10.0 and target.sample_interval(1_000_000_000) == 1.0
    with pytest.raises(PathError, match="cannot be less than 1s"):
        target.sample_interval(500_000_000)
    sl = sub_list([nxos_gnmi.QUEUING], target="", origin="device", interval_s=0, mode="STREAM", encoding="JSON")
    assert [s.interval_s for s in target.plan(sl)] == [10.0]
    with pytest.raises(PathError, match="not served"):
        target.plan(sub_list(["System/intf-items"], target="", interval_s=0, mode="STREAM", encoding="JSON"))


def test_capabilities_lists_the_nos_encodings() -> None:
    server, _ = make(Platform.SONIC)
    rpc = server.invoke_unary_unary(SERVICE.methods_by_name["Capabilities"], META, gnmi_pb2.CapabilityRequest(), None)
    response, _, code, _ = rpc.termination()
    assert code is grpc.StatusCode.OK
    assert gnmi_pb2.Encoding.Value("JSON_IETF") in response.supported_encodings
    assert json.loads(json.dumps(response.gNMI_version)) == "0.7.0"


def _ssh_counters(target: GnmiTarget) -> SwitchCounters:
    """The simulated switch's counter commands over its SSH shell (in process), parsed by the pack's parsers, the
    ports filled in for per-interface commands as the SSH collector does."""
    sw = target.switch
    show = importlib.import_module(f"fabricd.nos.{sw.platform.value}.show")
    shell = sw.open_shell()
    parts = []
    for role, command in {**show.COMMANDS, **show.OPTIONAL_COMMANDS}.items():
        ports = sw.port_names if "{interface}" in command else [None]
        for port in ports:
            c = show.PARSERS[role](shell.handle(command.format(interface=port)).output)
            if c.problems:
                continue  # an optional command the lab does not simulate (transceivers, FEC)
            if port is not None:
                c = _with_port(c, port)
            parts.append(c)
    return merge(parts)


def _with_port(c: SwitchCounters, port: str) -> SwitchCounters:
    fields = {}
    for name in ("pfc", "queues", "pfcwd", "interfaces", "link"):
        fields[name] = tuple(dataclasses.replace(r, interface=port) for r in getattr(c, name))
    return dataclasses.replace(c, **fields)


def _series(c: SwitchCounters, platform: Platform) -> dict[tuple[str, tuple[str, ...]], float]:
    from fabricd.collectors.core import Registry
    from fabricd.collectors.switch import SwitchCollector, SwitchPoll, SwitchTarget

    class _One:
        def poll(self, wait_s: float | None = None) -> list[SwitchPoll]:
            return [SwitchPoll(SwitchTarget("sw", platform.value), c, None, 0.0)]

        def health(self) -> list[Any]:
            return []

        def close(self) -> None:
            return None

    out = {}
    for fam in Registry([SwitchCollector(_One())]).scrape():  # type: ignore[arg-type]
        for labels, value in fam.samples:
            if fam.spec.name.startswith("fabricd_switch_") and fam.spec.name != "fabricd_switch_up":
                out[(fam.spec.name, tuple(labels))] = float(value)
    return out


def _drive(target: GnmiTarget, clock: Clock) -> None:
    sw = target.switch
    first = sw.port_names[0]
    sw.counters.set_watchdog(WatchdogSettings(priorities=frozenset({3}), ports=frozenset({first})))
    sw.counters.storm_start(first, 3)  # one storm, detected and restored: EOS's CLI lists watchdog queues with events
    clock.now += 0.5
    sw.counters.storm_stop(first, 3)
    clock.now += 0.5
    sw.counters.read()
    for port in sw.port_names:
        for q in range(8):  # every queue busy: EOS's CLI prints only queues with counts
            sw.counters.traffic(port, q, 100 + q, 512)
            sw.counters.ecn_mark(port, q, 3 + q)
    sw.counters.pause(first, 3, 900, direction="rx")
    sw.counters.pause(first, 4, 12, direction="tx")
    sw.counters.drop(first, 0, 5, 1500)


@pytest.mark.parametrize("platform", [Platform.ARISTA_EOS, Platform.CISCO_NXOS, Platform.CUMULUS_NVUE])
def test_one_lab_state_same_series_over_ssh_and_gnmi_in_process(platform: Platform) -> None:
    """The target's ONCE reply of every path of the pack's table, mapped by the pack, gives the series the same
    simulated switch's SSH commands give, except what the pack declares missing (absent over gNMI, never 0) or
    streamed only over gNMI."""
    clock = Clock()
    server, target = make(platform, clock)
    _drive(target, clock)
    table = table_for(platform)
    values: dict[str, Any] = {}
    for paths in table.groups().values():
        sl = sub_list([p.path for p in paths], target="", origin=paths[0].origin, encoding=table.encoding)
        responses, code, details = subscribe(server, sl)
        assert code is grpc.StatusCode.OK, details
        for r in responses[:-1]:
            note = r.update
            for u in note.update:
                values[path_key(note.prefix.target, note.prefix.origin, path_text(u.path, note.prefix))] = decode_value(
                    u.val
                )
    assert table.to_counters is not None
    over_gnmi = _series(table.to_counters(values), platform)
    over_ssh = _series(_ssh_counters(target), platform)
    names = {s.name: s.labels for s in _specs()}

    def declared(entries: tuple[str, ...], key: tuple[str, tuple[str, ...]]) -> bool:
        return table.declared(entries, key[0], dict(zip(names[key[0]], key[1], strict=True)))

    assert not [k for k in over_gnmi if declared(table.missing_when_streaming, k)]
    ssh = {k: v for k, v in over_ssh.items() if not declared(table.missing_when_streaming, k)}
    gnmi = {k: v for k, v in over_gnmi.items() if not declared(table.only_when_streaming, k)}
    assert set(ssh) == set(gnmi), sorted(set(ssh) ^ set(gnmi))[:20]
    assert ssh == gnmi
    assert gnmi[("fabricd_switch_pfc_pause_frames_total", ("sw", target.switch.port_names[0], "3", "rx"))] > 900
    assert len(gnmi) > 50


def _specs() -> list[Any]:
    from fabricd.collectors.switch import SwitchCollector

    return list(SwitchCollector.metrics)
