# SPDX-License-Identifier: MIT
"""The dmcrypt suite's integrity check sized from the probe's speed: within the option,
at least the probe, whole MiB, and shortened only when the budget cannot afford more."""

from __future__ import annotations

import pytest

from pytest_hwcrypto.measure.dmcrypt_sizing import (
    MIN_ALLOWANCE,
    PROBE_BYTES,
    allowance,
    size_check,
)
from pytest_hwcrypto.vocabulary import MIB

UPPER = 256 * MIB


def test_a_fast_volume_checks_all_the_option_asks() -> None:
    # 8 MiB in 0.1 s: 80 MiB/s, 10 s afford 800 MiB > 256 MiB.
    sizing = size_check(UPPER, PROBE_BYTES, 0.1, 10.0)
    assert sizing.bytes == UPPER and not sizing.shortened


def test_a_slow_volume_checks_what_its_share_of_the_budget_affords() -> None:
    # 8 MiB in 2 s: 4 MiB/s; the 8 s left of 10 s afford 32 MiB.
    sizing = size_check(UPPER, PROBE_BYTES, 2.0, 10.0)
    assert sizing.bytes == 32 * MIB and sizing.shortened
    assert sizing.rate == pytest.approx(4 * MIB)
    detail = sizing.detail("xts-aes-aesni")
    assert "32 MiB of 256 MiB" in detail and "xts-aes-aesni" in detail
    assert "4.0 MiB/s" in detail and "--hwcrypto-budget" in detail


def test_the_size_is_whole_mib_and_never_below_the_probe() -> None:
    assert size_check(UPPER, PROBE_BYTES, 2.0, 10.3).bytes == 33 * MIB  # 33.2 MiB down
    assert size_check(UPPER, PROBE_BYTES, 60.0, 10.0).bytes == PROBE_BYTES  # over already


def test_the_option_bounds_it_even_when_smaller_than_the_probe_would_afford() -> None:
    assert size_check(16 * MIB, PROBE_BYTES, 0.01, 10.0).bytes == 16 * MIB


def test_the_fixed_cost_is_left_out_of_the_rate_and_paid_again_by_the_second_check() -> None:
    # 2 s of the probe's 4 s were the fresh open: 4 MiB/s for the bytes; 10 s - 4 s - 2 s
    # leave 4 s, 16 MiB (without the split: 2 MiB/s and 12 MiB).
    sizing = size_check(UPPER, PROBE_BYTES, 4.0, 10.0, fixed=2.0)
    assert sizing.rate == pytest.approx(4 * MIB) and sizing.bytes == 16 * MIB
    assert size_check(UPPER, PROBE_BYTES, 4.0, 10.0).bytes == 12 * MIB
    # a fixed cost said to exceed the probe's time is the probe's time
    assert size_check(UPPER, PROBE_BYTES, 4.0, 10.0, fixed=9.0).bytes == UPPER


def test_a_probe_too_quick_to_time_leaves_the_option() -> None:
    sizing = size_check(UPPER, PROBE_BYTES, 0.0, 10.0)
    assert sizing.bytes == UPPER and not sizing.shortened


def test_the_budget_is_shared_between_volumes_with_a_floor() -> None:
    assert allowance(60.0, 6) == pytest.approx(10.0)
    assert allowance(60.0, 100) == MIN_ALLOWANCE
    assert allowance(60.0, 0) == pytest.approx(60.0)
