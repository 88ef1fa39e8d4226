# SPDX-License-Identifier: MIT
"""`hwcrypto ab`: did this kernel make it worse? (ab/, docs/ab.md)

`ab` boots kernel A and kernel B alternately on a virtual board, a short slice of the same
measurement plan each time, in pairs with the order balanced, and judges every series on
the pairs. One kernel can be compared with itself under two configurations: knobs set
before each slice (`--a-set`/`--b-set`) or kernel command lines (`--a-cmdline`/
`--b-cmdline`), each side its own boots; a module left out or a driver re-ranked
(`--b-blacklist`/`--b-prefer`) inside one boot. `hwcrypto bisect-run` (cli/bisect_run.py)
steps `git bisect run` with the same engine; what they share is in ab/commands.py. User
mistakes raise UsageError (one line, exit 2).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

from pytest_hwcrypto.ab.commands import checked_board, report, sigterm_as_exit
from pytest_hwcrypto.ab.document import (
    SIDES,
    AbDocument,
    AbFileError,
    Side,
    load_document,
    resume_mismatch,
)
from pytest_hwcrypto.ab.engine import AbError, AbOutcome, BoardSlices, run_ab
from pytest_hwcrypto.ab.series import (
    judge_document,
    undecided,
)
from pytest_hwcrypto.ab.slice import SliceSpec, parse_setting
from pytest_hwcrypto.boards.base import kernel_args_from
from pytest_hwcrypto.cli.exits import EXIT_FAIL, EXIT_OK
from pytest_hwcrypto.profile import load_profile
from pytest_hwcrypto.usage import UsageError
from pytest_hwcrypto.verdict.compare import parse_fraction
from pytest_hwcrypto.verdict.paired import DEFAULT_ALPHA, escalation_steps, fewest_pairs
from pytest_hwcrypto.vocabulary import BoardKind

DEFAULT_BLOCK_SIZES = "4096,65536"
BY_NAME_CONFIGS = ("blacklist", "prefer", "cmdline")


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "ab",
        help="measure two kernels (or two configurations) in interleaved pairs and judge",
        usage="hwcrypto ab --kernel A --kernel B [--modules MA --modules MB] "
        "[--board uml|qemu] [--pairs N | --budget S] [--max-drop 5%%] [--out AB.json]",
    )
    _add_measuring_options(parser)
    parser.add_argument(
        "--kernel", action="append", default=[], help="kernel image: give A, then B"
    )
    parser.add_argument(
        "--modules", action="append", default=[], help="modules directory of each --kernel"
    )
    parser.add_argument(
        "--b-blacklist",
        action="append",
        default=[],
        metavar="MODULE",
        help="one kernel, no reboot: B is A with MODULE unloaded (as if blacklisted)",
    )
    parser.add_argument(
        "--b-prefer",
        metavar="DRIVER",
        help="one kernel, no reboot: B is A with DRIVER made the winner of its name",
    )
    parser.add_argument(
        "--a-set",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="a kernel knob (/sys, /proc/sys) side A sets before each slice",
    )
    parser.add_argument(
        "--b-set",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="the same for B (with one --kernel: the same kernel, two settings, two boots)",
    )
    parser.add_argument(
        "--a-cmdline",
        action="append",
        default=[],
        metavar="WORDS",
        help="kernel command-line words side A boots with (e.g. module_blacklist=aesni_intel)",
    )
    parser.add_argument(
        "--b-cmdline",
        action="append",
        default=[],
        metavar="WORDS",
        help="the same for B (with one --kernel: the same kernel, two command lines)",
    )
    parser.add_argument("--out", default="hwcrypto-ab.json", help="results file (resumable)")
    parser.add_argument("--resume", action="store_true", help="continue the pairs already in --out")
    parser.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    parser.add_argument("--html", metavar="OUT.html", help="report with A and B overlaid")
    parser.add_argument("--plot", metavar="OUT.png", help="the same figure as a PNG")
    parser.set_defaults(func=cmd_ab)


def _add_measuring_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--board", choices=(BoardKind.UML.value, BoardKind.QEMU.value), default=BoardKind.UML.value
    )
    parser.add_argument("--pairs", type=int, help="exactly N pairs, judged once")
    parser.add_argument(
        "--budget", type=float, help="seconds to spend at most, escalating 12 -> 24 -> 40 pairs"
    )
    parser.add_argument("--first-pairs", type=int, default=12, help="first look (12)")
    parser.add_argument("--max-pairs", type=int, default=40, help="last look (40)")
    parser.add_argument("--max-drop", default="5%", help="largest accepted slowdown (5%%)")
    parser.add_argument(
        "--alpha",
        type=float,
        default=DEFAULT_ALPHA,
        help=f"family-wise error: the chance an unchanged kernel is called regressed "
        f"({DEFAULT_ALPHA})",
    )
    parser.add_argument(
        "--slice-seconds", type=float, default=3.0, help="measuring time per boot (3)"
    )
    parser.add_argument("--block-sizes", default=DEFAULT_BLOCK_SIZES, help="e.g. 16,4096,65536")
    parser.add_argument(
        "--algorithm", action="append", default=[], help="only this algorithm (repeatable)"
    )
    parser.add_argument(
        "--by-name",
        action="store_true",
        help="also measure each algorithm bound by name (whatever driver the kernel picks)",
    )
    parser.add_argument(
        "--host-speed",
        action="store_true",
        help="judge per unit of the host's user-space speed timed around each sample, not "
        "bytes/s as measured (docs/ab.md: what it cancels, and the false alarm it gave)",
    )
    parser.add_argument("--sessions", type=int, default=2, help="sessions per driver (2)")
    parser.add_argument("--max-samples", type=int, default=20, help="samples per series (20)")
    parser.add_argument(
        "--suite",
        default="throughput",
        help="what each boot measures: throughput (default: a lean AF_ALG slice), or any "
        "suite, run as a short pytest session; arguments after -- go to that session",
    )
    parser.add_argument("--seed", type=int, help="order of AB/BA (default: drawn, then kept)")
    parser.add_argument("--profile", metavar="PROFILE.toml", help="drivers B must still have")
    parser.add_argument(
        "--test-drivers", action="store_true", help="QEMU: load pytest_hwcrypto/kmod"
    )
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per boot (600)")


def cmd_ab(args: argparse.Namespace) -> int:
    with sigterm_as_exit():
        return _ab(args)


def _ab(args: argparse.Namespace) -> int:
    config_mode = bool(args.b_blacklist or args.b_prefer)
    kernels: list[str | None] = list(args.kernel)
    if config_mode:
        if args.a_set or args.b_set or args.a_cmdline or args.b_cmdline:
            raise UsageError(
                "--b-blacklist/--b-prefer compare inside one boot: --a-set/--b-set and "
                "--a-cmdline/--b-cmdline need a boot per side, give them in another run"
            )
        if len(kernels) > 1:
            raise UsageError("--b-blacklist/--b-prefer compare one kernel: give --kernel once")
        kernels = [kernels[0] if kernels else None] * 2
    elif len(kernels) < 2 and (args.a_set or args.b_set or args.a_cmdline or args.b_cmdline):
        kernels = [kernels[0] if kernels else None] * 2
        args.modules = args.modules * 2
    elif len(kernels) != 2:
        raise UsageError(
            "give --kernel A --kernel B (or one kernel with --b-blacklist, --b-set or --b-cmdline)"
        )
    modules: list[str | None] = list(args.modules)
    if modules and len(modules) != (1 if config_mode else 2):
        raise UsageError("give --modules once per --kernel, in the same order")
    if config_mode:
        modules = [modules[0] if modules else None] * 2
    elif not modules:
        modules = [None, None]
    config_a: dict[str, Any] = {}
    config_b: dict[str, Any] = {}
    try:
        if args.a_set:
            config_a["set"] = dict(parse_setting(text) for text in args.a_set)
        if args.b_set:
            config_b["set"] = dict(parse_setting(text) for text in args.b_set)
    except ValueError as error:
        raise UsageError(f"--a-set/--b-set: {error}") from None
    for side_config, option, texts in (
        (config_a, "--a-cmdline", args.a_cmdline),
        (config_b, "--b-cmdline", args.b_cmdline),
    ):
        try:
            if texts:
                side_config["cmdline"] = list(kernel_args_from(texts))
        except ValueError as error:
            raise UsageError(f"{option} {error}") from None
    if args.b_blacklist:
        config_b["blacklist"] = list(args.b_blacklist)
    if args.b_prefer:
        config_b["prefer"] = args.b_prefer
    sides = {
        "A": Side("A", _absolute(kernels[0]), _absolute(modules[0]), config_a),
        "B": Side("B", _absolute(kernels[1]), _absolute(modules[1]), config_b),
    }
    document = new_document(args, sides)
    if config_mode and document.slice.uses_pytest:
        raise UsageError("--b-blacklist/--b-prefer measure the throughput slice only")
    path = Path(args.out)
    document = _resume_or_start(document, path, args.resume)
    boards = {
        side: checked_board(args.board, sides[side], side, args.test_drivers) for side in SIDES
    }
    try:
        if config_mode:
            from pytest_hwcrypto.ab.config_runner import ConfigSlices

            runner = ConfigSlices(boards["A"], document, args.timeout, sys.stderr)
            document = runner.run_all(path, args.budget)
            outcome = outcome_of(document)
        else:
            slices = BoardSlices(
                boards,
                {side: boards[side].kernel_description() for side in SIDES},
                document.slice,
                args.timeout,
                sys.stderr,
                settings={side: dict(sides[side].config.get("set", {})) for side in SIDES},
            )
            outcome = run_ab(document, slices, path, budget_seconds=args.budget)
    except AbError as error:
        raise UsageError(f"{error} (pairs so far kept in {path}; rerun with --resume)") from None
    failed = report(document, outcome, path, args.json, _expected_drivers(args.profile))
    side_files = write_side_results(document, path)
    if args.html or args.plot:
        from pytest_hwcrypto.report.document import ReportError, load_inputs, write_report

        try:
            write_report(
                load_inputs([str(f) for f in side_files]),
                args.html,
                args.plot,
                "hwcrypto ab: A and B",
            )
        except ReportError as error:
            raise UsageError(str(error)) from None
    return EXIT_FAIL if failed else EXIT_OK


def write_side_results(document: AbDocument, path: Path) -> list[Path]:
    """OUT.A.json and OUT.B.json: each side as a results file (hwcrypto report, compare)."""
    from pytest_hwcrypto.ab.series import side_results

    written = []
    for side in SIDES:
        target = path.with_name(f"{path.stem}.{side}.json")
        target.write_text(json.dumps(side_results(document, side), indent=1) + "\n")
        written.append(target)
    return written


def _absolute(path: str | None) -> str | None:
    """Paths are kept absolute: a bisect step runs from the kernel tree, not from here."""
    import os

    return None if path is None else os.path.abspath(path)


def new_document(args: argparse.Namespace, sides: dict[str, Side]) -> AbDocument:
    try:
        max_drop = parse_fraction(args.max_drop)
        block_sizes = tuple(int(size) for size in args.block_sizes.split(","))
    except ValueError as error:
        raise UsageError(f"--max-drop/--block-sizes: {error}") from None
    from pytest_hwcrypto.vocabulary import Suite

    known = {suite.value for suite in Suite}
    if args.suite not in known:
        raise UsageError(f"--suite {args.suite}: not a suite (known: {', '.join(sorted(known))})")
    pytest_args = tuple(getattr(args, "pytest_args", ()) or ())
    if args.pairs is not None and args.budget is not None:
        raise UsageError("give --pairs N or --budget S, not both")
    if not 0.0 < args.alpha < 1.0:
        raise UsageError(f"--alpha {args.alpha}: must be between 0 and 1 (e.g. 0.01)")
    fewest = fewest_pairs(args.alpha)
    if args.pairs is not None:
        if args.pairs < fewest:
            raise UsageError(
                f"--pairs {args.pairs}: at --alpha {args.alpha} at least {fewest} pairs can decide"
            )
        steps = [args.pairs]
    else:
        if args.first_pairs < fewest or args.max_pairs < args.first_pairs:
            raise UsageError(
                f"--first-pairs must be >= {fewest} (at --alpha {args.alpha}) "
                "and --max-pairs >= --first-pairs"
            )
        steps = escalation_steps(args.first_pairs, args.max_pairs)
    if args.slice_seconds <= 0:
        raise UsageError("--slice-seconds must be more than 0")
    spec = SliceSpec(
        seconds=args.slice_seconds,
        block_sizes=block_sizes,
        algorithms=tuple(args.algorithm) or profile_algorithms(args.profile),
        sessions=args.sessions,
        max_samples=args.max_samples,
        # What a side's configuration may take away (a module, a command line's blacklist),
        # the by-name series still measures: whatever driver serves the name on each side.
        by_name=args.by_name
        or any(key in side.config for side in sides.values() for key in BY_NAME_CONFIGS),
        suite=args.suite,
        pytest_args=pytest_args,
        # the yardstick is timed by the throughput slice; a pytest session's suites do not
        host_speed=args.host_speed and args.suite == "throughput" and not pytest_args,
    )
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    return AbDocument(
        board=args.board,
        sides=sides,
        slice=spec,
        seed=seed,
        max_drop=max_drop,
        alpha=args.alpha,
        steps=steps,
    )


def _resume_or_start(document: AbDocument, path: Path, resume: bool) -> AbDocument:
    if not path.exists():
        if resume:
            raise UsageError(f"--resume: {path} does not exist")
        return document
    if not resume:
        raise UsageError(f"{path} exists: give --resume to continue it, or another --out")
    try:
        existing = load_document(path)
    except AbFileError as error:
        raise UsageError(str(error)) from None
    mismatch = resume_mismatch(existing, document)
    if mismatch is not None:
        raise UsageError(f"--resume {path}: {mismatch}")
    # The file's seed keeps the schedule; the steps and limits may grow on a rerun.
    existing.steps, existing.max_drop, existing.alpha = (
        document.steps,
        document.max_drop,
        document.alpha,
    )
    return existing


def outcome_of(document: AbDocument) -> AbOutcome:
    """The verdicts of a document measured elsewhere (inside a board), and why it stopped."""
    verdicts = judge_document(document)
    pairs = len(document.complete_pairs)
    if not undecided(verdicts):
        stopped = "decided"
    else:
        stopped = "pairs" if pairs >= document.steps[-1] else "budget"
    return AbOutcome(verdicts, pairs, stopped)


def profile_algorithms(profile: str | None) -> tuple[str, ...]:
    """What a board's profile says its users rely on: the algorithms of its rules, then
    those of its expected drivers (every driver of each is measured). Without a profile
    (or one that names none) the slice measures the winners of the path algorithms."""
    if profile is None:
        return ()
    try:
        loaded = load_profile(profile)
    except ValueError as error:  # ProfileError: names the file and what is wrong
        raise UsageError(str(error)) from None
    named = [str(rule["algorithm"]) for rule in loaded.rules if rule.get("algorithm")]
    named += [expectation.algorithm for expectation in loaded.expectations]
    return tuple(dict.fromkeys(named))


def _expected_drivers(profile: str | None) -> list[str]:
    if profile is None:
        return []
    return [e.driver for e in load_profile(profile).expectations if e.driver]
