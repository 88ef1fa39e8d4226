# SPDX-License-Identifier: MIT
"""`hwcrypto compare` on results JSON saved from real throughput-suite runs on the boards.

The fixtures come from benchmarks/make_board_fixtures.py:

* board_uml_results_1/2.json -- two runs on fresh UML boards, nothing changed (A/A);
* board_uml_results_slow.json -- a third run with the pytest session in a cgroup limited by
  cpu.max to 85 % of the CPU (a real 15 % slowdown of the measuring process);
* board_qemu_results.json -- the QEMU board: aesni, virtio-crypto (offload) and generic AES.

Expected answers are computed here from the medians with a few lines of independent code,
so the test checks compare's logic against the data rather than against itself.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.cli import main
from pytest_hwcrypto.model.results import Measurement, Results, load_results, save_results

DATA = Path(__file__).resolve().parent.parent / "data"
UML_1 = DATA / "board_uml_results_1.json"
UML_2 = DATA / "board_uml_results_2.json"
UML_SLOW = DATA / "board_uml_results_slow.json"
QEMU = DATA / "board_qemu_results.json"


def compare_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["compare", *args, "--json"])
    return code, json.loads(capsys.readouterr().out)


def compare_lines(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(["compare", *args])
    return code, capsys.readouterr().out.splitlines()


def afalg(results: Results, algorithm: str | None = None) -> list[Measurement]:
    return [
        m
        for m in results.measurements
        if m.source == "afalg" and (algorithm is None or m.algorithm == algorithm)
    ]


def medians(measurements: list[Measurement], driver: str) -> dict[int, float]:
    return {
        m.block_size: statistics.median(m.samples)
        for m in measurements
        if m.driver == driver and m.block_size is not None
    }


def expected_crossover(hw: dict[int, float], sw: dict[int, float]) -> int | None:
    """Smallest size from which HW >= SW at that and every larger size."""
    found = None
    for size in sorted(set(hw) & set(sw), reverse=True):
        if hw[size] < sw[size]:
            break
        found = size
    return found


def write_subset(path: Path, measurements: list[Measurement]) -> str:
    save_results(Results(measurements=measurements), path)
    return str(path)


# --- the fixtures are what they claim to be ----------------------------------------------


def test_uml_fixtures_come_from_the_uml_board() -> None:
    for path in (UML_1, UML_2, UML_SLOW):
        results = load_results(path)
        assert results.kernel["release"] == "6.1.176"
        drivers = {m.driver for m in afalg(results, "cbc(aes)")}
        assert drivers == {"cbc(aes-generic)", "cbc(aes-fixed-time)"}
        sizes = {m.block_size for m in afalg(results, "cbc(aes)")}
        assert len(sizes) >= 4
        kinds = {f.kind for f in results.findings}
        assert "winner-not-fastest" in kinds, f"{path.name}: the slow winner was reported"


def test_qemu_fixture_comes_from_the_qemu_board() -> None:
    results = load_results(QEMU)
    assert results.kernel["release"].endswith("-amd64")
    classes = {m.driver: m.driver_class for m in afalg(results, "cbc(aes)")}
    assert classes == {
        "virtio_crypto_aes_cbc": "offload",
        "cbc-aes-aesni": "cpu-accel",
        "cbc(aes-generic)": "generic",
    }


# --- regression mode ---------------------------------------------------------------------

MAX_DROP = 0.10


def expected_regressions(baseline: Results, current: Results) -> dict[tuple[Any, ...], bool]:
    """Per series: median dropped by more than 10 % and the two 95 % intervals are apart."""
    before = {(m.algorithm, m.driver, m.block_size): m.sample_stats() for m in afalg(baseline)}
    verdicts = {}
    for m in afalg(current):
        key = (m.algorithm, m.driver, m.block_size)
        old, new = before[key], m.sample_stats()
        verdicts[key] = new.median < (1 - MAX_DROP) * old.median and new.ci_high < old.ci_low
    return verdicts


def flagged_series(data: dict[str, Any]) -> dict[tuple[Any, ...], bool]:
    return {
        (c["algorithm"], c["driver"], c["block_size"]): c["failed"] for c in data["comparisons"]
    }


def test_two_runs_of_an_unchanged_board_are_judged_by_the_rule(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A/A: the host was busier in the second run (medians ~10 % lower across the board), so
    a rare series may drop beyond noise; compare flags exactly those, and only a few."""
    code, data = compare_json(capsys, str(UML_1), str(UML_2))
    flagged = flagged_series(data)
    assert flagged == expected_regressions(load_results(UML_1), load_results(UML_2))
    assert sum(flagged.values()) <= 0.05 * len(flagged)
    assert code == (1 if any(flagged.values()) else 0)


def test_a_throttled_measuring_process_is_flagged(capsys: pytest.CaptureFixture[str]) -> None:
    code, data = compare_json(capsys, str(UML_1), str(UML_SLOW))
    assert code == 1
    assert flagged_series(data) == expected_regressions(load_results(UML_1), load_results(UML_SLOW))
    large = [c for c in data["comparisons"] if c["block_size"] >= 4096]
    flagged = [c for c in large if c["failed"]]
    assert len(flagged) >= 0.9 * len(large), "the slowdown is seen at every large block size"
    assert all(c["change"] < -MAX_DROP for c in flagged)
    typical = statistics.median(c["change"] for c in data["comparisons"])
    assert -0.6 < typical < -0.1, f"median change {typical:+.1%} under an 85 % CPU quota"


def test_failing_lines_name_the_algorithm_and_say_regress(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, lines = compare_lines(capsys, str(UML_1), str(UML_SLOW))
    failing = [line for line in lines if "regress" in line]
    assert failing
    for line in failing:
        assert line.split(" ", 1)[0] in {"ecb(aes)", "cbc(aes)", "ctr(aes)", "xts(aes)"}
        assert "(afalg)" in line and "MiB/s" in line


def test_the_baseline_numbers_are_the_medians(capsys: pytest.CaptureFixture[str]) -> None:
    baseline = {
        (m.algorithm, m.driver, m.block_size): statistics.median(m.samples)
        for m in afalg(load_results(UML_1))
    }
    _, data = compare_json(capsys, str(UML_1), str(UML_SLOW))
    for comparison in data["comparisons"]:
        key = (comparison["algorithm"], comparison["driver"], comparison["block_size"])
        assert comparison["baseline"] == pytest.approx(baseline[key])


def test_relative_to_generic_the_throttled_board_is_not_a_regression(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The cpu.max quota slowed every driver of the run alike: in bytes/s that is 54 of 56
    series regressed, relative to cbc(aes-generic) measured in the same rounds it is none,
    and each ratio is the median of that run's per-round quotients."""
    reference = "cbc(aes-generic)"
    code, data = compare_json(capsys, str(UML_1), str(UML_SLOW), "--relative-to", reference)
    assert code == 0
    comparisons = data["comparisons"]
    assert {c["driver"] for c in comparisons} == {"cbc(aes-fixed-time)"}
    assert all(c["relative_to"] == reference and not c["failed"] for c in comparisons)

    def quotients(path: Path) -> dict[int | None, float]:
        cbc = afalg(load_results(path), "cbc(aes)")
        mine = {m.block_size: m.samples for m in cbc if m.driver == "cbc(aes-fixed-time)"}
        theirs = {m.block_size: m.samples for m in cbc if m.driver == reference}
        return {
            size: statistics.median(a / b for a, b in zip(mine[size], theirs[size]))
            for size in mine
        }

    baseline, current = quotients(UML_1), quotients(UML_SLOW)
    assert len(comparisons) == len(baseline)
    for comparison in comparisons:
        assert comparison["baseline"] == pytest.approx(baseline[comparison["block_size"]])
        assert comparison["current"] == pytest.approx(current[comparison["block_size"]])
    _, lines = compare_lines(capsys, str(UML_1), str(UML_SLOW), "--relative-to", reference)
    assert all(f"x {reference}, " in line for line in lines), lines[0]


def test_relative_to_a_driver_the_files_lack_is_one_clear_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["compare", str(UML_1), str(UML_2), "--relative-to", "cbc-aes-nowhere"]) == 2
    error = capsys.readouterr().err
    assert "--relative-to cbc-aes-nowhere" in error and "Traceback" not in error
    assert main(["compare", "--sw", str(UML_1), "--hw", str(UML_2), "--relative-to", "x"]) == 2


# --- software vs hardware mode -----------------------------------------------------------


@pytest.mark.parametrize("hw_driver", ["virtio_crypto_aes_cbc", "cbc-aes-aesni"])
def test_crossover_against_generic_matches_the_medians(
    hw_driver: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cbc = afalg(load_results(QEMU), "cbc(aes)")
    sw = write_subset(tmp_path / "sw.json", [m for m in cbc if m.driver == "cbc(aes-generic)"])
    hw = write_subset(tmp_path / "hw.json", [m for m in cbc if m.driver == hw_driver])
    _, data = compare_json(capsys, "--sw", sw, "--hw", hw)
    expected = expected_crossover(medians(cbc, hw_driver), medians(cbc, "cbc(aes-generic)"))
    assert data["crossover"] == {"cbc(aes)": expected}
    ratios = {c["block_size"]: c["change"] + 1 for c in data["comparisons"]}
    hw_medians, sw_medians = medians(cbc, hw_driver), medians(cbc, "cbc(aes-generic)")
    for size, ratio in ratios.items():
        assert ratio == pytest.approx(hw_medians[size] / sw_medians[size])


def test_offload_crossover_against_aesni_matches_the_medians(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cbc = afalg(load_results(QEMU), "cbc(aes)")
    sw = write_subset(tmp_path / "sw.json", [m for m in cbc if m.driver == "cbc-aes-aesni"])
    hw = write_subset(tmp_path / "hw.json", [m for m in cbc if m.driver == "virtio_crypto_aes_cbc"])
    _, data = compare_json(capsys, "--sw", sw, "--hw", hw)
    expected = expected_crossover(
        medians(cbc, "virtio_crypto_aes_cbc"), medians(cbc, "cbc-aes-aesni")
    )
    assert data["crossover"] == {"cbc(aes)": expected}


def test_the_offload_engine_loses_badly_at_small_blocks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Marvell CESA pattern on the QEMU board: per-request cost dominates at 16 B."""
    cbc = afalg(load_results(QEMU), "cbc(aes)")
    sw = write_subset(tmp_path / "sw.json", [m for m in cbc if m.driver == "cbc(aes-generic)"])
    hw = write_subset(tmp_path / "hw.json", [m for m in cbc if m.driver == "virtio_crypto_aes_cbc"])
    code, lines = compare_lines(capsys, "--sw", sw, "--hw", hw, "--block-sizes", "<=64")
    assert code == 1
    small = [line for line in lines if " 16 B " in line]
    assert small and "fail" in small[0] and "virtio_crypto_aes_cbc" in small[0]


def test_suite_crossover_findings_agree_with_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = load_results(QEMU)
    cbc = afalg(results, "cbc(aes)")
    findings = {
        f.detail.split(": ", 1)[1].split(" ")[1]: f.extra.get("crossover")
        for f in results.findings
        if f.kind == "crossover" and f.algorithm == "cbc(aes)" and "generic" in f.detail
    }
    assert {"virtio_crypto_aes_cbc", "cbc-aes-aesni"} <= set(findings)
    sw_medians = medians(cbc, "cbc(aes-generic)")
    for hw_driver, crossover in findings.items():
        assert crossover == expected_crossover(medians(cbc, hw_driver), sw_medians)
