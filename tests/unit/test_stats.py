# SPDX-License-Identifier: MIT
from __future__ import annotations

import math
import random
import statistics

import pytest

from pytest_hwcrypto.model.stats import (
    SampleStats,
    binomial_half_cdf,
    median_interval_indices,
    ratio_interval,
)


def test_summary_fields_match_the_statistics_module() -> None:
    values = [10.0, 12.0, 11.0, 30.0, 9.0, 10.5]
    stats = SampleStats.from_samples(values)
    assert stats.n == 6
    assert stats.median == statistics.median(values)
    assert stats.mean == pytest.approx(statistics.mean(values))
    assert stats.stdev == pytest.approx(statistics.stdev(values))
    assert (stats.min, stats.max) == (9.0, 30.0)
    assert stats.cov == pytest.approx(statistics.stdev(values) / statistics.mean(values))


def test_median_is_robust_to_one_disturbed_sample() -> None:
    calm = SampleStats.from_samples([100.0, 101.0, 99.0, 100.5, 99.5])
    disturbed = SampleStats.from_samples([100.0, 101.0, 99.0, 100.5, 10.0])
    assert disturbed.median == pytest.approx(calm.median, rel=0.01)
    assert disturbed.mean < calm.mean * 0.9


def test_single_sample_has_zero_width_interval() -> None:
    stats = SampleStats.from_samples([42.0])
    assert (stats.ci_low, stats.median, stats.ci_high) == (42.0, 42.0, 42.0)
    assert stats.stdev == 0.0
    assert not stats.has_spread


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_small_samples_fall_back_to_min_max(n: int) -> None:
    values = [float(v) for v in range(1, n + 1)]
    random.Random(n).shuffle(values)
    stats = SampleStats.from_samples(values)
    assert (stats.ci_low, stats.ci_high) == (1.0, float(n))


def test_order_statistic_indices_for_known_sample_sizes() -> None:
    # n = 6: P(B <= 0) = 1/64 <= 2.5 %, P(B <= 1) = 7/64 > 2.5 % -> x(1)..x(6)
    assert median_interval_indices(6) == (0, 5)
    # n = 10: P(B <= 1) = 11/1024 <= 2.5 %, P(B <= 2) = 56/1024 > 2.5 % -> x(2)..x(9)
    assert median_interval_indices(10) == (1, 8)
    # textbook value: n = 20 gives x(6)..x(15)
    assert median_interval_indices(20) == (5, 14)
    # a lower confidence gives a narrower interval
    low, high = median_interval_indices(20, confidence=0.80)
    assert low > 5 and high < 14


def test_interval_indices_reach_the_requested_coverage() -> None:
    for n in range(6, 80):
        low, high = median_interval_indices(n)
        k = low + 1
        assert high == n - k
        coverage = 1 - 2 * binomial_half_cdf(n, k - 1)
        assert coverage >= 0.95
        # and one step narrower would not
        assert 1 - 2 * binomial_half_cdf(n, k) < 0.95


def test_binomial_cdf_exact_and_stable_for_large_n() -> None:
    assert binomial_half_cdf(4, 0) == 1 / 16
    assert binomial_half_cdf(4, 4) == 1.0
    assert binomial_half_cdf(4, -1) == 0.0
    assert 0.0 <= binomial_half_cdf(3000, 1400) < 0.01


def test_interval_contains_the_median_and_lies_within_the_data() -> None:
    rng = random.Random(7)
    values = [rng.lognormvariate(0, 0.3) for _ in range(25)]
    stats = SampleStats.from_samples(values)
    assert stats.min <= stats.ci_low <= stats.median <= stats.ci_high <= stats.max
    ordered = sorted(values)
    assert stats.ci_low == ordered[7] and stats.ci_high == ordered[17]


def test_interval_covers_the_true_median_about_95_percent_of_the_time() -> None:
    rng = random.Random(1234)
    true_median = 100.0  # median of a normal distribution centred on 100
    covered = 0
    trials = 2000
    for _ in range(trials):
        stats = SampleStats.from_samples([rng.gauss(100.0, 10.0) for _ in range(15)])
        covered += stats.ci_low <= true_median <= stats.ci_high
    assert 0.94 <= covered / trials <= 0.995


@pytest.mark.parametrize("bad", [[], [1.0, math.nan], [math.inf]])
def test_bad_samples_are_refused(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        SampleStats.from_samples(bad)


def test_bad_confidence_is_refused() -> None:
    with pytest.raises(ValueError):
        median_interval_indices(10, confidence=1.5)


def test_point_value_with_and_without_interval() -> None:
    bare = SampleStats.from_point(5.0)
    assert (bare.ci_low, bare.median, bare.ci_high, bare.n) == (5.0, 5.0, 5.0, 1)
    framed = SampleStats.from_point(5.0, ci_low=4.0, ci_high=6.5, n=20)
    assert (framed.ci_low, framed.median, framed.ci_high, framed.n) == (4.0, 5.0, 6.5, 20)
    assert framed.has_spread


def test_ratio_interval_is_conservative() -> None:
    a = SampleStats.from_point(50.0, ci_low=45.0, ci_high=55.0)
    b = SampleStats.from_point(100.0, ci_low=90.0, ci_high=110.0)
    interval = ratio_interval(a, b)
    assert interval.ratio == pytest.approx(0.5)
    assert interval.low == pytest.approx(45.0 / 110.0)
    assert interval.high == pytest.approx(55.0 / 90.0)
    assert interval.clearly_below(0.7) and not interval.clearly_below(0.6)
    assert interval.clearly_above(0.4) and not interval.clearly_above(0.45)


def test_ratio_interval_of_point_values_is_the_point() -> None:
    interval = ratio_interval(SampleStats.from_point(30.0), SampleStats.from_point(60.0))
    assert interval.low == interval.ratio == interval.high == 0.5


def test_ratio_with_zero_denominator_is_infinite_not_an_error() -> None:
    interval = ratio_interval(SampleStats.from_point(3.0), SampleStats.from_point(0.0))
    assert math.isinf(interval.ratio) and math.isinf(interval.high)
