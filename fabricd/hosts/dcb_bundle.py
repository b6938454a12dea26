"""DCB state read from a bundle of ``dcb ... show`` outputs under a replay root (read-only).

Layout (beside the replay root's ``sys/`` and ``ethtool/``): ``DIR/dcb/<if>.pfc`` (text of ``dcb pfc show dev
<if>``), ``DIR/dcb/<if>.ets`` (``dcb ets show dev <if>``), ``DIR/dcb/<if>.app`` (``dcb app show dev <if>
dscp-prio``, with or without ``-N``), ``DIR/dcb/<if>.apptrust`` (``dcb apptrust show dev <if>``). A support bundle
or ``fabricd capture --host`` provides them; ``fabricd audit host --root DIR`` then checks trust, PFC, ETS and the
DSCP map from the files instead of skipping them. The apptrust reader's only capture is the dcb-apptrust(8)
example (no output from a device was found), so a bundle's trust reading rests on iproute2's printer.

A file that does not parse is a reading with the reader's located error (file:line, expected, got), which the audit
reports as a finding; a bundle cannot be written to.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import JsonValue

from fabricd.errors import HostBackendError
from fabricd.intent.host import Backend, HostStep
from fabricd.readers.dcb_apptrust import parse_dcb_apptrust
from fabricd.readers.dcb_text import parse_dcb_app, parse_dcb_ets, parse_dcb_pfc
from fabricd.readers.textparse import TextParseError

from .base import HostBackend, Reading

SUFFIX = {"pfc": "pfc", "ets": "ets", "app": "app", "apptrust": "apptrust"}


def bundle_dir(root: str | os.PathLike[str]) -> Path:
    return Path(root) / "dcb"


class DcbBundle(HostBackend):
    """Answers the DCB backend's reads (``pfc``, ``ets``, ``app``) from ``DIR/dcb/<if>.<kind>`` text files."""

    backend = Backend.DCB

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.dir = bundle_dir(root)

    def read(self, obj: str, path: str) -> Reading:
        if path not in SUFFIX:
            return Reading(object=obj, path=path, present=False, error=f"no bundle reader for {path}")
        file = self.dir / f"{obj}.{SUFFIX[path]}"
        try:
            text = file.read_text()
        except FileNotFoundError:
            return Reading(object=obj, path=path, present=False, error=f"{file} is not in the bundle")
        except (OSError, UnicodeDecodeError) as exc:
            return Reading(object=obj, path=path, present=False, error=f"{file}: {exc}")
        try:
            value = _value(path, text, str(file))
        except TextParseError as exc:
            return Reading(object=obj, path=path, present=False, error=exc.render())
        return Reading(object=obj, path=path, value=value)

    def skip_reason(self, step: HostStep) -> str | None:
        """Why a step is not judged from this bundle: an ``apptrust`` file it does not hold (older bundles and
        tools do not save it; the other files missing are findings)."""
        if step.path == "apptrust" and not (self.dir / f"{step.object}.apptrust").exists():
            return (f"no {step.object}.apptrust in the bundle's dcb/ (the text of `dcb apptrust show dev "
                    f"{step.object}`)")
        return None

    def applicable(self, step: HostStep, current: Reading) -> bool:
        return self.skip_reason(step) is None

    def write(self, step: HostStep) -> None:
        raise HostBackendError("write", f"{step.object} {step.path}", "a bundle of dcb outputs is read-only",
                               hint="apply on the host itself (or --netns) to change DCB")

    def write_back(self, reading: Reading) -> None:
        self.write(HostStep(backend=self.backend, object=reading.object, path=reading.path, desired=None,
                            check="restore"))


def _value(path: str, text: str, source: str) -> JsonValue:
    if path == "pfc":
        return parse_dcb_pfc(text, source).mask
    if path == "apptrust":
        return list(parse_dcb_apptrust(text, source).order)
    if path == "ets":
        ets = parse_dcb_ets(text, source)
        missing = [k for k, m in (("prio-tc", ets.prio_tc), ("tc-tsa", ets.tc_tsa), ("tc-bw", ets.tc_bw))
                   if sorted(m) != list(range(8))]
        if missing:
            raise TextParseError(source, 1, f"{', '.join(missing)} not given for all 8 entries",
                                 expected="dcb ets show with prio-tc, tc-tsa and tc-bw for 0-7",
                                 got=text.strip()[:80])
        return {"prio_tc": [ets.prio_tc[i] for i in range(8)], "tc_tsa": [ets.tc_tsa[i] for i in range(8)],
                "tc_bw": [ets.tc_bw[i] for i in range(8)]}
    app = parse_dcb_app(text, source)
    return {str(d): p for d, p in sorted(app.dscp_prio)}
