# SPDX-License-Identifier: MIT
"""units.py: the one wording of block sizes and errno numbers every layer uses."""

from __future__ import annotations

import errno

import pytest

from pytest_hwcrypto.units import errno_name, size_label


@pytest.mark.parametrize(
    ("size", "label"),
    [(16, "16"), (4096, "4K"), (65536, "64K"), (1 << 20, "1M"), (1536, "1536"), (None, "-")],
)
def test_block_sizes_are_spoken_of_in_k_and_m(size: int | None, label: str) -> None:
    assert size_label(size) == label


def test_errno_numbers_are_named_symbolically() -> None:
    assert errno_name(errno.EINVAL) == "EINVAL"
    assert errno_name(None) == "an unknown error"
    assert errno_name(100000) == "errno 100000"
