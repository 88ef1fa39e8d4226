# SPDX-License-Identifier: MIT
"""--hwcrypto-cryptodev and the hwcrypto_cryptodev fixture, as pytest sees them (no kernel)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.boards.inner_pytest import inner_pytest_args

pytest_plugins = ["pytester"]

# A conftest that points the plugin at a /dev/crypto that is not there, from collection on
# (pytester runs in this process: the module global is put back when the run ends).
NO_DEVICE = """
import tempfile
from pathlib import Path

from pytest_hwcrypto import fixtures

SAVED = fixtures.DEV_CRYPTO
fixtures.DEV_CRYPTO = Path(tempfile.mkdtemp()) / "crypto"


def pytest_unconfigure(config):
    fixtures.DEV_CRYPTO = SAVED
"""

USES_IT = """
def test_uses_dev_crypto(hwcrypto_cryptodev):
    pass
"""


def test_the_flag_takes_no_value_and_env_and_profile_set_it_too(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_flag="""
        def test_flag(hwcrypto_run):
            assert hwcrypto_run.options.cryptodev is True
            assert hwcrypto_run.sources["cryptodev"] == __import__("os").environ["EXPECT"]
        """
    )
    monkeypatch.setenv("EXPECT", "command line")
    result = pytester.runpytest("--hwcrypto", "--hwcrypto-cryptodev", "test_flag.py")
    result.assert_outcomes(passed=1)
    monkeypatch.setenv("EXPECT", "environment HWCRYPTO_CRYPTODEV")
    monkeypatch.setenv("HWCRYPTO_CRYPTODEV", "1")
    result = pytester.runpytest("--hwcrypto", "test_flag.py")
    result.assert_outcomes(passed=1)
    monkeypatch.delenv("HWCRYPTO_CRYPTODEV")
    pytester.makefile(".toml", board='[board]\nname = "x"\n[settings]\ncryptodev = true\n')
    monkeypatch.setenv("EXPECT", "board.toml [settings] cryptodev")
    result = pytester.runpytest("--hwcrypto", "--hwcrypto-board=board.toml", "test_flag.py")
    result.assert_outcomes(passed=1)


def test_without_dev_crypto_the_fixture_skips_and_says_how(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(NO_DEVICE)
    pytester.makepyfile(test_uses=USES_IT)
    result = pytester.runpytest("--hwcrypto", "test_uses.py", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        ["*crypto is missing: cryptodev-linux is not loaded*--hwcrypto-cryptodev*"]
    )


def test_when_required_a_missing_dev_crypto_fails(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeconftest(NO_DEVICE)
    pytester.makepyfile(test_uses=USES_IT)
    monkeypatch.setenv(
        "HWCRYPTO_BOARD_CRYPTODEV", "insmod cryptodev.ko failed: Invalid module format"
    )
    result = pytester.runpytest("--hwcrypto", "--hwcrypto-cryptodev", "test_uses.py")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*--hwcrypto-cryptodev: *is missing*(the board says: insmod cryptodev.ko failed: Invalid*"]
    )


def test_the_cryptodev_suite_skips_once_per_test_without_dev_crypto(
    pytester: pytest.Pytester,
) -> None:
    """One placeholder per test function, not hundreds of skipped parameters."""
    pytester.makeconftest(NO_DEVICE)
    result = pytester.runpytest("--hwcrypto", "--hwcrypto-suite=cryptodev", "-rs")
    result.assert_outcomes(skipped=5)
    result.stdout.fnmatch_lines(["SKIPPED [[]1[]] *crypto is missing*"])


def test_the_flag_goes_into_the_board_so_the_inner_session_requires_it(tmp_path: Path) -> None:
    inner = inner_pytest_args(
        ["--hwcrypto", "--hwcrypto-vm=qemu", "--hwcrypto-cryptodev", "suites"],
        tmp_path,
        tmp_path / "run",
    )
    assert "--hwcrypto-cryptodev" in inner.args and "--hwcrypto-vm=qemu" not in inner.args
    assert inner.args[-1] == "suites", "a flag does not swallow the next argument"


def test_help_lists_the_switch(pytester: pytest.Pytester) -> None:
    """pytest --help works (a "10%" in a help text once broke argparse's formatting)."""
    result = pytester.runpytest("--help")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*--hwcrypto-cryptodev*", "*(10% or 0.1)*"])
