# SPDX-License-Identifier: MIT
"""The hwcrypto_dmcrypt_volume fixture on a real kernel: proven driver, torn down even when
the test using it fails, a refused driver a clear failure (pytester sessions inside the
board)."""

from __future__ import annotations

import pytest

from pytest_hwcrypto.block import tools

USER_TEST = """
import pytest

def test_volume(hwcrypto_dmcrypt_volume):
    volume = hwcrypto_dmcrypt_volume(driver="xts(ecb(aes-generic))", key_bits=256,
                                     sector_size=4096, size=4 * 1024 * 1024)
    assert volume.driver == "xts(ecb(aes-generic))" and "refcnt" in volume.evidence
    with open(volume.path, "r+b", buffering=0) as disk:
        disk.write(b"x" * 4096)
    print("VOLUME", volume.name)
    raise AssertionError("this test fails on purpose")
"""


@pytest.fixture
def board(board_kind: str) -> None:
    if board_kind == "host":
        pytest.skip("needs a board: pytest --hwcrypto-vm=uml tests/board")
    reason = tools.unavailable_reason()
    if reason:
        pytest.skip(reason)


@pytest.mark.usefixtures("board")
def test_a_failing_test_still_gets_its_volume_removed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    result = pytester.runpytest_subprocess(
        "--hwcrypto", "-p", "no:cacheprovider", "-s", "test_user.py"
    )
    result.assert_outcomes(failed=1)
    # -s: the print lands on the progress line ("test_user.py VOLUME hwcrypto-...").
    line = next(line for line in result.outlines if "VOLUME " in line)
    name = line.split("VOLUME ", 1)[1].split()[0]
    assert name.startswith("hwcrypto-")
    assert name not in tools.run(["dmsetup", "ls"])
    assert name not in tools.run(["losetup", "--list", "-O", "BACK-FILE"])


BY_ALGORITHM = """
import os, subprocess

def test_winner_of_the_algorithm(hwcrypto_dmcrypt_volume):
    volume = hwcrypto_dmcrypt_volume(algorithm="xts(aes)", sector_size=4096, size=4 << 20)
    assert volume.algorithm == "xts(aes)" and volume.driver in volume.evidence
    print("WINNER", volume.driver)

def test_integrity(hwcrypto_dmcrypt_volume):
    volume = hwcrypto_dmcrypt_volume(algorithm="xts(aes)", integrity=True, size=8 << 20)
    assert "dm-integrity" in volume.evidence and "authenc" in volume.evidence
    with open(volume.path, "r+b", buffering=0) as disk:
        disk.write(os.urandom(1 << 20))
    print("INTEGRITY", volume.name)

def test_integrity_on_a_driver_that_is_not_the_winner(hwcrypto_dmcrypt_volume):
    hwcrypto_dmcrypt_volume(driver="xts(no-such-aes)", algorithm="xts(aes)", integrity=True)
"""


@pytest.mark.usefixtures("board")
def test_by_algorithm_and_with_integrity(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=BY_ALGORITHM)
    result = pytester.runpytest_subprocess(
        "--hwcrypto", "-p", "no:cacheprovider", "-s", "test_user.py"
    )
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        ["*an integrity volume runs the winner of xts(aes)*hwcrypto_prefer*"]
    )
    winner = next(line for line in result.outlines if "WINNER " in line).split("WINNER ")[1]
    assert winner.split()[0].startswith("xts")
    name = next(line for line in result.outlines if "INTEGRITY " in line)
    name = name.split("INTEGRITY ", 1)[1].split()[0]
    listing = tools.run(["dmsetup", "ls"])
    assert name not in listing, "the integrity volume and its _dif device were removed"
