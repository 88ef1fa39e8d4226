# SPDX-License-Identifier: MIT
"""verdict/paired.py: Wilcoxon signed-rank, Hodges-Lehmann interval, the A/B verdict."""

from __future__ import annotations

import math
import random

import pytest

from pytest_hwcrypto.verdict import paired
from pytest_hwcrypto.verdict.paired import PairedVerdict


@pytest.mark.parametrize(
    ("n", "critical"),
    # two-sided 5 % critical values of the signed-rank statistic (reject when T <= value),
    # from the standard table
    [(6, 0), (8, 3), (10, 8), (15, 25), (20, 52), (25, 89)],
)
def test_exact_critical_values_match_the_table(n: int, critical: int) -> None:
    k, achieved = paired._walsh_rank(n, 0.025)
    assert k == critical + 1
    assert achieved >= 0.95


def test_too_few_pairs_give_the_widest_interval_and_say_so() -> None:
    k, achieved = paired._walsh_rank(5, 0.025)
    assert k == 1
    assert achieved == pytest.approx(1 - 2 / 32)


def test_exact_p_value_of_all_positive_differences() -> None:
    result = paired.wilcoxon_signed_rank([0.1 * i for i in range(1, 11)])
    assert result.exact
    assert result.w_plus == 55
    assert result.p_value == pytest.approx(2 / 1024)


def test_symmetric_differences_are_not_significant() -> None:
    result = paired.wilcoxon_signed_rank([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0])
    assert result.p_value == pytest.approx(1.0)


def test_zeros_carry_no_sign_and_ties_use_the_normal_approximation() -> None:
    result = paired.wilcoxon_signed_rank([0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 2.0, -1.0] * 3)
    assert result.n == 18
    assert not result.exact
    assert 0.0 < result.p_value < 0.05


def test_normal_approximation_agrees_with_the_exact_distribution() -> None:
    rng = random.Random(3)
    differences = [rng.gauss(0.2, 1.0) for _ in range(40)]
    exact = paired.wilcoxon_signed_rank(differences)
    saved = paired.EXACT_MAX_PAIRS
    try:
        paired.EXACT_MAX_PAIRS = 0
        approx = paired.wilcoxon_signed_rank(differences)
    finally:
        paired.EXACT_MAX_PAIRS = saved
    assert exact.exact and not approx.exact
    assert approx.p_value == pytest.approx(exact.p_value, rel=0.1, abs=0.005)


def test_hodges_lehmann_is_the_median_of_walsh_averages() -> None:
    shift = paired.hodges_lehmann([1.0, 2.0, 9.0], 0.5)
    # Walsh averages: 1, 1.5, 5, 2, 5.5, 9 -> median 3.5
    assert shift.estimate == pytest.approx(3.5)
    assert shift.low <= shift.estimate <= shift.high


def test_interval_excludes_zero_exactly_when_the_test_rejects() -> None:
    rng = random.Random(11)
    for _ in range(200):
        n = rng.randint(6, 30)
        d = [rng.gauss(rng.choice([0.0, 0.3]), 1.0) for _ in range(n)]
        test = paired.wilcoxon_signed_rank(d)
        shift = paired.hodges_lehmann(d, 0.95)
        assert (shift.high < 0 or shift.low > 0) == (test.p_value <= 0.05)


def _pairs(
    rng: random.Random, n: int, drop: float, noise: float
) -> tuple[list[float], list[float]]:
    """A and B medians of n pairs: each pair on its own machine speed (a plateau), B slower."""
    a_values, b_values = [], []
    for _ in range(n):
        plateau = rng.choice([0.6, 0.8, 1.0, 1.0, 1.2])
        a_values.append(100.0 * plateau * math.exp(rng.gauss(0, noise)))
        b_values.append(100.0 * plateau * (1 - drop) * math.exp(rng.gauss(0, noise)))
    return a_values, b_values


def test_a_ten_percent_drop_is_regressed_despite_plateaus() -> None:
    rng = random.Random(5)
    a_values, b_values = _pairs(rng, 20, 0.10, 0.03)
    result = paired.judge_pairs(a_values, b_values, max_drop=0.05, family=8)
    assert result.verdict is PairedVerdict.REGRESSED
    assert result.failed
    assert result.change_low < -0.10 < result.change_high
    assert result.change == pytest.approx(-0.10, abs=0.02)


def test_an_unchanged_kernel_is_same_and_never_regressed() -> None:
    rng = random.Random(6)
    verdicts = []
    for _ in range(300):
        a_values, b_values = _pairs(rng, 16, 0.0, 0.03)
        verdicts.append(
            paired.judge_pairs(a_values, b_values, max_drop=0.05, alpha=0.05, family=4).verdict
        )
    assert PairedVerdict.REGRESSED not in verdicts
    assert verdicts.count(PairedVerdict.SAME) > 250


def test_a_stricter_alpha_only_turns_decisions_into_could_not_tell() -> None:
    """The default (0.01) against Pinpoint's 0.05 on the same pairs: the wider decision
    interval never decides what 0.05 did not, nor the other way; it only waits more."""
    rng = random.Random(6)
    waited = 0
    for drop in (0.0, 0.06, 0.12):
        for _ in range(100):
            a_values, b_values = _pairs(rng, 16, drop, 0.04)
            loose = paired.judge_pairs(a_values, b_values, max_drop=0.05, alpha=0.05, family=4)
            strict = paired.judge_pairs(a_values, b_values, max_drop=0.05, family=4)
            assert strict.verdict in (loose.verdict, PairedVerdict.UNKNOWN)
            waited += strict.verdict is not loose.verdict
    assert waited > 0


def test_fewest_pairs_that_can_reach_a_level() -> None:
    assert paired.fewest_pairs(0.05) == 6  # 2 / 2^6 = 0.031
    assert paired.fewest_pairs(0.05 / 2) == 7
    assert paired.fewest_pairs(paired.DEFAULT_ALPHA) == 8  # 2 / 2^8 = 0.0078
    with pytest.raises(ValueError, match="between 0 and 1"):
        paired.fewest_pairs(0.0)


def test_few_noisy_pairs_cannot_tell() -> None:
    rng = random.Random(7)
    a_values, b_values = _pairs(rng, 6, 0.05, 0.10)
    result = paired.judge_pairs(a_values, b_values, max_drop=0.05, family=10)
    assert result.verdict is PairedVerdict.UNKNOWN
    assert "more pairs" in result.note


def test_pairs_too_few_for_the_level_decide_nothing_however_clear() -> None:
    """Six pairs all 45 % down: p = 1/32 reaches 0.05 for one question but not 0.05 / 2
    (one series, two looks), so the verdict waits for more pairs instead of claiming a
    confidence the pairs cannot have."""
    a_values = [100.0] * 6
    b_values = [55.0, 54.0, 56.0, 53.0, 55.5, 54.5]
    one_look = paired.judge_pairs(a_values, b_values, max_drop=0.05, alpha=0.05, family=1)
    assert one_look.verdict is PairedVerdict.REGRESSED and one_look.reaches_level
    two_looks = paired.judge_pairs(a_values, b_values, max_drop=0.05, alpha=0.05, family=2)
    assert two_looks.verdict is PairedVerdict.UNKNOWN and not two_looks.reaches_level
    assert "more pairs" in two_looks.note
    seven = paired.judge_pairs(
        [*a_values, 100.0], [*b_values, 55.0], max_drop=0.05, alpha=0.05, family=2
    )
    assert seven.verdict is PairedVerdict.REGRESSED


def test_a_gain_is_improved() -> None:
    rng = random.Random(8)
    a_values, b_values = _pairs(rng, 20, -0.15, 0.03)
    assert paired.judge_pairs(a_values, b_values, 0.05).verdict is PairedVerdict.IMPROVED


def test_a_significant_change_below_max_drop_is_same() -> None:
    rng = random.Random(9)
    a_values, b_values = _pairs(rng, 40, 0.02, 0.005)
    result = paired.judge_pairs(a_values, b_values, max_drop=0.10)
    assert result.decision_high < 0  # clearly slower ...
    assert result.verdict is PairedVerdict.SAME  # ... but by less than max_drop


def test_pairs_missing_a_side_are_left_out() -> None:
    result = paired.judge_pairs([0.0, 1.0], [1.0, 0.0], 0.05)
    assert result.pairs == 0
    assert result.verdict is PairedVerdict.UNKNOWN
    with pytest.raises(ValueError, match="2 A values against 1 B"):
        paired.judge_pairs([1.0, 1.0], [1.0], 0.05)


def test_escalation_doubles_up_to_the_cap() -> None:
    assert paired.escalation_steps(10, 40) == [10, 20, 40]
    assert paired.escalation_steps(8, 50) == [8, 16, 32, 50]
    assert paired.escalation_steps(5, 5) == [5]
    with pytest.raises(ValueError):
        paired.escalation_steps(10, 5)


def test_normal_quantile() -> None:
    assert paired._normal_quantile(0.975) == pytest.approx(1.959964, abs=1e-5)
