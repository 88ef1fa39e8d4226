# SPDX-License-Identifier: MIT
"""The kernel log's records and the self-test lines about one driver."""

from __future__ import annotations

from pathlib import Path

from pytest_hwcrypto.kernel.kmsg import read_kernel_log, record_text
from pytest_hwcrypto.verdict.inventory_checks import selftest_log_lines

# From the QEMU board (6.1.0-57-amd64), hwcrypto_test loaded with wrong_decrypt on driver a.
LOG = [
    "hwcrypto_test: test-only drivers that can be made wrong or slow on purpose",
    "alg: skcipher: cbc-aes-hwcrypto-test-a decryption test failed (wrong result) on test "
    'vector 0, cfg="in-place (one sglist)"',
    "alg: self-tests for cbc(aes) using cbc-aes-hwcrypto-test-a failed (rc=-22)",
    "alg: self-tests for cbc(aes) using cbc-aes-hwcrypto-test-a failed (rc=-22)",
    "alg: self-tests for cbc(aes) using cbc-aes-hwcrypto-test-ab failed (rc=-22)",
]


def test_record_text_drops_the_prefix_and_continuation_lines() -> None:
    record = b"4,339,5140900,-;alg: self-tests for sha256 failed\n SUBSYSTEM=crypto\n"
    assert record_text(record) == "alg: self-tests for sha256 failed"


def test_selftest_lines_name_exactly_that_driver_once_each() -> None:
    assert selftest_log_lines(LOG, "cbc-aes-hwcrypto-test-a") == LOG[1:3]
    assert selftest_log_lines(LOG, "cbc-aes-aesni") == []


def test_an_unreadable_log_is_empty(tmp_path: Path) -> None:
    assert read_kernel_log(tmp_path / "no-kmsg") == []
