"""A throwaway fifth platform pack for the tests that walk the registry (issue 24, part 6: a fifth NOS without its
goldens, templates or oracle must fail a test, not pass silently).

:func:`fake_pack` registers SONiC's spec under a new id for the length of a ``with`` block. The fake has no folder,
no templates, no goldens, no captures and no conformance oracle, so every check that walks the registry for what a
pack needs must name it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager

from fabricd.model import Platform
from fabricd.nos.registry import SPECS
from fabricd.nos.spec import PlatformSpec

FAKE_ID = "fake_nos"


@contextmanager
def fake_pack(pid: str = FAKE_ID) -> Iterator[PlatformSpec]:
    """SONiC's spec as platform ``pid``, served by the registry inside the block only."""
    spec = dataclasses.replace(SPECS[Platform.SONIC], platform=Platform(pid), title="Fake NOS", templates=pid)
    with SPECS.registered(spec):
        yield spec
    assert pid not in SPECS
