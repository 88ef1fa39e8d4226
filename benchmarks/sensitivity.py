# SPDX-License-Identifier: MIT
"""(c) Sensitivity: is a 15 % slowdown of the measuring process flagged?

Run inside a board with cgroup v2 (the UML board mounts it):

    .venv/bin/hwcrypto vm --exec '.venv/bin/python benchmarks/sensitivity.py' uml

Each trial measures the same cells three times with the suite's engine and the suite's
per-series time (run_plan over a plan of the same shape): a baseline, a second baseline
(the A/A control: flagging it would be a false alarm), and a run with the measuring process
in a cgroup whose cpu.max gives it 85 % of one CPU ("85000 100000": 85 ms every 100 ms; the
UML kernel runs at HZ=100 and enforces the quota per 10 ms tick, so a 10 ms period would
halve the throughput instead of taking 15 %). A run is *flagged* when the
regression verdict `hwcrypto compare` uses (verdict.compare.compare_measurements,
--max-drop 10 %) fails it. Bar: flagged in >= 95 % of trials.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_hwcrypto.kernel.inventory import build_inventory
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.measure.afalg_engine import AfAlgEngine
from pytest_hwcrypto.measure.plan import make_plan
from pytest_hwcrypto.measure.runner import run_plan
from pytest_hwcrypto.measure.targets import Target, discover_targets
from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.verdict.compare import compare_measurements

CGROUP_ROOT = Path("/sys/fs/cgroup")
SLOW = CGROUP_ROOT / "hwcrypto-slow"
QUOTA = "85000 100000"  # 85 % of one CPU per 100 ms
MAX_DROP = 0.10
BAR = 0.95
# The suite's share per series with the default budget on UML: 60 s over 56 series.
SUITE_SECONDS_PER_SERIES = 60.0 * 0.95 / 56


@contextmanager
def throttled() -> Iterator[None]:
    """This process (all its threads) in a cgroup limited by cpu.max, then back out."""
    (CGROUP_ROOT / "cgroup.subtree_control").write_text("+cpu")
    SLOW.mkdir(exist_ok=True)
    (SLOW / "cpu.max").write_text(QUOTA)
    (SLOW / "cgroup.procs").write_text(str(os.getpid()))
    try:
        yield
    finally:
        (CGROUP_ROOT / "cgroup.procs").write_text(str(os.getpid()))


def measure(targets: Sequence[Target], sizes: Sequence[int]) -> list[Measurement]:
    budget = SUITE_SECONDS_PER_SERIES * len(targets) * len(sizes) / 0.95
    return run_plan(make_plan(targets, sizes, budget), AfAlgEngine()).measurements()


def flagged(baseline: list[Measurement], current: list[Measurement]) -> dict[int, bool]:
    comparisons = compare_measurements(baseline, current, MAX_DROP)
    return {c.block_size or 0: c.failed for c in comparisons}


def drops(baseline: list[Measurement], current: list[Measurement]) -> dict[int, float]:
    comparisons = compare_measurements(baseline, current, MAX_DROP)
    return {c.block_size or 0: -c.change for c in comparisons}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--driver", default="cbc(aes-generic)")
    parser.add_argument("--sizes", default="16,4096,65536")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    if not (CGROUP_ROOT / "cgroup.controllers").exists():
        print("cgroup v2 is not mounted at /sys/fs/cgroup", file=sys.stderr)
        return 2
    sizes = [int(size) for size in args.sizes.split(",")]
    targets = [
        t for t in discover_targets(build_inventory(read_proc_crypto())) if t.driver == args.driver
    ]
    if not targets:
        print(f"{args.driver} is not among the drivers measured here", file=sys.stderr)
        return 2
    hits: dict[int, list[bool]] = {size: [] for size in sizes}
    false_alarms: dict[int, list[bool]] = {size: [] for size in sizes}
    observed: dict[int, list[float]] = {size: [] for size in sizes}
    for trial in range(args.trials):
        baseline = measure(targets, sizes)
        control = measure(targets, sizes)
        with throttled():
            slow = measure(targets, sizes)
        for size, failed in flagged(baseline, slow).items():
            hits[size].append(failed)
        for size, failed in flagged(baseline, control).items():
            false_alarms[size].append(failed)
        for size, drop in drops(baseline, slow).items():
            observed[size].append(drop)
        print(
            f"trial {trial + 1}: drop "
            + ", ".join(f"{s} B {observed[s][-1]:+.1%}" for s in sizes)
            + "; flagged "
            + ", ".join(f"{s} B {hits[s][-1]}" for s in sizes),
            flush=True,
        )
    summary = {
        size: {
            "flagged": sum(hits[size]) / len(hits[size]),
            "false_alarms": sum(false_alarms[size]) / len(false_alarms[size]),
            "median_drop": statistics.median(observed[size]),
        }
        for size in sizes
    }
    for size, row in summary.items():
        print(
            f"{args.driver} {size:6} B: flagged {row['flagged']:.0%} of {args.trials} trials "
            f"(median drop {row['median_drop']:.1%}), A/A false alarms {row['false_alarms']:.0%}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    return 0 if all(row["flagged"] >= BAR for row in summary.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
