from __future__ import annotations

import pytest

from pytest_hwcrypto.settings import SETTINGS_BY_NAME, SUITES, SettingError, resolve

TIMEOUT = SETTINGS_BY_NAME["timeout"]
SUITE = SETTINGS_BY_NAME["suite"]
BOARD = SETTINGS_BY_NAME["board"]


def test_names_are_derived_from_one_declaration() -> None:
    assert (TIMEOUT.option, TIMEOUT.env, TIMEOUT.ini) == (
        "--hwcrypto-timeout",
        "HWCRYPTO_TIMEOUT",
        "hwcrypto_timeout",
    )
    assert SETTINGS_BY_NAME["fuzz_iterations"].option == "--hwcrypto-fuzz-iterations"


def test_command_line_beats_everything() -> None:
    got = resolve(
        TIMEOUT,
        cli_value="2",
        environ={"HWCRYPTO_TIMEOUT": "3"},
        ini_value="4",
        profile_settings={"timeout": 5},
    )
    assert (got.value, got.source) == (2.0, "command line")


def test_profile_beats_default_and_lists_become_text() -> None:
    got = resolve(
        SUITE,
        cli_value=None,
        environ={},
        ini_value=None,
        profile_settings={"suite": ["inventory", "throughput"]},
    )
    assert got.value == ("inventory", "throughput")
    assert got.source == "board profile [settings] suite"


def test_default_when_nothing_given() -> None:
    got = resolve(SUITE, cli_value=None, environ={}, ini_value="", profile_settings={})
    assert (got.value, got.source) == (SUITES, "default")


def test_profile_cannot_name_itself() -> None:
    got = resolve(
        BOARD, cli_value=None, environ={}, ini_value=None, profile_settings={"board": "other.toml"}
    )
    assert got.value is None


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("0", "option --hwcrypto-timeout='0': must be greater than 0"),
        ("abc", "option --hwcrypto-timeout='abc': could not convert string to float: 'abc'"),
    ],
)
def test_bad_values_name_their_source(raw: str, message: str) -> None:
    with pytest.raises(SettingError) as error:
        resolve(TIMEOUT, cli_value=raw, environ={}, ini_value=None, profile_settings={})
    assert str(error.value) == message


def test_unknown_vm_kind() -> None:
    with pytest.raises(SettingError, match="unknown virtual board 'kvm'"):
        resolve(
            SETTINGS_BY_NAME["vm"],
            cli_value=None,
            environ={"HWCRYPTO_VM": "kvm"},
            ini_value=None,
            profile_settings={},
        )
