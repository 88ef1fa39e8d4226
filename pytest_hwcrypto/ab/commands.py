# SPDX-License-Identifier: MIT
"""What `hwcrypto ab`, bisect-run and bisect-confirm share: each side's board checked
before anything is measured, the pairs measured on a focus, the report of a finished
document, SIGTERM ended through the boards' cleanup, and what a good file found
regressed. Kept here, under the command modules, so that no command imports another.
User mistakes raise UsageError (one line, exit 2)."""

from __future__ import annotations

import contextlib
import json
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from pytest_hwcrypto.ab.document import SIDES, AbDocument, Side, save_document
from pytest_hwcrypto.ab.engine import AbOutcome, BoardSlices, run_ab
from pytest_hwcrypto.ab.series import (
    SeriesKey,
    SeriesVerdict,
    any_regressed,
    kernel_changes,
    one_sided_series,
    undecided,
)
from pytest_hwcrypto.ab.text import format_changes, format_sides, format_table, summary_line
from pytest_hwcrypto.boards.base import Board, BoardError
from pytest_hwcrypto.boards.kernel_image import bzimage_release
from pytest_hwcrypto.usage import UsageError


@contextlib.contextmanager
def sigterm_as_exit() -> Iterator[None]:
    """SIGTERM ends the run through SystemExit, so the board's own cleanup (killing its
    process group) runs: killed by the default action, a UML board's helper processes were
    seen outliving hwcrypto ab by over an hour. The pairs so far are in the file already.
    The caller's handler is put back afterwards."""

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def checked_board(board_kind: str, side: Side, label: str, test_drivers: bool = False) -> Board:
    """The side's board, checked before anything is measured: paths, modules, tools. A
    `debian:<ver>` kernel is fetched (cached) first (boards/debian_kernel.py)."""
    from pytest_hwcrypto.boards import debian_kernel

    try:
        kernel, modules = debian_kernel.resolve(side.kernel, side.modules)
    except BoardError as error:
        raise UsageError(f"kernel {label}: {error}") from None
    for what, given in (("kernel", kernel), ("modules", modules)):
        if given is not None and not Path(given).exists():
            raise UsageError(f"{what} {label}: {given} does not exist")
    if kernel and modules and board_kind == "qemu":
        release = bzimage_release(Path(kernel))
        if release is not None and release != Path(modules).name:
            raise UsageError(
                f"kernel {label}: {kernel} is {release}, but --modules {modules} "
                f"is for {Path(modules).name}"
            )
    from pytest_hwcrypto.boards.registry import make_board

    try:
        # The host's own /lib/modules/<release> is fine here: the QEMU board does not stage it
        # (boards/qemu.py, is_host_modules_dir).
        board = make_board(board_kind, kernel, modules, test_drivers=test_drivers)
        board.kernel_args = tuple(side.config.get("cmdline", ()))
        board.check_prerequisites()
    except BoardError as error:
        raise UsageError(f"kernel {label}: {error}") from None
    return board


def report(
    document: AbDocument, outcome: AbOutcome, path: Path | None, as_json: bool, expected: list[str]
) -> bool:
    """Print the verdicts (a table, or JSON) and keep them in the document; whether the
    run failed: a series regressed, or an expected driver vanished in B."""
    changes = kernel_changes(document)
    one_sided = one_sided_series(document)
    vanished = [driver for driver in expected if driver in changes.only_a]
    regressed = any_regressed(outcome.verdicts)
    document.verdict = {
        "pairs": outcome.pairs,
        "stopped": outcome.stopped,
        "series": [verdict.to_json() for verdict in outcome.verdicts],
        "changes": changes.to_json(),
        "expected_vanished": vanished,
        "failed": regressed or bool(vanished),
    }
    if path is not None:
        save_document(document, path)
    if as_json:
        json.dump(document.verdict, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        lines = format_sides(document.sides)
        lines += format_table(outcome.verdicts, document.max_drop)
        lines += format_changes(changes, one_sided)
        lines += [f"expected driver vanished in B: {driver}" for driver in vanished]
        lines.append(summary_line(outcome.verdicts, outcome.pairs, outcome.stopped))
        if path is not None:
            lines.append(f"hwcrypto ab: every pair and sample in {path}")
        sys.stdout.write("\n".join(lines) + "\n")
    return bool(document.verdict["failed"])


def refuse_unmeasured(good: AbDocument) -> None:
    """A --good file without a series can never tell a step good or bad: every step would
    be skipped, and `git bisect run` would build and boot every commit for nothing."""
    if not good.verdict.get("series"):
        raise UsageError(
            "--good: nothing was measured in it (no series judged): rerun `hwcrypto ab` "
            "with algorithms both kernels have"
        )


def measure_pairs(
    document: AbDocument,
    path: Path,
    timeout: float,
    budget: float | None,
    focus: dict[SeriesKey, float],
    undecided_of: Callable[[list[SeriesVerdict]], list[SeriesVerdict]] = undecided,
) -> AbOutcome:
    """The pairs of `document` on its board, looking only at the `focus` series."""
    boards = {side: checked_board(document.board, document.sides[side], side) for side in SIDES}
    slices = BoardSlices(
        boards,
        {side: boards[side].kernel_description() for side in SIDES},
        document.slice,
        timeout,
        sys.stderr,
        settings={s: dict(document.sides[s].config.get("set", {})) for s in SIDES},
    )
    return run_ab(
        document,
        slices,
        path,
        budget_seconds=budget,
        focus=set(focus),
        undecided_of=undecided_of,
    )


def focus_series(good: AbDocument) -> dict[SeriesKey, float]:
    """The series --good found regressed, with the change it measured: what the bisection
    is about (empty: all series, judged by the paired verdict)."""
    focus: dict[SeriesKey, float] = {}
    for entry in good.verdict.get("series", []):
        if entry.get("verdict") == "regressed":
            key = (
                entry["source"],
                entry["algorithm"],
                entry["key_bits"],
                entry["block_size"],
                entry["op"],
                entry["driver"],
            )
            focus[key] = float(entry["change"])
    return focus
