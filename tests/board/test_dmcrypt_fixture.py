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
