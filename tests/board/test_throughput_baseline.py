"""--hwcrypto-baseline on a real kernel: the throughput suite against an earlier run.

The baselines are a recorded run of this same UML board (tests/data), scaled: twice as fast
as that run is a regression no noise explains, half as fast is clearly not one. The suite
runs in a pytester subprocess with a small budget, on cbc(aes) only.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_hwcrypto.kernel import afalg

pytest_plugins = ["pytester"]

RECORDED_UML_RUN = Path(__file__).resolve().parent.parent / "data" / "board_uml_results_1.json"


def scaled_baseline(directory: Path, factor: float) -> Path:
    """The recorded run with every throughput and sample multiplied by ``factor``."""
    data = json.loads(RECORDED_UML_RUN.read_text())
    for measurement in data["measurements"]:
        for key in ("bytes_per_second", "ci_low", "ci_high"):
            if isinstance(measurement.get(key), (int, float)):
                measurement[key] *= factor
        measurement["samples"] = [value * factor for value in measurement.get("samples", [])]
    path = directory / f"baseline-x{factor:g}.json"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def on_uml(board_kind: str) -> None:
    if board_kind != "uml":
        pytest.skip("the recorded baseline is of the UML board: pytest --hwcrypto-vm=uml")
    available, why = afalg.afalg_available("skcipher")
    if not available:
        pytest.skip(why)


def run_suite(pytester: pytest.Pytester, baseline: Path) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "--hwcrypto",
        "--hwcrypto-suite=throughput",
        "--hwcrypto-budget=6",
        "--hwcrypto-block-sizes=4096,65536",
        f"--hwcrypto-baseline={baseline}",
        "--hwcrypto-json=results.json",
        "-k",
        "no_regression and cbc",
        "-p",
        "no:cacheprovider",
        "-rA",
    )


@pytest.mark.usefixtures("on_uml")
def test_a_run_half_as_fast_as_the_baseline_fails_naming_the_drivers(
    pytester: pytest.Pytester,
) -> None:
    result = run_suite(pytester, scaled_baseline(pytester.path, 2.0))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*no-regression cbc(aes) vs baseline (kernel 6.1.176): * measurements regress "
            "more than 10%*cbc(aes-*"
        ]
    )
    verdicts = json.loads((pytester.path / "results.json").read_text())["verdicts"]
    assert [v["passed"] for v in verdicts if "cbc(aes)" in v["rule"]] == [False]


@pytest.mark.usefixtures("on_uml")
def test_a_run_twice_as_fast_as_the_baseline_passes(pytester: pytest.Pytester) -> None:
    result = run_suite(pytester, scaled_baseline(pytester.path, 0.5))
    result.assert_outcomes(passed=1)
