# SPDX-License-Identifier: MIT
"""Pairing two drivers' samples by round (verdict/pooling.py, same_rounds_interval)."""

from __future__ import annotations

import pytest

from pytest_hwcrypto.model.results import ROUNDS_KEY, Measurement
from pytest_hwcrypto.verdict.pooling import same_rounds_interval
from tests.factories import sampled

# A board that doubles and halves its speed from round to round: each driver alone is wide.
DRIFT = [1.0, 2.0, 0.5, 1.5, 0.7, 1.8, 0.6, 1.2, 0.9, 1.6, 0.8]


def measured(driver: str, samples: list[float], rounds: str | None = "run-1") -> Measurement:
    extra = {ROUNDS_KEY: rounds} if rounds is not None else {}
    return sampled(driver, samples, extra=extra)


def half_and_full(
    rounds_a: str | None = "run-1", rounds_b: str | None = "run-1"
) -> tuple[Measurement, Measurement]:
    half = measured("slow", [50.0 * d for d in DRIFT], rounds_a)
    full = measured("fast", [100.0 * d for d in DRIFT], rounds_b)
    return half, full


def test_same_rounds_give_the_quotient_of_each_round() -> None:
    half, full = half_and_full()
    interval = same_rounds_interval([half], [full])
    assert interval is not None
    assert (interval.low, interval.ratio, interval.high) == pytest.approx((0.5, 0.5, 0.5))


@pytest.mark.parametrize(
    ("rounds_a", "rounds_b"), [("run-1", "run-2"), (None, None), ("run-1", None)]
)
def test_samples_of_different_or_unknown_rounds_are_not_paired(
    rounds_a: str | None, rounds_b: str | None
) -> None:
    half, full = half_and_full(rounds_a, rounds_b)
    assert same_rounds_interval([half], [full]) is None


def test_pooled_repeats_unequal_counts_and_empty_rounds_are_not_paired() -> None:
    half, full = half_and_full()
    assert same_rounds_interval([half, half], [full]) is None
    shorter = measured("slow", [50.0 * d for d in DRIFT[:-1]])
    assert same_rounds_interval([shorter], [full]) is None
    stalled = measured("fast", [0.0, *[100.0 * d for d in DRIFT[1:]]])
    assert same_rounds_interval([half], [stalled]) is None
