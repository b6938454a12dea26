"""``fabricd rollback``: return switches to the checkpoint fabricd took before its last push."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import typer

from fabricd.deploy.pipeline import default_factory, rollback_one
from fabricd.deploy.targets import select_targets
from fabricd.errors import UsageError
from fabricd.inventory import load_inventory

from .common import ExitCode, InventoryArg, OutputFormat, OutputOpt, emit_json, inventory_path, stdout
from .deploy_common import (
    AcceptNewHostKeysOpt,
    DeviceOpt,
    InsecureOpt,
    KnownHostsOpt,
    ReadTimeoutOpt,
    SessionLogOpt,
    SshFlags,
    push_options,
    results_table,
)


def rollback_cmd(
    inventory: InventoryArg = None,
    device: DeviceOpt = None,
    known_hosts: KnownHostsOpt = None,
    insecure: InsecureOpt = False,
    accept_new_host_keys: AcceptNewHostKeysOpt = None,
    read_timeout: ReadTimeoutOpt = 60.0,
    session_log: SessionLogOpt = None,
    output: OutputOpt = OutputFormat.TEXT,
) -> None:
    """Roll switches back to the config saved before fabricd's last push on them.

    EOS restores checkpoint fabricd-last (or aborts a pending commit timer), NX-OS runs `rollback running-config
    checkpoint fabricd-last`, SONiC `config rollback fabricd-last`, NVUE re-applies the revision before the
    last apply. Exit 0 when done, 3 when some switches failed.

    [bold]Example[/]: fabricd rollback ./fabric --device leaf2-eos
    [bold]Example[/]: fabricd rollback ./fabric --device leaf3-nxos --device spine1 --output json
    """
    if not device:
        raise UsageError("say which switch to roll back", hint="pass --device NAME (repeatable)")
    fabric = load_inventory(inventory_path(inventory, writes="rollback")).fabric
    targets = select_targets(fabric, device)
    opts = push_options(SshFlags.of(locals()), concurrency=len(targets))
    factory = default_factory(opts)
    with ThreadPoolExecutor(max_workers=min(32, len(targets))) as pool:
        results = list(pool.map(lambda sw: rollback_one(sw, factory), targets))
    if output == OutputFormat.JSON:
        emit_json({"results": [r.model_dump(mode="json") for r in results]})
    else:
        stdout().print(results_table(results, "fabricd rollback"))
    if any(r.failed for r in results):
        raise typer.Exit(ExitCode.TARGETS_FAILED)


def register(app: typer.Typer) -> None:
    app.command("rollback")(rollback_cmd)
