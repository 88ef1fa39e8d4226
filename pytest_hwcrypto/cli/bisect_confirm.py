# SPDX-License-Identifier: MIT
"""`hwcrypto bisect-confirm`: after `git bisect run`, each candidate culprit against its
parent, in pairs, with the slice of the good file.

On a noisy machine a bisection may end without one culprit: a step whose pairs could not
tell is skipped (exit 125), and when the skipped commit sits just before the first bad one
git can only say "the first slow commit could be any of" those commits. They are exactly
the commits the bad ref reaches and no good ref does; this measures each against its
parent, oldest first, and names the first whose drop is confirmed -- so the bisection
ends with one commit either way. A clean bisection leaves one candidate.
"""

from __future__ import annotations

import argparse
import random
import shutil
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
from pytest_hwcrypto.ab.series import SeriesKey, SeriesVerdict
from pytest_hwcrypto.bisect_image import ImageRefused, built_image
from pytest_hwcrypto.cli.exits import BISECT_ABORT, CONFIRM_ALIKE, CONFIRM_FOUND, CONFIRM_UNTOLD
from pytest_hwcrypto.cli.options import add_kernel_option, add_pairs_options
from pytest_hwcrypto.usage import UsageError
from pytest_hwcrypto.verdict.paired import PairedVerdict, escalation_steps

CONFIRMED, ALIKE, UNTOLD = "different", "alike", "could not tell"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    confirm = sub.add_parser(
        "bisect-confirm",
        help="after `git bisect run`: each candidate culprit against its parent, in pairs",
        usage="hwcrypto bisect-confirm --good AB.json [--commit REF] [--kernel BUILT] "
        "-- BUILD_CMD ...",
        description="Takes the commits the finished bisection left as the first bad one "
        "(one, or several when skipped steps left git unsure; or --commit), checks out and "
        "builds each and its parent with BUILD_CMD, keeps every image, measures each "
        "candidate against its parent in pairs with --good's slice, oldest first, and "
        "checks out what was there before. Each is said to be different (the series "
        "--good found regressed regress from its parent), alike, or could not tell, with "
        "the change and its interval; could not tell says what more pairs would cost, "
        "and takes them within --budget. Exit 0 naming the first different one "
        "(confirmed), 1 when every candidate measured alike, 3 when none was confirmed "
        "and some could not tell, 2 on a usage error or a failed build, 128 when the image "
        "to boot is not what the build made.",
    )
    confirm.add_argument("--good", required=True, metavar="AB.json")
    confirm.add_argument("--commit", help="default: what the bisection left as first bad")
    add_kernel_option(confirm)
    add_pairs_options(
        confirm,
        "seconds per candidate at most; pairs past --max-pairs are taken within it when "
        "they could not tell",
        "images and A/B files",
    )
    confirm.set_defaults(func=cmd_bisect_confirm)


def cmd_bisect_confirm(args: argparse.Namespace) -> int:
    with sigterm_as_exit():
        return bisect_confirm(args)


def bisect_confirm(args: argparse.Namespace) -> int:
    try:
        good = load_document(Path(args.good))
    except AbFileError as error:
        raise UsageError(str(error)) from None
    refuse_unmeasured(good)
    if not args.pytest_args:
        raise UsageError("give the build command after --, e.g. -- make ARCH=um -j2 linux")
    if args.commit:
        candidates = [_git("rev-parse", "--verify", args.commit + "^{commit}")]
    else:
        candidates = bisection_candidates()
    if len(candidates) > 1:
        listed = ", ".join(c[:12] for c in candidates)
        sys.stderr.write(
            f"hwcrypto bisect-confirm: the bisection left {len(candidates)} candidates "
            f"({listed}): each is measured against its parent, oldest first\n"
        )
    workdir = Path(args.workdir).absolute()
    workdir.mkdir(parents=True, exist_ok=True)
    parents = {c: _git("rev-parse", "--verify", c + "^") for c in candidates}
    commits = list(dict.fromkeys([*parents.values(), *candidates]))  # each built once
    try:
        images = build_images(commits, good, workdir, args)
    except ImageRefused as error:
        sys.stderr.write(f"hwcrypto bisect-confirm: error: {error}\n")
        return BISECT_ABORT
    focus = focus_series(good)
    untold = []
    for candidate in candidates:
        measured, word = confirm_candidate(
            good, images[parents[candidate]], images[candidate], candidate, workdir, args, focus
        )
        sys.stderr.write(f"hwcrypto bisect-confirm: {candidate[:12]}: {word}\n")
        if measured == CONFIRMED:
            if len(candidates) > 1:
                sys.stderr.write(f"hwcrypto bisect-confirm: {candidate} is the culprit\n")
            return CONFIRM_FOUND
        if measured == UNTOLD:
            untold.append(candidate[:12])
    if untold:
        sys.stderr.write(
            f"hwcrypto bisect-confirm: no culprit confirmed; {', '.join(untold)} could not "
            "be told from the parent: more pairs needed, none is named\n"
        )
        return CONFIRM_UNTOLD
    return CONFIRM_ALIKE


def build_images(
    commits: list[str], good: AbDocument, workdir: Path, args: argparse.Namespace
) -> dict[str, Path]:
    """Each commit checked out and built, the image that build wrote (--kernel, or the
    tree's) kept as build-<commit>.img; the checkout is put back to what it was, whatever
    happens. An image the build did not make raises ImageRefused."""
    import time

    images: dict[str, Path] = {}
    before = _git("rev-parse", "HEAD")
    try:
        for commit in commits:
            _git("checkout", "-q", commit)
            started = time.time()
            built = subprocess.run(args.pytest_args, check=False)
            if built.returncode != 0:
                raise UsageError(f"building {commit[:12]} failed (exit {built.returncode})")
            image = built_image(args.kernel, started, good)
            if not image.is_file():
                raise UsageError(f"building {commit[:12]} wrote no {image}")
            images[commit] = workdir / f"build-{commit[:12]}.img"
            shutil.copy2(image, images[commit])
    finally:
        _git("checkout", "-q", before)
    return images


def confirm_candidate(
    good: AbDocument,
    parent_image: Path,
    image: Path,
    commit: str,
    workdir: Path,
    args: argparse.Namespace,
    focus: dict[SeriesKey, float],
) -> tuple[str, str]:
    """The candidate against its parent: (CONFIRMED, ALIKE or UNTOLD, the line saying so).
    When the pairs could not tell and --budget leaves room, more pairs are taken, doubling,
    as long as the next look fits in it."""
    steps = [args.pairs] if args.pairs else escalation_steps(args.first_pairs, args.max_pairs)
    modules = good.sides["B"].modules
    document = AbDocument(
        board=good.board,
        sides={"A": Side("A", str(parent_image), modules), "B": Side("B", str(image), modules)},
        slice=good.slice,
        seed=random.SystemRandom().randrange(2**31),
        max_drop=good.max_drop,
        alpha=good.alpha,
        steps=steps,
    )
    path = workdir / f"confirm-{commit[:12]}.json"
    path.unlink(missing_ok=True)
    while True:
        try:
            outcome = measure_pairs(document, path, args.timeout, args.budget, focus)
        except AbError as error:
            raise UsageError(f"{commit[:12]}: {error}") from None
        measured, word = confirm_word(outcome.verdicts, focus)
        more = outcome.pairs  # the next look doubles the pairs
        cost = more * seconds_per_pair(document)
        spent = outcome.pairs * seconds_per_pair(document)
        if measured != UNTOLD or args.budget is None or spent + cost > args.budget:
            break
        sys.stderr.write(
            f"hwcrypto bisect-confirm: {commit[:12]}: could not tell in {outcome.pairs} "
            f"pairs; {more} more (about {cost / 60:.0f} min) fit in --budget: taking them\n"
        )
        document.steps = [*document.steps, outcome.pairs + more]
    report(document, outcome, path, False, [])
    if measured == UNTOLD:
        word += "; " + more_pairs_line(outcome.pairs, seconds_per_pair(document), args.budget)
    return measured, word


def seconds_per_pair(document: AbDocument) -> float:
    done = document.complete_pairs
    return sum(pair.wall_seconds for pair in done) / len(done) if done else 0.0


def more_pairs_line(pairs: int, per_pair: float, budget: float | None) -> str:
    """What telling would cost: the next look, as many pairs again."""
    more = max(pairs, 1)
    cost = more * per_pair
    why = f"past --budget {budget:.0f} s; " if budget is not None else ""
    return (
        f"{why}{more} more pairs would take about {cost / 60:.0f} min ({per_pair:.0f} s a "
        f"pair): rerun with --max-pairs {pairs + more} or --budget {(pairs + more) * per_pair:.0f}"
    )


def confirm_word(judged: list[SeriesVerdict], focus: dict[SeriesKey, float]) -> tuple[str, str]:
    """What the candidate against its parent measured: CONFIRMED when every series --good
    found regressed regressed again (without a focus: any series did), ALIKE when each
    was the same or faster, UNTOLD otherwise -- never "alike" when the pairs could not
    tell. The line gives each series' change and its interval."""
    wanted = [v for v in judged if v.key in focus] if focus else judged
    words = [v.comparison.verdict for v in wanted]
    figures = ", ".join(_figures(v) for v in wanted) or "nothing measured"
    regressed = words.count(PairedVerdict.REGRESSED)
    missing = bool(focus) and len(wanted) < len(focus)
    if wanted and not missing and (regressed == len(wanted) if focus else regressed):
        return CONFIRMED, f"confirmed: different, it slows what --good found slower ({figures})"
    if (
        wanted
        and not missing
        and all(w in (PairedVerdict.SAME, PairedVerdict.IMPROVED) for w in words)
    ):
        return ALIKE, f"not confirmed: the parent and the candidate measured alike ({figures})"
    return UNTOLD, f"could not tell whether it differs from its parent ({figures})"


def _figures(verdict: SeriesVerdict) -> str:
    c = verdict.comparison
    algorithm, driver = verdict.key[1], verdict.key[5]
    return (
        f"{algorithm} {driver} {c.change * 100:+.1f}% "
        f"[{c.change_low * 100:+.1f}, {c.change_high * 100:+.1f}] in {c.pairs} pairs: "
        f"{c.verdict.value}"
    )


def bisection_candidates() -> list[str]:
    """The commits a finished bisection leaves as the first bad one, oldest first: those
    refs/bisect/<new term> reaches and no refs/bisect/<old term>-* does. One after a clean
    bisection; with skipped steps, the skipped ones next to it too. Anything else there
    (a commit neither tested nor skipped) means the bisection has not finished."""
    git_dir = Path(_git("rev-parse", "--git-dir"))
    terms = git_dir / "BISECT_TERMS"
    new_term, old_term = terms.read_text().split()[:2] if terms.is_file() else ("bad", "good")
    bad = _ref(f"refs/bisect/{new_term}")
    if bad is None:
        raise UsageError(
            f"no bisection has named a first {new_term} commit here "
            f"(refs/bisect/{new_term} is missing): run `git bisect run` first, or give --commit"
        )
    olds = _refs(f"refs/bisect/{old_term}-*")
    skipped = set(_refs("refs/bisect/skip-*"))
    left = _git("rev-list", "--reverse", bad, "--not", *olds).split()
    untested = [c for c in left if c != bad and c not in skipped]
    if untested:
        raise UsageError(
            f"the bisection has not finished: {len(untested)} commit(s) between the last "
            f"{old_term} and first {new_term} one were neither tested nor skipped "
            f"(e.g. {untested[0][:12]}): finish `git bisect run` first, or give --commit"
        )
    return left


def _ref(name: str) -> str | None:
    done = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", name], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or None


def _refs(pattern: str) -> list[str]:
    listed = _git("for-each-ref", "--format=%(objectname)", pattern)
    return listed.split()


def _git(*argv: str) -> str:
    done = subprocess.run(["git", *argv], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise UsageError(f"git {' '.join(argv)}: {done.stderr.strip() or 'failed'}")
    return done.stdout.strip()
