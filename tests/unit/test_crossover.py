# SPDX-License-Identifier: MIT
from __future__ import annotations

import math

from pytest_hwcrypto.verdict.crossover import crossover


def test_typical_offload_engine_loses_small_and_wins_large() -> None:
    # the QEMU board's virtio-crypto numbers (measured there), virtio / generic
    ratios = {16: 0.03 / 0.08, 4096: 6.6 / 9.8, 65536: 39.9 / 11.2}
    assert crossover(ratios, 1.0) == 65536


def test_no_size_passes() -> None:
    assert crossover({16: 0.1, 4096: 0.5, 65536: 0.99}, 1.0) is None


def test_all_sizes_pass_gives_the_smallest() -> None:
    assert crossover({16: 1.2, 4096: 1.5, 65536: 3.0}, 1.0) == 16


def test_dip_in_the_middle_moves_the_crossover_above_the_dip() -> None:
    ratios = {16: 0.5, 64: 1.2, 256: 0.9, 4096: 1.5, 65536: 2.0}
    assert crossover(ratios, 1.0) == 4096


def test_largest_size_failing_means_none_even_if_smaller_pass() -> None:
    assert crossover({16: 2.0, 4096: 2.0, 65536: 0.8}, 1.0) is None


def test_exactly_at_min_ratio_holds() -> None:
    assert crossover({16: 0.5, 4096: 1.0, 65536: 1.0}, 1.0) == 4096


def test_min_ratio_other_than_one() -> None:
    ratios = {16: 1.1, 4096: 1.6, 65536: 2.4}
    assert crossover(ratios, 1.5) == 4096
    assert crossover(ratios, 3.0) is None


def test_order_of_the_mapping_does_not_matter() -> None:
    assert crossover({65536: 2.0, 16: 0.1, 4096: 1.1, 256: 0.7}, 1.0) == 4096


def test_empty_and_nan() -> None:
    assert crossover({}, 1.0) is None
    assert crossover({16: 2.0, 4096: math.nan, 65536: 2.0}, 1.0) == 65536
