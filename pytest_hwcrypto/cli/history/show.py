# SPDX-License-Identifier: MIT
"""`hwcrypto history show`: the history's trends over kernels as one HTML page.

Judges the history as `history detect` does (history/judge.py), then draws a figure per
board, path and algorithm (history/trend_plots.py) with the change points marked, and
writes the page (history/trend_html.py). Exit 0 when written, 2 for bad input.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from pytest_hwcrypto.cli.exits import EXIT_OK
from pytest_hwcrypto.cli.history.detect import add_series_arguments, read_series
from pytest_hwcrypto.history.judge import judge_history
from pytest_hwcrypto.history.order import left_out_line, read_topo_order
from pytest_hwcrypto.usage import UsageError
from pytest_hwcrypto.verdict.compare import parse_fraction
from pytest_hwcrypto.vocabulary import DEFAULT_MAX_DROP

MATPLOTLIB_MISSING = (
    "hwcrypto history show needs matplotlib for its plots: "
    "pip install 'pytest-hwcrypto[report]' (or apt-get install python3-matplotlib)"
)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "show",
        help="per-series trends over kernels with the change points marked, as HTML",
    )
    add_series_arguments(parser)
    parser.add_argument(
        "--max-drop",
        default=f"{DEFAULT_MAX_DROP:.0%}",
        help="drops beyond it are marked red (%(default)s)",
    )
    parser.add_argument("--html", type=Path, metavar="FILE", required=True, help="the page")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        max_drop = parse_fraction(args.max_drop)
    except ValueError as error:
        raise UsageError(f"--max-drop: {error}") from None
    try:
        from pytest_hwcrypto.history.trend_plots import render_group_png
    except ImportError as error:
        if error.name is None or not error.name.startswith("matplotlib"):
            raise
        raise UsageError(MATPLOTLIB_MISSING) from None
    from pytest_hwcrypto.history.trend_html import figure_groups, render_history_html

    folder = args.html.parent if str(args.html.parent) else Path(".")
    if not folder.is_dir():  # before the judging, which takes seconds on a long history
        raise UsageError(f"--html {args.html}: no such directory {folder}")
    topo = read_topo_order(args.repo) if args.repo is not None else None
    all_series = read_series(args.history_db, args.board)
    if args.board is not None:
        all_series = [s for s in all_series if s.key.board == args.board]
    if not all_series:
        where = f" of board {args.board}" if args.board else ""
        raise UsageError(f"--history-db {args.history_db or '(default)'}: no series{where}")
    judgement = judge_history(all_series, topo, max_drop)
    if args.repo is not None:
        line = left_out_line(judgement.left_out, args.repo)
        if line:
            print(line)
    figures = [
        (group, render_group_png(group.judged, judgement.changes, group.title))
        for group in figure_groups(judgement)
    ]
    title = "pytest-hwcrypto history" + (f": board {args.board}" if args.board else "")
    page = render_history_html(judgement, figures, title, max_drop)
    _write_atomically(args.html, page)
    print(
        f"{args.html}: {len(judgement.judged)} series, {len(judgement.changes)} change "
        f"points, {len(figures)} figures"
    )
    return EXIT_OK


def _write_atomically(path: Path, text: str) -> None:
    """The page in place, or the old one left whole: never a half-written page."""
    try:
        handle, scratch = tempfile.mkstemp(dir=path.parent or Path("."), prefix=f".{path.name}.")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(scratch, 0o666 & ~umask)  # as open() would make it, not mkstemp's 0600
        os.replace(scratch, path)
    except OSError as error:
        raise UsageError(f"--html {path}: {error.strerror or error}") from None
