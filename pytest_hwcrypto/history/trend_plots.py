# SPDX-License-Identifier: MIT
"""Drawing a history's trends with matplotlib (Agg: written, never shown).

One figure per group of series (a board's path and algorithm, history/trend_html.py
groups them), one small plot per series: its runs over kernels in kernel order, the
level between change points as a flat line, and each change point as a vertical line
between the last good and the first bad kernel, red for a drop beyond max-drop, grey
otherwise. Only drawing lives here; what changed was decided in history/judge.py.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")  # before anything draws

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from pytest_hwcrypto.history.changes import Change
from pytest_hwcrypto.history.judge import Judged
from pytest_hwcrypto.history.order import kernel_group, kernel_runs
from pytest_hwcrypto.vocabulary import MIB

POINT_BLUE = "#1f77b4"  # the runs
DROP_RED = "#d62728"  # a change point failing max-drop
OTHER_GREY = "#7f7f7f"  # any other change point
COLUMNS = 3
_CELL = (4.6, 2.9)  # inches per series
# Kernel names on the x axis: at most this many, evenly spaced, or they overprint.
_MAX_TICKS = 12


def render_group_png(
    judged: Sequence[Judged], changes: Sequence[Change], title: str, dpi: int = 80
) -> bytes:
    """One figure, one plot per series of ``judged``, as PNG bytes."""
    rows = max(1, -(-len(judged) // COLUMNS))
    columns = min(COLUMNS, max(1, len(judged)))
    figure = Figure(figsize=(columns * _CELL[0], rows * _CELL[1] + 0.6), layout="constrained")
    FigureCanvasAgg(figure)
    figure.suptitle(title)
    for index, one in enumerate(judged):
        axes = figure.add_subplot(rows, columns, index + 1)
        _draw_series(axes, one, [c for c in changes if c.key == one.series.key])
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def subplot_title(judged: Judged) -> str:
    key = judged.series.key
    parts = [key.driver or "(by name)", key.op]
    if key.key_bits is not None:
        parts.append(f"{key.key_bits}-bit")
    if key.block_size is not None:
        parts.append(f"{key.block_size} B")
    if key.concurrency is not None and key.concurrency != 1:
        parts.append(f"x{key.concurrency}")
    return " ".join(parts)


def _draw_series(axes: Axes, judged: Judged, changes: Sequence[Change]) -> None:
    groups = kernel_runs(judged.ordered)
    axes.set_title(subplot_title(judged), fontsize=9)
    axes.tick_params(labelsize=7)
    if not groups:
        axes.axis("off")
        return
    xs = [n for n, group in enumerate(groups) for _ in group]
    ys = [p.value / MIB for group in groups for p in group]
    axes.plot(xs, ys, "o", color=POINT_BLUE, markersize=3)
    position = {kernel_group(g[0].run.kernel): n for n, g in enumerate(groups)}
    cuts = sorted(
        {
            position[kernel_group(c.first_bad)]
            for c in changes
            if kernel_group(c.first_bad) in position
        }
    )
    bounds = [0, *cuts, len(groups)]
    for start, end in zip(bounds, bounds[1:]):
        level = [p.value / MIB for g in groups[start:end] for p in g]
        if level:
            mean = sum(level) / len(level)
            axes.plot([start - 0.3, end - 0.7], [mean, mean], color=POINT_BLUE, linewidth=1)
    for change in changes:
        at = position.get(kernel_group(change.first_bad))
        if at is None:
            continue
        colour = DROP_RED if change.failing else OTHER_GREY
        axes.axvline(at - 0.5, color=colour, linestyle="--", linewidth=1.5)
        axes.annotate(
            f"{change.change * 100:+.1f} %",
            (at - 0.5, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(2, -10),
            textcoords="offset points",
            color=colour,
            fontsize=7,
        )
    step = max(1, -(-len(groups) // _MAX_TICKS))
    ticks = list(range(0, len(groups), step))
    axes.set_xticks(ticks)
    axes.set_xticklabels([groups[n][0].run.kernel.label() for n in ticks], rotation=60, ha="right")
    axes.set_ylabel("MiB/s", fontsize=7)
    axes.set_xlim(-0.7, len(groups) - 0.3)
