"""DCB state read from a bundle of ``dcb ... show`` outputs under a replay root (read-only).

Layout (beside the replay root's ``sys/`` and ``ethtool/``): ``DIR/dcb/<if>.pfc`` (text of ``dcb pfc show dev
<if>``), ``DIR/dcb/<if>.ets`` (``dcb ets show dev <if>``), ``DIR/dcb/<if>.app`` (``dcb app show dev <if>
dscp-prio``, with or without ``-N``), ``DIR/dcb/<if>.apptrust`` (``dcb apptrust show dev <if>``). A support bundle
or ``fabricd capture --host`` provides them; ``fabricd audit host --root DIR`` then checks trust, PFC, ETS and the
DSCP map from the files instead of skipping them. The apptrust reader's only capture is the dcb-apptrust(8)
example (no output from a device was found), so a bundle's trust reading rests on iproute2's printer.

Where a NIC's DCB lives in its firmware or in lldpad rather than in dcbnl, the bundle holds what that tool prints
instead (fabricd.readers.dcb_tools), and each of PFC, ETS, the DSCP map and trust is read from the first file that
has it, in this order: the iproute2 file above, then ``DIR/dcb/<if>.mlnx_qos`` (``mlnx_qos -i <if>``: also the
trust state, so HOST-TRUST is checked), ``<if>.lldptool`` (``lldptool -ti <if>``), ``<if>.niccli`` (``niccli --dev N
qos --ets --show``). ``<if>.dcbx`` (``dcb dcbx show``) and ``<if>.maxrate`` (``dcb maxrate show``) are read for the
report's notes (who runs DCBX; per-TC rate caps). A TC a tool does not print (mlnx_qos leaves out TCs no priority
maps to; niccli prints as many as the NIC runs) is compared only when the intent maps a priority to it.

A file that does not parse is a reading with the reader's located error (file:line, expected, got), which the audit
reports as a finding; a bundle cannot be written to.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from pydantic import JsonValue

from fabricd.intent.host import Backend, HostStep
from fabricd.readers.dcb_apptrust import parse_dcb_apptrust
from fabricd.readers.dcb_text import parse_dcb_app, parse_dcb_ets, parse_dcb_pfc
from fabricd.readers.dcb_tools import (
    DcbToolState,
    parse_dcb_dcbx,
    parse_dcb_maxrate,
    parse_lldptool,
    parse_mlnx_qos,
    parse_niccli_qos,
)
from fabricd.readers.textparse import TextParseError

from .base import Reading, ReadOnlyBackend

SUFFIX = {"pfc": "pfc", "ets": "ets", "app": "app", "apptrust": "apptrust"}
TOOLS: dict[str, Callable[[str, str], DcbToolState]] = {
    "mlnx_qos": parse_mlnx_qos,
    "lldptool": parse_lldptool,
    "niccli": parse_niccli_qos,
}
"""Bundle file suffix -> the reader of that tool's output, in the order they are tried after the iproute2 files."""


def bundle_dir(root: str | os.PathLike[str]) -> Path:
    return Path(root) / "dcb"


class DcbBundle(ReadOnlyBackend):
    """Answers the DCB backend's reads (``apptrust``, ``pfc``, ``ets``, ``app``) from ``DIR/dcb/<if>.<kind>`` text
    files: iproute2 ``dcb`` outputs first, then the vendor and LLDP tools' (:data:`TOOLS`)."""

    backend = Backend.DCB
    read_only = ("a bundle of dcb outputs is read-only", "apply on the host itself (or --netns) to change DCB")
    unsupported_reason = (
        "neither `<if>.apptrust` (`dcb apptrust show dev <if>`) nor an `<if>.mlnx_qos` file (its "
        "trust state) is in the bundle"
    )

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.dir = bundle_dir(root)
        self._origin: dict[tuple[str, str], str] = {}

    def _text(self, file: Path) -> str | None:
        try:
            return file.read_text()
        except FileNotFoundError:
            return None

    def _tool(self, obj: str) -> tuple[str, DcbToolState] | Reading | None:
        """The first tool file of ``obj`` and its parse, a Reading carrying the error when it does not parse, or
        None when the bundle has none."""
        for suffix, parse in TOOLS.items():
            file = self.dir / f"{obj}.{suffix}"
            try:
                text = self._text(file)
            except (OSError, UnicodeDecodeError) as exc:
                return Reading(object=obj, path=suffix, present=False, error=f"{file}: {exc}")
            if text is None:
                continue
            try:
                return str(file), parse(text, str(file))
            except TextParseError as exc:
                return Reading(object=obj, path=suffix, present=False, error=exc.render())
        return None

    def skip_reason(self, obj: str, path: str) -> str | None:
        """Why a step cannot be judged from this bundle (None: it can): apptrust with neither an apptrust nor an
        mlnx_qos file."""
        if path != "apptrust" or (self.dir / f"{obj}.apptrust").exists():
            return None
        tool = self._tool(obj)
        if isinstance(tool, tuple) and tool[1].trust is not None:
            return None
        return self.unsupported_reason

    def origin(self, obj: str, path: str) -> str | None:
        """Which bundle file the last read of (obj, path) came from, with the DCBX mode and rate caps the bundle
        states for the port (for the audit report's notes)."""
        return self._origin.get((obj, path))

    def read(self, obj: str, path: str) -> Reading:
        if path in SUFFIX:
            file = self.dir / f"{obj}.{SUFFIX[path]}"
            try:
                text = self._text(file)
            except (OSError, UnicodeDecodeError) as exc:
                return Reading(object=obj, path=path, present=False, error=f"{file}: {exc}")
            if text is not None:
                try:
                    value = _value(path, text, str(file))
                except TextParseError as exc:
                    return Reading(object=obj, path=path, present=False, error=exc.render())
                self._origin[(obj, path)] = self._note(obj, f"dcb/{file.name}")
                return Reading(object=obj, path=path, value=value)
        elif path != "apptrust":
            return Reading(object=obj, path=path, present=False, error=f"no bundle reader for {path}")
        tool = self._tool(obj)
        if tool is None:
            want = f"{obj}.{SUFFIX[path]}, " if path in SUFFIX else ""
            return Reading(
                object=obj,
                path=path,
                present=False,
                error=(
                    f"{self.dir / (obj + '.' + SUFFIX.get(path, path))} is not in the bundle (looked for {want}"
                    f"{', '.join(f'{obj}.{t}' for t in TOOLS)})"
                ),
            )
        if isinstance(tool, Reading):
            return tool.model_copy(update={"path": path})
        source, state = tool
        self._origin[(obj, path)] = self._note(obj, f"dcb/{Path(source).name}")
        value = _tool_value(path, state)
        if value is None:
            return Reading(object=obj, path=path, present=False)
        return Reading(object=obj, path=path, value=value)

    def _note(self, obj: str, source: str) -> str:
        parts = [f"read from {source}"]
        dcbx_text = self._text(self.dir / f"{obj}.dcbx")
        if dcbx_text is not None:
            try:
                flags = parse_dcb_dcbx(dcbx_text, str(self.dir / f"{obj}.dcbx"))
                parts.append("DCBX " + (" ".join(sorted(flags)) or "off"))
            except TextParseError as exc:
                parts.append(f"dcbx unreadable: {exc.render()}")
        else:
            tool = self._tool(obj)
            if isinstance(tool, tuple) and tool[1].dcbx is not None:
                parts.append(f"DCBX {tool[1].dcbx} ({tool[1].tool})")
        rate_text = self._text(self.dir / f"{obj}.maxrate")
        if rate_text is not None:
            try:
                caps = {tc: r for tc, r in parse_dcb_maxrate(rate_text, str(self.dir / f"{obj}.maxrate")).items() if r}
                if caps:
                    parts.append("tc-maxrate " + " ".join(f"{tc}:{r / 1e9:g}Gbit" for tc, r in sorted(caps.items())))
            except TextParseError as exc:
                parts.append(f"maxrate unreadable: {exc.render()}")
        return "; ".join(parts)

    def applicable(self, step: HostStep, current: Reading) -> bool:
        return self.skip_reason(step.object, step.path) is None

    def satisfied(self, step: HostStep, current: Reading) -> bool:
        """Equality, except that an ETS reading from a tool that does not print every TC (None in ``tc_tsa`` and
        ``tc_bw``) is compared on the TCs the intent maps a priority to, plus the TCs the tool did print."""
        if step.path != "ets" or not current.present or not isinstance(current.value, dict):
            return super().satisfied(step, current)
        got, want = current.value, step.desired
        if not isinstance(want, dict) or got.get("prio_tc") != want.get("prio_tc"):
            return False
        used = {int(str(t)) for t in _as_list(want.get("prio_tc"))}
        for key in ("tc_tsa", "tc_bw"):
            g, w = _as_list(got.get(key)), _as_list(want.get(key))
            if len(g) != len(w):
                return False
            if any(gv != wv and (gv is not None or tc in used) for tc, (gv, wv) in enumerate(zip(g, w, strict=True))):
                return False
        return True


def _as_list(value: JsonValue) -> list[JsonValue]:
    return value if isinstance(value, list) else []


def _tool_value(path: str, state: DcbToolState) -> JsonValue:
    """A tool's snapshot as the DCB backend's value of ``path`` (fabricd.hosts.dcb), None when the tool shows none:
    ETS lists carry None for a TC the tool did not print."""
    if path == "apptrust":
        return list(state.trust) if state.trust is not None else None
    if path == "pfc":
        return state.pfc_mask
    if path == "ets":
        if sorted(state.prio_tc) != list(range(8)):
            return None
        tsa: list[JsonValue] = [state.tc_tsa.get(tc) for tc in range(8)]
        bw: list[JsonValue] = [state.tc_bw.get(tc) for tc in range(8)]
        return {"prio_tc": [state.prio_tc[p] for p in range(8)], "tc_tsa": tsa, "tc_bw": bw}
    if state.dscp_prio is None:
        return None
    return {str(d): p for d, p in sorted(state.dscp_prio.items())}


def _value(path: str, text: str, source: str) -> JsonValue:
    if path == "pfc":
        return parse_dcb_pfc(text, source).mask
    if path == "apptrust":
        return list(parse_dcb_apptrust(text, source).order)
    if path == "ets":
        ets = parse_dcb_ets(text, source)
        missing = [
            k
            for k, m in (("prio-tc", ets.prio_tc), ("tc-tsa", ets.tc_tsa), ("tc-bw", ets.tc_bw))
            if sorted(m) != list(range(8))
        ]
        if missing:
            raise TextParseError(
                source,
                1,
                f"{', '.join(missing)} not given for all 8 entries",
                expected="dcb ets show with prio-tc, tc-tsa and tc-bw for 0-7",
                got=text.strip()[:80],
            )
        return {
            "prio_tc": [ets.prio_tc[i] for i in range(8)],
            "tc_tsa": [ets.tc_tsa[i] for i in range(8)],
            "tc_bw": [ets.tc_bw[i] for i in range(8)],
        }
    app = parse_dcb_app(text, source)
    return {str(d): p for d, p in sorted(app.dscp_prio)}
