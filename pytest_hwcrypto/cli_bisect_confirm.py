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

from pytest_hwcrypto.ab.document import AbDocument, AbFileError, Side, load_document
from pytest_hwcrypto.ab.engine import AbError
from pytest_hwcrypto.ab.series import SeriesKey, SeriesVerdict
from pytest_hwcrypto.cli_ab import AbUsageError, report, sigterm_as_exit
from pytest_hwcrypto.cli_bisect import add_pairs_options, focus_series, measure_pairs
from pytest_hwcrypto.verdict.paired import escalation_steps


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
        "checks out what was there before. Exit 0 naming the first candidate whose series "
        "--good found regressed regress from its parent (confirmed), 1 when none does, 2 "
        "on a usage error or a failed build.",
    )
    confirm.add_argument("--good", required=True, metavar="AB.json")
    confirm.add_argument("--commit", help="default: what the bisection left as first bad")
    confirm.add_argument(
        "--kernel", help="the image the build makes (default: side B's kernel in --good)"
    )
    add_pairs_options(confirm, "seconds per candidate at most", "images and A/B files")
    confirm.set_defaults(func=cmd_bisect_confirm)


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
    images = build_images(commits, Path(image), workdir, args)
    focus = focus_series(good)
    for candidate in candidates:
        confirmed, word = confirm_candidate(
            good, images[parents[candidate]], images[candidate], candidate, workdir, args, focus
        )
        sys.stderr.write(f"hwcrypto bisect-confirm: {candidate[:12]}: {word}\n")
        if confirmed:
            if len(candidates) > 1:
                sys.stderr.write(f"hwcrypto bisect-confirm: {candidate} is the culprit\n")
            return 0
    return 1


def build_images(
    commits: list[str], image: Path, workdir: Path, args: argparse.Namespace
) -> dict[str, Path]:
    """Each commit checked out and built, its image kept as build-<commit>.img; the
    checkout is put back to what it was, whatever happens."""
    images: dict[str, Path] = {}
    before = _git("rev-parse", "HEAD")
    try:
        for commit in commits:
            _git("checkout", "-q", commit)
            built = subprocess.run(args.pytest_args, check=False)
            if built.returncode != 0:
                raise AbUsageError(f"building {commit[:12]} failed (exit {built.returncode})")
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
) -> tuple[bool, str]:
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
    try:
        outcome = measure_pairs(document, path, args.timeout, args.budget, focus)
    except AbError as error:
        raise AbUsageError(f"{commit[:12]}: {error}") from None
    report(document, outcome, path, False, [])
    return confirm_word(outcome.verdicts, focus)


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
        raise AbUsageError(
            f"no bisection has named a first {new_term} commit here "
            f"(refs/bisect/{new_term} is missing): run `git bisect run` first, or give --commit"
        )
    olds = _refs(f"refs/bisect/{old_term}-*")
    skipped = set(_refs("refs/bisect/skip-*"))
    left = _git("rev-list", "--reverse", bad, "--not", *olds).split()
    untested = [c for c in left if c != bad and c not in skipped]
    if untested:
        raise AbUsageError(
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
        raise AbUsageError(f"git {' '.join(argv)}: {done.stderr.strip() or 'failed'}")
    return done.stdout.strip()
