"""Figures for the HTML report, as PNG data URIs, so the file stays self-contained.

matplotlib is imported only when there is something to plot, and only through
`matplotlib.figure.Figure`: pyplot is never touched, so rendering a report inside a
notebook does not change the person's plotting backend or open figures. Person-written
text (variable names, backend specs) goes into the HTML captions, where it is escaped;
figures carry only axis labels, except the device matrix whose tick labels have `$`
escaped so that mathtext never interprets them.
"""

from __future__ import annotations

import base64
import io
from typing import Any

import numpy as np

from porter_ext.model.comparison import ErrorHistogram

_DPI = 72
_LABEL_CHARS = 24


def _png_data_uri(fig: Any) -> str:
    buf = io.BytesIO()
    # metadata Software=None: no tool banner (with its URL) inside the image.
    fig.savefig(buf, format="png", dpi=_DPI, metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _figure(width: float, height: float, **margins: float) -> Any:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    # Fixed margins rather than a layout engine: constrained layout costs more than the
    # drawing itself, and a report may carry dozens of figures.
    fig.subplots_adjust(**{"left": 0.1, "right": 0.97, "bottom": 0.22, "top": 0.95, **margins})
    return fig


def _draw_histogram(ax: Any, hist: ErrorHistogram) -> None:
    counts = list(hist.counts)
    edges = list(hist.edges)
    if len(edges) != len(counts) + 1:  # a hand-edited report: plot what is consistent
        counts = counts[: max(len(edges) - 1, 0)]
    labels = ["0"] + [f"{e:.0e}" for e in edges[1:]]
    if hist.nonfinite:
        counts.append(hist.nonfinite)
        labels.append("nan/inf")
    # Counts span orders of magnitude (millions of matches, a few outliers), so bar
    # heights are log10(count + 1), with power-of-ten ticks placed by hand: matplotlib's
    # log scale would do the same at several times the cost.
    heights = np.log10(np.asarray(counts, dtype=float) + 1)
    colors = ["#c0392b"] * len(counts)
    if hist.nonfinite:
        colors[-1] = "#7f8c8d"
    ax.bar(np.arange(len(counts)), heights, width=0.9, align="edge", color=colors)
    top = int(np.ceil(heights.max())) if len(heights) else 1
    powers = list(range(0, max(top, 1) + 1, max(1, (top + 3) // 4)))
    ax.set_yticks([np.log10(10**k + 1) for k in powers], [f"1e{k}" for k in powers])
    step = max(1, len(labels) // 4)
    ticks = list(range(0, len(labels), step))
    if hist.nonfinite:
        ticks = [t for t in ticks if t < len(labels) - 2] + [len(labels) - 1]
    ax.set_xticks(ticks, [labels[i] for i in ticks])
    ax.set_xlabel("absolute error (bin lower edge)", fontsize=8)
    ax.set_ylabel("elements", fontsize=8)
    ax.tick_params(labelsize=7)


def _draw_map(fig: Any, ax: Any, emap: list[list[float | None]]) -> None:
    from matplotlib import colormaps

    values = np.array(
        [[np.nan if v is None else float(v) for v in row] for row in emap], dtype=float
    )
    positive = values[np.isfinite(values) & (values > 0)]
    floor = positive.min() if positive.size else 1.0
    shown = np.log10(np.where(np.isfinite(values), np.maximum(values, floor), np.nan))
    cmap = colormaps["magma"].with_extremes(bad="#1abc9c")
    image = ax.imshow(shown, cmap=cmap, interpolation="nearest", aspect="auto")
    cbar = fig.colorbar(image, ax=ax, fraction=0.08, pad=0.03)
    cbar.set_label("log10 |error|", fontsize=7)
    cbar.ax.tick_params(labelsize=7)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_xlabel(f"columns ({len(emap[0])} blocks)", fontsize=8)
    ax.set_ylabel(f"rows ({len(emap)} blocks)", fontsize=8)


def error_figure(hist: ErrorHistogram | None, emap: list[list[float | None]] | None) -> str | None:
    """PNG data URI of the error distribution (and map, for 2-D outputs); None if neither."""
    if hist is None and not emap:
        return None
    panels = int(hist is not None) + int(bool(emap))
    fig = _figure(
        3.6 * panels,
        2.4,
        left=0.1 if panels == 2 else 0.18,
        right=0.9 if emap else 0.97,
        wspace=0.3,
    )
    axes = fig.subplots(1, panels, squeeze=False)[0]
    i = 0
    if hist is not None:
        _draw_histogram(axes[i], hist)
        i += 1
    if emap:
        _draw_map(fig, axes[i], emap)
    return _png_data_uri(fig)


def _short(label: str) -> str:
    """Truncated, with `$` escaped so that a name cannot start mathtext."""
    label = label if len(label) <= _LABEL_CHARS else label[: _LABEL_CHARS - 1] + "…"
    return label.replace("$", r"\$")


def device_matrix_figure(
    outputs: list[str], backends: list[str], ok: dict[tuple[str, str], bool | None]
) -> str:
    """PNG data URI of the device-placement matrix: green where an output landed on the
    expected device, red where it did not, grey where it is unknown or absent."""
    from matplotlib.colors import ListedColormap

    values = np.full((len(outputs), len(backends)), np.nan)
    for (name, backend), good in ok.items():
        if good is not None and name in outputs and backend in backends:
            values[outputs.index(name), backends.index(backend)] = 1.0 if good else 0.0
    width, height = 1.6 + 0.9 * len(backends), 0.9 + 0.3 * len(outputs)
    fig = _figure(width, height, left=1.5 / width, right=0.97, bottom=0.6 / height, top=0.95)
    ax = fig.add_subplot()
    cmap = ListedColormap(["#c0392b", "#27ae60"]).with_extremes(bad="#bdc3c7")
    ax.imshow(values, cmap=cmap, vmin=0, vmax=1, interpolation="nearest", aspect="auto")
    ax.set_xticks(range(len(backends)), [_short(b) for b in backends], fontsize=7, rotation=30)
    ax.set_yticks(range(len(outputs)), [_short(o) for o in outputs], fontsize=7)
    return _png_data_uri(fig)
