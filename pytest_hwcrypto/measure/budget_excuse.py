# SPDX-License-Identifier: MIT
"""Why a throughput run went over its --hwcrypto-budget through no fault of its pacing.

The budget test of the throughput suite fails a run that overshoots; two overshoots are
not the engine's and skip instead, saying what budget this machine needs:

* the plan kept the first algorithm although its series cannot fit (make_plan measures
  something briefly rather than nothing): `least_budget` says so before anything runs;
* the pacer stopped at the fewest rounds a median needs, and those alone took longer than
  the budget: the work between samples (Python, sessions, reading CPU times) costs more
  here than the plan allows. Seen on the ARM boards under QEMU's TCG, where the board's
  Python runs emulated: 40 series x 5 rounds took 246 s for a 60 s budget, ~1.2 s a
  series each round beyond 0.3 s of timed samples (qemu-arm64, load 6, 2026-12-07).

A run that did more rounds than that floor and still overshot misjudged the time left:
that stays a failure.
"""

from __future__ import annotations

import math

from pytest_hwcrypto.measure.plan import MIN_SAMPLES, SAFETY_SHARE, least_budget
from pytest_hwcrypto.measure.runner import ThroughputRun

# The budget test's tolerance: a run within 10 % over its budget keeps to it.
TOLERANCE = 1.1


def overshoot_excuse(run: ThroughputRun, budget: float) -> str | None:
    """The skip reason when `run` could not keep to `budget` (the option's seconds, of
    which the plan may have had a share), or None when it kept to it or should have."""
    plan = run.plan
    if not plan.cells or run.seconds <= TOLERANCE * budget:
        return None
    share = budget / plan.budget  # option seconds per planned second
    series = len(plan.cells)
    needed = least_budget(plan) * share
    if needed > budget:
        return (
            f"--hwcrypto-budget={budget:g} s is less than the {series} series of "
            f"{plan.cells[0].target.algorithm} need at the least (about {math.ceil(needed)} s), "
            f"so they were measured briefly anyway ({run.seconds:.0f} s); give "
            f"--hwcrypto-budget={math.ceil(needed)} or more to hold the run to its budget, or "
            "fewer --hwcrypto-block-sizes/-concurrency levels"
        )
    floor = min(MIN_SAMPLES, plan.samples)
    if run.rounds > floor or not run.records:
        return None
    timed = sum(record.timed_seconds for record in run.records)
    between = (run.seconds - timed) / (max(run.rounds, 1) * len(run.records))
    enough = math.ceil(run.seconds * share / (1.0 - SAFETY_SHARE))
    return (
        f"the {floor} rounds a median needs over {len(run.records)} series took "
        f"{run.seconds:.0f} s here, {between:.2f} s a series each round beyond its timed "
        f"samples ({timed:.0f} s in all): the work between samples costs more on this "
        "machine than a budget allows for (under QEMU's TCG the board's Python runs "
        f"emulated), so --hwcrypto-budget={budget:g} s cannot hold; give "
        f"--hwcrypto-budget={enough} or more, or fewer series (--hwcrypto-algorithm, "
        "-block-sizes, -concurrency)"
    )
