# SPDX-License-Identifier: MIT
"""Where volumes cannot be made (no root, no device-mapper: this host), the fixture skips
with a reason that says how to fix it instead of erroring."""

from __future__ import annotations

import pytest

from pytest_hwcrypto.block import tools


def test_the_volume_fixture_skips_with_how_to_fix(pytester: pytest.Pytester) -> None:
    reason = tools.unavailable_reason()
    if reason is None:
        pytest.skip("volumes can be made here: the board tier tests the fixture")
    pytester.makepyfile(
        test_user="def test_volume(hwcrypto_dmcrypt_volume):\n"
        "    hwcrypto_dmcrypt_volume(driver='cbc(aes-generic)', key_bits=128)\n"
    )
    result = pytester.runpytest("--hwcrypto", "-p", "no:cacheprovider", "-rs", "test_user.py")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines([f"*{reason[:40]}*"])
