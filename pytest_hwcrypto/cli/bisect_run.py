# SPDX-License-Identifier: MIT
"""`hwcrypto bisect-run`: one step of `git bisect run` -- build, boot, measure against the
good kernel in pairs (the engine of `hwcrypto ab`, ab/), answer good/bad/skip.

git bisect run reads the exit code: 0 good, 1 bad, 125 skip, >= 128 stops the bisection.
A step is judged against the midpoint of the drop the good file measured (docs/ab.md).
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
from pathlib import Path

from pytest_hwcrypto.ab.commands import (
    focus_series,
    measure_pairs,
    refuse_unmeasured,
    report,
    sigterm_as_exit,
)
from pytest_hwcrypto.ab.document import AbDocument, AbFileError, Side, load_document
from pytest_hwcrypto.ab.engine import AbError
from pytest_hwcrypto.ab.series import SeriesKey, SeriesVerdict, bisect_side
from pytest_hwcrypto.bisect_image import ImageRefused, built_image
from pytest_hwcrypto.cli.exits import BISECT_ABORT, BISECT_BAD, BISECT_GOOD, BISECT_SKIP
from pytest_hwcrypto.cli.options import add_kernel_option, add_pairs_options
from pytest_hwcrypto.usage import UsageError
from pytest_hwcrypto.verdict.compare import parse_fraction
from pytest_hwcrypto.verdict.paired import escalation_steps


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "bisect-run",
        help="one `git bisect run` step: build, boot, measure against the good kernel in pairs",
        usage="git bisect run hwcrypto bisect-run --good AB.json [--kernel BUILT] "
        "[--max-drop 5%%] -- BUILD_CMD ...",
        description="Exit 0 when the series that regressed in --good (an `hwcrypto ab` "
        "file whose side A is the good kernel) are clearly short of the midpoint of the "
        "drop it measured, 1 when clearly past it, 125 "
        "(skip) when the build fails, the board does not boot or the pairs cannot tell; "
        "128 on a usage error, a --good with nothing measured, or an image the build did not "
        "make, which stops the bisection. Works with "
        "`git bisect start --term-old fast --term-new slow`.",
    )
    parser.add_argument("--good", required=True, metavar="AB.json")
    add_kernel_option(parser)
    parser.add_argument("--modules", help="its modules directory (default: side B's)")
    parser.add_argument("--max-drop", default=None, help="default: the one in --good")
    add_pairs_options(parser, "seconds per step at most", "one A/B file per commit")
    parser.set_defaults(func=cmd_bisect_run)


def cmd_bisect_run(args: argparse.Namespace) -> int:
    with sigterm_as_exit():
        return bisect_run(args)


def bisect_run(args: argparse.Namespace) -> int:
    import time

    started = time.monotonic()
    try:
        good = load_document(Path(args.good))
        refuse_unmeasured(good)
        bisect_document(args, good, "")  # the options, checked before anything is built
    except (AbFileError, UsageError, ValueError) as error:
        sys.stderr.write(f"hwcrypto bisect-run: error: {error}\n")
        return BISECT_ABORT
    commit = commit_name()
    build_started = None
    if args.pytest_args:
        build_started = time.time()
        built = subprocess.run(args.pytest_args, check=False)
        if built.returncode != 0:
            sys.stderr.write(
                f"hwcrypto bisect-run: {commit}: build failed (exit {built.returncode}): skip\n"
            )
            return BISECT_SKIP
    try:
        image = built_image(args.kernel, build_started, good)
    except ImageRefused as error:
        sys.stderr.write(f"hwcrypto bisect-run: {commit}: {error}\n")
        return BISECT_ABORT
    document = bisect_document(args, good, str(image))
    focus = focus_series(good)
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / f"{commit}.json"
    path.unlink(missing_ok=True)
    try:
        outcome = measure_pairs(
            document,
            path,
            args.timeout,
            args.budget,
            focus,
            undecided_of=lambda verdicts: [v for v in verdicts if step_side(v, focus) is None],
        )
    except (AbError, UsageError) as error:
        sys.stderr.write(f"hwcrypto bisect-run: {commit}: {error}: skip\n")
        return BISECT_SKIP
    judged = outcome.verdicts
    report(document, outcome, path, False, [])
    code, word = bisect_word(judged, focus)
    sys.stderr.write(
        f"hwcrypto bisect-run: {commit}: {word} ({len(judged)} series, {outcome.pairs} pairs, "
        f"{time.monotonic() - started:.0f} s with the build)\n"
    )
    return code


def step_side(verdict: SeriesVerdict, focus: dict[SeriesKey, float]) -> str | None:
    """A focus series against the midpoint of its known drop; without one (--good had no
    regressed series), the paired verdict itself: regressed is slow, same or better fast."""
    from pytest_hwcrypto.verdict.paired import PairedVerdict

    known = focus.get(verdict.key)
    if known is not None and known < 0:
        return bisect_side(verdict, known)
    word = verdict.comparison.verdict
    if word is PairedVerdict.REGRESSED:
        return "slow"
    return None if word is PairedVerdict.UNKNOWN else "fast"


def bisect_word(judged: list[SeriesVerdict], focus: dict[SeriesKey, float]) -> tuple[int, str]:
    if not judged:
        return BISECT_SKIP, "skip: none of the series of --good was measured"
    sides = [step_side(v, focus) for v in judged]
    if "slow" in sides:
        return BISECT_BAD, "slow (bad): past the midpoint of the known drop"
    unmeasured = set(focus) - {v.key for v in judged}
    if unmeasured:
        return BISECT_SKIP, f"skip: {len(unmeasured)} series --good found regressed not measured"
    if None in sides:
        return BISECT_SKIP, "skip: could not tell within the pairs"
    return BISECT_GOOD, "fast (good)"


def bisect_document(args: argparse.Namespace, good: AbDocument, kernel: str) -> AbDocument:
    """The pairs of one step: --good's side A against `kernel`, with --good's slice."""
    side_b = good.sides["B"]
    max_drop = parse_fraction(args.max_drop) if args.max_drop else good.max_drop
    if args.pairs is not None:
        steps = [args.pairs]
    else:
        steps = escalation_steps(args.first_pairs, args.max_pairs)
    return AbDocument(
        board=good.board,
        sides={"A": good.sides["A"], "B": Side("B", kernel, args.modules or side_b.modules)},
        slice=good.slice,
        seed=random.SystemRandom().randrange(2**31),
        max_drop=max_drop,
        alpha=good.alpha,
        steps=steps,
    )


def commit_name() -> str:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=False
        )
    except OSError:
        return "worktree"
    return done.stdout.strip() or "worktree"
