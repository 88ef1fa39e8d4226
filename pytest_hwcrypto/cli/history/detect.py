# SPDX-License-Identifier: MIT
"""`hwcrypto history detect`: which kernel made a series of the history worse.

Reads every series of the history (one board or all), puts each in kernel order, asks
history/judge.py for its change points, and prints a table per board. Exit 1 when a
drop beyond --max-drop is new with the newest kernel (the runs CI just added made the
detector name it), 0 otherwise: older changes are history, reported but already known.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Optional

from pytest_hwcrypto.cli.exits import EXIT_FAIL, EXIT_OK
from pytest_hwcrypto.history.changes import Change, ChangeKind, SeriesChanges
from pytest_hwcrypto.history.judge import judge_history, series_label
from pytest_hwcrypto.history.model import KernelIdentity, Series
from pytest_hwcrypto.history.order import left_out_line, read_topo_order
from pytest_hwcrypto.usage import UsageError
from pytest_hwcrypto.verdict.compare import parse_fraction
from pytest_hwcrypto.vocabulary import DEFAULT_MAX_DROP

# (Optional, not `str | None`: a runtime alias, and the package runs on Python 3.9)
SeriesReader = Callable[[Optional[str], Optional[str]], list[Series]]


def read_series(history_db: str | None, board: str | None) -> list[Series]:
    """Every series of the history (of one board, if given), from the store; the values
    alone, since the detection judges one value per run. An existing database only: a
    mistyped path is an error, not an empty new history."""
    from pytest_hwcrypto.history.store import DEFAULT_DB, Store, StoreError

    try:
        with Store(history_db or DEFAULT_DB, create=False) as store:
            return store.series(board, samples=False)
    except StoreError as error:
        raise UsageError(str(error)) from None


def add_series_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of every subcommand that judges the stored series (detect, show)."""
    parser.add_argument(
        "--history-db",
        metavar="DB",
        help="the history: an SQLite file or postgresql://... (default: "
        "hwcrypto-history.sqlite here, as `hwcrypto history add`)",
    )
    parser.add_argument("--board", help="only this board's series")
    parser.add_argument(
        "--repo",
        type=Path,
        metavar="PATH",
        help="kernel git tree: order kernels by its commits (git rev-list --topo-order) "
        "instead of by release",
    )


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "detect",
        help="change points over the history: which kernel made a series faster or slower",
    )
    add_series_arguments(parser)
    parser.add_argument(
        "--max-drop",
        default=f"{DEFAULT_MAX_DROP:.0%}",
        help="smaller drops are reported, not failed (%(default)s)",
    )
    parser.add_argument(
        "--emit-ab",
        type=Path,
        metavar="FILE",
        help="write the last good and first bad kernel of the drop to judge next: the "
        "`hwcrypto ab` pair and the `git bisect start` range (JSON)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, reader: SeriesReader | None = None) -> int:
    try:
        max_drop = parse_fraction(args.max_drop)
    except ValueError as error:
        raise UsageError(f"--max-drop: {error}") from None
    topo = read_topo_order(args.repo) if args.repo is not None else None
    all_series = (reader or read_series)(args.history_db, args.board)
    if args.board is not None:
        all_series = [s for s in all_series if s.key.board == args.board]
    if not all_series:
        where = f" of board {args.board}" if args.board else ""
        raise UsageError(f"--history-db {args.history_db or '(default)'}: no series{where}")
    judgement = judge_history(all_series, topo, max_drop)
    verdicts = judgement.verdicts
    changes = list(judgement.changes)
    if args.repo is not None:
        line = left_out_line(judgement.left_out, args.repo)
        if line:
            print(line)
    for board in sorted({v.key.board for v in verdicts}):
        _print_board(
            board,
            [v for v in verdicts if v.key.board == board],
            [c for c in changes if c.key.board == board],
        )
    failing_now = judgement.failing_now
    if args.emit_ab is not None:
        _emit_ab(args.emit_ab, failing_now or [c for c in changes if c.failing], max_drop)
    return EXIT_FAIL if failing_now else EXIT_OK


def change_line(change: Change) -> str:
    """One change as a table row's text (what, where, how much, how sure, how soon)."""
    what = "winner" if change.kind is ChangeKind.WINNER else "speed"
    if change.kind is ChangeKind.WINNER:
        what = f"winner {change.driver_before} -> {change.driver_after}"
    p = f"p {change.p:.2g}" if change.p is not None else "p -"
    verdict = "FAIL" if change.failing and change.newest else ("drop" if change.failing else "")
    if not change.failing and change.change < 0:
        verdict = "within max-drop"
    return (
        f"{series_label(change.key)}: {what}, "
        f"{change.last_good.label()} -> {change.first_bad.label()}: "
        f"{change.change * 100:+.1f} % [{change.low * 100:+.1f}, {change.high * 100:+.1f}], {p}, "
        f"seen after {change.runs_to_see} run{'s' if change.runs_to_see != 1 else ''}"
        + (f" -- {verdict}" if verdict else "")
        + (" (new with the newest kernel)" if change.newest else "")
    )


def _print_board(board: str, verdicts: Sequence[SeriesChanges], changes: Sequence[Change]) -> None:
    short = [v for v in verdicts if v.needs_more > 0]
    print(f"board {board}: {len(verdicts)} series, {len(changes)} change points")
    for change in changes:
        print(f"  {change_line(change)}")
    # One line per shortfall, not per series: a new board's first runs leave every one of
    # its (often hundreds of) series short by the same count.
    for more in sorted({v.needs_more for v in short}):
        alike = [v for v in short if v.needs_more == more]
        runs = f"{more} more run{'s' if more != 1 else ''}"
        if len(alike) == 1:
            print(f"  {series_label(alike[0].key)}: needs {runs} of this series")
        else:
            print(
                f"  {len(alike)} series need {runs} each to be judged, e.g. "
                f"{series_label(alike[0].key)}"
            )
    if not changes and len(short) < len(verdicts):
        print(f"  {len(verdicts) - len(short)} series judged: no change point")


def _kernel_json(kernel: KernelIdentity) -> dict[str, Any]:
    return {
        "release": kernel.release,
        "commit": kernel.commit,
        "describe": kernel.describe,
        "label": kernel.label(),
    }


def _emit_ab(path: Path, failing: Sequence[Change], max_drop: float) -> None:
    if not failing:
        print(f"--emit-ab {path}: no drop beyond max-drop, not written")
        return
    change = min(failing, key=lambda c: c.change)  # the largest drop first
    key = change.key
    ab = [
        "hwcrypto",
        "ab",
        "--kernel",
        "GOOD_IMAGE",
        "--kernel",
        "BAD_IMAGE",
        "--algorithm",
        key.algorithm,
    ]
    if key.block_size is not None:
        ab += ["--block-sizes", str(key.block_size)]
    ab += ["--max-drop", f"{max_drop:.0%}"]
    good, bad = change.last_good.commit, change.first_bad.commit
    document = {
        "good": _kernel_json(change.last_good),
        "bad": _kernel_json(change.first_bad),
        "series": series_label(key),
        "change": change.change,
        "interval": [change.low, change.high],
        "p": change.p,
        "ab": ab,
        "git_bisect_start": (
            f"git bisect start --term-old fast --term-new slow {bad} {good}"
            if good and bad
            else None
        ),
    }
    try:
        path.write_text(json.dumps(document, indent=2) + "\n")
    except OSError as error:
        raise UsageError(f"--emit-ab {path}: {error.strerror}") from None
    print(
        f"--emit-ab {path}: {change.last_good.label()} (good) -> {change.first_bad.label()} (bad)"
    )
