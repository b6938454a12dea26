"""The DCB backend: trust order (apptrust), PFC, ETS and the DSCP APP table over DCB netlink.

Paths of its steps (fabricd.intent.host.dcb_steps) and their values:

- ``apptrust``: selector names, most trusted first (``["dscp"]``); DCB_ATTR_DCB_APP_TRUST_TABLE (Linux >= 6.1);
- ``pfc``: the PFC enable bitmap (``ieee_pfc.pfc_en``; pfc_cap, mbc and delay are kept as the device has them);
- ``ets``: ``{"prio_tc", "tc_tsa" (names), "tc_bw" (%)}`` (``ieee_ets``; willing/cbs/reco kept);
- ``app``: ``{"<dscp>": priority}`` of the DSCP-selector APP entries.

The netlink code is :mod:`fabricd.hosts.dcbnl`. Only where the kernel's IEEE reply lacks an attribute (apptrust
on kernels before 6.1) does the backend fall back to iproute2 ``dcb -j apptrust show`` for reading.
"""

from __future__ import annotations

import errno
import json
import shutil
import subprocess
from typing import Any

from pydantic import JsonValue

from fabricd.errors import HostBackendError
from fabricd.intent.host import Backend, HostStep

from .base import HostBackend, Reading
from .dcbnl import (
    SEL_DSCP,
    TRUST_CODES,
    TRUST_NAMES,
    TSA_CODES,
    TSA_NAMES,
    DcbApp,
    DcbClient,
    DcbNetlinkError,
    IeeeEts,
    IeeePfc,
    IeeeState,
)
from .netns import route_socket_factory


def _ets_value(ets: IeeeEts) -> dict[str, JsonValue]:
    return {
        "prio_tc": list(ets.prio_tc),
        "tc_tsa": [TSA_NAMES.get(t, str(t)) for t in ets.tc_tsa],
        "tc_bw": list(ets.tc_tx_bw),
    }


def _app_value(apps: list[DcbApp]) -> dict[str, JsonValue]:
    return {str(a.protocol): a.priority for a in sorted(apps, key=lambda a: a.protocol) if a.selector == SEL_DSCP}


class DcbBackend(HostBackend):
    """DCB over netlink, in the caller's network namespace or in ``netns``."""

    backend = Backend.DCB

    def __init__(
        self, netns: str | None = None, *, client: DcbClient | None = None, dcb_cli: str | None = "dcb"
    ) -> None:
        self.netns = netns
        self.client = client or DcbClient(route_socket_factory(netns))
        self._dcb_cli = dcb_cli

    def _get(self, ifname: str) -> IeeeState:
        try:
            return self.client.get(ifname)
        except DcbNetlinkError as exc:
            if exc.errno == errno.EOPNOTSUPP:
                raise HostBackendError(
                    "read dcb",
                    ifname,
                    "the device has no DCB support (EOPNOTSUPP)",
                    errno=exc.errno,
                    hint="DCB needs a NIC driver with dcbnl_ops (mlx5, ice, bnxt...); use --skip dcb on other devices",
                ) from exc
            raise HostBackendError("read dcb", ifname, str(exc), errno=exc.errno) from exc

    def read(self, obj: str, path: str) -> Reading:
        try:
            state = self._get(obj)
        except HostBackendError as exc:
            if exc.errno == errno.ENODEV:
                return Reading(object=obj, path=path, present=False)
            return Reading(object=obj, path=path, present=False, error=exc.render())
        value: JsonValue = None
        if path == "pfc" and state.pfc is not None:
            value = state.pfc.pfc_en
        elif path == "ets" and state.ets is not None:
            value = _ets_value(state.ets)
        elif path == "app":
            value = _app_value(state.app or [])
        elif path == "apptrust":
            if state.trust is not None:
                value = [TRUST_NAMES.get(s, str(s)) for s in state.trust]
            else:
                value = self._cli_apptrust(obj)
        if value is None:
            return Reading(object=obj, path=path, present=False, error=f"the device reports no DCB {path}")
        return Reading(object=obj, path=path, value=value)

    def _cli_apptrust(self, ifname: str) -> JsonValue:
        """Fallback when the kernel reply has no trust table: ``dcb -j apptrust show dev IF`` ({"order": [...]})."""
        if not self._dcb_cli or shutil.which(self._dcb_cli) is None:
            return None
        cmd = [self._dcb_cli, *(["-n", self.netns] if self.netns else []), "-j", "apptrust", "show", "dev", ifname]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=10)
        if proc.returncode != 0:
            return None
        try:
            order = json.loads(proc.stdout).get("order")
        except (json.JSONDecodeError, AttributeError):
            return None
        return [str(o) for o in order] if isinstance(order, list) else None

    def write(self, step: HostStep) -> None:
        self._write(step.object, step.path, step.desired)

    def write_back(self, reading: Reading) -> None:
        if reading.present:
            self._write(reading.object, reading.path, reading.value)

    def _write(self, ifname: str, path: str, value: JsonValue) -> None:
        try:
            if path == "apptrust":
                names = [str(v) for v in value] if isinstance(value, list) else []
                unknown = [n for n in names if n not in TRUST_CODES]
                if unknown:
                    raise HostBackendError("set apptrust", ifname, f"unknown selector {unknown[0]!r}")
                self.client.set_trust(ifname, [TRUST_CODES[n] for n in names])
            elif path == "pfc":
                pfc_cur = self._get(ifname).pfc or IeeePfc()
                self.client.set_pfc(ifname, pfc_cur.model_copy(update={"pfc_en": int(str(value))}))
            elif path == "ets":
                if not isinstance(value, dict):
                    raise HostBackendError("set ets", ifname, f"bad value {value!r}")
                ets_cur = self._get(ifname).ets or IeeeEts()
                self.client.set_ets(
                    ifname,
                    ets_cur.model_copy(
                        update={
                            "prio_tc": [int(str(x)) for x in _list(value["prio_tc"])],
                            "tc_tsa": [TSA_CODES[str(x)] for x in _list(value["tc_tsa"])],
                            "tc_tx_bw": [int(str(x)) for x in _list(value["tc_bw"])],
                        }
                    ),
                )
            elif path == "app":
                if not isinstance(value, dict):
                    raise HostBackendError("set app", ifname, f"bad value {value!r}")
                self._set_app(ifname, {int(k): int(str(v)) for k, v in value.items()})
            else:
                raise HostBackendError("write", f"{ifname} {path}", "unknown DCB object")
        except DcbNetlinkError as exc:
            raise HostBackendError(
                f"set {path}",
                ifname + (f" in netns {self.netns}" if self.netns else ""),
                f"kernel said: {exc}",
                errno=exc.errno,
                hint="the driver rejected the DCB setting; see dmesg",
            ) from exc

    def _set_app(self, ifname: str, want: dict[int, int]) -> None:
        """Make the DSCP APP entries exactly ``want``: delete stale ones first, then add the missing."""
        have = self._get(ifname).app or []
        stale = [a for a in have if a.selector == SEL_DSCP and want.get(a.protocol) != a.priority]
        present = {(a.protocol, a.priority) for a in have if a.selector == SEL_DSCP}
        missing = [
            DcbApp(selector=SEL_DSCP, priority=p, protocol=d) for d, p in sorted(want.items()) if (d, p) not in present
        ]
        self.client.del_apps(ifname, stale)
        self.client.add_apps(ifname, missing)


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list) or len(value) != 8:
        raise HostBackendError("set ets", "ets", f"expected 8 values, got {value!r}")
    return value
