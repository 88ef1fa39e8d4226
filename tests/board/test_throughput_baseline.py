# SPDX-License-Identifier: MIT
"""--hwcrypto-baseline on a real kernel: the throughput suite against an earlier run.

The baselines are one run of the suite on this same board, taken once for the module
(`measured_now`) and scaled: ten times as fast as that run is a regression no noise
explains, half as fast is clearly not one. (Twice as fast was not enough: with a 6 s
budget on a loaded host, load 5-7 beside `stress-ng --cpu 1`, one run could only detect
drops of 77 % or more and let a 50 % drop of one driver pass as noise.)
(Absolute speeds differ by a factor of two and more between the machines this runs on, so
a baseline recorded on another machine decides nothing.) The suite runs in a subprocess
with a small budget, on cbc(aes) only.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_hwcrypto.kernel import afalg

pytest_plugins = ["pytester"]

SUITE_ARGS = (
    "--hwcrypto",
    "--hwcrypto-suite=throughput",
    "--hwcrypto-budget=6",
    "--hwcrypto-block-sizes=4096,65536",
    "-p",
    "no:cacheprovider",
)
PYTEST = (sys.executable, "-m", "pytest")
MEASURE_ONLY = "measured_on_every_driver and cbc"


@pytest.fixture(scope="module")
def measured_now(board_kind: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """One run of the suite on this board, taken once for the module: every test scales a
    copy of it (a suite run inside UML costs ~20 s, most of it starting Python and pytest)."""
    _skip_unless_uml(board_kind)
    where = tmp_path_factory.mktemp("measured-now")
    measured = where / "measured-now.json"
    done = subprocess.run(
        [*PYTEST, *SUITE_ARGS, f"--hwcrypto-json={measured}", "-k", MEASURE_ONLY],
        cwd=where,
        capture_output=True,
        text=True,
        check=False,
    )
    assert measured.exists(), done.stdout + done.stderr
    data: dict[str, object] = json.loads(measured.read_text())
    assert data["measurements"], "the baseline run measured nothing"
    return data


# How much faster a baseline that must read as a regression is: beyond any run's noise.
FASTER = 10.0


def scaled_baseline(
    pytester: pytest.Pytester,
    measured: dict[str, object],
    factor: float,
    only_driver: str | None = None,
) -> Path:
    """The run `measured` with every throughput and sample (of ``only_driver``, if given)
    multiplied by ``factor``."""
    data = copy.deepcopy(measured)
    measurements = data["measurements"]
    assert isinstance(measurements, list)
    for measurement in measurements:
        if only_driver is not None and measurement["driver"] != only_driver:
            continue
        for key in ("bytes_per_second", "ci_low", "ci_high"):
            if isinstance(measurement.get(key), (int, float)):
                measurement[key] *= factor
        measurement["samples"] = [value * factor for value in measurement.get("samples", [])]
    path = pytester.path / f"baseline-x{factor:g}.json"
    path.write_text(json.dumps(data))
    return path


def _skip_unless_uml(board_kind: str) -> None:
    if board_kind != "uml":
        pytest.skip("the recorded baseline is of the UML board: pytest --hwcrypto-vm=uml")
    available, why = afalg.afalg_available("skcipher")
    if not available:
        pytest.skip(why)


@pytest.fixture
def on_uml(board_kind: str) -> None:
    _skip_unless_uml(board_kind)


def run_suite(pytester: pytest.Pytester, baseline: Path, *more: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        *SUITE_ARGS,
        *more,
        f"--hwcrypto-baseline={baseline}",
        "--hwcrypto-json=results.json",
        "-k",
        "no_regression and cbc",
        "-rA",
    )


def test_a_run_a_tenth_as_fast_as_the_baseline_fails_naming_the_drivers(
    pytester: pytest.Pytester, measured_now: dict[str, object]
) -> None:
    result = run_suite(pytester, scaled_baseline(pytester, measured_now, FASTER))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*no-regression cbc(aes) vs baseline (kernel 6.1.176): * measurements regress "
            "more than 10%*cbc(aes-*"
        ]
    )
    verdicts = json.loads((pytester.path / "results.json").read_text())["verdicts"]
    assert [v["passed"] for v in verdicts if "cbc(aes)" in v["rule"]] == [False]


def test_a_run_twice_as_fast_as_the_baseline_passes(
    pytester: pytest.Pytester, measured_now: dict[str, object]
) -> None:
    result = run_suite(pytester, scaled_baseline(pytester, measured_now, 0.5))
    result.assert_outcomes(passed=1)


GENERIC = "cbc(aes-generic)"


def test_relative_to_generic_a_board_slower_as_a_whole_passes(
    pytester: pytest.Pytester, measured_now: dict[str, object]
) -> None:
    """Every driver half as fast as in the baseline, the reference too: in bytes/s that is
    the failure above, relative to cbc(aes-generic) of the same rounds it is no change."""
    baseline = scaled_baseline(pytester, measured_now, 2.0)
    result = run_suite(pytester, baseline, f"--hwcrypto-relative-to={GENERIC}")
    result.assert_outcomes(passed=1)
    (verdict,) = json.loads((pytester.path / "results.json").read_text())["verdicts"]
    assert verdict["passed"] and "no regression" in verdict["message"], verdict


def test_relative_to_generic_one_driver_slower_fails_naming_it(
    pytester: pytest.Pytester, measured_now: dict[str, object]
) -> None:
    """Only cbc(aes-fixed-time) was ten times as fast in the baseline: relative to generic
    it alone regressed, and the verdict gives its shares of the reference."""
    baseline = scaled_baseline(pytester, measured_now, FASTER, only_driver="cbc(aes-fixed-time)")
    result = run_suite(pytester, baseline, f"--hwcrypto-relative-to={GENERIC}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [f"*measurements regress more than 10%*cbc(aes-fixed-time) (afalg) *x -> *x {GENERIC}*"]
    )


@pytest.mark.usefixtures("on_uml")
def test_max_samples_turns_a_larger_budget_into_more_samples(pytester: pytest.Pytester) -> None:
    """--hwcrypto-max-samples: with time for ~20 samples of 0.1 s per series, the default
    cap (11) would make each sample longer; a cap of 30 keeps them short and many."""
    measured = pytester.path / "many.json"
    pytester.runpytest_subprocess(
        "--hwcrypto",
        "--hwcrypto-suite=throughput",
        "--hwcrypto-budget=40",
        "--hwcrypto-block-sizes=4096",
        "--hwcrypto-max-samples=30",
        f"--hwcrypto-json={measured}",
        "-p",
        "no:cacheprovider",
        "-k",
        "measured_on_every_driver and cbc",
    )
    counts = [
        len(m["samples"])
        for m in json.loads(measured.read_text())["measurements"]
        if m["source"] == "afalg"
    ]
    assert counts and max(counts) <= 30, counts
    assert min(counts) > 11, counts
