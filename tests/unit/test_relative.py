# SPDX-License-Identifier: MIT
"""Regression comparisons relative to a reference driver of the same run (verdict/relative.py)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from pytest_hwcrypto.model.results import ROUNDS_KEY, Measurement
from pytest_hwcrypto.verdict.compare import compare_measurements
from pytest_hwcrypto.verdict.relative import (
    RELATIVE_TO_KEY,
    SOFTWARE_REFERENCE,
    relative_measurements,
    resolve_references,
)
from tests.factories import sampled

GENERIC = "cbc(aes-generic)"
FIXED = "cbc(aes-fixed-time)"
ENGINE = "cbc-aes-engine"


def measured(driver: str, samples: list[float], **kwargs: Any) -> Measurement:
    driver_class = "generic" if driver in (GENERIC, FIXED) else "offload"
    return sampled(driver, samples, driver_class=driver_class, **kwargs)


def one_run(
    rng: random.Random, rates: dict[str, float], machine_spread: float, own_spread: float = 0.01
) -> list[Measurement]:
    """Ten rounds in which the whole machine runs at one speed per round (shared by every
    driver, as on a host whose load comes and goes) and each driver adds a little noise."""
    machine = [rng.lognormvariate(0.0, machine_spread) for _ in range(10)]
    return [
        measured(driver, [rate * m * rng.lognormvariate(0.0, own_spread) for m in machine])
        for driver, rate in rates.items()
    ]


def relative_to(measurements: list[Measurement], reference: str) -> list[Measurement]:
    """One file made relative to a reference resolved from itself."""
    return relative_measurements(measurements, resolve_references(measurements, reference))


def only(comparisons: list[Any], driver: str) -> Any:
    (found,) = [c for c in comparisons if c.driver == driver]
    return found


def test_a_machine_that_got_slower_is_a_regression_only_in_bytes_per_second() -> None:
    rng = random.Random(1)
    baseline = one_run(rng, {ENGINE: 100e6, GENERIC: 50e6}, machine_spread=0.02)
    # the whole board 30 % slower (another board started): both drivers alike
    current = one_run(rng, {ENGINE: 70e6, GENERIC: 35e6}, machine_spread=0.02)
    absolute = only(compare_measurements(baseline, current, 0.10), ENGINE)
    relative = only(compare_measurements(baseline, current, 0.10, GENERIC), ENGINE)
    assert absolute.failed
    assert not relative.failed
    assert relative.ratio == pytest.approx(1.0, abs=0.03)
    assert relative.relative_to == GENERIC
    assert relative.to_json()["relative_to"] == GENERIC


def test_one_driver_slowed_is_found_through_noise_the_machine_shares() -> None:
    rng = random.Random(2)
    caught_absolute = caught_relative = 0
    for _ in range(20):
        baseline = one_run(rng, {ENGINE: 100e6, GENERIC: 50e6}, machine_spread=0.25)
        current = one_run(rng, {ENGINE: 85e6, GENERIC: 50e6}, machine_spread=0.25)
        caught_absolute += only(compare_measurements(baseline, current, 0.10), ENGINE).failed
        relative = only(compare_measurements(baseline, current, 0.10, GENERIC), ENGINE)
        caught_relative += relative.failed
        assert relative.ratio == pytest.approx(0.85, abs=0.03)
    assert caught_relative == 20
    assert caught_absolute < 10  # a 25 % spread per round hides a 15 % drop in bytes/s


def test_samples_are_paired_by_round_not_by_size() -> None:
    # round 2 was slow for everyone: paired, every quotient is exactly 2
    engine = measured(ENGINE, [200.0, 100.0, 200.0])
    generic = measured(GENERIC, [100.0, 50.0, 100.0])
    (relative,) = relative_to([engine, generic], GENERIC)
    assert relative.samples == [2.0, 2.0, 2.0]
    assert relative.bytes_per_second == 2.0
    assert relative.driver == ENGINE
    assert relative.extra[RELATIVE_TO_KEY] == GENERIC
    # bytes/s intervals and CPU figures mean nothing for a quotient
    assert relative.ci_low is None and relative.cpu_seconds is None


def test_the_reference_itself_and_paths_without_it_are_left_out() -> None:
    here = [measured(ENGINE, [2.0] * 5), measured(GENERIC, [1.0] * 5)]
    elsewhere = [measured(ENGINE, [2.0] * 5, block_size=65536)]  # no generic at 64 KiB
    relative = relative_to(here + elsewhere, GENERIC)
    assert [(m.driver, m.block_size) for m in relative] == [(ENGINE, 4096)]
    assert relative_to(here, "no-such-driver") == []


def test_software_means_the_fastest_generic_driver_of_the_path() -> None:
    run = [
        measured(ENGINE, [300.0] * 5),
        measured(FIXED, [100.0] * 5),
        measured(GENERIC, [150.0] * 5),
    ]
    relative = relative_to(run, SOFTWARE_REFERENCE)
    assert {m.driver: m.extra[RELATIVE_TO_KEY] for m in relative} == {
        ENGINE: GENERIC,
        FIXED: GENERIC,
    }
    assert {m.driver: m.bytes_per_second for m in relative} == {ENGINE: 2.0, FIXED: 100 / 150}


def test_a_file_holding_two_runs_pairs_each_with_its_own_reference() -> None:
    # two runs of one plan written one after the other; run 2 on a machine twice as fast
    first = [measured(ENGINE, [2.0] * 5), measured(GENERIC, [1.0] * 5)]
    second = [measured(ENGINE, [8.0] * 7), measured(GENERIC, [4.0] * 7)]
    relative = relative_to(first + second, GENERIC)
    assert [m.samples for m in relative] == [[2.0] * 5, [2.0] * 7]


def test_runs_that_named_their_rounds_are_paired_by_the_name_not_by_position() -> None:
    # A merged file where run b's reference sits nearer to run a's engine than run a's own.
    def of_run(driver: str, samples: list[float], run: str) -> Measurement:
        return measured(driver, samples, extra={ROUNDS_KEY: run})

    merged = [
        of_run(GENERIC, [1.0] * 5, "a"),
        of_run(ENGINE, [8.0] * 5, "b"),
        of_run(GENERIC, [4.0] * 5, "b"),
        of_run(ENGINE, [2.0] * 5, "a"),
    ]
    relative = relative_to(merged, GENERIC)
    assert [m.samples for m in relative] == [[2.0] * 5, [2.0] * 5]


def test_without_samples_the_headline_values_are_divided() -> None:
    engine = Measurement("cryptsetup", "aes-cbc", ENGINE, 256, None, "encrypt", 600.0)
    generic = Measurement("cryptsetup", "aes-cbc", GENERIC, 256, None, "encrypt", 200.0)
    stopped = Measurement("cryptsetup", "aes-cbc", GENERIC, 256, None, "encrypt", 0.0)
    (relative,) = relative_to([engine, generic], GENERIC)
    assert relative.bytes_per_second == 3.0 and relative.samples == []
    (nothing,) = relative_measurements([engine, stopped], resolve_references([generic], GENERIC))
    assert nothing.bytes_per_second == 0.0


def test_software_is_chosen_in_the_baseline_and_kept_for_the_current_run() -> None:
    baseline = [
        measured(ENGINE, [300.0] * 5),
        measured(FIXED, [100.0] * 5),
        measured(GENERIC, [150.0] * 5),
    ]
    # now fixed-time is the faster generic driver; the engine is still 2x generic
    current = [
        measured(ENGINE, [300.0] * 5),
        measured(FIXED, [200.0] * 5),
        measured(GENERIC, [150.0] * 5),
    ]
    comparisons = compare_measurements(baseline, current, 0.10, SOFTWARE_REFERENCE)
    assert {c.driver: (c.relative_to, c.ratio) for c in comparisons} == {
        ENGINE: (GENERIC, 1.0),
        FIXED: (GENERIC, 2.0),
    }
