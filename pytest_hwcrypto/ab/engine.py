# SPDX-License-Identifier: MIT
"""The A/B loop: pairs of slices in balanced order, judged at each step, escalated while
some series cannot be told yet and the budget allows, saved after every pair.

How a slice is taken is a `SliceRunner`'s business: `BoardSlices` boots the side's kernel on
a virtual board for each slice (two kernels); ab/config_runner.py switches one running
kernel between two configurations (no reboot). The loop itself only schedules, keeps and
judges, so it is unit-tested with a fake runner.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import sys
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TextIO

from pytest_hwcrypto.ab.document import AbDocument, PairRecord, SliceRecord, save_document
from pytest_hwcrypto.ab.schedule import pair_order, sides_in_order
from pytest_hwcrypto.ab.series import SeriesKey, SeriesVerdict, judge_document, undecided
from pytest_hwcrypto.ab.slice import SliceSpec
from pytest_hwcrypto.boards.base import Board, new_run_dir, passed_environment
from pytest_hwcrypto.boards.helpers import path_with_environment
from pytest_hwcrypto.measure.targets import PATH_ALGORITHMS


class AbError(RuntimeError):
    """A side could not be measured (no boot, an oops, nothing measured); one line that
    names the side's kernel and what happened."""


@dataclass
class SliceOutcome:
    results: dict[str, Any] | None
    boot_seconds: float | None
    error: str | None = None


class SliceRunner(Protocol):
    def run_slice(self, side: str, pair_index: int) -> SliceOutcome: ...

    def describe(self, side: str) -> str: ...


@dataclass
class AbOutcome:
    verdicts: list[SeriesVerdict]
    pairs: int
    stopped: str  # why the loop ended: "decided", "pairs", "budget"


def host_load() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def run_ab(
    document: AbDocument,
    runner: SliceRunner,
    path: Path | None,
    *,
    budget_seconds: float | None = None,
    focus: Collection[SeriesKey] = (),
    undecided_of: Callable[[list[SeriesVerdict]], list[SeriesVerdict]] = undecided,
    wall: Callable[[], float] = time.time,
    stream: TextIO = sys.stderr,
) -> AbOutcome:
    """Measure pairs up to each step of `document.steps`, judging at each; see module doc.

    Pairs already complete in the document count (a resumed run); an incomplete one is
    measured again. A failed slice is saved and raises AbError. With `focus`, only those
    series are judged (a bisection asks about the series that regressed).
    """
    document.pairs = document.complete_pairs
    stopped = "pairs"
    for step in document.steps:
        while len(document.pairs) < step:
            if budget_seconds is not None and _over_budget(document, budget_seconds):
                stopped = "budget"
                break
            pair = _measure_pair(document, runner, wall)
            document.pairs.append(pair)
            if path is not None:
                save_document(document, path)
            failed = [record for record in pair.slices.values() if record.error]
            if failed:
                record = failed[0]
                raise AbError(f"{runner.describe(record.side)}: {record.error}")
            stream.write(_progress_line(pair, len(document.pairs), step))
            stream.flush()
        if stopped == "budget":
            break
        verdicts = judge_document(document, focus=focus)
        if not undecided_of(verdicts):
            stopped = "decided"
            break
    return AbOutcome(judge_document(document, focus=focus), len(document.pairs), stopped)


def _over_budget(document: AbDocument, budget: float) -> bool:
    """Would one more pair, at the mean cost so far, pass the budget? The budget covers
    every pair of the file, those of an earlier (resumed) run too."""
    done = document.pairs
    if not done:
        return False
    spent = sum(pair.wall_seconds for pair in done)
    return spent + spent / len(done) > budget


def _measure_pair(
    document: AbDocument, runner: SliceRunner, wall: Callable[[], float]
) -> PairRecord:
    index = document.pairs[-1].index + 1 if document.pairs else 0
    order = pair_order(document.seed, index)
    pair = PairRecord(index=index, order=order)
    for side in sides_in_order(order):
        began = wall()
        load = host_load()
        outcome = runner.run_slice(side, index)
        record = SliceRecord(
            side=side,
            results=outcome.results,
            boot_seconds=outcome.boot_seconds,
            wall_seconds=wall() - began,
            started=began,
            host_load=load,
            error=outcome.error,
        )
        document.add_slice(pair, record)
        if record.error:
            break
    return pair


def _progress_line(pair: PairRecord, done: int, step: int) -> str:
    loads = [r.host_load for r in pair.slices.values() if r.host_load is not None]
    load = f", load {max(loads):.1f}" if loads else ""
    return f"hwcrypto ab: pair {done}/{step} ({pair.order}) {pair.wall_seconds:.1f} s{load}\n"


class BoardSlices:
    """Each slice on a freshly booted virtual board with that side's kernel."""

    def __init__(
        self,
        boards: dict[str, Board],
        descriptions: dict[str, str],
        spec: SliceSpec,
        timeout: float,
        stream: TextIO,
        artifacts: Path | None = None,
        settings: dict[str, dict[str, str]] | None = None,
    ) -> None:
        self.settings = settings or {}
        self.boards = boards
        self.descriptions = descriptions
        self.spec = spec
        self.timeout = timeout
        self.stream = stream
        self.artifacts = artifacts

    def describe(self, side: str) -> str:
        return f"kernel {side} ({self.descriptions[side]})"

    def run_slice(self, side: str, pair_index: int) -> SliceOutcome:
        board = self.boards[side]
        run_dir = new_run_dir()
        out = run_dir / "slice.json"
        try:
            argv = self.spec.command(sys.executable, out, self.settings.get(side, {}))
        except ValueError as error:
            return SliceOutcome(None, None, str(error))
        command = shlex.join(argv)
        env = passed_environment(os.environ)
        env["PATH"] = path_with_environment()
        log = io.StringIO()
        try:
            result = board.run(
                command,
                cwd=Path.cwd(),
                env=env,
                timeout=self.timeout,
                stream=log,
                artifacts_dir=self.artifacts,
                run_dir=run_dir,
            )
            oops = [e.line for e in result.kernel_events if e.kind == "oops"]
            if result.boot_seconds is None:
                return SliceOutcome(
                    None, None, f"the board never booted (console log {result.console_log})"
                )
            if oops:
                return SliceOutcome(None, result.boot_seconds, f"kernel oops: {oops[0]}")
            if result.timed_out:
                return SliceOutcome(
                    None, result.boot_seconds, f"timed out after {self.timeout:g} s"
                )
            if not out.exists():
                tail = _last_line(log.getvalue())
                return SliceOutcome(
                    None,
                    result.boot_seconds,
                    f"the slice wrote no results (exit {result.exit_code}): {tail}",
                )
            results = json.loads(out.read_text())
            if not results.get("measurements"):
                why = "; ".join(results.get("open_failures") or []) or nothing_to_measure(self.spec)
                return SliceOutcome(None, result.boot_seconds, f"nothing measured: {why}")
            return SliceOutcome(results, result.boot_seconds)
        finally:
            shutil.rmtree(run_dir, ignore_errors=True)


def nothing_to_measure(spec: SliceSpec) -> str:
    """Why a slice that ran found nothing: none of what was asked is on this kernel."""
    if spec.algorithms:
        return f"no driver of {', '.join(spec.algorithms)} on this kernel"
    return (
        f"none of {', '.join(PATH_ALGORITHMS)} has a driver AF_ALG can time on this kernel; "
        "name one with --algorithm"
    )


def _last_line(text: str) -> str:
    meaningful = [line.strip() for line in text.splitlines() if line.strip()]
    return meaningful[-1] if meaningful else "no output"
