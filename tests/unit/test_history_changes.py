# SPDX-License-Identifier: MIT
"""Change points over real histories (history/changes.py).

The histories are real boots of the UML board (tests/data/history/README.md): A's values,
then B's, each one run of its own kernel, as kernel CI would hold them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.history.changes import MIN_RUNS, ChangeKind, driver_handovers, series_changes
from pytest_hwcrypto.history.model import KernelIdentity, Point, RunIdentity, Series, SeriesKey
from pytest_hwcrypto.history.order import order_points

pytest.importorskip("otava", reason="the history extra (apache-otava) is not installed")

EXTRACT = Path(__file__).resolve().parent.parent / "data" / "history" / "uml_ab_pairs_extract.json"
TRIALS: dict[str, Any] = json.loads(EXTRACT.read_text())


def key(driver: str | None = "aes-generic", board: str = "uml") -> SeriesKey:
    return SeriesKey(board, "afalg", "cbc(aes)", driver, 128, 65536, "encrypt", None)


def history(
    values: list[float],
    first_patch: int = 100,
    served_by: list[str | None] | None = None,
    **key_args: Any,
) -> Series:
    """One run a kernel, kernels 6.1.<first_patch>, 6.1.<first_patch + 1>, ... in order."""
    points = []
    for n, value in enumerate(values):
        kernel = KernelIdentity(release=f"6.1.{first_patch + n}")
        run = RunIdentity(
            f"run{n}", "uml", kernel, "0.1.0", f"2026-12-07T{n // 60:02d}:{n % 60:02d}:00Z"
        )
        points.append(Point(run=run, value=value, served_by=served_by[n] if served_by else None))
    return Series(key(**key_args), points=points)


def real(trial: str, series: str) -> tuple[list[float], list[float]]:
    values = TRIALS[trial]["series"][series]
    return [float(v) for v in values["a"]], [float(v) for v in values["b"]]


def judge(series: Series, max_drop: float = 0.05) -> Any:
    return series_changes(series, order_points(series.points).points, max_drop)


def test_a_real_ten_percent_drop_is_named_at_its_kernel() -> None:
    a, b = real("round5/all10/1", "cbc(aes-generic)")
    verdict = judge(history(a + b))
    assert len(verdict.changes) == 1
    change = verdict.changes[0]
    assert change.kind is ChangeKind.SPEED
    assert change.last_good.release == f"6.1.{100 + len(a) - 1}"
    assert change.first_bad.release == f"6.1.{100 + len(a)}"
    assert change.low < change.change < change.high < 0
    assert -0.25 < change.change < -0.05
    assert change.p is not None and change.p < 0.001
    assert change.failing and not change.newest
    assert 1 <= change.runs_to_see <= len(b)


def test_the_newest_kernel_is_a_change_point_once_enough_runs_show_it() -> None:
    a, b = real("round5/all10/1", "cbc(aes-generic)")
    full = judge(history(a + b)).changes[0]
    seen = full.runs_to_see
    early = judge(history(a + b[: seen - 1])) if seen > 1 else None
    assert early is None or not any(
        c.first_bad.release == f"6.1.{100 + len(a)}" for c in early.changes
    )
    just = judge(history(a + b[:seen])).changes
    assert [c.first_bad.release for c in just] == [f"6.1.{100 + len(a)}"]


def test_a_drop_smaller_than_max_drop_is_reported_not_failed() -> None:
    a, b = real("round5/all10/1", "cbc(aes-generic)")
    change = judge(history(a + b), max_drop=0.5).changes[0]
    assert change.change < 0 and not change.failing


@pytest.mark.parametrize("series", ["cbc(aes-generic)", "cbc(aes-fixed-time)"])
def test_an_unchanged_real_history_has_no_change_point(series: str) -> None:
    a, b = real("round5/aa/2", series)
    assert judge(history(a + b)).changes == ()


def test_the_unchanged_driver_of_a_one_driver_drop_has_no_change_point() -> None:
    a, b = real("round5/one10/0", "cbc(aes-fixed-time)")
    assert judge(history(a + b)).changes == ()


def test_a_change_inside_one_kernels_runs_is_the_hosts_not_the_kernels() -> None:
    a, b = real("round5/all10/1", "cbc(aes-generic)")
    series = history(a + b)
    one_kernel = KernelIdentity(release="6.1.100")
    series.points = [
        Point(RunIdentity(p.run.run_id, "uml", one_kernel, "0.1.0", p.run.started), p.value)
        for p in series.points
    ]
    assert judge(series).changes == ()


def test_a_history_too_short_says_how_many_runs_it_needs() -> None:
    verdict = judge(history([1.0e8, 1.1e8]))
    assert verdict.changes == ()
    assert verdict.needs_more == MIN_RUNS - 2


def test_a_new_winner_under_one_name_is_a_change_of_winner() -> None:
    a, b = real("round5/aa/2", "cbc(aes-generic)")
    values = a + b
    served: list[str | None] = ["aes-generic"] * len(a) + ["aes-fixed-time"] * len(b)
    verdict = judge(history(values, served_by=served, driver=None))
    winners = [c for c in verdict.changes if c.kind is ChangeKind.WINNER]
    assert len(winners) == 1
    assert (winners[0].driver_before, winners[0].driver_after) == ("aes-generic", "aes-fixed-time")
    assert winners[0].first_bad.release == f"6.1.{100 + len(a)}"


def test_a_speed_change_where_the_winner_changed_is_told_as_winner() -> None:
    generic, _ = real("round5/one10/0", "cbc(aes-generic)")
    fixed, _ = real("round5/one10/0", "cbc(aes-fixed-time)")
    served: list[str | None] = ["aes-generic"] * len(generic) + ["aes-fixed-time"] * len(fixed)
    verdict = judge(history(generic + fixed, served_by=served, driver=None))
    # the host's own plateaus in these boots (261 -> 175 -> 115 MB/s as load rose) are
    # change points of speed too; the driver's hand-over is the one change of winner
    winners = [c for c in verdict.changes if c.kind is ChangeKind.WINNER]
    assert [c.first_bad.release for c in winners] == [f"6.1.{100 + len(generic)}"]
    assert (winners[0].driver_before, winners[0].driver_after) == ("aes-generic", "aes-fixed-time")
    assert all(c.driver_before is None for c in verdict.changes if c.kind is ChangeKind.SPEED)


def test_a_driver_series_that_ends_as_another_begins_is_a_change_of_winner() -> None:
    generic, _ = real("round5/one10/0", "cbc(aes-generic)")
    fixed, _ = real("round5/one10/0", "cbc(aes-fixed-time)")
    old = history(generic, first_patch=100, driver="aes-generic")
    new = history(fixed, first_patch=100 + len(generic), driver="aes-fixed-time")
    handovers = driver_handovers({s.key: order_points(s.points).points for s in (old, new)}, 0.05)
    assert len(handovers) == 1
    change = handovers[0]
    assert change.kind is ChangeKind.WINNER
    assert (change.driver_before, change.driver_after) == ("aes-generic", "aes-fixed-time")
    assert change.last_good.release == f"6.1.{100 + len(generic) - 1}"
    assert change.first_bad.release == f"6.1.{100 + len(generic)}"
    assert change.newest is False and change.failing


def test_two_drivers_side_by_side_hand_nothing_over() -> None:
    generic, _ = real("round5/one10/0", "cbc(aes-generic)")
    fixed, _ = real("round5/one10/0", "cbc(aes-fixed-time)")
    both = [history(generic, driver="aes-generic"), history(fixed, driver="aes-fixed-time")]
    assert driver_handovers({s.key: order_points(s.points).points for s in both}, 0.05) == []
