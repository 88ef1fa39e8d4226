# SPDX-License-Identifier: MIT
"""--hwcrypto-test-drivers and the hwcrypto_test_drivers fixture, as pytest sees them (this
host has no hwcrypto_test module loaded, and no test here loads one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.boards.inner_pytest import inner_pytest_args

pytest_plugins = ["pytester"]

USES_IT = """
def test_uses_test_drivers(hwcrypto_test_drivers):
    pass
"""


@pytest.fixture(autouse=True)
def _module_not_loaded() -> None:
    if Path("/sys/module/hwcrypto_test").exists():  # pragma: no cover - a board by hand
        pytest.skip("hwcrypto_test is loaded here: these tests need a kernel without it")


def test_without_the_module_the_fixture_skips_and_says_how(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_uses=USES_IT)
    result = pytester.runpytest("--hwcrypto", "test_uses.py", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*hwcrypto_test) are not loaded*--hwcrypto-test-drivers*"])


def test_when_asked_for_a_missing_module_fails_with_the_boards_words(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_uses=USES_IT)
    monkeypatch.setenv(
        "HWCRYPTO_BOARD_TEST_DRIVERS", "insmod hwcrypto_test.ko failed: Invalid module format"
    )
    result = pytester.runpytest("--hwcrypto", "--hwcrypto-test-drivers", "test_uses.py")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*--hwcrypto-test-drivers: *(the board says: insmod hwcrypto_test.ko failed: Invalid*"]
    )


def test_on_a_real_kernel_the_header_warns_loudly(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_uses=USES_IT)
    result = pytester.runpytest("--hwcrypto", "--hwcrypto-test-drivers", "test_uses.py")
    result.stdout.fnmatch_lines(["hwcrypto: WARNING: --hwcrypto-test-drivers on a real kernel*"])


def test_the_flag_goes_into_the_board(tmp_path: Path) -> None:
    inner = inner_pytest_args(
        ["--hwcrypto", "--hwcrypto-vm=qemu", "--hwcrypto-test-drivers", "suites"],
        tmp_path,
        tmp_path / "run",
    )
    assert "--hwcrypto-test-drivers" in inner.args and inner.args[-1] == "suites"
