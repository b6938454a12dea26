"""Devices and links: switches with ports, hosts with RDMA NICs, and the cables between them."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from .platform import Platform
from .policy import LinkRole, Transport
from .types import (
    Bytes,
    CliText,
    DeviceName,
    Endpoint,
    InterfaceName,
    IPv4Address,
    Meters,
    Model,
    MtuBytes,
    Name,
    Speed,
    TcpPort,
    VlanId,
)


class SwitchRole(StrEnum):
    LEAF = "leaf"
    SPINE = "spine"
    SUPERSPINE = "superspine"


class Credentials(Model):
    """How fabricd logs in to a device: a *reference* to a secret (an environment variable or a file readable only
    by its owner, 0600), and the known_hosts file that vouches for the device's SSH host key.

    The secret itself never appears in the inventory.
    """

    username: Name = "admin"
    password_env: Name | None = Field(default=None, description="environment variable holding the password")
    password_file: Path | None = Field(
        default=None,
        description="file (mode 0600) holding the password; `~`, `$VAR` and `${VAR}` are expanded when it is read, "
        "and `${FABRICD_STATE_DIR}` is fabricd's state directory even when the variable is unset",
    )
    known_hosts: Path | None = Field(
        default=None,
        description="a known_hosts file holding this device's SSH host key, read besides --known-hosts and "
        "~/.ssh/known_hosts (every file that names the device must match its key); expanded like password_file",
    )

    @model_validator(mode="after")
    def _one_source(self) -> Credentials:
        if self.password_env and self.password_file:
            raise ValueError("give password_env or password_file, not both")
        return self


class Management(Model):
    """How fabricd reaches a device: address (name or IP) and SSH port."""

    host: Name
    port: TcpPort = 22


class GnmiSettings(Model):
    """How fabricd streams a switch's counters over gNMI (``telemetry.transport: gnmi``; docs/inventory.md).

    Always TLS: the switch's certificate is verified against ``tls_ca`` (or the system's CA roots when unset); there
    is no plaintext mode. The username and password are the switch's ``credentials`` (sent as the gRPC ``username``
    and ``password`` metadata every NOS's gNMI server reads)."""

    port: TcpPort | None = Field(
        default=None,
        description="gNMI port; None = the NOS's default (SONiC 8080, EOS "
        "6030, NX-OS 50051, Cumulus 9339: fabricd/nos/<id>/gnmi.py)",
    )
    tls_ca: Path | None = Field(
        default=None,
        description="PEM file of the CA(s) that signed the switch's gNMI "
        "certificate; None = the system's roots. Expanded like credentials.password_file",
    )
    tls_server_name: Name | None = Field(
        default=None, description="the name to check in the certificate when it is not mgmt.host"
    )
    sample_interval_s: float | None = Field(
        default=None,
        gt=0,
        le=86400,
        description="SAMPLE interval of every "
        "counter path; None = each path's default in the pack (never under "
        "the NOS's documented floor: SONiC and Cumulus 1 s)",
    )


class Telemetry(Model):
    """How the switch exporter reads this switch's counters: ``ssh`` (show commands, the default and the fallback)
    or ``gnmi`` (a Subscribe stream; the pack's gNMI table must be mapped, docs/metrics.md)."""

    transport: Literal["ssh", "gnmi"] = "ssh"
    gnmi: GnmiSettings = Field(default_factory=GnmiSettings)


class Port(Model):
    """A switch port. ``role`` (what it connects) picks the cable length used for headroom."""

    name: Name
    speed: Speed = Speed.G400
    mtu: MtuBytes = 9216
    role: LinkRole = LinkRole.HOST
    description: CliText | None = None


class SwitchBuffer(Model):
    """Known ASIC buffer figures for the headroom-fits and ECN-fits checks; None when unknown."""

    total_bytes: Bytes | None = None
    headroom_pool_bytes: Bytes | None = None
    max_queue_bytes: Bytes | None = Field(default=None, description="largest ECN threshold the queue can hold")


class Switch(Model):
    name: DeviceName
    platform: Platform
    role: SwitchRole = SwitchRole.LEAF
    mgmt: Management
    credentials: Credentials = Field(default_factory=Credentials)
    groups: list[Name] = Field(default_factory=list)
    ports: list[Port] = Field(default_factory=list)
    buffer: SwitchBuffer = Field(default_factory=SwitchBuffer)
    telemetry: Telemetry = Field(default_factory=Telemetry)

    def port(self, name: str) -> Port | None:
        return next((p for p in self.ports if p.name == name), None)


def _none_is_empty(value: Any) -> Any:
    """``cc: null`` (the inventory's way to clear inherited knobs: null replaces in the merge) is no knob."""
    return {} if value is None else value


class Nic(Model):
    """A host RDMA NIC port: its netdev, RDMA device, driver, address, optional RDMA VLAN and switch peer."""

    netdev: InterfaceName
    rdma_device: DeviceName | None = Field(default=None, description="e.g. mlx5_0; None for a NIC without RDMA")
    rdma_port: int = Field(default=1, ge=1, le=2)
    driver: DeviceName = Field(
        default="mlx5_core",
        description="netdev kernel driver (`ethtool -i`): selects the NIC "
        "profile (mlx5_core, ice, bnxt_en; `fabricd docs nics`)",
    )
    rdma_driver: DeviceName | None = Field(
        default=None,
        description="RDMA device driver when it, not the netdev's, selects the profile (rdma_rxe for "
        "Soft-RoCE on virtio_net); None = implied by driver",
    )
    transport: Transport | None = Field(
        default=None,
        description="this NIC's RDMA transport; None = policy.transport (an E810 may run iWARP in a RoCE fabric)",
    )
    cc: Annotated[dict[Name, int], BeforeValidator(_none_is_empty)] = Field(
        default_factory=dict,
        description="congestion-control knobs of this NIC's family by name (`fabricd docs "
        "nics`), e.g. {rpg_time_reset: 300} on mlx5, {g: 8} on bnxt; null clears the knobs inherited from defaults "
        "or groups (a mapping merges into them)",
    )
    ip: IPv4Address | None = None
    vlan: VlanId | None = None
    mtu: MtuBytes = 9000
    speed: Speed | None = None
    peer: Endpoint | None = Field(default=None, description="'switch:port' this NIC is cabled to")
    cable_m: Meters | None = None


class Host(Model):
    name: DeviceName
    mgmt: Management | None = None
    groups: list[Name] = Field(default_factory=list)
    nics: list[Nic] = Field(default_factory=list)


class Link(Model):
    """A cable between two switch ports, each end ``device:port``. Host cables are given by ``Nic.peer``."""

    a: Endpoint
    b: Endpoint
    role: LinkRole | None = Field(default=None, description="defaults to the ports' role")
    cable_m: Meters | None = Field(default=None, description="overrides the role's cable length")


def split_endpoint(endpoint: str) -> tuple[str, str]:
    """``'leaf1:Ethernet0'`` -> ``('leaf1', 'Ethernet0')``. Raises ValueError on a malformed endpoint."""
    device, sep, port = endpoint.partition(":")
    if not sep or not device or not port:
        raise ValueError(f"endpoint must be 'device:port', got {endpoint!r}")
    return device, port
