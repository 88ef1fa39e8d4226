# SPDX-License-Identifier: MIT
"""How large a drop a regression verdict on two sample sets could have seen (pure).

The regression verdict (verdict/compare.py `regressed`) flags a drop only when it is
larger than `max_drop` *and* the two medians' confidence intervals are apart.  A pass
therefore means "nothing changed" only if the intervals were narrow; with wide ones it
means "this pair of runs could not have seen it".  `detectable_drop` puts a number on
that, from the same spread and counts the verdict used.

The model, on a log scale (throughput ratios multiply):

* The verdict needs current's upper bound below baseline's lower bound.  With the
  observed relative widths -- baseline's lower half `b = log(median/ci_low)`, current's
  upper half `c = log(ci_high/median)` -- a drop of the medians by `g = b + c` (in log)
  just separates them.
* The medians themselves are estimates.  Their spread is taken from the same intervals
  (a two-sided interval at `confidence` spans about 2 z_conf standard errors), and the two
  runs' errors add: `s = sqrt(s_b^2 + s_c^2)`.
* To be flagged with probability `power`, the true drop must clear `g` by `z_power s`:
  `detectable = 1 - exp(-(g + z_power * s))`, and never less than `max_drop`, which the
  verdict asks for in any case.

Bare numbers (tool output: zero-width intervals) are decided on their point values, so
any drop beyond `max_drop` is flagged: their detectable drop is `max_drop` itself.

Calibrated against the runs recorded in benchmarks/aa-stability-sensitivity.md
("(c) Sensitivity") and the A/A / slowed fixture runs in tests/data: there a median drop
of 14-22 % in 10 samples of ~16 % CoV was flagged in only 25-60 % of trials, and this
model claims about 30-40 % for such series; a 29-49 % slowdown was flagged in 54 of 56
series (tests/unit/test_sensitivity.py checks both on the recorded data).
"""

from __future__ import annotations

import math
from statistics import NormalDist

from pytest_hwcrypto.model.stats import DEFAULT_CONFIDENCE, SampleStats

# "could detect" means: flagged nine times in ten by the verdict, given this spread.
DEFAULT_POWER = 0.90


def detectable_drop(
    baseline: SampleStats,
    current: SampleStats,
    max_drop: float,
    confidence: float = DEFAULT_CONFIDENCE,
    power: float = DEFAULT_POWER,
) -> float:
    """The smallest fractional drop of `current` against `baseline` the regression
    verdict would flag with probability `power`; between max_drop and 1."""
    if not 0.0 < confidence < 1.0 or not 0.0 < power < 1.0:
        raise ValueError("confidence and power must be between 0 and 1")
    if baseline.median <= 0.0 or current.median <= 0.0:
        return 1.0  # nothing measured: no drop can be seen
    baseline_low = _log_ratio(baseline.median, baseline.ci_low)
    current_high = _log_ratio(current.ci_high, current.median)
    if math.isinf(baseline_low) or math.isinf(current_high):
        return 1.0
    gap = baseline_low + current_high
    z_conf = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    spread = math.hypot(_log_width(baseline), _log_width(current)) / (2.0 * z_conf)
    z_power = NormalDist().inv_cdf(power)
    drop = 1.0 - math.exp(-(gap + z_power * spread))
    return min(1.0, max(max_drop, drop))


def blind_below(detectable: float | None, max_drop: float | None) -> bool:
    """True when a rule's max_drop is smaller than the drop its run could detect: a pass
    of that rule says less than its max_drop promises."""
    if detectable is None or max_drop is None:
        return False
    return detectable > max_drop + 1e-9


def _log_ratio(high: float, low: float) -> float:
    if low <= 0.0:
        return math.inf
    return max(0.0, math.log(high / low))


def _log_width(stats: SampleStats) -> float:
    return _log_ratio(stats.ci_high, stats.ci_low)


__all__ = ["DEFAULT_POWER", "blind_below", "detectable_drop"]
