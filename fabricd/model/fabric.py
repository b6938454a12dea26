"""The top-level inventory model: one fabric, its policy and its devices."""

from __future__ import annotations

from functools import cached_property

from pydantic import Field

from .policy import Policy
from .topology import Host, Link, Switch
from .types import DeviceName, Model, OneLine


class Fabric(Model):
    """A RoCEv2 fabric and its lossless policy: the single source of truth every command works from."""

    name: DeviceName = "fabric"
    description: OneLine | None = None
    policy: Policy = Field(default_factory=Policy)
    switches: list[Switch] = Field(default_factory=list)
    hosts: list[Host] = Field(default_factory=list)
    links: list[Link] = Field(default_factory=list)

    @cached_property
    def switch_by_name(self) -> dict[str, Switch]:
        return {s.name: s for s in self.switches}

    @cached_property
    def host_by_name(self) -> dict[str, Host]:
        return {h.name: h for h in self.hosts}

    def switch(self, name: str) -> Switch | None:
        return self.switch_by_name.get(name)

    def host(self, name: str) -> Host | None:
        return self.host_by_name.get(name)
