# SPDX-License-Identifier: MIT
"""(b) A/A stability and (c) sensitivity, with a slowdown injected into one driver.

Run inside the QEMU board with the test-only drivers loaded (pytest_hwcrypto/kmod):

    .venv/bin/hwcrypto vm qemu --test-drivers \\
        --exec '.venv/bin/python benchmarks/driver_sensitivity.py --trials 20 --seconds 4 --json -'

The slowed driver is cbc-aes-hwcrypto-test-a, cbc(aes-generic) behind a thin wrapper; the
reference is cbc(aes-generic) itself, so the two cost the same until one is slowed. Every
run is the throughput suite's engine (run_plan over a plan of the same shape): both
drivers interleaved in rounds, `--seconds` each (1 s is the suite's default share).

Each trial, for each block size on its own: a baseline run, a second baseline (the A/A
control: flagging it is a false alarm), then one run per injected slowdown s.

*How a slowdown is injected.* Not with the module's real-time busy-wait: under TCG the
board's speed moves by up to 2x between runs, so a fixed delay is a larger share of each
request when the board is fast and a smaller one when it is slow (a "15 %" delay measured
16-41 % in the first pilot). The driver instead runs `work_per_kib` extra rounds of an
arithmetic loop, instructions that get faster and slower with the board as the driver's
own code does, so s stays s. At the start, per block size, the cost of a round is
calibrated (`calibrate`): relative to the reference in the same rounds, so the board's
drift cancels, with the work grown until the driver runs at about half speed.

A run is *flagged* by the verdict `hwcrypto compare` and --hwcrypto-baseline use
(verdict.compare.regressed): the median ratio below 1 - max_drop and the intervals apart.
Each comparison's ratio and interval are kept, so the verdict is worked out for several
max_drop values from the same runs; the *detectable drop* at a size is the smallest
injected slowdown flagged, with every larger one, in >= 95 % of trials, by a max_drop
whose A/A false alarms are <= 5 %.

Every comparison is judged twice from the same runs: *absolute* (bytes/s, what `hwcrypto
compare` does by default) and *relative* (the per-round quotient slowed/reference,
`hwcrypto compare --relative-to`, verdict/relative.py).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_hwcrypto.kernel.inventory import build_inventory
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.kernel.test_drivers import CBC_A, TestDriversControl
from pytest_hwcrypto.measure.afalg_engine import AfAlgEngine
from pytest_hwcrypto.measure.plan import MAX_SAMPLES, SESSIONS, make_plan
from pytest_hwcrypto.measure.runner import run_plan
from pytest_hwcrypto.measure.targets import Target, discover_targets
from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.verdict.compare import compare_measurements
from pytest_hwcrypto.verdict.relative import relative_measurements, resolve_references

DEFAULT_SECONDS_PER_SERIES = 1.0  # the suite's default budget gives each series about 1 s
SLOWDOWNS = (0.05, 0.10, 0.15, 0.30)
MAX_DROPS = (0.05, 0.10, 0.25)
METHODS = ("absolute", "relative")
HIT_BAR, FALSE_ALARM_BAR = 0.95, 0.05
# Calibration: grow the work until the slowed driver runs at about half the reference's
# speed, where a 3 % error of the quotient is a 6 % error of 1/r - 1 (at 0.8 it was 15 %),
# then measure that share and the unslowed one CALIBRATION_REPEATS times (median).
CALIBRATION_RANGE = (0.4, 0.6)
CALIBRATION_TARGET = 0.5
CALIBRATION_REPEATS = 3
FIRST_GUESS_ROUNDS_PER_REQUEST = 20_000
CHECK_SLOWDOWN = 0.15
MAX_WORK_PER_KIB = 4_000_000_000  # the module parameter is a u32


def measure(
    targets: Sequence[Target],
    size: int,
    seconds: float,
    max_samples: int = MAX_SAMPLES,
    sessions: int = SESSIONS,
) -> list[Measurement]:
    """One run as the throughput suite makes it: both drivers interleaved in rounds, each
    series spread over `sessions` sessions of its driver."""
    plan = make_plan(
        targets, [size], seconds * len(targets), max_samples=max_samples, sessions=sessions
    )
    return run_plan(plan, AfAlgEngine()).measurements()


def share_of_reference(run: list[Measurement], reference: str) -> float:
    """The slowed driver's throughput over the reference's, median of the round quotients."""
    (relative,) = relative_measurements(run, resolve_references(run, reference))
    return relative.bytes_per_second


def calibrate(
    control: TestDriversControl,
    targets: Sequence[Target],
    size: int,
    seconds: float,
    reference: str,
    max_samples: int = MAX_SAMPLES,
    sessions: int = SESSIONS,
) -> dict[str, float]:
    """Extra time per request, as a share of the undelayed request, per round of work per KiB.

    Measured as (r0 / r - 1) / rounds, r being the slowed driver's share of the reference
    with `rounds` rounds per KiB and r0 without: both relative, so a board that is faster
    or slower during one of the runs does not move it.
    """

    def shares(rounds: int, repeats: int) -> float:
        with control.setting("work_per_kib", CBC_A, rounds):
            found = [
                share_of_reference(
                    measure(targets, size, seconds, max_samples, sessions), reference
                )
                for _ in range(repeats)
            ]
        return statistics.median(found)

    rounds = max(1, FIRST_GUESS_ROUNDS_PER_REQUEST * 1024 // size)
    for attempt in range(8):
        share = shares(rounds, 1)
        if CALIBRATION_RANGE[0] <= share <= CALIBRATION_RANGE[1] or attempt == 7:
            break
        extra = 1.0 / share - 1.0
        wanted = 1.0 / CALIBRATION_TARGET - 1.0
        factor = 20.0 if extra < 0.01 else min(20.0, max(0.05, wanted / extra))
        rounds = max(1, min(MAX_WORK_PER_KIB, round(rounds * factor)))
    share = shares(rounds, CALIBRATION_REPEATS)
    unslowed = shares(0, CALIBRATION_REPEATS)
    per_round = (unslowed / share - 1.0) / rounds
    # Checked where it matters: the work for the bar's 15 %, measured, and the cost of a
    # round taken from that instead (a share read at a fast or slow moment of the board
    # put the first run's "15 %" at 17-21 %).
    check_rounds = work_for(CHECK_SLOWDOWN, per_round)
    checked = shares(check_rounds, CALIBRATION_REPEATS)
    drop = 1.0 - checked / unslowed
    if 0.0 < drop < 1.0:
        per_round = drop / (1.0 - drop) / check_rounds
    return {
        "rounds": rounds,
        "share": share,
        "unslowed_share": unslowed,
        "checked_drop": drop,
        "per_round": per_round,
    }


def work_for(slowdown: float, per_round: float) -> int:
    """Rounds per KiB that make each request take 1 / (1 - s) as long: throughput drops by s."""
    return min(MAX_WORK_PER_KIB, round(slowdown / (1.0 - slowdown) / per_round))


def comparison(
    baseline: list[Measurement], current: list[Measurement], reference: str
) -> dict[str, dict[str, float | None]]:
    """The slowed driver's ratio current/baseline and its interval, judged both ways."""
    judged = {}
    for method, relative_to in (("absolute", None), ("relative", reference)):
        (found,) = [
            c
            for c in compare_measurements(baseline, current, 0.0, relative_to)
            if c.driver == CBC_A
        ]
        judged[method] = {
            "ratio": 1.0 + found.change,
            "high": found.ratio_high,
            # what the verdict claims it could have seen (model/sensitivity.py, at max_drop 0)
            "claimed_detectable": found.detectable_drop,
        }
    return judged


def samples_of(run: list[Measurement]) -> dict[str, list[float]]:
    """Each driver's samples in round order (round r went through session r mod --sessions),
    kept so a run that is off can be traced to the session that put it off."""
    return {m.driver or "?": list(m.samples or []) for m in run}


def flagged(row: dict[str, Any], max_drop: float) -> bool:
    """verdict.compare.regressed on a kept comparison."""
    return bool(row["ratio"] < 1.0 - max_drop and row["high"] < 1.0)


def loadavg() -> str:
    """The board's own load average (the host's is taken outside, around the run)."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def summarise(
    trials: list[dict[str, Any]], sizes: Sequence[int], slowdowns: Sequence[float] = SLOWDOWNS
) -> dict[str, Any]:
    return {
        method: {
            str(size): summarise_size([trial[str(size)] for trial in trials], method, slowdowns)
            for size in sizes
        }
        for method in METHODS
    }


def summarise_size(
    rows: list[dict[str, Any]], method: str, slowdowns: Sequence[float] = SLOWDOWNS
) -> dict[str, Any]:
    """False alarms and hit rates per max_drop, and the detectable drop, for one size."""
    controls = [row["control"][method] for row in rows]
    slowed = {s: [row["slowed"][f"{s:g}"][method] for row in rows] for s in slowdowns}
    by_drop: dict[str, Any] = {}
    detectable: tuple[float, float] | None = None
    for max_drop in MAX_DROPS:
        false = sum(flagged(c, max_drop) for c in controls) / len(rows)
        hits = {
            s: sum(flagged(r, max_drop) for r in runs) / len(rows) for s, runs in slowed.items()
        }
        by_drop[f"{max_drop:g}"] = {
            "false_alarms": false,
            "flagged": {f"{s:g}": rate for s, rate in hits.items()},
        }
        # the smallest s from which this and every larger slowdown is caught
        caught = None
        for s in sorted(slowdowns, reverse=True):
            if hits[s] < HIT_BAR:
                break
            caught = s
        better = caught is not None and (detectable is None or caught < detectable[0])
        if false <= FALSE_ALARM_BAR and better:
            assert caught is not None
            detectable = (caught, max_drop)
    return {
        "by_max_drop": by_drop,
        "detectable_drop": None if detectable is None else detectable[0],
        "with_max_drop": None if detectable is None else detectable[1],
        "control_ratio_range": [
            min(c["ratio"] for c in controls),
            max(c["ratio"] for c in controls),
        ],
        "median_ratio": {
            f"{s:g}": statistics.median(r["ratio"] for r in runs) for s, runs in slowed.items()
        },
    }


def claims(rows: list[dict[str, Any]], method: str, max_drop: float) -> tuple[float, int, int]:
    """What the verdict said it could see, against what it then saw: the median claimed
    detectable drop of the slowed runs, and of the runs whose claim was at most the
    injected slowdown, how many were flagged (model/sensitivity.py promises nine in ten)."""
    claimed, promised, kept = [], 0, 0
    for row in rows:
        for s, judged in row["slowed"].items():
            claim = max(max_drop, judged[method]["claimed_detectable"])
            claimed.append(claim)
            if claim <= float(s):
                promised += 1
                kept += flagged(judged[method], max_drop)
    return statistics.median(claimed), promised, kept


def table(saved: dict[str, Any]) -> str:
    """The markdown table of benchmarks/aa-stability-sensitivity.md from a saved run (--json)."""
    trials = saved["trials"]
    slowdowns = saved.get("slowdowns", SLOWDOWNS)
    sizes = [key for key in saved["summary"]["relative"]]
    lines = [
        "| method | size | A/A ratio range | max_drop | A/A false alarms | flagged at s = "
        + " / ".join(f"{s:.0%}" for s in slowdowns)
        + " | median ratio at each s | detectable drop | median claim | claim <= s: flagged |",
        "|---" * 10 + "|",
    ]
    for method in METHODS:
        for size in sizes:
            summary = saved["summary"][method][size]
            rows = [trial[size] for trial in trials]
            low, high = summary["control_ratio_range"]
            medians = " / ".join(f"{summary['median_ratio'][f'{s:g}']:.2f}" for s in slowdowns)
            detectable = summary["detectable_drop"]
            for max_drop in MAX_DROPS:
                found = summary["by_max_drop"][f"{max_drop:g}"]
                hits = " / ".join(
                    f"{round(found['flagged'][f'{s:g}'] * len(rows))}" for s in slowdowns
                )
                median_claim, promised, kept = claims(rows, method, max_drop)
                lines.append(
                    f"| {method} | {size} B | {low:.3f}-{high:.3f} | {max_drop:.0%} | "
                    f"{round(found['false_alarms'] * len(rows))} of {len(rows)} | {hits} | "
                    f"{medians} | "
                    + (
                        f"{detectable:.0%} (max_drop {summary['with_max_drop']:.0%})"
                        if detectable is not None and max_drop == MAX_DROPS[0]
                        else (
                            "above 30 %" if detectable is None and max_drop == MAX_DROPS[0] else ""
                        )
                    )
                    + f" | {median_claim:.0%} | {kept} of {promised} |"
                )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--table", metavar="RESULTS.json", help="print the README table of a saved run and stop"
    )
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--sizes", default="16,4096,65536")
    parser.add_argument(
        "--seconds",
        type=float,
        default=DEFAULT_SECONDS_PER_SERIES,
        help="seconds per driver and size in each run (1: the suite's default share)",
    )
    parser.add_argument(
        "--json", help="write every trial and the summary here ('-': one line on stdout)"
    )
    parser.add_argument(
        "--max-samples",
        type=int,
        default=MAX_SAMPLES,
        help=f"samples per series (the plan's cap, {MAX_SAMPLES}: longer series, longer samples)",
    )
    parser.add_argument(
        "--slowdowns",
        default=",".join(f"{s:g}" for s in SLOWDOWNS),
        help="the injected slowdowns, as fractions",
    )
    parser.add_argument(
        "--sessions",
        type=int,
        default=SESSIONS,
        help=f"sessions each series is spread over, in turn ({SESSIONS}: the suite's default)",
    )
    parser.add_argument("--reference", default="cbc(aes-generic)", help="the unslowed driver")
    args = parser.parse_args()
    if args.table:
        print(table(json.loads(Path(args.table).read_text())))
        return 0
    sizes = [int(size) for size in args.sizes.split(",")]
    slowdowns = [float(s) for s in args.slowdowns.split(",")]
    control = TestDriversControl(None)
    if not control.loaded():
        print("hwcrypto_test is not loaded: hwcrypto vm qemu --test-drivers", file=sys.stderr)
        return 2
    inventory = build_inventory(read_proc_crypto())
    targets = [t for t in discover_targets(inventory) if t.driver in (CBC_A, args.reference)]
    if len(targets) != 2:
        print(f"need {CBC_A} and {args.reference}, found {targets}", file=sys.stderr)
        return 2
    calibration = {
        size: calibrate(
            control, targets, size, args.seconds, args.reference, args.max_samples, args.sessions
        )
        for size in sizes
    }
    for size, found in calibration.items():
        print(
            f"calibration {size} B: {found['rounds']} rounds/KiB -> share {found['share']:.3f} "
            f"(unslowed {found['unslowed_share']:.3f}); first 15 % gave "
            f"{found['checked_drop']:.1%}, now 15 % = "
            f"{work_for(0.15, found['per_round'])} rounds/KiB; board load {loadavg()}",
            flush=True,
        )
    trials: list[dict[str, Any]] = []
    for trial in range(args.trials):
        record: dict[str, Any] = {"loadavg_before": loadavg()}
        for size in sizes:
            baseline = measure(targets, size, args.seconds, args.max_samples, args.sessions)
            second_baseline = measure(targets, size, args.seconds, args.max_samples, args.sessions)
            row: dict[str, Any] = {
                "control": comparison(baseline, second_baseline, args.reference),
                "slowed": {},
                "samples": {
                    "baseline": samples_of(baseline),
                    "second_baseline": samples_of(second_baseline),
                },
            }
            for slowdown in slowdowns:
                rounds = work_for(slowdown, calibration[size]["per_round"])
                with control.setting("work_per_kib", CBC_A, rounds):
                    current = measure(targets, size, args.seconds, args.max_samples, args.sessions)
                row["slowed"][f"{slowdown:g}"] = comparison(baseline, current, args.reference)
                row["samples"][f"slowed {slowdown:g}"] = samples_of(current)
            record[str(size)] = row
        record["loadavg_after"] = loadavg()
        trials.append(record)
        for method in METHODS:
            shown = "; ".join(
                f"{size} B A/A {record[str(size)]['control'][method]['ratio']:.3f} "
                + " ".join(
                    f"-{float(s):.0%}:{judged[method]['ratio']:.3f}"
                    for s, judged in record[str(size)]["slowed"].items()
                )
                for size in sizes
            )
            print(
                f"trial {trial + 1} {method}: {shown}; board load {record['loadavg_before']}",
                flush=True,
            )
    summary = summarise(trials, sizes, slowdowns)
    print(json.dumps(summary, indent=2))
    everything = {
        "seconds_per_series": args.seconds,
        "max_samples": args.max_samples,
        "sessions": args.sessions,
        "slowdowns": slowdowns,
        "calibration": {str(size): found for size, found in calibration.items()},
        "trials": trials,
        "summary": summary,
    }
    if args.json == "-":  # a board's file system is read-only outside its run directory
        print("RESULTS-JSON " + json.dumps(everything), flush=True)
    elif args.json:
        Path(args.json).write_text(json.dumps(everything, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
