# SPDX-License-Identifier: MIT
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
        "third_party",
        "vm_timeout",
    ]
    assert [n for n, r in roles.items() if r is BoardRole.INPUT_FILE] == ["board", "baseline"]
    assert [n for n, r in roles.items() if r is BoardRole.RESULT_FILE] == ["json", "html", "kcidb"]


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


ALGORITHM = SETTINGS_BY_NAME["algorithm"]


def test_algorithms_split_between_names_not_inside_a_template() -> None:
    got = resolve(
        ALGORITHM,
        cli_value=" cbc(aes), authenc(hmac(sha256),cbc(aes)),sha256,cbc(aes)",
        environ={},
        ini_value=None,
        profile_settings={},
    )
    assert got.value == ("cbc(aes)", "authenc(hmac(sha256),cbc(aes))", "sha256")


def test_algorithms_from_a_profile_list() -> None:
    got = resolve(
        ALGORITHM,
        cli_value=None,
        environ={},
        ini_value=None,
        profile_settings={"algorithm": ["xts(aes)", "authenc(hmac(sha1),cbc(aes))"]},
    )
    assert got.value == ("xts(aes)", "authenc(hmac(sha1),cbc(aes))")


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("cbc(aes", "the parentheses do not balance"),
        ("cbc(aes)),sha1", "the parentheses do not balance"),
        ("cbc(aes),,sha1", "an empty name between commas"),
        ("cbc aes", "'cbc aes' is not a kernel algorithm name like cbc(aes) or sha256"),
        ("cbc()", "'cbc()' is not a kernel algorithm name like cbc(aes) or sha256"),
        ("'sha1'", "\"'sha1'\" is not a kernel algorithm name like cbc(aes) or sha256"),
    ],
)
def test_a_mistyped_algorithm_is_refused_naming_the_option(raw: str, says: str) -> None:
    with pytest.raises(SettingError) as error:
        resolve(ALGORITHM, cli_value=raw, environ={}, ini_value=None, profile_settings={})
    assert str(error.value) == f"option --hwcrypto-algorithm={raw!r}: {says}"


def test_every_algorithm_is_chosen_unless_some_are_named() -> None:
    from pytest_hwcrypto.settings import Options

    assert Options().algorithm == ()
    assert Options().chooses("xts(aes)")
    some = Options(algorithm=("cbc(aes)", "hmac(sha256)"))
    assert some.chooses("cbc(aes)") and some.chooses("hmac(sha256)")
    # Exact names: neither the template's argument nor another mode of the same cipher.
    assert not some.chooses("sha256") and not some.chooses("xts(aes)")
    assert not some.chooses("cbc(aes-generic)")
    # A rule about no one algorithm applies whatever is chosen.
    assert some.chooses(None)


def test_the_options_page_has_one_row_per_setting_in_declaration_order() -> None:
    """docs/options.md is where a newcomer looks an option up: one row per setting, in the
    order `settings.Options` declares them, naming its option, environment variable and
    ini key as the declaration derives them -- the table a generator would write."""
    from pathlib import Path

    from pytest_hwcrypto.settings import SETTINGS

    page = (Path(__file__).resolve().parents[2] / "docs" / "options.md").read_text()
    rows: list[tuple[str, str, str]] = []
    for line in page.splitlines():
        if not line.startswith("| `--hwcrypto-"):
            continue  # the header, and the bare --hwcrypto switch, which is no setting
        option, env, ini = (cell.strip(" `") for cell in line.split(" | ")[:3])
        rows.append((option.lstrip("| `").split("=")[0], env, ini))
    assert rows == [(setting.option, setting.env, setting.ini) for setting in SETTINGS]
