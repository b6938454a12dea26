"""PNG pictures of a run, drawn with matplotlib (Agg, no display needed).

- ``storm_timeline``: pause-duration ratio per port and priority over time, with the injection, detection and
  restore marks and the detection latency;
- ``dashboard``: the Grafana dashboard's panels, rendered from Prometheus's API data in a Grafana-like dark style;
- ``topology``: spines, leaves and hosts with the storm's origin and the paused ports highlighted.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from fabricd.model import Fabric, split_endpoint
from fabricd.safepath import inside, write_inside

from .record import Panel, RunRecord, Series

_BG = "#111217"
_PANEL = "#181b1f"
_TEXT = "#d8d9da"
_GRID = "#2c3235"
_PALETTE = ("#73bf69", "#f2cc0c", "#5794f2", "#ff9830", "#f2495c", "#b877d9", "#8ab8ff", "#fade2a")
MAX_SERIES_PER_PANEL = 8


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _top(series: list[Series], n: int) -> list[Series]:
    return sorted(series, key=lambda s: max((v for _, v in s.points), default=0.0), reverse=True)[:n]


def _save(fig: Any, out: Path, **kwargs: Any) -> None:
    """The PNG, drawn in memory and written by :func:`fabricd.safepath.write_inside` (inside ``out``'s folder, no
    link followed, no FIFO waited on)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", **kwargs)
    write_inside(out.parent, out.name, buf.getvalue())


def storm_timeline(record: RunRecord, out: Path) -> Path:
    """Pause ratio per priority over time with injection/detection/restore marks. Returns the PNG path."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(10, 4.8), dpi=110)
    t0 = record.started_ts
    shown = _top(record.pause, MAX_SERIES_PER_PANEL)
    for i, s in enumerate(shown):
        xs = [t - t0 for t, _ in s.points]
        ys = [v for _, v in s.points]
        ax.plot(xs, ys, color=_PALETTE[(i + 2) % len(_PALETTE)], linewidth=1.8, label=s.legend)
    storm = record.storm
    if storm is not None:
        marks = [
            (storm.injected_ts, "storm injected", "#ff9830", "--"),
            (storm.detected_ts, "detected", "#f2495c", "-"),
            (storm.stopped_ts, "storm stopped", "#8e8e8e", "--"),
            (storm.restored_ts, "restored", "#1f9e89", "-"),
        ]
        for ts, label, color, style in marks:
            if ts is not None:
                ax.axvline(ts - t0, color=color, linestyle=style, linewidth=1.4, label=label)
        latency = storm.detection_latency_ms
        title = f"PFC storm on {storm.device} {storm.interface} priority {storm.priority}"
        if latency is not None:
            title += f": detected in {latency:.0f} ms"
        ax.set_title(title)
    else:
        ax.set_title("PFC pause over time")
    ax.set_xlabel("seconds since start of run")
    ax.set_ylabel("pause duration ratio (s paused per s)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=7, ncol=2)
    fig.tight_layout()
    _save(fig, out)
    plt.close(fig)
    return out


def _draw_panel(ax: Any, panel: Panel, t0: float) -> None:
    ax.set_facecolor(_PANEL)
    ax.set_title(panel.title, color=_TEXT, fontsize=9, loc="left")
    ax.tick_params(colors=_TEXT, labelsize=7)
    for spine in ax.spines.values():
        spine.set_color(_GRID)
    ax.grid(True, color=_GRID, linewidth=0.6)
    shown = _top(panel.series, MAX_SERIES_PER_PANEL)
    for i, s in enumerate(shown):
        ax.plot(
            [t - t0 for t, _ in s.points],
            [v for _, v in s.points],
            color=_PALETTE[i % len(_PALETTE)],
            linewidth=1.4,
            label=s.legend,
        )
    if shown:
        ax.legend(fontsize=6, loc="upper left", facecolor=_PANEL, edgecolor=_GRID, labelcolor=_TEXT)
    else:
        ax.text(0.5, 0.5, "no data", color="#8e8e8e", ha="center", va="center", transform=ax.transAxes)
    ax.set_ylabel(panel.unit, color=_TEXT, fontsize=7)


def dashboard(record: RunRecord, out: Path) -> Path:
    """The dashboard panels in a grid, Grafana-dark. Returns the PNG path."""
    plt = _pyplot()
    panels = record.panels
    cols = 2
    rows = max(1, (len(panels) + cols - 1) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(12, 3.2 * rows), dpi=100, squeeze=False)
    fig.patch.set_facecolor(_BG)
    fig.suptitle(f"fabricd: {record.fabric} fabric overview", color=_TEXT, fontsize=12, x=0.01, ha="left")
    for index, ax in enumerate(axes.flat):
        if index < len(panels):
            _draw_panel(ax, panels[index], record.started_ts)
        else:
            ax.set_visible(False)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    _save(fig, out, facecolor=_BG)
    plt.close(fig)
    return out


def _positions(fabric: Fabric) -> dict[str, tuple[float, float]]:
    tiers: dict[int, list[str]] = {2: [], 1: [], 0: []}
    for sw in fabric.switches:
        tiers[2 if sw.role.value in ("spine", "superspine") else 1].append(sw.name)
    tiers[0] = [h.name for h in fabric.hosts]
    pos: dict[str, tuple[float, float]] = {}
    for y, names in tiers.items():
        for i, name in enumerate(names):
            pos[name] = ((i + 1) / (len(names) + 1), float(y))
    return pos


def topology(fabric: Fabric, out: Path, *, origin: str | None = None, paused: list[str] | None = None) -> Path:
    """Draw the fabric; ``origin`` and ``paused`` are 'device:interface' (or device) names to highlight."""
    plt = _pyplot()
    pos = _positions(fabric)
    paused_devices = {p.split(":", 1)[0] for p in (paused or [])}
    origin_device = origin.split(":", 1)[0] if origin else None
    edges: list[tuple[str, str]] = []
    for link in fabric.links:
        if ":" in link.a and ":" in link.b:  # a malformed end (validate reports it) is not drawn
            edges.append((split_endpoint(link.a)[0], split_endpoint(link.b)[0]))
    for host in fabric.hosts:
        for nic in host.nics:
            if nic.peer and ":" in nic.peer:
                edges.append((host.name, nic.peer.split(":", 1)[0]))
    fig, ax = plt.subplots(figsize=(11, 5), dpi=110)
    for a, b in edges:
        if a in pos and b in pos:
            hot = {a, b} <= (paused_devices | ({origin_device} if origin_device else set()))
            ax.plot(
                [pos[a][0], pos[b][0]],
                [pos[a][1], pos[b][1]],
                color="#ff9830" if hot else "#9aa0a6",
                linewidth=2.2 if hot else 0.9,
                zorder=1,
            )
    for name, (x, y) in pos.items():
        color = "#5794f2" if y > 0 else "#73bf69"
        if name in paused_devices:
            color = "#ff9830"
        if name == origin_device:
            color = "#f2495c"
        ax.scatter([x], [y], s=900 if y > 0 else 500, color=color, edgecolors="black", zorder=2)
        ax.text(x, y - (0.26 if y > 0 else 0.2), name, ha="center", va="top", fontsize=7)
    if origin:
        ax.set_title(f"storm origin: {origin} (red); paused devices in orange")
    else:
        ax.set_title(f"{fabric.name}: {len(fabric.switches)} switches, {len(fabric.hosts)} hosts")
    ax.set_yticks([0, 1, 2], labels=["hosts", "leaves", "spines"])
    ax.set_xticks([])
    ax.set_ylim(-0.6, 2.5)
    for spine in ax.spines.values():
        spine.set_visible(False)
    fig.tight_layout()
    _save(fig, out)
    plt.close(fig)
    return out


def all_pictures(record: RunRecord, fabric: Fabric, out_dir: Path) -> list[Path]:
    """The three pictures of ``record`` into ``out_dir``: storm-timeline.png, dashboard.png, topology.png."""
    storm = record.storm
    origin = None
    if storm is not None and storm.origin_device:
        origin = f"{storm.origin_device}:{storm.origin_interface}" if storm.origin_interface else storm.origin_device
    # a symbolic link placed in out_dir under one of these names is refused, not followed out of the folder
    out_dir.mkdir(parents=True, exist_ok=True)
    return [
        storm_timeline(record, inside(out_dir, "storm-timeline.png")),
        dashboard(record, inside(out_dir, "dashboard.png")),
        topology(fabric, inside(out_dir, "topology.png"), origin=origin, paused=storm.paused_ports if storm else None),
    ]
