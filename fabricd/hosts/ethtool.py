"""802.3x global pause through pyroute2's ethtool ioctl (``ethtool -a`` / ``ethtool -A``).

pyroute2's :class:`~pyroute2.ethtool.ioctl.IoctlEthtool` has no pause-parameter call and its genl ethtool has no
PAUSE_GET, so this adds ETHTOOL_GPAUSEPARAM (0x12) / ETHTOOL_SPAUSEPARAM (0x13) with ``struct ethtool_pauseparam``
(``include/uapi/linux/ethtool.h``: cmd, autoneg, rx_pause, tx_pause, all u32) on the same ioctl socket.
The ioctl acts in the network namespace the socket was created in, so the socket is opened inside ``netns``.
"""

from __future__ import annotations

import ctypes
import errno

from pyroute2.ethtool.ioctl import IoctlEthtool, NoSuchDevice, NotSupportedError

from fabricd.errors import HostBackendError

from .netns import in_netns

ETHTOOL_GPAUSEPARAM = 0x12
ETHTOOL_SPAUSEPARAM = 0x13


class EthtoolPauseParam(ctypes.Structure):
    _fields_ = [
        ("cmd", ctypes.c_uint32),
        ("autoneg", ctypes.c_uint32),
        ("rx_pause", ctypes.c_uint32),
        ("tx_pause", ctypes.c_uint32),
    ]


class PauseEthtool(IoctlEthtool):  # type: ignore[misc]
    """IoctlEthtool plus the pause parameters."""

    def _pause(self, cmd: int, param: EthtoolPauseParam | None = None) -> EthtoolPauseParam:
        p = param if param is not None else EthtoolPauseParam()
        p.cmd = cmd
        self.ifreq.gstats = ctypes.cast(ctypes.byref(p), ctypes.c_void_p)
        self.ioctl()
        return p

    def get_pause(self) -> dict[str, bool]:
        p = self._pause(ETHTOOL_GPAUSEPARAM)
        return {"autoneg": bool(p.autoneg), "rx": bool(p.rx_pause), "tx": bool(p.tx_pause)}

    def set_pause(self, *, rx: bool, tx: bool, autoneg: bool = False) -> None:
        self._pause(ETHTOOL_SPAUSEPARAM, EthtoolPauseParam(0, int(autoneg), int(rx), int(tx)))


def read_pause(ifname: str, netns: str | None = None) -> dict[str, bool] | None:
    """``{"autoneg", "rx", "tx"}``; ``{"rx": False, "tx": False, "supported": False}`` when the device has no pause
    support (veth: it can send no pause frames, so pause is off); None when the device does not exist."""
    with in_netns(netns):
        tool = PauseEthtool(ifname)
    try:
        return tool.get_pause()
    except NotSupportedError:
        return {"rx": False, "tx": False, "supported": False}
    except NoSuchDevice:
        return None
    except OSError as exc:
        if exc.errno == errno.EOPNOTSUPP:
            return {"rx": False, "tx": False, "supported": False}
        raise HostBackendError("ethtool -a", ifname, exc.strerror or str(exc), errno=exc.errno) from exc
    finally:
        tool.close()


def write_pause(ifname: str, *, rx: bool, tx: bool, netns: str | None = None) -> None:
    """Set global pause (autoneg off); located HostBackendError on failure."""
    with in_netns(netns):
        tool = PauseEthtool(ifname)
    try:
        tool.set_pause(rx=rx, tx=tx)
    except (NotSupportedError, NoSuchDevice) as exc:
        raise HostBackendError(
            "ethtool -A",
            ifname,
            f"cannot set pause: {type(exc).__name__}",
            hint="the device does not support 802.3x pause settings",
        ) from exc
    except OSError as exc:
        raise HostBackendError(
            "ethtool -A",
            ifname,
            exc.strerror or str(exc),
            errno=exc.errno,
            hint="see dmesg; some drivers refuse pause changes while PFC is on",
        ) from exc
    finally:
        tool.close()
