"""What fabricd-lab plugs into fabricd (entry points in lab/pyproject.toml). Cheap to import: nothing here loads a
command module, asyncssh, matplotlib or the VM code until a command or a runner is used.

- :data:`COMMANDS` (group ``fabricd.commands``): command name -> (module, one-line help). The module defines
  ``register(app)``, as fabricd's own command modules do; fabricd lists the row in ``fabricd --help`` and imports
  the module only when the command runs.
- :data:`VM_RUNNERS` (group ``fabricd.traffic_runners``): the running Soft-RoCE lab VMs as a runner pool for
  ``fabricd validate-fabric`` and ``fabricd traffic selftest``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fabricd_lab.vm.instance import Instance

COMMANDS: dict[str, tuple[str, str]] = {
    "demo": (
        "fabricd_lab.cli.demo",
        "Run the whole loop on the embedded lab fabric (or INVENTORY), one narrated step per stage: validate, "
        "render for four NOSes and the hosts, push to simulated switches over SSH, apply and audit a host in a "
        "network namespace, export counters into a real Prometheus, inject a PFC storm and watch it detected, "
        "alerted, traced to its origin and restored, and (when the VM can run) verbs traffic through "
        "validate-fabric. A stage that cannot run here says why and is skipped.",
    ),
    "report": ("fabricd_lab.cli.report", "Draw a run's pictures: storm-timeline.png, dashboard.png and topology.png."),
    "lab": (
        "fabricd_lab.cli.lab",
        "The switch lab: SSH simulators of SONiC, EOS, NX-OS and NVUE that fabricd drives for real.",
    ),
}


class LabVmRunners:
    """The lab VMs (``fabricd lab vm up``) as a :class:`fabricd.traffic.remote.RunnerSource`."""

    def running(self, name: str) -> Instance | None:
        from fabricd_lab.vm import instance

        inst = instance.load(name)
        if inst is None or inst.stopped or not all(inst.alive().values()):
            return None
        return inst

    def how_to_start(self, name: str) -> str:
        return "fabricd lab vm up INVENTORY" + ("" if name == "lab" else f" --name {name}")


VM_RUNNERS = LabVmRunners()
