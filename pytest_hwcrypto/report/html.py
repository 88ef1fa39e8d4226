# SPDX-License-Identifier: MIT
"""The self-contained HTML report (pure: ReportData and PNG bytes in, one string out).

Fit to attach to a bug: one file, inline CSS, the figure embedded as a `data:` URI, no
scripts and no external resource, so it renders the same offline, in a mail client's
viewer or in a CI artifact browser.  Every text from a results file is escaped.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Sequence

from pytest_hwcrypto.report.scaling import scaling_tables
from pytest_hwcrypto.report.shaping import (
    BarGroup,
    Panel,
    ReportData,
    ReportInput,
    environment_rows,
)
from pytest_hwcrypto.units import format_drop
from pytest_hwcrypto.vocabulary import MIB

_STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
h3 { font-size: 1em; margin-bottom: 0.3em; }
table { border-collapse: collapse; margin: 0.4em 0 1em; font-size: 0.85em; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #eee; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.ci { color: #777; font-size: 0.85em; } .pass { color: #176317; } .fail { color: #a31515; }
img { max-width: 100%; border: 1px solid #ddd; }
"""


def png_data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def render_html(data: ReportData, figure_png: bytes | None, title: str) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        _files_section(data.inputs),
    ]
    if figure_png is not None:
        parts.append("<h2>Plots</h2>")
        parts.append(
            f'<img id="hwcrypto-plot" alt="throughput against block size" '
            f'src="{png_data_uri(figure_png)}">'
        )
    parts.append(_verdicts_section(data.inputs, data.several_files))
    parts.append(_findings_section(data.inputs, data.several_files))
    if data.panels:
        parts.append("<h2>Throughput</h2>")
        parts.extend(_panel_table(panel, data.several_files) for panel in data.panels)
    parts.extend(_scaling_section(data.inputs, data.several_files))
    if data.bar_groups:
        parts.append("<h2>Measurements without a block size</h2>")
        parts.extend(_bar_table(group) for group in data.bar_groups)
    parts.append(_environment_section(data.inputs))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _files_section(inputs: Sequence[ReportInput]) -> str:
    rows = [
        (
            item.label,
            item.path,
            str(len(item.results.measurements)),
            str(len(item.results.findings)),
            _verdict_count(item),
        )
        for item in inputs
    ]
    return "<h2>Files</h2>" + _table(
        ("label", "file", "measurements", "findings", "verdicts"), rows, numeric={2, 3}
    )


def _verdict_count(item: ReportInput) -> str:
    verdicts = item.results.verdicts
    failed = sum(1 for v in verdicts if not v.passed)
    return f"{len(verdicts)} ({failed} failed)" if failed else str(len(verdicts))


def _verdicts_section(inputs: Sequence[ReportInput], several: bool) -> str:
    rows = []
    for item in inputs:
        for verdict in item.results.verdicts:
            drop = verdict.extra.get("detectable_drop")
            status = "pass" if verdict.passed else "FAIL"
            rows.append(
                [
                    *_maybe_file(several, item.label),
                    f'<span class="{"pass" if verdict.passed else "fail"}">{status}</span>',
                    _e(verdict.rule),
                    _e(verdict.message),
                    _e(format_drop(drop)) if isinstance(drop, (int, float)) else "",
                ]
            )
    if not rows:
        return "<h2>Verdicts</h2><p>No rule verdicts in these files.</p>"
    header = (*(("file",) if several else ()), "result", "rule", "message", "could detect drops of")
    return "<h2>Verdicts</h2>" + _raw_table(header, rows)


def _findings_section(inputs: Sequence[ReportInput], several: bool) -> str:
    rows = [
        [_e(c) for c in [*_maybe_file(several, item.label), f.kind, f.algorithm, f.detail]]
        for item in inputs
        for f in item.results.findings
    ]
    if not rows:
        return "<h2>Findings</h2><p>No findings.</p>"
    header = (*(("file",) if several else ()), "kind", "algorithm", "detail")
    return "<h2>Findings</h2>" + _raw_table(header, rows)


def _panel_table(panel: Panel, several: bool) -> str:
    sizes = panel.block_sizes
    header = (
        *(("file",) if several else ()),
        "driver",
        "class",
        *(f"{size} B" for size in sizes),
    )
    rows = []
    for curve in panel.curves:
        by_size = {point.block_size: point for point in curve.points}
        cells = [
            _mib_cell(by_size[size].median, by_size[size].low, by_size[size].high)
            if size in by_size
            else ""
            for size in sizes
        ]
        rows.append(
            [_e(c) for c in _maybe_file(several, curve.file_label)]
            + [_e(curve.driver), _e(curve.driver_class)]
            + cells
        )
    for ratio in panel.ratios:
        ratio_at = dict(ratio.ratios)
        crossing = f"crossover {ratio.crossover} B" if ratio.crossover else "no crossover"
        rows.append(
            [_e(c) for c in _maybe_file(several, ratio.file_label)]
            + [_e(f"{ratio.hw_driver} / {', '.join(ratio.sw_drivers)}"), _e(f"HW/SW, {crossing}")]
            + [f"{ratio_at[size]:.2f}x" if size in ratio_at else "" for size in sizes]
        )
    return f"<h3>{_e(panel.title)}</h3>" + _raw_table(
        header, rows, first_numeric=len(header) - len(sizes)
    )


def _scaling_section(inputs: Sequence[ReportInput], several: bool) -> list[str]:
    """Throughput against requests in flight (report/scaling.py), where it was measured."""
    parts: list[str] = []
    for item in inputs:
        for table in scaling_tables(item.results):
            title = f"{item.label}: {table.title()}" if several else table.title()
            rows = [table.cells(row) for row in table.rows]
            parts.append(f"<h3>{_e(title)}</h3>" + _table(table.header(), rows, set(range(1, 99))))
    return ["<h2>Requests in flight</h2>", *parts] if parts else []


def _mib_cell(median: float, low: float, high: float) -> str:
    text = _e(f"{median / MIB:.3g}")
    if high > low:
        text += f' <span class="ci">[{low / MIB:.3g}..{high / MIB:.3g}]</span>'
    return text


def _bar_table(group: BarGroup) -> str:
    files = list(dict.fromkeys(bar.file_label for bar in group.bars))
    names = list(dict.fromkeys(bar.name for bar in group.bars))
    values = {(bar.name, bar.file_label): bar.bytes_per_second for bar in group.bars}
    rows = [
        [_e(name)]
        + [_e(f"{values[(name, f)] / MIB:.1f}") if (name, f) in values else "" for f in files]
        for name in names
    ]
    header = ("measurement", *(f"{f} (MiB/s)" for f in files))
    return f"<h3>{_e(group.source)}</h3>" + _raw_table(header, rows, first_numeric=1)


def _environment_section(inputs: Sequence[ReportInput]) -> str:
    parts = ["<h2>Environment</h2>"]
    for item in inputs:
        rows = environment_rows(item.results)
        parts.append(f"<h3>{_e(item.label)}</h3>")
        parts.append(_table(("key", "value"), rows) if rows else "<p>Not recorded.</p>")
    return "".join(parts)


def _maybe_file(several: bool, label: str) -> list[str]:
    return [label] if several else []


def _table(
    header: Sequence[str], rows: Iterable[Sequence[str]], numeric: set[int] | None = None
) -> str:
    escaped = [[_e(cell) for cell in row] for row in rows]
    return _raw_table(header, escaped, numeric=numeric)


def _raw_table(
    header: Sequence[str],
    rows: Iterable[Sequence[str]],
    numeric: set[int] | None = None,
    first_numeric: int | None = None,
) -> str:
    """Rows whose cells are already HTML (escaped by the caller)."""

    def td(index: int, cell: str) -> str:
        is_number = (numeric is not None and index in numeric) or (
            first_numeric is not None and index >= first_numeric
        )
        return f'<td class="num">{cell}</td>' if is_number else f"<td>{cell}</td>"

    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(td(i, cell) for i, cell in enumerate(row)) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _e(text: str) -> str:
    return html.escape(str(text), quote=True)
