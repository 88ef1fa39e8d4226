# SPDX-License-Identifier: MIT
"""Drawing a report's panels with matplotlib (Agg: no display, no GUI toolkit).

Only drawing lives here; what is drawn was decided in report/shaping.py.  One figure
holds every chosen panel: throughput against block size (log-log, shaded 95 % interval of
the median), the HW/SW ratio beside it with the 1x line and the crossover marked, and
bars for measurements without a block size.  Colour follows the driver, line style the
file, so the same driver on kernel A and kernel B is one colour in two styles.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Union

import matplotlib

matplotlib.use("Agg")  # before anything draws: a report is written, never shown

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from pytest_hwcrypto.report.shaping import BarGroup, Panel, ReportData
from pytest_hwcrypto.units import size_label
from pytest_hwcrypto.vocabulary import DEFAULT_MIN_RATIO, MIB

# A figure past this many series families is unreadable as one image; the HTML tables
# carry every one of them.
MAX_PANELS = 24
_LINE_STYLES = ("-", "--", ":", "-.")
_PALETTE = (
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
    "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22",
)  # fmt: skip
_CELL = (6.4, 3.8)  # inches per plot cell
_PLAIN = FuncFormatter(lambda value, _: f"{value:g}")  # 0.1, 1, 100 rather than 10^-1 ...


@dataclass(frozen=True)
class _Cell:
    kind: str  # "throughput", "ratio"
    panel: Panel


_Row = Union[tuple[_Cell, ...], BarGroup]


def chosen_panels(data: ReportData, limit: int = MAX_PANELS) -> list[Panel]:
    """Panels with a HW/SW ratio first, then those with more curves; at most `limit`."""
    ranked = sorted(data.panels, key=lambda p: (not p.ratios, -len(p.curves)))
    return ranked[:limit]


def render_png(data: ReportData, min_ratio: float = DEFAULT_MIN_RATIO, dpi: int = 90) -> bytes:
    """The whole report figure as PNG bytes; a note when there is nothing to draw."""
    panels = chosen_panels(data)
    rows: list[_Row] = [
        (_Cell("throughput", panel), _Cell("ratio", panel)) for panel in panels if panel.ratios
    ]
    alone = [_Cell("throughput", panel) for panel in panels if not panel.ratios]
    rows.extend(tuple(alone[i : i + 2]) for i in range(0, len(alone), 2))
    rows.extend(data.bar_groups)
    heights = [_row_height(row) for row in rows] or [2.0]
    figure = Figure(figsize=(2 * _CELL[0], sum(heights) + 0.8), layout="constrained")
    FigureCanvasAgg(figure)
    left_out = len(data.panels) - len(panels)
    title = "pytest-hwcrypto throughput"
    if left_out:
        title += f" ({len(panels)} of {len(data.panels)} series shown; all are in the tables)"
    figure.suptitle(title)
    if not rows:
        axes = figure.add_subplot()
        axes.axis("off")
        axes.text(0.5, 0.5, "no measurements in these files", ha="center", va="center")
    else:
        grid = figure.add_gridspec(len(rows), 2, height_ratios=heights)
        styles = _Styles()
        for index, row in enumerate(rows):
            if isinstance(row, BarGroup):
                _draw_bars(figure.add_subplot(grid[index, :]), row, data.several_files)
                continue
            for column, cell in enumerate(row):
                axes = figure.add_subplot(grid[index, column])
                if cell.kind == "throughput":
                    _draw_throughput(axes, cell.panel, styles, data.several_files)
                else:
                    _draw_ratio(axes, cell.panel, styles, data.several_files, min_ratio)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def _row_height(row: _Row) -> float:
    if isinstance(row, BarGroup):
        return max(2.5, 0.22 * len(row.bars) + 1.2)
    return _CELL[1]


class _Styles:
    """Colour by driver, line style by file; stable across panels of one figure."""

    def __init__(self) -> None:
        self._files: dict[str, int] = {}
        self._drivers: dict[str, int] = {}

    def color(self, driver: str) -> str:
        index = self._drivers.setdefault(driver, len(self._drivers))
        return _PALETTE[index % len(_PALETTE)]

    def line(self, file_label: str) -> str:
        index = self._files.setdefault(file_label, len(self._files))
        return _LINE_STYLES[index % len(_LINE_STYLES)]


def _block_size_axis(axes: Axes, sizes: Sequence[int]) -> None:
    axes.set_xscale("log", base=2)
    axes.xaxis.set_major_locator(FixedLocator(list(sizes)))
    axes.xaxis.set_minor_locator(NullLocator())
    axes.set_xticks(list(sizes), [size_label(s) for s in sizes])
    axes.set_xlabel("block size (bytes)")
    axes.grid(True, which="major", alpha=0.3)


def _draw_throughput(axes: Axes, panel: Panel, styles: _Styles, several: bool) -> None:
    for curve in panel.curves:
        sizes = [p.block_size for p in curve.points]
        color = styles.color(curve.driver)
        axes.plot(
            sizes,
            [p.median / MIB for p in curve.points],
            linestyle=styles.line(curve.file_label),
            marker="o",
            markersize=3,
            color=color,
            label=curve.label(several),
        )
        axes.fill_between(
            sizes,
            [p.low / MIB for p in curve.points],
            [p.high / MIB for p in curve.points],
            color=color,
            alpha=0.15,
            linewidth=0,
        )
    _block_size_axis(axes, panel.block_sizes)
    medians = [p.median for c in panel.curves for p in c.points]
    # log only where it helps: across a decade or more (16 B against 64 KiB); a narrower
    # range on a log axis would have no labelled tick at all
    if min(medians) > 0 and max(medians) / min(medians) >= 10:
        axes.set_yscale("log")
        axes.yaxis.set_major_formatter(_PLAIN)
        axes.yaxis.set_minor_formatter(FuncFormatter(lambda value, _: ""))
    axes.set_ylabel("MiB/s (median, 95% CI)")
    axes.set_title(panel.title, fontsize=10)
    axes.legend(fontsize=7, loc="best")


def _draw_ratio(axes: Axes, panel: Panel, styles: _Styles, several: bool, min_ratio: float) -> None:
    for ratio in panel.ratios:
        color = styles.color(ratio.hw_driver)
        axes.plot(
            [size for size, _ in ratio.ratios],
            [value for _, value in ratio.ratios],
            linestyle=styles.line(ratio.file_label),
            marker="o",
            markersize=3,
            color=color,
            label=ratio.label(several),
        )
        if ratio.crossover is not None:
            axes.axvline(ratio.crossover, color=color, linestyle=":", linewidth=1)
            axes.annotate(
                f"crossover {size_label(ratio.crossover)}",
                (ratio.crossover, min_ratio),
                xytext=(4, 6),
                textcoords="offset points",
                fontsize=7,
                color=color,
            )
    axes.axhline(min_ratio, color="black", linewidth=0.8, alpha=0.6)
    _block_size_axis(axes, panel.block_sizes)
    axes.set_yscale("log")
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}x"))
    values = [value for ratio in panel.ratios for _, value in ratio.ratios if value > 0]
    # within a decade only the minor ticks carry numbers; across several they would collide
    narrow = bool(values) and max(values) / min(values) < 10
    axes.yaxis.set_minor_formatter(FuncFormatter(lambda value, _: f"{value:g}x" if narrow else ""))
    axes.set_ylabel("HW / SW (median ratio)")
    axes.set_title(f"{panel.title}: HW/SW", fontsize=10)
    axes.legend(fontsize=7, loc="best")


def _draw_bars(axes: Axes, group: BarGroup, several: bool) -> None:
    names = list(dict.fromkeys(bar.name for bar in group.bars))
    files = list(dict.fromkeys(bar.file_label for bar in group.bars))
    height = 0.8 / len(files)
    for offset, file_label in enumerate(files):
        values = {
            bar.name: bar.bytes_per_second / MIB
            for bar in group.bars
            if bar.file_label == file_label
        }
        positions = [i + offset * height for i, name in enumerate(names) if name in values]
        axes.barh(
            positions,
            [values[name] for name in names if name in values],
            height=height,
            label=file_label if several else None,
            color=_PALETTE[offset % len(_PALETTE)],
        )
    axes.set_yticks([i + 0.4 - height / 2 for i in range(len(names))], names, fontsize=7)
    axes.invert_yaxis()
    axes.set_xlabel("MiB/s")
    axes.set_title(f"{group.source}: measurements without a block size", fontsize=10)
    axes.grid(True, axis="x", alpha=0.3)
    if several:
        axes.legend(fontsize=7)
