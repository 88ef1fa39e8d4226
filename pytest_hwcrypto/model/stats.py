# SPDX-License-Identifier: MIT
"""Sample statistics for throughput measurements (pure: numbers in, numbers out).

Throughput on the boards this plugin runs on is noisy (10 x 0.5 s samples of one driver
showed a CoV of 14 % at 4 KiB on a shared machine), so verdicts are taken on medians and
intervals, never on a single number.

Choices, and why:

* The centre is the **median**: one sample disturbed by a scheduler hiccup moves the mean
  but not the median.
* The interval is a **distribution-free confidence interval for the median** built from
  order statistics (the binomial / sign-test method): for sorted samples x(1) <= ... <=
  x(n), the interval [x(k), x(n-k+1)] covers the true median with probability
  1 - 2 * P(Binomial(n, 1/2) <= k - 1).  We take the largest k whose coverage is still at
  least the requested confidence (95 % by default).  Throughput samples are skewed (a
  machine can only be slowed down, not sped up, by interference), so a method that
  assumes no distribution is the honest choice.
* With fewer than 6 samples no order-statistic interval reaches 95 %; the interval then
  falls back to min..max, the widest the data can support (its real coverage is lower,
  1 - 2^(1-n), e.g. 94 % for n = 5).  A single value gives a zero-width interval: a point
  estimate from tool output, decided on as such.
* A ratio of two medians gets a **conservative** interval: lowest plausible numerator over
  highest plausible denominator, and the reverse.  If each interval covers its median
  with 95 %, both do with at least 90 %, and then the ratio interval covers the true
  ratio.  Conservative is what we want: a verdict that fails only when the data leave
  no doubt does not flap on an unchanged system.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_CONFIDENCE = 0.95


@dataclass(frozen=True)
class SampleStats:
    """Summary of repeated throughput samples (any unit; bytes/s in this plugin)."""

    n: int
    median: float
    mean: float
    stdev: float
    min: float
    max: float
    cov: float
    ci_low: float
    ci_high: float

    @classmethod
    def from_samples(
        cls, values: Sequence[float], confidence: float = DEFAULT_CONFIDENCE
    ) -> SampleStats:
        """Summarise `values`; raises ValueError on an empty or non-finite sequence."""
        ordered = sorted(_checked_samples(values))
        n = len(ordered)
        mean = statistics.fmean(ordered)
        stdev = statistics.stdev(ordered) if n > 1 else 0.0
        low_index, high_index = median_interval_indices(n, confidence)
        return cls(
            n=n,
            median=statistics.median(ordered),
            mean=mean,
            stdev=stdev,
            min=ordered[0],
            max=ordered[-1],
            cov=stdev / mean if mean else 0.0,
            ci_low=ordered[low_index],
            ci_high=ordered[high_index],
        )

    @classmethod
    def from_point(
        cls,
        value: float,
        ci_low: float | None = None,
        ci_high: float | None = None,
        n: int = 1,
    ) -> SampleStats:
        """A single reported value (tool output), optionally with an interval from elsewhere.

        Without an interval the value is taken at face value (zero width): decisions on it
        are decisions on the point value.
        """
        (checked,) = _checked_samples([value])
        low = checked if ci_low is None else min(ci_low, checked)
        high = checked if ci_high is None else max(ci_high, checked)
        return cls(
            n=n,
            median=checked,
            mean=checked,
            stdev=0.0,
            min=low,
            max=high,
            cov=0.0,
            ci_low=low,
            ci_high=high,
        )

    @property
    def has_spread(self) -> bool:
        """True when the interval carries information about noise (not a bare point)."""
        return self.ci_high > self.ci_low


@dataclass(frozen=True)
class RatioInterval:
    """median(a) / median(b) with a conservative interval around it."""

    ratio: float
    low: float
    high: float

    def clearly_below(self, threshold: float) -> bool:
        """True only when even the most favourable reading of the data is below threshold."""
        return self.high < threshold

    def clearly_above(self, threshold: float) -> bool:
        """True only when even the least favourable reading of the data is above threshold."""
        return self.low > threshold


def ratio_interval(a: SampleStats, b: SampleStats) -> RatioInterval:
    """Interval for median(a) / median(b): a.ci_low / b.ci_high .. a.ci_high / b.ci_low.

    Throughputs are non-negative; a zero denominator gives an infinite bound rather than an
    exception, because "the software path measured 0 bytes/s" is data, not a bug here.
    """
    return RatioInterval(
        ratio=_safe_ratio(a.median, b.median),
        low=_safe_ratio(a.ci_low, b.ci_high),
        high=_safe_ratio(a.ci_high, b.ci_low),
    )


def median_interval_indices(n: int, confidence: float = DEFAULT_CONFIDENCE) -> tuple[int, int]:
    """0-based indices (low, high) into n sorted samples bounding the median's interval.

    Falls back to (0, n - 1), i.e. min..max, when n is too small to reach `confidence`.
    """
    if n < 1:
        raise ValueError("need at least one sample")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    tail_allowed = (1.0 - confidence) / 2.0
    best_k = 0  # 1-based order statistic; 0 means "none reaches the confidence"
    k = 1
    while 2 * k <= n + 1 and binomial_half_cdf(n, k - 1) <= tail_allowed:
        best_k = k
        k += 1
    if best_k == 0:
        return 0, n - 1
    return best_k - 1, n - best_k


def binomial_half_cdf(n: int, k: int) -> float:
    """P(Binomial(n, 1/2) <= k), exact (integer arithmetic, so no underflow for large n)."""
    if k < 0:
        return 0.0
    favourable: int = sum(math.comb(n, i) for i in range(min(k, n) + 1))
    total: int = 2**n
    return favourable / total


def _checked_samples(values: Sequence[float]) -> list[float]:
    checked = [float(value) for value in values]
    if not checked:
        raise ValueError("need at least one sample")
    if not all(math.isfinite(value) for value in checked):
        raise ValueError(f"samples must be finite numbers, got {values!r}")
    return checked


def _safe_ratio(numerator: float, denominator: float) -> float:
    if denominator == 0.0:
        return 0.0 if numerator == 0.0 else math.inf
    return numerator / denominator
