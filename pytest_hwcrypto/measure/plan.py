# SPDX-License-Identifier: MIT
"""The measurement plan (pure): in which order to measure, and for how long.

Each answered here without touching a kernel, so that it can be unit-tested:

* **What** is measure/targets.py: the drivers of each algorithm with a choice of drivers.
* **In which order.** Samples are taken in rounds: every cell (driver x op x block size)
  once per round, drivers of one comparison next to each other and rotated every round,
  comparisons shuffled every round (`round_order`), so slow drift and periodic
  disturbances on a shared machine fall on all drivers alike instead of on whichever
  happens to run last.
* **How long.** One budget covers the whole run (`make_plan`, `Pacer`): setup, a warm-up per
  cell that also calibrates how many operations make a reliable sample (grown until the run
  is long enough to time, the way cryptsetup's benchmark does), and the samples.  When the
  budget cannot give every algorithm a useful share, whole algorithms are left out, lowest
  rank first, and said so, rather than measuring everything too briefly to decide anything.
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from pytest_hwcrypto.measure.targets import PlanError, Target
from pytest_hwcrypto.vocabulary import DEFAULT_MAX_SAMPLES, DEFAULT_SESSIONS, AlgType, Op

DEFAULT_OPS: Mapping[str, Sequence[str]] = {
    AlgType.SKCIPHER: (Op.ENCRYPT,),
    AlgType.HASH: (Op.DIGEST,),
}

# A sample shorter than this is dominated by timer and scheduler granularity (a 4 ms
# tick is 20 % of a 20 ms sample).
MIN_SAMPLE_SECONDS = 0.02
# Below this share of the budget per cell the medians are too noisy to decide a rule on
# (seen on the UML board: CoV of 14 % for 0.5 s samples at 4 KiB on a busy host).
MIN_CELL_SECONDS = 0.6
PREFERRED_SAMPLE_SECONDS = 0.1
MIN_SAMPLES = 5
# Past this many samples a longer budget makes samples longer, not more. More samples
# narrow the median's interval, but not the drift of a board between two runs, which no
# single run's samples show: on the QEMU board at 4 s per series, ~35 samples let a
# comparison claim a 6-11 % detectable drop where 11 claimed 17-27 %, and A/A pairs in
# bytes/s then came out "regressed" in 3-7 of 20 trials (0-1 with 11); relative to a
# driver in the same rounds, in 0-1 of 20 (benchmarks/aa-stability-sensitivity.md). So the
# default stays, and --hwcrypto-max-samples raises it for runs judged with
# --hwcrypto-relative-to.
MAX_SAMPLES = DEFAULT_MAX_SAMPLES
# Sessions each driver's series is spread over, one after another round by round (where the
# engine can open several: measure/runner.py). On the QEMU board about 3 AF_ALG sessions
# in 120 ran 12-35 % slow for their whole run while the other sessions of the same rounds
# did not (benchmarks/session-offsets.md); with the samples spread
# over several sessions such a session moves a minority of them, not the median. Five,
# not three: the median's 95 % interval of 35 samples starts at the 12th smallest, so a
# session holding a third of them drags the interval down, one holding a fifth does not
# (tests/unit/test_session_rotation.py). With three, 3 of 20 QEMU trials at 4 KiB missed
# a 15 % drop with the median right (0.85-0.86) and the interval's top at 1.06-1.43.
SESSIONS = DEFAULT_SESSIONS
# Opening a target's first session can instantiate a template and run its self-test.
SETUP_SECONDS_PER_TARGET = 0.05
# Each further session binds a driver that exists by then: 2 ms on UML, 50-53 ms under
# QEMU's TCG (AF_ALG open and close, 2026-12-04), well under a millisecond on hardware.
# Priced for hardware and UML, not TCG: at 50 ms a 6 s budget on UML left out cbc(aes);
# under TCG the Pacer, which spreads the time really left, absorbs the difference.
SETUP_SECONDS_PER_EXTRA_SESSION = 0.01
WARMUP_SHARE = 0.1
MAX_WARMUP_SECONDS = 0.25
# Left unplanned: reading results, building verdicts, Python overhead between samples.
SAFETY_SHARE = 0.05


@dataclass(frozen=True)
class Cell:
    """One series of samples: a driver, an operation, a block size and how many requests
    are in flight at once (`concurrency`, measure/parallel.py)."""

    target: Target
    op: str
    block_size: int
    concurrency: int = 1

    @property
    def comparison(self) -> tuple[str, int | None, str, int, int]:
        """Cells with the same comparison key are compared with each other."""
        return (
            self.target.algorithm,
            self.target.key_bits,
            self.op,
            self.block_size,
            self.concurrency,
        )

    def describe(self) -> str:
        depth = f" N={self.concurrency}" if self.concurrency != 1 else ""
        return f"{self.target.algorithm} {self.target.driver} {self.op} {self.block_size} B{depth}"


@dataclass(frozen=True)
class Plan:
    """The cells to measure and how the budget is split between them."""

    cells: tuple[Cell, ...]
    samples: int
    sample_seconds: float
    warmup_seconds: float
    setup_seconds: float
    budget: float
    left_out: Mapping[str, str] = field(default_factory=dict)  # algorithm -> why
    # How many sessions each target is opened with, at most (an engine may open fewer).
    sessions: int = 1

    @property
    def cell_seconds(self) -> float:
        return self.warmup_seconds + self.samples * self.sample_seconds

    @property
    def targets(self) -> tuple[Target, ...]:
        return tuple(dict.fromkeys(cell.target for cell in self.cells))


# ---------------------------------------------------------------------------------------
# how long: splitting the budget


def cells_for(
    targets: Sequence[Target],
    block_sizes: Sequence[int],
    ops: Mapping[str, Sequence[str]] = DEFAULT_OPS,
    concurrency: Sequence[int] = (1,),
) -> list[Cell]:
    """Every driver x op x block size the driver accepts x level of requests in flight."""
    return [
        Cell(target, op, size, level)
        for target in targets
        for op in ops.get(target.kind, ())
        for size in block_sizes
        if target.accepts(size)
        for level in concurrency
    ]


def make_plan(
    targets: Sequence[Target],
    block_sizes: Sequence[int],
    budget: float,
    *,
    ops: Mapping[str, Sequence[str]] = DEFAULT_OPS,
    min_cell_seconds: float = MIN_CELL_SECONDS,
    min_samples: int = MIN_SAMPLES,
    max_samples: int = MAX_SAMPLES,
    sessions: int = SESSIONS,
    prefer: Collection[str] = (),
    concurrency: Sequence[int] = (1,),
) -> Plan:
    """Split `budget` seconds over the cells; leave out whole algorithms that do not fit.

    Algorithms in `prefer` (those a board profile has rules for) come first, then the rest
    in rank order (then in the order given), while every cell keeps at least
    `min_cell_seconds`; the first algorithm always stays, so a small budget measures
    something briefly rather than nothing. Each target is opened `sessions` times, and
    that setup comes out of the budget first. Each cell is measured at every level of
    `concurrency` (requests in flight), which multiplies the cells the budget is split over.
    """
    if budget <= 0:
        raise PlanError("the budget must be more than 0 seconds")
    if sessions < 1:
        raise PlanError("a target needs at least one session")
    ordered = sorted(targets, key=lambda t: (t.algorithm not in prefer, t.rank))
    levels = tuple(concurrency) or (1,)
    chosen, left_out = _fit_algorithms(
        ordered, block_sizes, budget, ops, min_cell_seconds, sessions, levels
    )
    cells = cells_for(chosen, block_sizes, ops, levels)
    if not cells:
        return Plan((), 0, 0.0, 0.0, 0.0, budget, left_out, sessions)
    setup = setup_seconds(len(chosen), sessions)
    per_cell = _measuring_seconds(budget, setup) / len(cells)
    warmup = min(MAX_WARMUP_SECONDS, WARMUP_SHARE * per_cell)
    samples, sample_seconds = split_samples(per_cell - warmup, min_samples, max_samples)
    return Plan(tuple(cells), samples, sample_seconds, warmup, setup, budget, left_out, sessions)


def least_budget(plan: Plan, min_cell_seconds: float = MIN_CELL_SECONDS) -> float:
    """The budget the plan's cells need at `min_cell_seconds` each, setup included: more
    than `plan.budget` when make_plan kept the first algorithm although it did not fit
    (something measured briefly rather than nothing), so the run cannot keep to it."""
    needed = len(plan.cells) * min_cell_seconds + plan.setup_seconds
    return needed / (1.0 - SAFETY_SHARE)


def split_samples(
    seconds: float, min_samples: int = MIN_SAMPLES, max_samples: int = MAX_SAMPLES
) -> tuple[int, float]:
    """(samples, seconds each) for one cell: about PREFERRED_SAMPLE_SECONDS each, within
    min..max samples, never shorter than MIN_SAMPLE_SECONDS unless min_samples forces it."""
    wanted = round(seconds / PREFERRED_SAMPLE_SECONDS)
    affordable = math.floor(seconds / MIN_SAMPLE_SECONDS)
    samples = max(min_samples, min(max_samples, wanted, affordable))
    return samples, max(seconds, 0.0) / samples


def setup_seconds(targets: int, sessions: int) -> float:
    """What opening `sessions` sessions of each of `targets` targets is expected to take."""
    return targets * (SETUP_SECONDS_PER_TARGET + (sessions - 1) * SETUP_SECONDS_PER_EXTRA_SESSION)


def _measuring_seconds(budget: float, setup: float) -> float:
    return max(budget * (1.0 - SAFETY_SHARE) - setup, 0.0)


def _fit_algorithms(
    targets: Sequence[Target],
    block_sizes: Sequence[int],
    budget: float,
    ops: Mapping[str, Sequence[str]],
    min_cell_seconds: float,
    sessions: int,
    levels: Sequence[int] = (1,),
) -> tuple[list[Target], dict[str, str]]:
    by_algorithm: dict[str, list[Target]] = {}
    for target in targets:  # already in planning order
        by_algorithm.setdefault(target.algorithm, []).append(target)
    chosen: list[Target] = []
    left_out: dict[str, str] = {}
    cell_count = 0
    for algorithm, members in by_algorithm.items():
        more = len(cells_for(members, block_sizes, ops, levels))
        candidates = chosen + members
        setup = setup_seconds(len(candidates), sessions)
        affordable = _measuring_seconds(budget, setup) / max(cell_count + more, 1)
        if chosen and (left_out or affordable < min_cell_seconds):
            needed = (cell_count + more) * min_cell_seconds + setup
            left_out[algorithm] = _left_out_words(len(members), more, budget, needed)
            continue
        chosen.extend(members)
        cell_count += more
    return chosen, left_out


def _left_out_words(drivers: int, cells: int, budget: float, needed: float) -> str:
    return (
        f"not measured: {drivers} drivers x ops x block sizes ({cells} series) do not fit "
        f"in --hwcrypto-budget={budget:g} s after the algorithms ranked before it "
        f"(about {math.ceil(needed / (1.0 - SAFETY_SHARE))} s would measure it too)"
    )


# ---------------------------------------------------------------------------------------
# in which order


def round_order(cells: Sequence[Cell], round_index: int) -> list[Cell]:
    """The order of one round: comparisons in a shuffled order, drivers of one together.

    Drivers compared with each other are measured back to back, so they see the same
    machine, and rotate within their comparison every round so none always goes first.
    The comparisons themselves are shuffled every round (seeded with the round number, so a
    plan always runs in the same order): a disturbance that recurs with the rhythm of the
    rounds -- a periodic job on the host, a neighbour's boot -- then lands on different
    series each round instead of always on the same ones.
    """
    groups: dict[tuple[str, int | None, str, int, int], list[Cell]] = {}
    for cell in cells:
        groups.setdefault(cell.comparison, []).append(cell)
    ordered_groups = list(groups.values())
    random.Random(round_index).shuffle(ordered_groups)
    order: list[Cell] = []
    for group in ordered_groups:
        shift = round_index % len(group)
        order.extend(group[shift:] + group[:shift])
    return order


# ---------------------------------------------------------------------------------------
# calibration and pacing


def next_calibration_count(
    count: int, elapsed: float, target_seconds: float, max_growth: float = 10.0
) -> int | None:
    """Grow a timed run until it is long enough to trust (cryptsetup's benchmark does this).

    None when `count` operations took at least `target_seconds`; otherwise a larger count,
    aimed at the target from the rate seen so far, at least doubled and at most
    `max_growth` times (a first run of one operation says little about the rate).
    """
    if elapsed >= target_seconds:
        return None
    if elapsed <= 0:
        return max(count * 2, math.ceil(count * max_growth))
    growth = min(max(1.2 * target_seconds / elapsed, 2.0), max_growth)
    return max(count + 1, math.ceil(count * growth))


def operations_for(rate_per_second: float, seconds: float) -> int:
    """How many operations fill `seconds` at `rate_per_second` (at least one)."""
    if rate_per_second <= 0 or not math.isfinite(rate_per_second):
        return 1
    return max(1, round(rate_per_second * seconds))


@dataclass
class Pacer:
    """Keeps a run inside its budget while it runs.

    Before each round it spreads the time left over the rounds left; when that would make
    samples shorter than MIN_SAMPLE_SECONDS it ends the run early, but never before
    `min_rounds` rounds (medians of fewer samples decide nothing).
    """

    started_at: float
    budget: float
    rounds: int
    cells: int
    warmup_seconds: float = 0.0
    min_rounds: int = MIN_SAMPLES
    min_sample_seconds: float = MIN_SAMPLE_SECONDS
    reserve_share: float = SAFETY_SHARE

    @classmethod
    def for_plan(cls, plan: Plan, started_at: float, cells: int | None = None) -> Pacer:
        """`cells`: how many of the plan's cells are really measured (some may not open)."""
        return cls(
            started_at=started_at,
            budget=plan.budget,
            rounds=plan.samples,
            cells=len(plan.cells) if cells is None else cells,
            warmup_seconds=plan.warmup_seconds,
            min_rounds=min(MIN_SAMPLES, plan.samples),
        )

    @property
    def deadline(self) -> float:
        return self.started_at + self.budget * (1.0 - self.reserve_share)

    def sample_seconds(self, now: float, rounds_done: int) -> float | None:
        """Seconds per sample for the next round, or None to stop measuring."""
        rounds_left = self.rounds - rounds_done
        if rounds_left <= 0 or self.cells <= 0:
            return None
        remaining = self.deadline - now
        if rounds_done == 0:
            remaining -= self.warmup_seconds * self.cells
        per_sample = remaining / (rounds_left * self.cells)
        if per_sample >= self.min_sample_seconds:
            return per_sample
        if rounds_done < self.min_rounds:
            return self.min_sample_seconds
        # Behind schedule with enough samples: one more round only if it fits as it is.
        if remaining >= self.cells * self.min_sample_seconds:
            return remaining / self.cells
        return None
