# SPDX-License-Identifier: MIT
"""measure/budget_excuse.py: which overshoots of --hwcrypto-budget skip, which fail."""

from __future__ import annotations

from pytest_hwcrypto.measure.budget_excuse import overshoot_excuse
from pytest_hwcrypto.measure.plan import MIN_SAMPLES, make_plan
from pytest_hwcrypto.measure.runner import CellRecord, ThroughputRun
from pytest_hwcrypto.measure.targets import Target

DRIVERS = ("cbc-aes-ce", "cbc-aes-neonbs", "cbc(aes-generic)", "virtio_crypto_aes_cbc")
TARGETS = [Target("cbc(aes)", driver, "skcipher", 128, 0, block_multiple=16) for driver in DRIVERS]
SIZES = (16, 65536)


def run_of(budget: float, seconds: float, rounds: int, timed: float = 0.1) -> ThroughputRun:
    plan = make_plan(TARGETS, SIZES, budget, concurrency=(1, 4))
    records = [
        CellRecord(cell, cell.target.driver, timed_seconds=timed / len(plan.cells))
        for cell in plan.cells
    ]
    return ThroughputRun(plan, records, [], seconds, rounds)


def test_a_run_within_its_budget_needs_no_excuse() -> None:
    assert overshoot_excuse(run_of(60.0, 65.0, rounds=MIN_SAMPLES), 60.0) is None


def test_a_budget_below_the_first_algorithms_series_says_what_they_need() -> None:
    # 4 drivers x 2 sizes x 2 levels = 16 series at 0.6 s at the least: ~11 s
    excuse = overshoot_excuse(run_of(5.0, 40.0, rounds=MIN_SAMPLES), 5.0)
    assert excuse is not None
    assert "--hwcrypto-budget=5 s is less than the 16 series of cbc(aes)" in excuse
    assert "give --hwcrypto-budget=11 or more" in excuse


def test_the_fewest_rounds_taking_longer_than_the_budget_say_so() -> None:
    """The ARM boards under TCG: 5 rounds over 40 series took 246 s for 60 s."""
    excuse = overshoot_excuse(run_of(60.0, 246.0, rounds=MIN_SAMPLES, timed=10.0), 60.0)
    assert excuse is not None
    assert f"the {MIN_SAMPLES} rounds a median needs over 16 series took 246 s" in excuse
    # (246 - 10) s over 5 rounds x 16 series
    assert "2.95 s a series each round" in excuse
    assert "give --hwcrypto-budget=259 or more" in excuse


def test_more_rounds_than_the_floor_and_over_budget_is_the_pacers_fault() -> None:
    run = run_of(60.0, 246.0, rounds=MIN_SAMPLES + 2)
    assert run.plan.samples > MIN_SAMPLES
    assert overshoot_excuse(run, 60.0) is None
