"""The gNMI transport (L2, beside the netmiko drivers): the protobuf stubs, path text <-> ``gnmi.Path``, typed-value
decoding, Subscribe requests from a pack's :class:`~fabricd.nos.gnmi.GnmiTable`, and TLS channels.

The stubs come from one package only, finsy (``finsy.proto.gnmi1``; docs/history.md "gNMI" says why): two
packages that each register ``gnmi.proto`` in protobuf's default pool collide. Importing this module imports grpc
and protobuf (about 0.3 s), so only the gNMI collector, ``fabricd capture --gnmi`` and the lab's gNMI targets import
it, on first use: ``fabricd --help`` never does.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

import grpc
from finsy.proto.gnmi1 import gnmi_pb2, gnmi_pb2_grpc

from fabricd.nos.gnmi import GnmiPath, GnmiTable

__all__ = ["gnmi_pb2", "gnmi_pb2_grpc"]

_ELEM = re.compile(r"([^/\[]+)((?:\[[^=\]]+=[^\]]*\])*)")
_KEY = re.compile(r"\[([^=\]]+)=([^\]]*)\]")


def parse_path(text: str, *, origin: str = "", target: str = "") -> Any:
    """``a/b[k=v]/c`` -> ``gnmi.Path`` (elements with keys; ``origin``/``target`` as given)."""
    elems = []
    for part in [p for p in _split(text) if p]:
        m = _ELEM.fullmatch(part)
        if m is None:
            raise ValueError(f"gNMI path {text!r}: element {part!r} is not name[key=value]...")
        elems.append(gnmi_pb2.PathElem(name=m.group(1), key=dict(_KEY.findall(m.group(2)))))
    return gnmi_pb2.Path(elem=elems, origin=origin, target=target)


def _split(text: str) -> list[str]:
    """Split on ``/`` outside ``[...]`` (a key value may hold a slash: ``interface[name=Ethernet1/1]``)."""
    parts, depth, cur = [], 0, ""
    for ch in text.strip("/"):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(0, depth - 1)
        if ch == "/" and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def path_text(path: Any, prefix: Any | None = None) -> str:
    """``gnmi.Path`` (after ``prefix``'s elements) -> ``a/b[k=v]/c``, without origin or target."""
    elems = [*(prefix.elem if prefix is not None else ()), *path.elem]
    return "/".join(e.name + "".join(f"[{k}={v}]" for k, v in sorted(e.key.items())) for e in elems)


def decode_value(value: Any) -> Any:
    """A ``gnmi.TypedValue`` -> a Python value (JSON decoded; ints as ints; leaf-lists as lists)."""
    kind = value.WhichOneof("value")
    if kind in ("json_ietf_val", "json_val"):
        return json.loads(getattr(value, kind) or b"null")
    if kind == "leaflist_val":
        return [decode_value(v) for v in value.leaflist_val.element]
    if kind is None:
        return None
    if kind == "decimal_val":
        return value.decimal_val.digits / 10**value.decimal_val.precision
    return getattr(value, kind)


def json_value(data: Any, *, ietf: bool = True) -> Any:
    """A Python value -> ``gnmi.TypedValue`` with JSON (``json_ietf_val`` or ``json_val``)."""
    raw = json.dumps(data, separators=(",", ":")).encode()
    return gnmi_pb2.TypedValue(json_ietf_val=raw) if ietf else gnmi_pb2.TypedValue(json_val=raw)


def subscribe_request(
    table: GnmiTable, paths: Sequence[GnmiPath], *, interval_s: float | None = None, mode: str = "STREAM"
) -> Any:
    """One Subscribe request for a group of ``paths`` of ``table`` (one origin/target: the group's first path's),
    SAMPLE paths at :meth:`GnmiTable.interval`, in the table's encoding."""
    first = paths[0]
    subs = []
    for p in paths:
        sub = gnmi_pb2.Subscription(path=parse_path(p.path), mode=gnmi_pb2.SubscriptionMode.Value(p.mode))
        if p.mode == "SAMPLE":
            sub.sample_interval = int(table.interval(p, interval_s) * 1e9)
        subs.append(sub)
    prefix = gnmi_pb2.Path(origin=first.origin, target=first.target)
    sl = gnmi_pb2.SubscriptionList(
        prefix=prefix,
        subscription=subs,
        mode=gnmi_pb2.SubscriptionList.Mode.Value(mode),
        encoding=gnmi_pb2.Encoding.Value(table.encoding),
    )
    return gnmi_pb2.SubscribeRequest(subscribe=sl)


def secure_channel(
    host: str,
    port: int,
    *,
    ca_pem: bytes | None,
    server_name: str | None = None,
    options: Iterable[tuple[str, Any]] = (),
) -> Any:
    """A ``grpc.aio`` TLS channel (the server's certificate verified against ``ca_pem``, or the system's roots)."""
    creds = grpc.ssl_channel_credentials(root_certificates=ca_pem)
    opts = [*options, ("grpc.max_receive_message_length", 64 * 1024 * 1024)]
    if server_name:
        opts.append(("grpc.ssl_target_name_override", server_name))
    return grpc.aio.secure_channel(f"{host}:{port}", creds, options=opts)


def auth_metadata(username: str, password: str) -> tuple[tuple[str, str], ...]:
    """The ``username``/``password`` metadata gNMI servers read (sonic-gnmi, EOS, NX-OS, Cumulus)."""
    return (("username", username), ("password", password))


async def settle(timeout_s: float = 5.0) -> None:
    """Wait, at most ``timeout_s``, until every other task on the running loop has ended: what a loop that ran
    ``grpc.aio`` calls awaits after its channels are closed and before it is closed itself.

    Cancelling a call sets its status at once, but grpc.aio's own task for that call (``_handle_status_once_received``)
    waits for the gRPC core to confirm the end. A loop closed first leaves that task pending ("Task was destroyed
    but it is pending!" when it is collected), and the confirmation still arrives later: another loop of the process
    (a lab, a server) hands it to the closed loop ("RuntimeError: Event loop is closed"). Cancelling the task instead
    (``asyncio.run`` does) would not end the core's operation, so this waits for it."""
    current = asyncio.current_task()
    rest = {t for t in asyncio.all_tasks() if t is not current}
    if rest:
        await asyncio.wait(rest, timeout=timeout_s)
