# SPDX-License-Identifier: MIT
"""`hwcrypto history show`'s page (pure: a judged history and PNG bytes in, one string out).

Grouped so a history of hundreds of series stays readable: a section per board, in it a
figure per path and algorithm (history/trend_plots.py draws it, one small plot per
series), and under each figure the table of its change points. Self-contained as the
report is (report/html.py): inline CSS, figures as `data:` URIs, no scripts.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_hwcrypto.history.changes import Change, ChangeKind
from pytest_hwcrypto.history.judge import Judged, Judgement, series_label
from pytest_hwcrypto.report.html import png_data_uri

# Series per figure: past this a group is drawn as several figures of this many.
MAX_PER_FIGURE = 24

_STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; margin-top: 1.8em; }
h3 { font-size: 1em; margin-bottom: 0.3em; }
table { border-collapse: collapse; margin: 0.4em 0 1.2em; font-size: 0.85em; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.5em; text-align: left; }
th { background: #eee; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.fail { color: #a31515; } .note { color: #555; }
img { max-width: 100%; border: 1px solid #ddd; }
"""


@dataclass(frozen=True)
class FigureGroup:
    """The series one figure draws: one board's path and algorithm (a part of it when the
    group has more than MAX_PER_FIGURE series)."""

    board: str
    path: str
    algorithm: str
    judged: tuple[Judged, ...]
    part: int = 1
    parts: int = 1

    @property
    def title(self) -> str:
        more = f" ({self.part} of {self.parts})" if self.parts > 1 else ""
        return f"{self.board}: {self.path} {self.algorithm}{more}"


def figure_groups(judgement: Judgement) -> list[FigureGroup]:
    """The figures to draw: series with runs, by board, then path and algorithm."""
    by_group: dict[tuple[str, str, str], list[Judged]] = {}
    for one in judgement.judged:
        if one.ordered:
            key = one.series.key
            by_group.setdefault((key.board, key.path, key.algorithm), []).append(one)
    out = []
    for (board, path, algorithm), judged in sorted(by_group.items()):
        judged.sort(key=_plot_order)
        chunks = [judged[i : i + MAX_PER_FIGURE] for i in range(0, len(judged), MAX_PER_FIGURE)]
        for number, chunk in enumerate(chunks, start=1):
            out.append(FigureGroup(board, path, algorithm, tuple(chunk), number, len(chunks)))
    return out


def _plot_order(judged: Judged) -> tuple[str, str, int, int, int]:
    """Driver, op, then sizes as numbers (16 B before 1024 B)."""
    key = judged.series.key
    return (
        key.driver or "",
        key.op,
        key.key_bits or 0,
        key.block_size or 0,
        key.concurrency or 0,
    )


def render_history_html(
    judgement: Judgement,
    figures: Sequence[tuple[FigureGroup, bytes]],
    title: str,
    max_drop: float,
) -> str:
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="note">Each series in kernel order; dashed lines are change points '
        f"(red: a drop beyond max-drop {max_drop:.0%}), flat lines the level between them.</p>",
    ]
    board = None
    for group, png in figures:
        if group.board != board:
            board = group.board
            parts.append(_board_heading(judgement, board))
        keys = {one.series.key for one in group.judged}
        changes = [c for c in judgement.changes if c.key in keys]
        parts.append(f"<h3>{_e(group.title)}</h3>")
        parts.append(
            f'<img class="hwcrypto-trend" alt="{_e(group.title)}: trends over kernels" '
            f'src="{png_data_uri(png)}">'
        )
        if changes:
            parts.append(_changes_table(changes))
    if not figures:
        parts.append('<p class="note">No series with runs in this history.</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _board_heading(judgement: Judgement, board: str) -> str:
    mine = [j for j in judgement.judged if j.series.key.board == board]
    short = [j for j in mine if j.verdict.needs_more > 0]
    changes = [c for c in judgement.changes if c.key.board == board]
    failing = [c for c in changes if c.failing and c.newest]
    text = f"{len(mine)} series, {len(changes)} change points"
    if failing:
        text += f', <span class="fail">{len(failing)} new drops beyond max-drop</span>'
    if short:
        most = max(j.verdict.needs_more for j in short)
        text += f"; {len(short)} series too short to judge (up to {most} more runs needed)"
    return f"<h2>Board {_e(board)}</h2><p>{text}</p>"


def _changes_table(changes: Sequence[Change]) -> str:
    head = (
        "series",
        "what",
        "last good",
        "first bad",
        "change",
        "95 % interval",
        "p",
        "seen after",
        "verdict",
    )
    rows = []
    for change in changes:
        what = "speed"
        if change.kind is ChangeKind.WINNER:
            what = f"winner {change.driver_before} -> {change.driver_after}"
        verdict = ""
        if change.failing:
            verdict = "FAIL (newest kernel)" if change.newest else "drop"
        elif change.change < 0:
            verdict = "within max-drop"
        css = ' class="fail"' if change.failing else ""
        cells = [
            f"<td>{_e(series_label(change.key))}</td>",
            f"<td>{_e(what)}</td>",
            f"<td>{_e(change.last_good.label())}</td>",
            f"<td>{_e(change.first_bad.label())}</td>",
            f'<td class="num">{change.change * 100:+.1f} %</td>',
            f'<td class="num">{change.low * 100:+.1f} .. {change.high * 100:+.1f} %</td>',
            f'<td class="num">{f"{change.p:.2g}" if change.p is not None else "-"}</td>',
            f'<td class="num">{change.runs_to_see} runs</td>',
            f"<td{css}>{_e(verdict)}</td>",
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    header = "".join(f"<th>{_e(h)}</th>" for h in head)
    return f"<table><thead><tr>{header}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _e(text: str) -> str:
    return html.escape(str(text), quote=True)
