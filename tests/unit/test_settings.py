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


def test_every_setting_is_a_typed_options_field() -> None:
    import dataclasses

    from pytest_hwcrypto.settings import SETTINGS, Options

    assert [s.name for s in SETTINGS] == [f.name for f in dataclasses.fields(Options)]
    assert Options().timeout == 10.0 and Options().vm is None


def test_board_roles_say_what_a_board_run_does_with_each_option() -> None:
    from pytest_hwcrypto.settings import BoardRole

    roles = {name: setting.board_role for name, setting in SETTINGS_BY_NAME.items()}
    assert [n for n, r in roles.items() if r is BoardRole.CHOOSES_BOARD] == [
        "vm",
        "kernel",
        "modules",
        "vm_timeout",
    ]
    assert [n for n, r in roles.items() if r is BoardRole.INPUT_FILE] == ["board", "baseline"]
    assert [n for n, r in roles.items() if r is BoardRole.RESULT_FILE] == ["json", "html"]


def test_max_samples_reaches_the_plan_and_refuses_too_few() -> None:
    from pytest_hwcrypto.measure.plan import MAX_SAMPLES, MIN_SAMPLES

    max_samples = SETTINGS_BY_NAME["max_samples"]
    got = resolve(
        max_samples,
        cli_value=None,
        environ={"HWCRYPTO_MAX_SAMPLES": "50"},
        ini_value=None,
        profile_settings={},
    )
    assert (got.value, got.source) == (50, "environment HWCRYPTO_MAX_SAMPLES")
    default = resolve(max_samples, cli_value=None, environ={}, ini_value=None, profile_settings={})
    assert default.value == MAX_SAMPLES
    with pytest.raises(SettingError) as error:
        resolve(max_samples, cli_value="3", environ={}, ini_value=None, profile_settings={})
    assert str(error.value) == (
        f"option --hwcrypto-max-samples='3': must be {MIN_SAMPLES} or more "
        "(no median interval below that)"
    )


def test_sessions_come_from_the_profile_and_refuse_none_or_too_many() -> None:
    from pytest_hwcrypto.measure.plan import SESSIONS
    from pytest_hwcrypto.vocabulary import MAX_SESSIONS

    sessions = SETTINGS_BY_NAME["sessions"]
    got = resolve(
        sessions, cli_value=None, environ={}, ini_value=None, profile_settings={"sessions": 1}
    )
    assert got.value == 1
    default = resolve(sessions, cli_value=None, environ={}, ini_value=None, profile_settings={})
    assert default.value == SESSIONS
    for bad in ("0", str(MAX_SESSIONS + 1)):
        with pytest.raises(SettingError) as error:
            resolve(sessions, cli_value=bad, environ={}, ini_value=None, profile_settings={})
        assert (
            str(error.value) == f"option --hwcrypto-sessions='{bad}': must be 1 to {MAX_SESSIONS}"
        )
