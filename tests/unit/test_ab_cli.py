# SPDX-License-Identifier: MIT
"""cli/bisect_run.py and cli/ab.py: bisect-run's exit codes for `git bisect run`, and the
knobs a side sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto import cli
from pytest_hwcrypto.ab import commands as ab_commands
from pytest_hwcrypto.ab.document import AbDocument, Side, save_document
from pytest_hwcrypto.ab.series import SeriesVerdict
from pytest_hwcrypto.ab.slice import SliceSpec, parse_setting
from pytest_hwcrypto.cli import bisect_run, exits
from pytest_hwcrypto.verdict.paired import PairedComparison, PairedVerdict

KEY = ("afalg", "cbc(aes)", 128, 65536, "encrypt", "cbc(aes-generic)")


def good_file(tmp_path: Path, kernel_b: str | None) -> Path:
    document = AbDocument(
        board="uml",
        sides={"A": Side("A", "/good/linux"), "B": Side("B", kernel_b)},
        slice=SliceSpec(seconds=1.0, block_sizes=(65536,)),
        seed=1,
        max_drop=0.05,
        alpha=0.05,
        steps=[10],
    )
    document.verdict = {
        "series": [
            {
                "source": "afalg",
                "algorithm": "cbc(aes)",
                "key_bits": 128,
                "block_size": 65536,
                "op": "encrypt",
                "driver": "cbc(aes-generic)",
                "change": -0.2,
                "verdict": "regressed",
            },
            {**dict(zip(("source", "algorithm"), ("afalg", "ecb(aes)"))), "verdict": "same"},
        ]
    }
    path = tmp_path / "good.json"
    save_document(document, path)
    return path


def verdict(word: PairedVerdict, low: float = -0.25, high: float = -0.01) -> SeriesVerdict:
    comparison = PairedComparison(10, -0.1, -0.2, -0.05, low, high, 0.01, word, 0.05)
    return SeriesVerdict(KEY, 100.0, 90.0, comparison)


@pytest.mark.parametrize(
    ("words", "code"),
    [
        ([PairedVerdict.SAME], 0),
        ([PairedVerdict.IMPROVED, PairedVerdict.SAME], 0),
        ([PairedVerdict.REGRESSED, PairedVerdict.UNKNOWN], 1),
        ([PairedVerdict.UNKNOWN, PairedVerdict.SAME], 125),
        ([], 125),
    ],
)
def test_bisect_without_a_known_drop_uses_the_paired_verdict(
    words: list[PairedVerdict], code: int
) -> None:
    assert bisect_run.bisect_word([verdict(w) for w in words], {})[0] == code


@pytest.mark.parametrize(
    ("low", "high", "code"),
    # the good file measured -20 %: the midpoint is about -10.6 %
    [
        (-0.30, -0.15, 1),  # clearly past the midpoint: slow, even without "regressed"
        (-0.08, +0.10, 0),  # clearly short of it: fast, though not "same within 5 %"
        (-0.25, +0.02, 125),  # straddles it: cannot tell
    ],
)
def test_bisect_against_the_midpoint_of_the_known_drop(low: float, high: float, code: int) -> None:
    step = verdict(PairedVerdict.UNKNOWN, low, high)
    assert bisect_run.bisect_word([step], {KEY: -0.20})[0] == code


def test_a_step_that_did_not_measure_a_series_of_good_is_skipped_not_called_fast() -> None:
    # the series measured is clearly short of the midpoint; the other one was not measured
    # at all (its driver missing in this build): the step cannot be sure
    other = (*KEY[:5], "cbc(aes-fixed-time)")
    step = verdict(PairedVerdict.SAME, -0.02, +0.02)
    code, word = bisect_run.bisect_word([step], {KEY: -0.20, other: -0.20})
    assert code == exits.BISECT_SKIP and "not measured" in word


def test_only_the_series_that_regressed_in_good_are_bisected(tmp_path: Path) -> None:
    from pytest_hwcrypto.ab.document import load_document

    focus = ab_commands.focus_series(load_document(good_file(tmp_path, "/tree/linux")))
    assert focus == {KEY: -0.2}


def test_a_failed_build_is_skip(tmp_path: Path) -> None:
    good = good_file(tmp_path, "/tree/linux")
    code = cli.main(["bisect-run", "--good", str(good), "--", "sh", "-c", "exit 2"])
    assert code == exits.BISECT_SKIP


def test_a_usage_error_stops_the_bisection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "none.json"
    assert cli.main(["bisect-run", "--good", str(missing), "--", "true"]) == 128
    assert f"{missing}: cannot read" in capsys.readouterr().err
    monkeypatch.chdir(tmp_path)  # a "tree" where the build wrote no image
    no_image = good_file(tmp_path, None)
    assert cli.main(["bisect-run", "--good", str(no_image), "--", "true"]) == 128
    assert "no kernel image" in capsys.readouterr().err


def test_a_kernel_that_does_not_exist_after_the_build_is_skip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    never = str(tmp_path / "never-built")
    good = good_file(tmp_path, never)
    argv = ["bisect-run", "--good", str(good), "--kernel", never, "--workdir", str(tmp_path / "w")]
    code = cli.main(argv)
    assert code == exits.BISECT_SKIP
    assert "does not exist: skip" in capsys.readouterr().err


def test_knobs_are_sys_or_proc_sys_only() -> None:
    assert parse_setting("/sys/module/m/parameters/p=8") == ("/sys/module/m/parameters/p", "8")
    assert parse_setting("/proc/sys/kernel/x=a=b") == ("/proc/sys/kernel/x", "a=b")
    for bad in ("/etc/passwd=x", "/sys/module/m/parameters/p", "p=1"):
        with pytest.raises(ValueError, match="PATH=VALUE"):
            parse_setting(bad)


def test_cli_rejects_a_bad_knob(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ab", "--kernel", "/bin/sh", "--b-set", "/etc/x=1"]) == 2
    assert "--a-set/--b-set" in capsys.readouterr().err


def test_a_slice_is_the_lean_module_or_a_short_pytest_session(tmp_path: Path) -> None:
    out = tmp_path / "slice.json"
    lean = SliceSpec(seconds=2.0, block_sizes=(4096,), algorithms=("cbc(aes)",))
    command = lean.command("py", out, {"/sys/x": "1"})
    assert command[:3] == ["py", "-m", "pytest_hwcrypto.ab.slice"]
    assert "--set=/sys/x=1" in command
    session = SliceSpec(seconds=20.0, block_sizes=(4096,), suite="dmcrypt", pytest_args=("-x",))
    command = session.command("py", out, {})
    assert command[:3] == ["py", "-m", "pytest"]
    assert "--hwcrypto-suite=dmcrypt" in command
    assert f"--hwcrypto-json={out}" in command
    assert command[-1] == "-x"
    with pytest.raises(ValueError, match="throughput slice only"):
        session.command("py", out, {"/sys/x": "1"})


def test_cli_rejects_an_unknown_suite(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ab", "--kernel", "a", "--kernel", "b", "--suite", "speed"]) == 2
    assert "--suite speed: not a suite" in capsys.readouterr().err


def test_sigterm_ends_the_run_through_its_cleanup_and_the_handler_comes_back() -> None:
    import os
    import signal

    before = signal.getsignal(signal.SIGTERM)
    cleaned = []
    with pytest.raises(SystemExit) as stopped, ab_commands.sigterm_as_exit():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        finally:
            cleaned.append(True)
    assert stopped.value.code == 128 + signal.SIGTERM
    assert cleaned == [True]
    assert signal.getsignal(signal.SIGTERM) == before
