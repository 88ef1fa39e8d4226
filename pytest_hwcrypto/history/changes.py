# SPDX-License-Identifier: MIT
"""The change points of a history: which kernel made a series faster or slower.

Per series, in kernel order (history/order.py), Apache Otava's change-point detection
(E-Divisive means on sliding windows, merged by t-test; benchmarks/history-detect-
libraries.md says why Otava) names the indices where the level moved. This module turns
them into what a kernel developer acts on: the last good and first bad kernel, the change
as a fraction with a 95 % interval, its p, how many runs of the new level the history held
before the detector saw it, and whether it is a change of speed of one driver or a change
of winner (another driver now serves the name).

Pure apart from calling the library. A change point that falls between two runs of one
kernel is the host's doing, not the kernel's (a plateau of the machine), and is dropped.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import Enum

from pytest_hwcrypto.history.model import KernelIdentity, Point, Series, SeriesKey
from pytest_hwcrypto.history.order import kernel_group, kernel_runs
from pytest_hwcrypto.usage import UsageError

# Otava's defaults: its t-test p for the merge step, and its sliding window in runs.
DEFAULT_MAX_P = 0.001
DEFAULT_WINDOW = 50
# Fewest runs of a series to judge it: three of the old level (as Intel LKP's compare asks
# of a base) and one of the new.
MIN_RUNS = 4
INTERVAL_LEVEL = 0.95


class ChangeKind(str, Enum):
    SPEED = "speed"  # the same driver got faster or slower
    WINNER = "winner"  # another driver serves the name from this kernel on


@dataclass(frozen=True)
class Change:
    """One change point of one series."""

    key: SeriesKey
    kind: ChangeKind
    last_good: KernelIdentity
    first_bad: KernelIdentity
    change: float  # mean after / mean before - 1 (negative: slower)
    low: float  # the change's 95 % interval (Welch)
    high: float
    p: float | None
    runs_to_see: int  # runs from the first bad kernel on the detector needed to name it
    # named only since the newest kernel's runs were added: what a CI gate fails on. With
    # one run a kernel and a change the detector needs 3 runs to see, that is the third
    # kernel after the change, not the first bad one.
    newest: bool
    failing: bool  # a drop beyond --max-drop
    driver_before: str | None = None  # for a change of winner: who served before, after
    driver_after: str | None = None


@dataclass(frozen=True)
class SeriesChanges:
    """What detection says of one series: its changes, or how many runs it still needs."""

    key: SeriesKey
    runs: int
    changes: tuple[Change, ...] = ()
    needs_more: int = 0  # > 0: too short to judge, this many more runs needed


def _library_change_points(
    values: Sequence[float], window: int, max_p: float
) -> list[tuple[int, float]]:
    """Otava's change points of ``values``: (index of the first point after, p)."""
    try:
        from otava.analysis import compute_change_points  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        raise UsageError(
            "hwcrypto history detect needs Apache Otava: pip install 'pytest-hwcrypto[history]'"
        ) from None
    found, _weak = compute_change_points(list(values), window_len=window, max_pvalue=max_p)
    return [(int(point.index), float(point.stats.pvalue)) for point in found]


def _welch(before: Sequence[float], after: Sequence[float]) -> tuple[float, float, float, float]:
    """The change after/before - 1, its interval, and a two-sided p (Welch's t)."""
    from scipy import stats  # type: ignore[import-untyped,unused-ignore]

    mean_b, mean_a = statistics.fmean(before), statistics.fmean(after)
    var_b = statistics.variance(before) if len(before) > 1 else 0.0
    var_a = statistics.variance(after) if len(after) > 1 else 0.0
    se2_b, se2_a = var_b / len(before), var_a / len(after)
    se = math.sqrt(se2_b + se2_a)
    change = mean_a / mean_b - 1.0
    if se == 0.0:
        return change, change, change, 0.0 if mean_a != mean_b else 1.0
    # Welch-Satterthwaite degrees of freedom; a side of one run adds none of its own
    terms = [t for t, n in ((se2_b, len(before)), (se2_a, len(after))) if n > 1]
    denominator = sum(
        t * t / (n - 1) for t, n in ((se2_b, len(before)), (se2_a, len(after))) if n > 1
    )
    dof = (sum(terms) ** 2 / denominator) if denominator > 0 else 1.0
    quantile = float(stats.t.ppf(0.5 + INTERVAL_LEVEL / 2, dof))
    p = float(2 * stats.t.sf(abs(mean_a - mean_b) / se, dof))
    return (
        change,
        (mean_a - mean_b - quantile * se) / mean_b,
        (mean_a - mean_b + quantile * se) / mean_b,
        p,
    )


def _served_by(points: Sequence[Point], fallback: str | None) -> str | None:
    named = [p.served_by for p in points if p.served_by]
    return statistics.mode(named) if named else fallback


def series_changes(
    series: Series,
    ordered: Sequence[Point],
    max_drop: float,
    window: int = DEFAULT_WINDOW,
    max_p: float = DEFAULT_MAX_P,
) -> SeriesChanges:
    """The change points of one series whose points ``ordered`` are in kernel order."""
    if len(ordered) < MIN_RUNS:
        return SeriesChanges(series.key, len(ordered), needs_more=MIN_RUNS - len(ordered))
    values = [p.value for p in ordered]
    groups = kernel_runs(ordered)
    starts: dict[int, int] = {}  # index of a kernel's first run -> its group
    position = 0
    for number, group in enumerate(groups):
        starts[position] = number
        position += len(group)
    found = [
        (i, p) for i, p in _library_change_points(values, window, max_p) if i in starts and i > 0
    ]
    cuts = [0] + [i for i, _ in found] + [len(values)]
    changes = []
    for number, (index, p) in enumerate(found):
        before, after = values[cuts[number] : index], values[index : cuts[number + 2]]
        change, low, high, _ = _welch(before, after)
        kernel_number = starts[index]
        good, bad = groups[kernel_number - 1], groups[kernel_number]
        driver_before = _served_by(good, series.key.driver)
        driver_after = _served_by(bad, series.key.driver)
        winner = driver_before != driver_after
        runs_to_see = _runs_to_see(values, index, cuts[number], window, max_p)
        changes.append(
            Change(
                key=series.key,
                kind=ChangeKind.WINNER if winner else ChangeKind.SPEED,
                last_good=good[0].run.kernel,
                first_bad=bad[0].run.kernel,
                change=change,
                low=low,
                high=high,
                p=p,
                runs_to_see=runs_to_see,
                # a change more than a window back was in reach of earlier runs: not new
                newest=index + runs_to_see > len(values) - len(groups[-1])
                and len(values) - index <= window,
                failing=change < -max_drop,
                driver_before=driver_before if winner else None,
                driver_after=driver_after if winner else None,
            )
        )
    changes.extend(_served_by_changes(series, groups, {c.first_bad for c in changes}, max_drop))
    changes.sort(
        key=lambda c: [kernel_group(g[0].run.kernel) for g in groups].index(
            kernel_group(c.first_bad)
        )
    )
    return SeriesChanges(series.key, len(ordered), tuple(changes))


def _runs_to_see(
    values: Sequence[float], index: int, previous_cut: int, window: int, max_p: float
) -> int:
    """How many runs from ``index`` on the detector needed to report the change there: the
    history replayed as it grew, one run at a time (from the previous change point on, or
    one window back: the detector looks no further). Replayed up to one window past the
    change, so a long history costs one window's replays a change, not its length; a
    change the replays never name counts every run after it."""
    start = max(previous_cut, index - window)
    for seen in range(1, min(len(values) - index, window) + 1):
        window_values = values[start : index + seen]
        if any(i + start == index for i, _ in _library_change_points(window_values, window, max_p)):
            return seen
    return len(values) - index


def _served_by_changes(
    series: Series, groups: Sequence[Sequence[Point]], already: set[KernelIdentity], max_drop: float
) -> list[Change]:
    """Changes of winner the detector did not name: the serving driver of a name-only
    series (Point.served_by) differs between two consecutive kernels."""
    out = []
    for number in range(1, len(groups)):
        good, bad = groups[number - 1], groups[number]
        before, after = _served_by(good, None), _served_by(bad, None)
        if before is None or after is None or before == after or bad[0].run.kernel in already:
            continue
        old = [p.value for p in good]
        new = [p.value for p in bad]
        change, low, high, p = (
            _welch(old, new) if len(old) + len(new) > 2 else (new[0] / old[0] - 1, 0.0, 0.0, None)
        )
        if p is None:
            low = high = change
        out.append(
            Change(
                key=series.key,
                kind=ChangeKind.WINNER,
                last_good=good[0].run.kernel,
                first_bad=bad[0].run.kernel,
                change=change,
                low=low,
                high=high,
                p=p,
                runs_to_see=1,
                newest=number == len(groups) - 1,
                failing=change < -max_drop,
                driver_before=before,
                driver_after=after,
            )
        )
    return out


def driver_handovers(ordered: dict[SeriesKey, Sequence[Point]], max_drop: float) -> list[Change]:
    """Changes of winner between series keyed by driver: one driver's series ends at a
    kernel and another driver's series of the same name begins at the next kernel.

    ``ordered`` holds each series' points in one kernel order shared by all of them.
    """
    by_name: dict[SeriesKey, list[SeriesKey]] = {}
    for key in ordered:
        if key.driver is not None and ordered[key]:
            by_name.setdefault(replace(key, driver=None), []).append(key)
    out = []
    for keys in by_name.values():
        if len(keys) < 2:
            continue
        kernels: list[tuple[str, str, str]] = []
        for key in keys:
            for point in ordered[key]:
                if kernel_group(point.run.kernel) not in kernels:
                    kernels.append(kernel_group(point.run.kernel))
        rank = {kernel: index for index, kernel in enumerate(kernels)}
        ends = {key: rank[kernel_group(ordered[key][-1].run.kernel)] for key in keys}
        begins = {key: rank[kernel_group(ordered[key][0].run.kernel)] for key in keys}
        for old in keys:
            for new in keys:
                if old == new or ends[old] == len(kernels) - 1 or begins[new] != ends[old] + 1:
                    continue
                before = [p.value for p in ordered[old]]
                after = [p.value for p in ordered[new]]
                if len(before) + len(after) > 2 and len(before) > 1:
                    change, low, high, p = _welch(before, after)
                    p_value: float | None = p
                else:
                    change = after[0] / before[-1] - 1
                    low = high = change
                    p_value = None
                out.append(
                    Change(
                        key=new,
                        kind=ChangeKind.WINNER,
                        last_good=ordered[old][-1].run.kernel,
                        first_bad=ordered[new][0].run.kernel,
                        change=change,
                        low=low,
                        high=high,
                        p=p_value,
                        runs_to_see=1,
                        newest=begins[new] == len(kernels) - 1,
                        failing=change < -max_drop,
                        driver_before=old.driver,
                        driver_after=new.driver,
                    )
                )
    return out
