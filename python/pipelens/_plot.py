"""Matplotlib drawing for pipelens (imported only when a plot is asked for)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Union

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from . import Result, Schedule

# The desktop app's colours (ui/charts/method_colours.cpp, Okabe-Ito): one per method family,
# and the Gantt chart's cells (ui/charts/chart_support.hpp, gantt_selection.cpp).
METHOD_COLOURS = {
    "pd": "#0072b2",
    "rpd": "#d55e00",
    "localsgd": "#009e73",
    "sgd": "#000000",
    "fill-drain": "#cc79a7",
    "1f1b": "#56b4e9",
    "zb-h1": "#e69f00",
    "2bw": "#882255",
    "imported": "#44aa99",
    "interleaved": "#332288",
}
OP_COLOURS = {"F": "#56b4e9", "B": "#e69f00", "I": "#f3cf80", "W": "#4dbb9d"}


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError(
            "drawing needs matplotlib (apt-get install python3-matplotlib, or pip install "
            "matplotlib); the data is on the result's arrays without it"
        ) from e
    return plt


def _shade(colour: str, variant: int) -> Any:
    """The app's rule for a family's second, third ... method: alternately darker and lighter."""
    from matplotlib.colors import to_rgb

    rgb = np.array(to_rgb(colour))
    if variant <= 0:
        return tuple(rgb)
    if not rgb.any():
        grey = min(150, 45 * variant) / 255.0
        return (grey, grey, grey)
    step = (variant + 1) // 2
    if variant % 2 == 1:
        return tuple(rgb * 100.0 / (100 + 45 * step))
    factor = (100 + 40 * step) / 100.0
    return tuple(np.minimum(1.0, rgb * factor))


def method_colour(result: "Result", index: int) -> Any:
    """The colour the app gives method `index` of `result`."""
    family = result.methods[index].method
    before = sum(1 for m in result.methods[:index] if m.method == family)
    return _shade(METHOD_COLOURS.get(family, "#666666"), before)


def plot_result(result: "Result", ax: Any, *, x: str, gap: bool, log: bool) -> Any:
    if x not in ("slot", "update"):
        raise ValueError(f"x = {x!r} is not allowed: 'slot' or 'update'")
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4))
    offset = result.optimum if gap else 0.0
    for i, m in enumerate(result.methods):
        if x == "slot" and len(m.objective_per_slot):
            y = m.objective_per_slot
            xs = np.arange(len(y))
        elif x == "slot":
            # RPD has no slots: f after update k drawn at the slot PipeDream's update k ends.
            slots = m.update_slots[: len(m.objective_per_update)]
            xs = np.concatenate(([0], slots + 1))
            y = np.concatenate(([m.initial_objective], m.objective_per_update[: len(slots)]))
        else:
            y = m.objective_per_update
            xs = np.arange(1, len(y) + 1)
        if len(y) == 0:
            continue
        ax.plot(xs, y - offset, color=method_colour(result, i), label=m.label, linewidth=1.4)
    if log:
        ax.set_yscale("log")
    ax.set_xlabel("slot" if x == "slot" else "block update")
    ax.set_ylabel("f − f*" if gap else "f")
    ax.set_title(result.config.name)
    ax.grid(True, which="major", color="#dddddd", linewidth=0.6)
    ax.legend(frameon=False)
    return ax


def plot_gantt(source: Union["Result", "Schedule"], ax: Any, *, method: Union[int, str],
               slots: Optional[int]) -> Any:
    from . import Result

    plt = _pyplot()
    if isinstance(source, Result):
        m = source[method]
        cells = m.timeline
        if cells is None:
            raise ValueError(f"method {m.label!r} has no timeline (RPD runs without a schedule)")
        title = m.label
    else:
        cells = source.cells
        title = f"{source.kind}, S = {source.stages}, N = {source.microbatches}"
    if slots is not None:
        cells = cells[cells["slot"] < slots]
    stages = int(cells["stage"].max()) if len(cells) else 1
    if ax is None:
        width = min(14.0, 3.0 + 0.12 * (int(cells["end_slot"].max()) + 1 if len(cells) else 10))
        _, ax = plt.subplots(figsize=(width, 0.8 + 0.35 * stages))
    from matplotlib.patches import Patch

    names = {"F": "forward", "B": "backward", "I": "input gradient", "W": "weight gradient"}
    handles = []
    for op, colour in OP_COLOURS.items():
        sel = cells[cells["op"] == op]
        if len(sel) == 0:
            continue
        for stage in np.unique(sel["stage"]):
            row = sel[sel["stage"] == stage]
            spans = list(zip(row["slot"], row["end_slot"] - row["slot"] + 1))
            ax.broken_barh(spans, (stage - 0.45, 0.9), facecolors=colour, edgecolors="white",
                           linewidth=0.5)
        handles.append(Patch(facecolor=colour, label=names[op]))
    if len(cells) <= 400:
        for c in cells:
            ax.text(c["slot"] + (c["end_slot"] - c["slot"] + 1) / 2, c["stage"],
                    str(c["microbatch"]), ha="center", va="center", fontsize=7)
    ax.set_xlim(0, int(cells["end_slot"].max()) + 1 if len(cells) else 1)
    ax.set_ylim(stages + 0.6, 0.4)
    ax.set_yticks(range(1, stages + 1))
    ax.set_ylabel("stage")
    ax.set_xlabel("slot")
    ax.set_title(title)
    ax.legend(handles=handles, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return ax
