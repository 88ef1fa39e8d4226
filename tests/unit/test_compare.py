# SPDX-License-Identifier: MIT
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.model.results import (
    Measurement,
    Results,
    ResultsError,
    load_results,
    read_json_object,
)
from pytest_hwcrypto.model.stats import SampleStats
from pytest_hwcrypto.report.benchmark_import import (
    results_from_document,
    results_from_pytest_benchmark,
)
from pytest_hwcrypto.units import format_mib_s
from pytest_hwcrypto.verdict.compare import (
    Comparison,
    any_failed,
    compare,
    compare_hw_sw,
    comparisons_to_json,
    parse_fraction,
    regressed,
    unmatched,
)
from pytest_hwcrypto.verdict.compare_text import (
    format_comparison_lines,
    format_hw_sw_lines,
)

DATA = Path(__file__).parent.parent / "data"
MIB = 1024 * 1024


def point(
    bytes_per_second: float,
    block_size: int | None = 4096,
    driver: str | None = "cbc-aes-aesni",
    algorithm: str = "cbc(aes)",
    source: str = "afalg",
    key_bits: int | None = 128,
    op: str = "encrypt",
) -> Measurement:
    return Measurement(source, algorithm, driver, key_bits, block_size, op, bytes_per_second)


def sampled(samples: list[float], **kwargs: Any) -> Measurement:
    measurement = point(SampleStats.from_samples(samples).median, **kwargs)
    measurement.samples = samples
    return measurement


def noisy(rng: random.Random, centre: float, cov: float, n: int = 10) -> list[float]:
    return [rng.gauss(centre, centre * cov) for _ in range(n)]


# --- decisions ---------------------------------------------------------------------------


def test_point_values_decide_on_the_drop_alone() -> None:
    base = SampleStats.from_point(100.0)
    assert regressed(base, SampleStats.from_point(85.0), 0.10)
    assert not regressed(base, SampleStats.from_point(91.0), 0.10)
    assert not regressed(base, SampleStats.from_point(150.0), 0.10)


def test_two_sample_sets_from_one_distribution_never_fail() -> None:
    # the noise seen on the UML board: 10 samples, CoV 14 % at 4 KiB
    rng = random.Random(2026)
    failures = 0
    for _ in range(300):
        baseline = Results(measurements=[sampled(noisy(rng, 10 * MIB, 0.14))])
        current = Results(measurements=[sampled(noisy(rng, 10 * MIB, 0.14))])
        failures += any_failed(compare(baseline, current, max_drop=0.10))
    assert failures == 0


def test_noise_alone_can_move_the_median_more_than_the_limit() -> None:
    # what the previous test guards against: without the noise check these would flap
    rng = random.Random(2026)
    big_moves = 0
    for _ in range(300):
        baseline = SampleStats.from_samples(noisy(rng, 100.0, 0.14))
        current = SampleStats.from_samples(noisy(rng, 100.0, 0.14))
        big_moves += current.median < 0.9 * baseline.median
    assert big_moves > 10


def test_fifteen_percent_slowdown_with_tight_samples_is_flagged() -> None:
    rng = random.Random(5)
    baseline = Results(measurements=[sampled(noisy(rng, 800 * MIB, 0.02))])
    current = Results(measurements=[sampled(noisy(rng, 680 * MIB, 0.02))])
    (comparison,) = compare(baseline, current)
    assert comparison.failed
    assert comparison.change == pytest.approx(-0.15, abs=0.02)
    assert comparison.ratio_high < 1.0


def test_clear_large_regression_is_detected_even_with_noise() -> None:
    rng = random.Random(11)
    baseline = Results(measurements=[sampled(noisy(rng, 358 * MIB, 0.14))])
    current = Results(measurements=[sampled(noisy(rng, 75 * MIB, 0.14))])
    assert any_failed(compare(baseline, current))


def test_drop_beyond_limit_but_within_noise_passes_and_says_so() -> None:
    baseline = Results(measurements=[sampled([80.0, 100.0, 120.0, 95.0, 105.0, 90.0, 110.0])])
    current = Results(measurements=[sampled([70.0, 85.0, 110.0, 80.0, 90.0, 75.0, 100.0])])
    (comparison,) = compare(baseline, current, max_drop=0.10)
    assert comparison.change < -0.10
    assert not comparison.failed
    (line,) = format_comparison_lines([comparison], 0.10)
    assert "within noise" in line and "regress" not in line


def test_matching_needs_every_key_field() -> None:
    baseline = Results(
        measurements=[
            point(100.0),
            point(100.0, driver="cbc(aes-generic)"),
            point(100.0, key_bits=256),
            point(100.0, op="decrypt"),
            point(100.0, source="dmcrypt"),
            point(100.0, block_size=16),
        ]
    )
    current = Results(measurements=[point(50.0), point(100.0, block_size=65536)])
    (comparison,) = compare(baseline, current)
    assert (comparison.driver, comparison.key_bits, comparison.block_size) == (
        "cbc-aes-aesni",
        128,
        4096,
    )
    assert comparison.failed
    gone, new = unmatched(baseline, current)
    assert len(gone) == 5
    # the key carries the requests in flight (1: one at a time) before the driver
    assert new == [("afalg", "cbc(aes)", 128, 65536, "encrypt", 1, "cbc-aes-aesni")]


def test_algorithm_filter() -> None:
    baseline = Results(measurements=[point(100.0), point(100.0, algorithm="xts(aes)")])
    current = Results(measurements=[point(50.0), point(50.0, algorithm="xts(aes)")])
    comparisons = compare(baseline, current, algorithm="xts(aes)")
    assert [c.algorithm for c in comparisons] == ["xts(aes)"]


def test_repeated_measurements_of_one_key_are_pooled() -> None:
    baseline = Results(measurements=[point(v) for v in (100.0, 101.0, 99.0, 100.5, 99.5, 100.2)])
    current = Results(measurements=[point(v) for v in (80.0, 81.0, 79.0, 80.5, 79.5, 80.2)])
    (comparison,) = compare(baseline, current)
    assert comparison.baseline == pytest.approx(100.1)
    assert comparison.failed


def test_regression_lines_name_the_algorithm_and_say_regress() -> None:
    baseline = load_results(DATA / "compare_baseline.json")
    current = load_results(DATA / "compare_current.json")
    comparisons = compare(baseline, current, max_drop=0.10)
    lines = format_comparison_lines(comparisons, 0.10)
    assert len(lines) == len(comparisons) == 8  # the vanished virtio engine has no match
    failing = [line for line, c in zip(lines, comparisons) if c.failed]
    assert len(failing) == 2
    assert failing[0].startswith("cbc(aes) 128-bit 4096 B encrypt cbc-aes-aesni (afalg): ")
    assert failing[0].endswith(": regress (more than 10% slower; could detect drops ≥ 10 %)")
    assert (
        failing[1] == "aes-cbc 128-bit encrypt (cryptsetup): 358 -> 75.1 MiB/s, -79.0%: "
        "regress (more than 10% slower; could detect drops ≥ 10 %)"
    )
    for line in lines:
        assert ("regress" in line) == (line in failing)
    assert any_failed(comparisons)
    gone, _ = unmatched(baseline, current)
    assert {key[6] for key in gone} == {"virtio_crypto_aes_cbc"}


def test_regression_json_has_exactly_the_contract_keys() -> None:
    baseline = load_results(DATA / "compare_baseline.json")
    current = load_results(DATA / "compare_current.json")
    document = json.loads(json.dumps(comparisons_to_json(compare(baseline, current))))
    assert set(document) == {"comparisons", "crossover"}
    assert document["crossover"] == {}
    for entry in document["comparisons"]:
        assert set(entry) == {
            "algorithm",
            "key_bits",
            "block_size",
            "op",
            "driver",
            "baseline",
            "current",
            "change",
            "failed",
            "detectable_drop",
        }
        assert 0.10 <= entry["detectable_drop"] <= 1.0
    cryptsetup = next(e for e in document["comparisons"] if e["algorithm"] == "aes-cbc")
    assert cryptsetup["baseline"] == pytest.approx(358.2 * MIB)
    assert cryptsetup["change"] == pytest.approx(75.1 / 358.2 - 1)
    assert cryptsetup["failed"] is True and cryptsetup["block_size"] is None


def test_no_failure_means_exit_zero() -> None:
    same = Results(measurements=[point(100.0)])
    assert not any_failed(compare(same, same))
    assert not any_failed([])


# --- software vs hardware ------------------------------------------------------------------


def turris() -> tuple[Results, Results]:
    return load_results(DATA / "compare_sw.json"), load_results(DATA / "compare_hw.json")


def test_hw_sw_ratios_and_crossover() -> None:
    sw, hw = turris()
    result = compare_hw_sw(sw, hw, min_ratio=1.0)
    ratios = {c.block_size: c.ratio for c in result.comparisons}
    assert ratios[16] == pytest.approx(0.94 / 45.0)  # ~48x slower
    assert ratios[16384] == pytest.approx(101.0 / 63.2)  # ~1.6x faster
    assert result.crossover == {"aes-128-cbc": 8192}
    # change is current / baseline - 1 with baseline = software
    assert all(c.change == pytest.approx(c.current / c.baseline - 1) for c in result.comparisons)


def test_hw_sw_fails_only_in_range() -> None:
    sw, hw = turris()
    large = compare_hw_sw(sw, hw, block_sizes=">=8192")
    assert not any_failed(large.comparisons)
    everything = compare_hw_sw(sw, hw)
    assert [c.block_size for c in everything.comparisons if c.failed] == [16, 64, 256, 1024]
    stricter = compare_hw_sw(sw, hw, min_ratio=1.5, block_sizes=">=8192")
    assert [c.block_size for c in stricter.comparisons if c.failed] == [8192]
    assert stricter.crossover == {"aes-128-cbc": 16384}


def test_hw_sw_lines_and_json() -> None:
    sw, hw = turris()
    result = compare_hw_sw(sw, hw, min_ratio=1.0, block_sizes=">=1024")
    lines = format_hw_sw_lines(result)
    assert len(lines) == 7
    assert lines[0] == (
        "aes-128-cbc 128-bit 16 B encrypt (openssl): hw 0.896 MiB/s / sw 42.9 MiB/s = 0.02x: "
        "not checked (outside '>=1024')"
    )
    assert lines[3].endswith("= 0.69x: fail (needs >= 1.0x)")
    assert lines[5].endswith("= 1.60x: ok")
    assert lines[6] == "aes-128-cbc: crossover 8192 B (HW >= 1.0x SW from there on)"
    document = json.loads(json.dumps(comparisons_to_json(result.comparisons, result.crossover)))
    assert document["crossover"] == {"aes-128-cbc": 8192}
    assert [e["failed"] for e in document["comparisons"]] == [
        False,
        False,
        False,
        True,
        False,
        False,
    ]


def test_hw_sw_no_crossover() -> None:
    sw = Results(measurements=[point(100.0, block_size=size, driver=None) for size in (16, 4096)])
    hw = Results(measurements=[point(50.0, block_size=size, driver=None) for size in (16, 4096)])
    result = compare_hw_sw(sw, hw)
    assert result.crossover == {"cbc(aes)": None}
    assert (
        format_hw_sw_lines(result)[-1]
        == "cbc(aes): no crossover (HW < 1.0x SW at the largest block size)"
    )
    assert comparisons_to_json(result.comparisons, result.crossover)["crossover"] == {
        "cbc(aes)": None
    }


def test_hw_sw_shortfall_within_noise_does_not_fail() -> None:
    sw = Results(measurements=[sampled([90.0, 100.0, 110.0, 95.0, 105.0, 100.0], driver=None)])
    hw = Results(measurements=[sampled([85.0, 97.0, 108.0, 92.0, 101.0, 96.0], driver="engine")])
    result = compare_hw_sw(sw, hw)
    (comparison,) = result.comparisons
    assert comparison.ratio < 1.0 and not comparison.failed
    assert format_hw_sw_lines(result)[0].endswith("ok (shortfall within noise)")


def test_hw_sw_several_drivers_the_fastest_stands_for_the_file() -> None:
    sw = Results(
        measurements=[point(10.0, driver="aes-generic"), point(12.0, driver="aes-fixed-time")]
    )
    hw = Results(measurements=[point(8.0, driver="slow-engine"), point(30.0, driver="fast-engine")])
    (comparison,) = compare_hw_sw(sw, hw).comparisons
    assert (comparison.driver, comparison.baseline_driver) == ("fast-engine", "aes-fixed-time")
    assert comparison.ratio == pytest.approx(2.5)
    assert comparisons_to_json([comparison])["comparisons"][0]["driver"] == "fast-engine"


def test_crossover_over_several_series_is_the_largest() -> None:
    def series(key_bits: int, hw_wins_from: int) -> tuple[list[Measurement], list[Measurement]]:
        sizes = (16, 4096, 65536)
        sw = [point(10.0, block_size=s, key_bits=key_bits, driver=None) for s in sizes]
        hw = [
            point(20.0 if s >= hw_wins_from else 5.0, block_size=s, key_bits=key_bits, driver=None)
            for s in sizes
        ]
        return sw, hw

    sw128, hw128 = series(128, 4096)
    sw256, hw256 = series(256, 65536)
    result = compare_hw_sw(Results(measurements=sw128 + sw256), Results(measurements=hw128 + hw256))
    assert result.crossover == {"cbc(aes)": 65536}
    sw_never, hw_never = series(192, 10**9)
    result = compare_hw_sw(
        Results(measurements=sw128 + sw_never), Results(measurements=hw128 + hw_never)
    )
    assert result.crossover == {"cbc(aes)": None}


def test_hw_sw_algorithm_filter_and_bad_range() -> None:
    sw, hw = turris()
    assert compare_hw_sw(sw, hw, algorithm="aes-256-cbc").comparisons == []
    with pytest.raises(ValueError, match="bad block-size range '>=lots'"):
        compare_hw_sw(sw, hw, block_sizes=">=lots")


# --- pytest-benchmark as a baseline ----------------------------------------------------------


def test_pytest_benchmark_with_round_data_gives_samples() -> None:
    document = read_json_object(DATA / "compare_pytest_benchmark_data.json")
    results = results_from_pytest_benchmark(document, "bench.json")
    assert results.kernel == {"release": "6.1.0-27-amd64", "machine": "x86_64"}
    assert len(results.measurements) == 2  # test_unrelated carries no algorithm
    small = results.measurements[0]
    raw = document["benchmarks"][0]
    assert (
        small.source,
        small.algorithm,
        small.driver,
        small.key_bits,
        small.block_size,
        small.op,
    ) == (
        "afalg",
        "cbc(aes)",
        "cbc-aes-aesni",
        128,
        16,
        "encrypt",
    )
    assert small.samples == pytest.approx([16 / t for t in raw["stats"]["data"]])
    assert small.bytes_per_second == pytest.approx(16 / raw["stats"]["median"])
    assert small.extra["benchmark"] == "tests/test_bench.py::test_cbc_aes[16]"


def test_pytest_benchmark_without_data_uses_median_and_notch() -> None:
    document = read_json_object(DATA / "compare_pytest_benchmark.json")
    results = results_from_document(document, "bench.json")
    large = results.measurements[1]
    stats = document["benchmarks"][1]["stats"]
    assert large.samples == []
    assert large.bytes_per_second == pytest.approx(4096 / stats["median"])
    assert large.ci_low is not None and large.ci_high is not None
    assert large.ci_low < large.bytes_per_second <= large.ci_high
    half = 1.57 * stats["iqr"] / stats["rounds"] ** 0.5
    assert large.ci_low == pytest.approx(4096 / min(stats["median"] + half, stats["max"]))
    assert large.ci_high == pytest.approx(4096 / max(stats["median"] - half, stats["min"]))


def test_pytest_benchmark_baseline_compares_with_our_results() -> None:
    baseline = results_from_document(
        read_json_object(DATA / "compare_pytest_benchmark.json"), "b.json"
    )
    current_speed = baseline.measurements[1].bytes_per_second * 0.5
    current = Results(measurements=[point(current_speed, block_size=4096, driver="cbc-aes-aesni")])
    (comparison,) = compare(baseline, current)
    assert comparison.failed and comparison.change == pytest.approx(-0.5)


def test_our_results_document_is_recognised() -> None:
    document = read_json_object(DATA / "compare_sw.json")
    assert len(results_from_document(document, "sw.json").measurements) == 6


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"benchmarks": {}}, "b.json: 'benchmarks' must be a list"),
        (
            {"benchmarks": [{"name": "x", "stats": {}, "extra_info": {}}]},
            "b.json: no benchmark has extra_info",
        ),
        (
            {"benchmarks": [{"stats": {"median": 1e-6}, "extra_info": {"algorithm": "cbc(aes)"}}]},
            "b.json: benchmarks[0]: extra_info needs 'bytes'",
        ),
        (
            {
                "benchmarks": [
                    {"stats": {"median": 0}, "extra_info": {"algorithm": "a", "bytes": 16}}
                ]
            },
            "b.json: benchmarks[0]: stats need a positive 'median' time",
        ),
        (
            {"benchmarks": [{"extra_info": {"algorithm": "a", "bytes": 16}}]},
            "b.json: benchmarks[0]: missing key 'stats'",
        ),
        (
            {
                "benchmarks": [
                    {
                        "stats": {"median": 1e-6},
                        "extra_info": {"algorithm": "a", "bytes": 16, "block_size": "4k"},
                    }
                ]
            },
            "b.json: benchmarks[0]: extra_info: key 'block_size' must be an integer or null",
        ),
    ],
)
def test_pytest_benchmark_errors_name_file_and_place(
    document: dict[str, Any], message: str
) -> None:
    with pytest.raises(ResultsError) as error:
        results_from_pytest_benchmark(document, "b.json")
    assert message in str(error.value)


# --- small helpers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"), [("10%", 0.10), ("2.5 %", 0.025), ("0.1", 0.1), ("0", 0.0)]
)
def test_parse_fraction(text: str, value: float) -> None:
    assert parse_fraction(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["10", "ten", "150%", "-5%", ""])
def test_parse_fraction_refuses_ambiguous_or_bad(text: str) -> None:
    with pytest.raises(ValueError, match="bad fraction"):
        parse_fraction(text)


@pytest.mark.parametrize(
    ("bytes_per_second", "text"),
    [
        (1350 * MIB, "1350"),
        (26.7 * MIB, "26.7"),
        (6.6 * MIB, "6.60"),
        (0.03 * MIB, "0.03"),
        (0.0012 * MIB, "0.0012"),
    ],
)
def test_format_mib_s(bytes_per_second: float, text: str) -> None:
    assert format_mib_s(bytes_per_second) == text


def test_comparison_json_turns_infinite_change_into_null() -> None:
    comparison = Comparison(
        "afalg", "a", None, 16, "encrypt", "d", 0.0, 5.0, float("inf"), False, 0.0, 0.0
    )
    assert comparison.to_json()["change"] is None
