# SPDX-License-Identifier: MIT
"""The hwcrypto summary at the end of a run: once, after the tests, following -q/-v/--color,
and under pytest-xdist once for all workers together."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pytest_hwcrypto.run import NO_TERMINAL_ENV

pytest_plugins = ["pytester"]

RECORDING_TESTS = """
import pytest
from pytest_hwcrypto.model.results import Finding, Measurement

MIB = 1024 * 1024


def measure(driver, driver_class, speeds):
    return [
        Measurement("afalg", "cbc(aes)", driver, 128, size, "encrypt", mib * MIB,
                    driver_class=driver_class)
        for size, mib in speeds.items()
    ]


def test_generic(hwcrypto_results):
    for m in measure("cbc(aes-generic)", "generic", {16: 0.3, 65536: 180.0}):
        hwcrypto_results.add_measurement(m)


def test_engine(hwcrypto_results):
    for m in measure("cbc-aes-engine", "offload", {16: 0.1, 65536: 400.0}):
        hwcrypto_results.add_measurement(m)
    hwcrypto_results.add_finding(Finding(
        "hw-loses-to-sw", "cbc(aes)",
        "cbc(aes) [afalg, 128-bit key, encrypt]: offload cbc-aes-engine is slower at 16 B",
        {"source": "afalg"},
    ))
"""


@pytest.fixture
def recording(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    # No terminal and no COLUMNS (pytest-xdist sets it in its workers): the summary has no
    # width and lines read whole, whatever the host's kernel release makes their length.
    monkeypatch.delenv("COLUMNS", raising=False)
    pytester.makepyfile(test_recording=RECORDING_TESTS)
    return pytester


def test_summary_after_the_tests_with_table_findings_and_json(recording: pytest.Pytester) -> None:
    result = recording.runpytest(
        "--hwcrypto", "test_recording.py", "--hwcrypto-json=out/results.json", "-p", "no:xdist"
    )
    result.assert_outcomes(passed=2)
    out = result.stdout.str()
    assert out.count("hwcrypto summary") == 1
    result.stdout.fnmatch_lines(
        [
            "*= hwcrypto summary =*",
            "kernel *, board host, profile none; 4 measurements, 1 findings, 0 verdicts",
            "afalg cbc(aes) 128-bit encrypt: MiB/s by block size (B)",
            "driver * class * 16 * 64K * HW/SW * cross * verdict",
            " cbc-aes-engine * offload * 0.1 * 400 * 2.22x * 64K * faster from 64K B on",
            " cbc(aes-generic) * generic * 0.3 * 180",
            "findings (1):",
            "hw-loses-to-sw (1): a driver is slower than a path it should beat (at some sizes)",
            "  cbc(aes) [afalg 128 encrypt]: offload cbc-aes-engine is slower at 16 B",
            f"results JSON: {recording.path / 'out' / 'results.json'}",
            "*= 2 passed*",
        ]
    )


def test_very_quiet_is_one_line(recording: pytest.Pytester) -> None:
    result = recording.runpytest("--hwcrypto", "test_recording.py", "-qq", "-p", "no:xdist")
    lines = [line for line in result.outlines if line.startswith("hwcrypto:")]
    assert lines == [
        "hwcrypto: 4 measurements, 1 findings (1 hw-loses-to-sw), 0 of 0 verdicts failed; "
        "results JSON: not written (--hwcrypto-json=PATH keeps every number)"
    ]
    assert "hwcrypto summary" not in result.stdout.str()


def test_colour_follows_the_color_option(recording: pytest.Pytester) -> None:
    plain = recording.runpytest("--hwcrypto", "test_recording.py", "--color=no", "-p", "no:xdist")
    coloured = recording.runpytest(
        "--hwcrypto", "test_recording.py", "--color=yes", "-p", "no:xdist"
    )
    assert "\x1b[" not in plain.stdout.str()
    finding_kind = next(line for line in coloured.outlines if "hw-loses-to-sw (1)" in line)
    assert finding_kind.startswith("\x1b[33m")  # yellow: a finding that asks for attention


LONG_FINDING = (
    "cbc(aes) [afalg, 128-bit key, encrypt]: offload cbc-aes-engine is slower than generic "
    "cbc(aes-generic) at 16, 64, 256, 1024, 4096 B (0.22x at 256 B)"
)


@pytest.fixture
def long_finding(recording: pytest.Pytester) -> pytest.Pytester:
    recording.makepyfile(
        test_long=f"""
from pytest_hwcrypto.model.results import Finding

def test_long(hwcrypto_results):
    hwcrypto_results.add_finding(Finding("hw-loses-to-sw", "cbc(aes)", {LONG_FINDING!r}))
"""
    )
    return recording


def test_width_follows_the_terminal(
    long_finding: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "50")
    result = long_finding.runpytest("--hwcrypto", "test_recording.py", "test_long.py")
    starts = [i for i, line in enumerate(result.outlines) if line.startswith("  cbc(aes) [")]
    start = starts[-1]  # the long one: findings are sorted by their detail
    wrapped = result.outlines[start : start + 4]
    assert all(len(line) <= 50 for line in wrapped)
    assert [line.startswith("      ") for line in wrapped] == [False, True, True, True]
    assert wrapped[-1].endswith("(0.22x at 256 B)")


def test_a_log_through_a_pipe_gets_every_finding_whole_on_one_line(
    long_finding: pytest.Pytester,
) -> None:
    """No terminal, no width: a CI log keeps each finding on one line, nothing cut."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", NO_TERMINAL_ENV)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--hwcrypto", "test_recording.py", "test_long.py"],
        cwd=long_finding.path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    compact = LONG_FINDING.replace("[afalg, 128-bit key, encrypt]", "[afalg 128 encrypt]")
    assert f"  {compact}" in done.stdout.splitlines()
    assert "…" not in done.stdout


def test_under_xdist_one_summary_of_every_worker(recording: pytest.Pytester) -> None:
    result = recording.runpytest_subprocess("--hwcrypto", "test_recording.py", "-n", "2")
    result.assert_outcomes(passed=2)
    out = result.stdout.str()
    assert out.count("hwcrypto summary") == 1
    # both workers' measurements are in the one table
    result.stdout.fnmatch_lines(
        ["*4 measurements, 1 findings*", " cbc-aes-engine *", " cbc(aes-generic) *"]
    )


def test_results_json_carries_the_environment_and_validates(recording: pytest.Pytester) -> None:
    import json

    import jsonschema

    from pytest_hwcrypto.model.results import json_schema

    result = recording.runpytest(
        "--hwcrypto",
        "test_recording.py",
        "--hwcrypto-json=out.json",
        "--hwcrypto-seed=42",
        "-p",
        "no:xdist",
    )
    result.assert_outcomes(passed=2)
    document = json.loads((recording.path / "out.json").read_text())
    jsonschema.Draft202012Validator(json_schema()).validate(document)
    environment = document["environment"]
    assert environment["board"] == {"kind": "host", "profile": None, "profile_name": None}
    assert set(environment["tools"]) == {"cryptsetup", "openssl", "fio", "lxc"}
    assert environment["plugin_version"]
    assert environment["seed"] == {"value": 42, "source": "option --hwcrypto-seed"}
    assert "config_sha256" in document["kernel"]
