"""`hwcrypto bisect-run`: one step of `git bisect run` -- build, boot, measure against the
good kernel in pairs (the engine of `hwcrypto ab`, cli_ab.py), answer good/bad/skip.

git bisect run reads the exit code: 0 good, 1 bad, 125 skip, >= 128 stops the bisection.
A step is judged against the midpoint of the drop the good file measured (docs/ab.md).
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from pytest_hwcrypto.ab.document import SIDES, AbDocument, AbFileError, Side, load_document
from pytest_hwcrypto.ab.engine import AbError, AbOutcome, BoardSlices, run_ab
from pytest_hwcrypto.ab.series import SeriesKey, SeriesVerdict, bisect_side, undecided
from pytest_hwcrypto.cli_ab import AbUsageError, checked_board, report, sigterm_as_exit
from pytest_hwcrypto.verdict.compare import parse_fraction
from pytest_hwcrypto.verdict.paired import escalation_steps

BISECT_GOOD = 0
BISECT_BAD = 1
BISECT_SKIP = 125
BISECT_ABORT = 128  # git bisect run stops on >= 128: a usage error must not read as "bad"


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
        "128 on a usage error, which stops the bisection. Works with "
        "`git bisect start --term-old fast --term-new slow`.",
    )
    parser.add_argument("--good", required=True, metavar="AB.json")
    parser.add_argument(
        "--kernel", help="the image the build makes (default: side B's kernel in --good)"
    )
    parser.add_argument("--modules", help="its modules directory (default: side B's)")
    parser.add_argument("--max-drop", default=None, help="default: the one in --good")
    _add_pairs_options(parser, "seconds per step at most", "one A/B file per commit")
    parser.set_defaults(func=cmd_bisect_run)
    confirm = sub.add_parser(
        "bisect-confirm",
        help="after `git bisect run`: build the culprit's parent and the culprit, A/B them",
        usage="hwcrypto bisect-confirm --good AB.json [--commit REF] [--kernel BUILT] "
        "-- BUILD_CMD ...",
        description="Checks out COMMIT^ and COMMIT (default: the first bad commit the "
        "bisection named), builds each with BUILD_CMD, keeps each image, measures them in "
        "pairs with --good's slice and checks out what was there before. Exit 0 when the "
        "series --good found regressed regress from COMMIT^ to COMMIT (confirmed), 1 when "
        "they do not, 2 on a usage error or a failed build.",
    )
    confirm.add_argument("--good", required=True, metavar="AB.json")
    confirm.add_argument("--commit", help="default: the bisection's first bad commit")
    confirm.add_argument(
        "--kernel", help="the image the build makes (default: side B's kernel in --good)"
    )
    _add_pairs_options(confirm, "seconds at most", "images and A/B file")
    confirm.set_defaults(func=cmd_bisect_confirm)


def _add_pairs_options(parser: argparse.ArgumentParser, budget: str, workdir: str) -> None:
    """How many pairs, where they are kept, how long a boot may take: both commands."""
    parser.add_argument("--pairs", type=int, help="exactly N pairs")
    parser.add_argument("--budget", type=float, help=budget)
    parser.add_argument("--first-pairs", type=int, default=10)
    parser.add_argument("--max-pairs", type=int, default=40)
    parser.add_argument("--workdir", default=".hwcrypto-bisect", help=workdir)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per boot (600)")


def cmd_bisect_run(args: argparse.Namespace) -> int:
    with sigterm_as_exit():
        return bisect_run(args)


def bisect_run(args: argparse.Namespace) -> int:
    import time

    started = time.monotonic()
    try:
        good = load_document(Path(args.good))
        document = bisect_document(args, good)
    except (AbFileError, AbUsageError, ValueError) as error:
        sys.stderr.write(f"hwcrypto bisect-run: error: {error}\n")
        return BISECT_ABORT
    commit = commit_name()
    if args.pytest_args:
        built = subprocess.run(args.pytest_args, check=False)
        if built.returncode != 0:
            sys.stderr.write(
                f"hwcrypto bisect-run: {commit}: build failed (exit {built.returncode}): skip\n"
            )
            return BISECT_SKIP
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
    except (AbError, AbUsageError) as error:
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


def measure_pairs(
    document: AbDocument,
    path: Path,
    timeout: float,
    budget: float | None,
    focus: dict[SeriesKey, float],
    undecided_of: Callable[[list[SeriesVerdict]], list[SeriesVerdict]] = undecided,
) -> AbOutcome:
    """The pairs of `document` on its board, looking only at the `focus` series."""
    boards = {
        side: checked_board(board_args(document), document.sides[side], side) for side in SIDES
    }
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
    if None in sides:
        return BISECT_SKIP, "skip: could not tell within the pairs"
    return BISECT_GOOD, "fast (good)"


def bisect_document(args: argparse.Namespace, good: AbDocument) -> AbDocument:
    side_b = good.sides["B"]
    kernel = args.kernel or side_b.kernel
    if kernel is None:
        raise AbUsageError("--kernel: the good file's side B names no kernel image")
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


def board_args(good: AbDocument) -> argparse.Namespace:
    return argparse.Namespace(board=good.board, test_drivers=False)


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


def commit_name() -> str:
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=False
        )
    except OSError:
        return "worktree"
    return done.stdout.strip() or "worktree"


# --------------------------------------------------------------------------------------
# hwcrypto bisect-confirm: the culprit's parent against the culprit, in pairs


def cmd_bisect_confirm(args: argparse.Namespace) -> int:
    with sigterm_as_exit():
        return bisect_confirm(args)


def bisect_confirm(args: argparse.Namespace) -> int:
    try:
        good = load_document(Path(args.good))
    except AbFileError as error:
        raise AbUsageError(str(error)) from None
    image = args.kernel or good.sides["B"].kernel
    if image is None:
        raise AbUsageError("--kernel: the good file's side B names no kernel image")
    if not args.pytest_args:
        raise AbUsageError("give the build command after --, e.g. -- make ARCH=um -j2 linux")
    commit = _git("rev-parse", "--verify", (args.commit or first_bad_ref()) + "^{commit}")
    workdir = Path(args.workdir).absolute()
    workdir.mkdir(parents=True, exist_ok=True)
    images = {}
    before = _git("rev-parse", "HEAD")
    try:
        for label, ref in (("A", f"{commit}^"), ("B", commit)):
            _git("checkout", "-q", ref)
            built = subprocess.run(args.pytest_args, check=False)
            if built.returncode != 0:
                raise AbUsageError(f"building {ref} failed (exit {built.returncode})")
            images[label] = workdir / f"confirm-{commit[:12]}-{label}.img"
            shutil.copy2(image, images[label])
    finally:
        _git("checkout", "-q", before)
    steps = [args.pairs] if args.pairs else escalation_steps(args.first_pairs, args.max_pairs)
    document = AbDocument(
        board=good.board,
        sides={
            label: Side(label, str(path), good.sides["B"].modules) for label, path in images.items()
        },
        slice=good.slice,
        seed=random.SystemRandom().randrange(2**31),
        max_drop=good.max_drop,
        alpha=good.alpha,
        steps=steps,
    )
    path = workdir / f"confirm-{commit[:12]}.json"
    path.unlink(missing_ok=True)
    focus = focus_series(good)
    try:
        outcome = measure_pairs(document, path, args.timeout, args.budget, focus)
    except AbError as error:
        raise AbUsageError(f"{commit[:12]}: {error}") from None
    report(document, outcome, path, False, [])
    confirmed, word = confirm_word(outcome.verdicts, focus)
    sys.stderr.write(f"hwcrypto bisect-confirm: {commit[:12]}: {word}\n")
    return 0 if confirmed else 1


def confirm_word(judged: list[SeriesVerdict], focus: dict[SeriesKey, float]) -> tuple[bool, str]:
    """Confirmed when every series --good found regressed also regressed from the culprit's
    parent to the culprit (without a focus: any series did)."""
    from pytest_hwcrypto.verdict.paired import PairedVerdict

    wanted = [v for v in judged if v.key in focus] if focus else judged
    regressed = [v for v in wanted if v.comparison.verdict is PairedVerdict.REGRESSED]
    if wanted and (len(regressed) == len(wanted) if focus else regressed):
        changes = ", ".join(f"{v.comparison.change * 100:+.1f}%" for v in regressed)
        return True, f"confirmed: it slows what --good found slower ({changes})"
    return False, "not confirmed: the culprit's parent and the culprit measured alike"


def first_bad_ref() -> str:
    """The first bad commit of a finished bisection: refs/bisect/<new term> (BISECT_TERMS
    holds the terms of `git bisect start --term-new slow`; "bad" without it)."""
    git_dir = Path(_git("rev-parse", "--git-dir"))
    terms = git_dir / "BISECT_TERMS"
    new_term = terms.read_text().split()[0] if terms.is_file() else "bad"
    return f"refs/bisect/{new_term}"


def _git(*argv: str) -> str:
    done = subprocess.run(["git", *argv], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise AbUsageError(f"git {' '.join(argv)}: {done.stderr.strip() or 'failed'}")
    return done.stdout.strip()
