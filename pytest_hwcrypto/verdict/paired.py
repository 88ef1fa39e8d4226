# SPDX-License-Identifier: MIT
"""Paired A/B statistics: is kernel B slower than kernel A? (pure: numbers in, verdicts out)

`hwcrypto ab` measures two kernels (or two configurations of one kernel) in *pairs*: boot
A, measure a short slice, boot B, measure the same slice, and again, with the order of the
two inside a pair balanced (AB, BA).  Each pair gives, per series (path, driver, block
size), one number: the log of B's median over A's median in that pair.  Why pairs beat two
runs (docs/ab.md has the figures): this machine's speed moves in plateaus lasting seconds
to minutes; two runs minutes apart each see one plateau, and their difference is the
plateau, which no amount of samples inside either run can see.  Two slices seconds apart
see the same plateau, and it cancels in their ratio; the plateaus that remain differ from
pair to pair, so they are *noise between pairs*, which a test on many pairs measures and
accounts for -- instead of a bias between runs, which it cannot.

What is computed, and why:

* **Log ratios** d_i = ln(b_i / a_i): a 10 % drop and a 10 % gain are symmetric, a pair
  where the whole machine was twice as fast still gives the same d, and the estimate back
  on the ratio scale is exp(.) - 1.
* **Wilcoxon signed-rank test** of d against 0: distribution-free (throughput noise is
  skewed: interference only slows), exact for up to `EXACT_MAX_PAIRS` pairs without ties,
  the normal approximation with tie and continuity corrections beyond.
* **Hodges-Lehmann estimate** of the change (the median of the Walsh averages
  (d_i + d_j) / 2, i <= j) and its **confidence interval** from the same test's critical
  value (the k-th smallest and largest Walsh averages): the interval excludes 0 exactly
  when the test rejects, so interval and p-value never disagree.
* **Verdict**, with tolerance tau = -ln(1 - max_drop):
  - *regressed*: the change is significant on the slow side (the decision interval lies
    below 0) and its estimate is a drop of at least max_drop;
  - *improved*: the same on the fast side (a gain of at least max_drop);
  - *same*: the decision interval lies within (-tau, +tau): whatever the change is, it is
    smaller than max_drop (a significant change smaller than that is "same", with its
    size stated);
  - *could not tell yet*: anything else -- more pairs are needed.
* **Error control**: one `hwcrypto ab` asks many questions (every series) and may look
  several times (12 -> 24 -> 40 pairs).  The decision interval is taken at level
  1 - alpha / (series x looks) (Bonferroni over both), so an unchanged kernel is called
  regressed in any series at any look with probability at most alpha.  The 95 % interval
  is reported beside it, for reading.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cache

# 0.01, not Pinpoint's 0.05: at 0.05 the A/A runs on this project's machine called an
# unchanged kernel regressed in 2 of 46 runs and in up to 1.4 % of resampled comparisons, a
# rate a CI gate is soon ignored for; at 0.01, 1 of 46 and up to 0.25 % (docs/ab.md).
DEFAULT_ALPHA = 0.01
REPORT_CONFIDENCE = 0.95
# Exact null distribution of the signed-rank statistic up to this many pairs (the count
# table has n (n + 1) / 2 + 1 entries per n: trivial); the normal approximation beyond.
EXACT_MAX_PAIRS = 60


def fewest_pairs(level: float) -> int:
    """The fewest pairs that can reach `level` at all, for one question: with n pairs the
    smallest two-sided exact p-value is 2 / 2^n (6 pairs: 0.031; 8: 0.0078)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    n = 1
    while 2.0 / 2.0**n > level:
        n += 1
    return n


class PairedVerdict(str, Enum):
    REGRESSED = "regressed"
    IMPROVED = "improved"
    SAME = "same"
    UNKNOWN = "could not tell yet"


@dataclass(frozen=True)
class WilcoxonResult:
    n: int  # pairs with a non-zero difference (zeros carry no sign)
    w_plus: float  # sum of the ranks of the positive differences
    p_value: float  # two-sided
    exact: bool


@dataclass(frozen=True)
class ShiftEstimate:
    """Hodges-Lehmann estimate of the median log ratio and its interval (log scale)."""

    estimate: float
    low: float
    high: float
    confidence: float  # the coverage achieved (exact: >= the one asked; approx: the one asked)


@dataclass(frozen=True)
class PairedComparison:
    """One series judged from its pairs; `change*` are on the ratio scale (B / A - 1)."""

    pairs: int
    change: float
    change_low: float  # 95 % interval, for reading
    change_high: float
    decision_low: float  # the interval at the family-wise level, which decides
    decision_high: float
    p_value: float
    verdict: PairedVerdict
    max_drop: float
    note: str = ""
    # False when so few pairs cannot reach the family-wise level at all: the decision
    # interval is then only the widest there is, and nothing may be decided on it.
    reaches_level: bool = True

    @property
    def failed(self) -> bool:
        return self.verdict is PairedVerdict.REGRESSED


def log_ratios(a_values: Sequence[float], b_values: Sequence[float]) -> list[float]:
    """ln(b / a) per pair; pairs where either side measured nothing are left out."""
    if len(a_values) != len(b_values):
        raise ValueError(f"{len(a_values)} A values against {len(b_values)} B values")
    return [math.log(b / a) for a, b in zip(a_values, b_values) if a > 0 and b > 0]


def wilcoxon_signed_rank(differences: Sequence[float]) -> WilcoxonResult:
    """Two-sided Wilcoxon signed-rank test of the differences against 0."""
    nonzero = [d for d in differences if d != 0.0]
    n = len(nonzero)
    if n == 0:
        return WilcoxonResult(n=0, w_plus=0.0, p_value=1.0, exact=True)
    ranks = _mid_ranks([abs(d) for d in nonzero])
    w_plus = sum(rank for rank, d in zip(ranks, nonzero) if d > 0)
    tied = len(set(ranks)) < n
    if n <= EXACT_MAX_PAIRS and not tied:
        counts = _signed_rank_counts(n)
        total = 2**n
        w = round(w_plus)
        low_tail = sum(counts[: w + 1]) / total
        high_tail = sum(counts[w:]) / total
        return WilcoxonResult(n, w_plus, min(1.0, 2 * min(low_tail, high_tail)), exact=True)
    mean = n * (n + 1) / 4
    tie_term = sum(t**3 - t for t in _tie_sizes(ranks)) / 48
    variance = n * (n + 1) * (2 * n + 1) / 24 - tie_term
    if variance <= 0:
        return WilcoxonResult(n, w_plus, 1.0, exact=False)
    z = max(0.0, abs(w_plus - mean) - 0.5) / math.sqrt(variance)
    return WilcoxonResult(n, w_plus, min(1.0, 2 * _normal_upper(z)), exact=False)


def hodges_lehmann(differences: Sequence[float], confidence: float) -> ShiftEstimate:
    """Median of the Walsh averages and the signed-rank interval at `confidence`.

    With n differences there are M = n (n + 1) / 2 Walsh averages; the interval runs from
    the k-th smallest to the k-th largest, k - 1 being the largest lower critical value
    of the signed-rank statistic at (1 - confidence) / 2.  Too few differences to reach
    the confidence give the widest interval there is (min .. max Walsh average) and say
    so through `confidence`.
    """
    if not differences:
        raise ValueError("need at least one pair")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    n = len(differences)
    walsh = sorted((differences[i] + differences[j]) / 2 for i in range(n) for j in range(i, n))
    k, achieved = _walsh_rank(n, (1.0 - confidence) / 2.0)
    return ShiftEstimate(
        estimate=statistics.median(walsh),
        low=walsh[k - 1],
        high=walsh[len(walsh) - k],
        confidence=achieved,
    )


def judge_pairs(
    a_values: Sequence[float],
    b_values: Sequence[float],
    max_drop: float,
    alpha: float = DEFAULT_ALPHA,
    family: int = 1,
) -> PairedComparison:
    """The verdict on one series from its pairs (A value, B value), same length.

    `family` is the number of questions asked at this alpha (series x planned looks):
    the decision interval is taken at 1 - alpha / family.
    """
    if not 0.0 <= max_drop < 1.0:
        raise ValueError(f"max_drop must be in [0, 1), got {max_drop}")
    if family < 1:
        raise ValueError(f"family must be at least 1, got {family}")
    d = log_ratios(a_values, b_values)
    if not d:
        nothing = math.nan
        return PairedComparison(
            pairs=0,
            change=nothing,
            change_low=nothing,
            change_high=nothing,
            decision_low=nothing,
            decision_high=nothing,
            p_value=1.0,
            verdict=PairedVerdict.UNKNOWN,
            max_drop=max_drop,
            note="no pair measured this series on both sides",
        )
    test = wilcoxon_signed_rank(d)
    shown = hodges_lehmann(d, REPORT_CONFIDENCE)
    decision = hodges_lehmann(d, 1.0 - alpha / family)
    reaches_level = decision.confidence >= 1.0 - alpha / family
    verdict = decide(shown.estimate, decision.low, decision.high, max_drop)
    note = ""
    if not reaches_level:
        # Six pairs all one way have p = 1/32: below 0.05, not below 0.05 / 2 looks.
        verdict = PairedVerdict.UNKNOWN
        note = f"{len(d)} pairs cannot reach the decision level; more pairs needed"
    return PairedComparison(
        pairs=len(d),
        change=math.expm1(shown.estimate),
        change_low=math.expm1(shown.low),
        change_high=math.expm1(shown.high),
        decision_low=math.expm1(decision.low),
        decision_high=math.expm1(decision.high),
        p_value=test.p_value,
        verdict=verdict,
        max_drop=max_drop,
        note=note,
        reaches_level=reaches_level,
    )


def decide(estimate: float, low: float, high: float, max_drop: float) -> PairedVerdict:
    """The four-way rule of the module docstring, on the log scale."""
    tolerance = -math.log1p(-max_drop)
    if high < 0.0 and estimate <= -tolerance:
        return PairedVerdict.REGRESSED
    if low > 0.0 and estimate >= tolerance:
        return PairedVerdict.IMPROVED
    if -tolerance < low and high < tolerance:
        return PairedVerdict.SAME
    return PairedVerdict.UNKNOWN


def escalation_steps(first: int, most: int) -> list[int]:
    """Pair counts at which to look: first, 2 x first, ... capped at (and ending on) most."""
    if first < 1 or most < first:
        raise ValueError(f"need 1 <= first <= most, got {first} and {most}")
    steps = [first]
    while steps[-1] < most:
        steps.append(min(most, steps[-1] * 2))
    return steps


def _walsh_rank(n: int, tail: float) -> tuple[int, float]:
    """(k, achieved confidence): the interval [W(k), W(M - k + 1)] over sorted Walsh averages."""
    m = n * (n + 1) // 2
    if n <= EXACT_MAX_PAIRS:
        counts = _signed_rank_counts(n)
        total = 2**n
        cumulative = 0
        critical = -1  # largest c with P(W <= c) <= tail
        for value, count in enumerate(counts):
            if (cumulative + count) / total > tail:
                break
            cumulative += count
            critical = value
        if critical < 0:
            return 1, 1.0 - 2.0 / total  # min .. max: P(all of one sign) each side
        return critical + 1, 1.0 - 2.0 * cumulative / total
    mean = m / 2
    sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    critical_value = mean - _normal_quantile(1.0 - tail) * sd - 0.5
    k = max(1, math.floor(critical_value) + 1)
    return min(k, (m + 1) // 2), 1.0 - 2.0 * tail


@cache
def _signed_rank_counts(n: int) -> tuple[int, ...]:
    """counts[w] = number of sign patterns of ranks 1..n whose positive ranks sum to w."""
    counts = [1]
    for rank in range(1, n + 1):
        grown = counts + [0] * rank
        for w in range(len(counts)):
            grown[w + rank] += counts[w]
        counts = grown
    return tuple(counts)


def _mid_ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            ranks[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def _tie_sizes(ranks: Sequence[float]) -> list[int]:
    sizes: dict[float, int] = {}
    for rank in ranks:
        sizes[rank] = sizes.get(rank, 0) + 1
    return [size for size in sizes.values() if size > 1]


def _normal_upper(z: float) -> float:
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def _normal_quantile(p: float) -> float:
    """Inverse standard normal CDF by bisection on erfc (no SciPy; plenty fast here)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"probability must be in (0, 1), got {p}")
    low, high = -40.0, 40.0
    for _ in range(200):
        middle = (low + high) / 2
        if 1.0 - _normal_upper(middle) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2
