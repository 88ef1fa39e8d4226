"""The logic behind `hwcrypto compare` (DESIGN.md section 3); pure: Results in, comparisons out.

Two modes:

* **Regression** (`compare BASELINE CURRENT`): measurements are matched on (source,
  algorithm, key_bits, block_size, op, driver).  A match fails when the current median is
  more than `max_drop` below the baseline median *and* the drop is beyond the noise (the
  two medians' confidence intervals do not overlap).  Without samples (bare numbers from
  tool output) the point values decide.  Two runs of an unchanged system therefore do not
  fail, while a clear 15 % slowdown with tight samples does.
* **Software vs hardware** (`compare --sw SW --hw HW`): measurements are matched on
  (source, algorithm, key_bits, block_size, op), the driver being what differs.  A match
  fails when it lies in the block-size range and HW/SW is *clearly* below `min_ratio`
  (the ratio's conservative upper bound is below it).  The crossover per algorithm is
  reported on median ratios over every measured size.

In both modes `Comparison.change` is current / baseline - 1 (so in sw/hw mode, where the
baseline is software and current is hardware, the HW/SW ratio is `change + 1`): one
definition for one JSON key.  Repeated measurements of the same key in one file are pooled
(their samples, or their values, become one sample set).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, TypeVar

from pytest_hwcrypto.model.results import Measurement, Results, ResultsError
from pytest_hwcrypto.model.stats import RatioInterval, SampleStats, ratio_interval
from pytest_hwcrypto.verdict.blocksizes import ALL_BLOCK_SIZES, BlockSizeRange, parse_block_sizes
from pytest_hwcrypto.verdict.crossover import crossover

DEFAULT_MAX_DROP = 0.10
DEFAULT_MIN_RATIO = 1.0
MIB = 1024 * 1024

# pytest-benchmark stores no interval; the boxplot notch (median +- 1.57 IQR / sqrt(n),
# McGill, Tukey & Larsen 1978) is the usual distribution-free ~95 % interval for a median.
_NOTCH_FACTOR = 1.57
# pytest-benchmark measurements carry no path; ours come from the AF_ALG throughput suite.
_PYTEST_BENCHMARK_DEFAULT_SOURCE = "afalg"

# (source, algorithm, key_bits, block_size, op, driver)
MatchKey = tuple[str, str, Optional[int], Optional[int], str, Optional[str]]
# (source, algorithm, key_bits, block_size, op): the sw/hw key, the driver being what differs
PathKey = tuple[str, str, Optional[int], Optional[int], str]


@dataclass(frozen=True)
class Comparison:
    """One matched measurement: baseline and current medians in bytes/s."""

    source: str
    algorithm: str
    key_bits: int | None
    block_size: int | None
    op: str
    driver: str | None
    baseline: float
    current: float
    change: float
    failed: bool
    ratio_low: float
    ratio_high: float
    baseline_driver: str | None = None
    in_range: bool = True

    @property
    def ratio(self) -> float:
        return self.change + 1.0

    def to_json(self) -> dict[str, Any]:
        """Exactly the keys of the DESIGN contract."""
        return {
            "algorithm": self.algorithm,
            "key_bits": self.key_bits,
            "block_size": self.block_size,
            "op": self.op,
            "driver": self.driver,
            "baseline": self.baseline,
            "current": self.current,
            "change": _json_number(self.change),
            "failed": self.failed,
        }


@dataclass(frozen=True)
class HwSwComparison:
    """The outcome of sw/hw mode: per-size comparisons and the crossover per algorithm."""

    comparisons: list[Comparison]
    crossover: dict[str, int | None]
    min_ratio: float
    block_sizes: BlockSizeRange = field(default=ALL_BLOCK_SIZES)


# ---------------------------------------------------------------------------------------
# decisions


def regressed(baseline: SampleStats, current: SampleStats, max_drop: float) -> bool:
    """A drop larger than `max_drop` that is also beyond the noise.

    Beyond the noise means the intervals do not overlap (current's upper bound is below
    baseline's lower bound), which is the ratio interval's upper bound being below 1.
    Point values have zero-width intervals, so for them only the size of the drop counts.
    """
    interval = ratio_interval(current, baseline)
    return interval.ratio < 1.0 - max_drop and interval.clearly_below(1.0)


def parse_fraction(text: str) -> float:
    """'10%' -> 0.10, '0.1' -> 0.10; ValueError for anything else (a bare '10' is ambiguous)."""
    stripped = text.strip()
    try:
        if stripped.endswith("%"):
            value = float(stripped[:-1]) / 100.0
        else:
            value = float(stripped)
            if value > 1.0:
                raise ValueError
    except ValueError:
        raise ValueError(
            f"bad fraction {text!r}: write a percentage like '10%' or a fraction like 0.1"
        ) from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"bad fraction {text!r}: must be between 0% and 100%")
    return value


# ---------------------------------------------------------------------------------------
# regression mode


def compare(
    baseline: Results,
    current: Results,
    max_drop: float = DEFAULT_MAX_DROP,
    algorithm: str | None = None,
) -> list[Comparison]:
    """Match baseline and current measurements and judge each match (regression mode)."""
    return compare_measurements(
        _only_algorithm(baseline.measurements, algorithm),
        _only_algorithm(current.measurements, algorithm),
        max_drop,
    )


def compare_measurements(
    baseline: Sequence[Measurement],
    current: Sequence[Measurement],
    max_drop: float = DEFAULT_MAX_DROP,
) -> list[Comparison]:
    """Regression comparisons in the current measurements' order."""
    baseline_stats = _pooled_by_key(baseline, match_key)
    current_stats = _pooled_by_key(current, match_key)
    comparisons = []
    for key, current_summary in current_stats.items():
        baseline_summary = baseline_stats.get(key)
        if baseline_summary is None:
            continue
        source, algorithm, key_bits, block_size, op, driver = key
        interval = ratio_interval(current_summary, baseline_summary)
        comparisons.append(
            _comparison(
                (source, algorithm, key_bits, block_size, op),
                driver=driver,
                baseline=baseline_summary,
                current=current_summary,
                interval=interval,
                failed=regressed(baseline_summary, current_summary, max_drop),
            )
        )
    return comparisons


def unmatched(
    baseline: Results, current: Results, algorithm: str | None = None
) -> tuple[list[MatchKey], list[MatchKey]]:
    """Keys only in the baseline (gone: a driver vanished?) and only in current (new)."""
    baseline_keys = _pooled_by_key(_only_algorithm(baseline.measurements, algorithm), match_key)
    current_keys = _pooled_by_key(_only_algorithm(current.measurements, algorithm), match_key)
    gone = [key for key in baseline_keys if key not in current_keys]
    new = [key for key in current_keys if key not in baseline_keys]
    return gone, new


def match_key(measurement: Measurement) -> MatchKey:
    """The measured path plus the driver that served it."""
    return (*path_key(measurement), measurement.driver)


def path_key(measurement: Measurement) -> PathKey:
    return (
        measurement.source,
        measurement.algorithm,
        measurement.key_bits,
        measurement.block_size,
        measurement.op,
    )


def format_comparison_lines(
    comparisons: Iterable[Comparison], max_drop: float = DEFAULT_MAX_DROP
) -> list[str]:
    """One line per comparison; failing lines name the algorithm and say 'regress'."""
    return [_regression_line(comparison, max_drop) for comparison in comparisons]


def _regression_line(comparison: Comparison, max_drop: float) -> str:
    numbers = (
        f"{format_mib_s(comparison.baseline)} -> {format_mib_s(comparison.current)} MiB/s, "
        f"{comparison.change:+.1%}"
    )
    if comparison.failed:
        status = f"regress (more than {max_drop:.0%} slower)"
    elif comparison.change < -max_drop:
        status = "ok (drop within noise)"
    else:
        status = "ok"
    return f"{describe_comparison(comparison)}: {numbers}: {status}"


# ---------------------------------------------------------------------------------------
# software vs hardware mode


def compare_hw_sw(
    sw: Results,
    hw: Results,
    min_ratio: float = DEFAULT_MIN_RATIO,
    block_sizes: str | BlockSizeRange | None = None,
    algorithm: str | None = None,
) -> HwSwComparison:
    """HW/SW ratio per matched (source, algorithm, key_bits, block_size, op) and crossovers.

    When a file holds several drivers for one key, the fastest (by median) represents it.
    """
    size_range = (
        block_sizes if isinstance(block_sizes, BlockSizeRange) else parse_block_sizes(block_sizes)
    )
    sw_best = _fastest_driver_by_path(_only_algorithm(sw.measurements, algorithm))
    hw_best = _fastest_driver_by_path(_only_algorithm(hw.measurements, algorithm))
    comparisons = []
    for key, (hw_driver, hw_summary) in hw_best.items():
        if key not in sw_best:
            continue
        sw_driver, sw_summary = sw_best[key]
        interval = ratio_interval(hw_summary, sw_summary)
        in_range = size_range.contains(key[3])
        comparisons.append(
            _comparison(
                key,
                driver=hw_driver,
                baseline=sw_summary,
                current=hw_summary,
                interval=interval,
                failed=in_range and interval.clearly_below(min_ratio),
                baseline_driver=sw_driver,
                in_range=in_range,
            )
        )
    return HwSwComparison(
        comparisons=comparisons,
        crossover=crossover_by_algorithm(comparisons, min_ratio),
        min_ratio=min_ratio,
        block_sizes=size_range,
    )


def crossover_by_algorithm(
    comparisons: Iterable[Comparison], min_ratio: float
) -> dict[str, int | None]:
    """Crossover of each algorithm that has block sizes.

    An algorithm measured under several key sizes, ops or sources has one series each; its
    crossover is the largest of theirs (from there on HW holds in every series), or None
    when any series never gets there.
    """
    series: dict[tuple[str, str, int | None, str], dict[int, float]] = {}
    for comparison in comparisons:
        if comparison.block_size is None:
            continue
        group = (comparison.algorithm, comparison.source, comparison.key_bits, comparison.op)
        series.setdefault(group, {})[comparison.block_size] = comparison.ratio
    result: dict[str, int | None] = {}
    for (algorithm, *_), ratios in series.items():
        size = crossover(ratios, min_ratio)
        if algorithm not in result:
            result[algorithm] = size
            continue
        previous = result[algorithm]
        result[algorithm] = None if previous is None or size is None else max(previous, size)
    return result


def format_hw_sw_lines(result: HwSwComparison) -> list[str]:
    """A line per matched measurement with the HW/SW ratio, then a crossover line per algorithm."""
    lines = [_hw_sw_line(comparison, result) for comparison in result.comparisons]
    for algorithm, size in result.crossover.items():
        if size is None:
            lines.append(
                f"{algorithm}: no crossover "
                f"(HW < {format_min_ratio(result.min_ratio)}x SW at the largest block size)"
            )
        else:
            lines.append(
                f"{algorithm}: crossover {size} B "
                f"(HW >= {format_min_ratio(result.min_ratio)}x SW from there on)"
            )
    return lines


def _hw_sw_line(comparison: Comparison, result: HwSwComparison) -> str:
    label = describe_path(
        comparison.algorithm,
        comparison.key_bits,
        comparison.block_size,
        comparison.op,
        comparison.source,
    )
    hw = f"hw {format_mib_s(comparison.current)} MiB/s{_bracketed(comparison.driver)}"
    sw = f"sw {format_mib_s(comparison.baseline)} MiB/s{_bracketed(comparison.baseline_driver)}"
    ratio = f"{format_ratio(comparison.ratio)}x"
    if not comparison.in_range:
        status = f"not checked (outside {result.block_sizes.spec!r})"
    elif comparison.failed:
        status = f"fail (needs >= {format_min_ratio(result.min_ratio)}x)"
    elif comparison.ratio < result.min_ratio:
        status = "ok (shortfall within noise)"
    else:
        status = "ok"
    return f"{label}: {hw} / {sw} = {ratio}: {status}"


# ---------------------------------------------------------------------------------------
# shared output


def any_failed(comparisons: Iterable[Comparison]) -> bool:
    """The exit-code decision: 1 when this is True."""
    return any(comparison.failed for comparison in comparisons)


def comparisons_to_json(
    comparisons: Iterable[Comparison], crossover: Mapping[str, int | None] | None = None
) -> dict[str, Any]:
    """{"comparisons": [...], "crossover": {algorithm: block_size}} per DESIGN.md."""
    return {
        "comparisons": [comparison.to_json() for comparison in comparisons],
        "crossover": dict(crossover or {}),
    }


def describe_comparison(comparison: Comparison) -> str:
    """'cbc(aes) 128-bit 4096 B encrypt cbc-aes-aesni (afalg)'."""
    return describe_path(
        comparison.algorithm,
        comparison.key_bits,
        comparison.block_size,
        comparison.op,
        comparison.source,
        comparison.driver,
    )


def describe_path(
    algorithm: str,
    key_bits: int | None,
    block_size: int | None,
    op: str,
    source: str,
    driver: str | None = None,
) -> str:
    """'cbc(aes) 128-bit 4096 B encrypt (afalg)', with the driver before the source if given."""
    parts = [algorithm]
    if key_bits is not None:
        parts.append(f"{key_bits}-bit")
    if block_size is not None:
        parts.append(f"{block_size} B")
    parts.append(op)
    if driver is not None:
        parts.append(driver)
    return " ".join(parts) + f" ({source})"


def format_mib_s(bytes_per_second: float) -> str:
    """MiB/s with enough digits to tell small numbers apart: 1350, 26.7, 6.60, 0.0300."""
    mib = bytes_per_second / MIB
    if mib >= 100:
        return f"{mib:.0f}"
    if mib >= 10:
        return f"{mib:.1f}"
    if mib >= 1:
        return f"{mib:.2f}"
    return f"{mib:.3g}"


def format_ratio(ratio: float) -> str:
    """0.45, 1.6, 48: two significant digits are all the noise allows."""
    if math.isinf(ratio):
        return "inf"
    return f"{ratio:.2f}" if ratio < 10 else f"{ratio:.0f}"


def format_min_ratio(ratio: float) -> str:
    """1.0 -> '1.0' (as people write it in profiles), 1.25 -> '1.25'."""
    return f"{ratio:.1f}" if round(ratio, 1) == ratio else f"{ratio:g}"


def _bracketed(driver: str | None) -> str:
    return f" [{driver}]" if driver else ""


def _json_number(value: float) -> float | None:
    return value if math.isfinite(value) else None


# ---------------------------------------------------------------------------------------
# matching helpers

_Key = TypeVar("_Key", bound=Hashable)


def _comparison(
    key: PathKey,
    driver: str | None,
    baseline: SampleStats,
    current: SampleStats,
    interval: RatioInterval,
    failed: bool,
    baseline_driver: str | None = None,
    in_range: bool = True,
) -> Comparison:
    source, algorithm, key_bits, block_size, op = key
    return Comparison(
        source=source,
        algorithm=algorithm,
        key_bits=key_bits,
        block_size=block_size,
        op=op,
        driver=driver,
        baseline=baseline.median,
        current=current.median,
        change=interval.ratio - 1.0,
        failed=failed,
        ratio_low=interval.low,
        ratio_high=interval.high,
        baseline_driver=baseline_driver,
        in_range=in_range,
    )


def _only_algorithm(
    measurements: Sequence[Measurement], algorithm: str | None
) -> list[Measurement]:
    return [m for m in measurements if algorithm is None or m.algorithm == algorithm]


def _pooled_by_key(
    measurements: Iterable[Measurement], key_of: Callable[[Measurement], _Key]
) -> dict[_Key, SampleStats]:
    """Statistics per key, pooling repeated measurements of one key into one sample set."""
    grouped: dict[_Key, list[Measurement]] = {}
    for measurement in measurements:
        grouped.setdefault(key_of(measurement), []).append(measurement)
    return {key: pooled_stats(group) for key, group in grouped.items()}


def pooled_stats(measurements: Sequence[Measurement]) -> SampleStats:
    """One measurement's own statistics, or the pooled samples of several."""
    if len(measurements) == 1:
        return measurements[0].sample_stats()
    pooled: list[float] = []
    for measurement in measurements:
        pooled.extend(measurement.samples or [measurement.bytes_per_second])
    return SampleStats.from_samples(pooled)


def _fastest_driver_by_path(
    measurements: Sequence[Measurement],
) -> dict[PathKey, tuple[str | None, SampleStats]]:
    by_driver = _pooled_by_key(measurements, match_key)
    fastest: dict[PathKey, tuple[str | None, SampleStats]] = {}
    for key, summary in by_driver.items():
        path: PathKey = key[:5]
        driver: str | None = key[5]
        if path not in fastest or summary.median > fastest[path][1].median:
            fastest[path] = (driver, summary)
    return fastest


# ---------------------------------------------------------------------------------------
# other input formats


def results_from_document(data: Mapping[str, Any], source_name: str) -> Results:
    """Our results JSON, or a pytest-benchmark saved run (recognised by its 'benchmarks')."""
    if "schema" not in data and "benchmarks" in data:
        return results_from_pytest_benchmark(data, source_name)
    return Results.from_json(data, source_name)


def results_from_pytest_benchmark(
    data: Mapping[str, Any], source_name: str = "<pytest-benchmark>"
) -> Results:
    """Adapt pytest-benchmark's saved JSON: benchmarks whose extra_info names an algorithm.

    extra_info carries algorithm, bytes (processed per call; or bytes_per_second), and
    optionally driver, key_bits, block_size, op (default encrypt) and source (default
    afalg).  Per-round times ("data", saved with --benchmark-save-data) become samples;
    without them the median time and the notch interval from the IQR are used.
    Benchmarks without an algorithm are not crypto throughput and are skipped.
    """
    benchmarks = data.get("benchmarks")
    if not isinstance(benchmarks, list):
        raise ResultsError(f"{source_name}: 'benchmarks' must be a list")
    measurements = []
    for index, benchmark in enumerate(benchmarks):
        where = f"{source_name}: benchmarks[{index}]"
        if not isinstance(benchmark, Mapping):
            raise ResultsError(f"{where}: expected an object")
        extra_info = benchmark.get("extra_info") or {}
        if isinstance(extra_info, Mapping) and "algorithm" in extra_info:
            measurements.append(_measurement_from_benchmark(benchmark, extra_info, where))
    if not measurements:
        raise ResultsError(
            f"{source_name}: no benchmark has extra_info with an 'algorithm' (and 'bytes'), "
            "so there is no throughput to compare"
        )
    machine = data.get("machine_info") or {}
    kernel = {
        key: machine[key]
        for key in ("release", "machine")
        if isinstance(machine, Mapping) and key in machine
    }
    return Results(kernel=kernel, measurements=measurements)


def _measurement_from_benchmark(
    benchmark: Mapping[str, Any], extra_info: Mapping[str, Any], where: str
) -> Measurement:
    stats = benchmark.get("stats")
    if not isinstance(stats, Mapping):
        raise ResultsError(f"{where}: missing key 'stats'")
    throughput = _benchmark_throughput(stats, extra_info, where)
    known = {
        "source",
        "algorithm",
        "driver",
        "key_bits",
        "block_size",
        "op",
        "bytes",
        "bytes_per_second",
    }
    document = {
        "source": extra_info.get("source", _PYTEST_BENCHMARK_DEFAULT_SOURCE),
        "algorithm": extra_info.get("algorithm"),
        "driver": extra_info.get("driver"),
        "key_bits": extra_info.get("key_bits"),
        "block_size": extra_info.get("block_size"),
        "op": extra_info.get("op", "encrypt"),
        **throughput,
        "benchmark": benchmark.get("fullname") or benchmark.get("name"),
        **{key: value for key, value in extra_info.items() if key not in known},
    }
    # validating through the results model gives the same one-line errors as our own files
    return Measurement.from_json(document, f"{where}: extra_info")


def _benchmark_throughput(
    stats: Mapping[str, Any], extra_info: Mapping[str, Any], where: str
) -> dict[str, Any]:
    if "bytes_per_second" in extra_info:
        return {"bytes_per_second": extra_info["bytes_per_second"]}
    size = _positive(extra_info.get("bytes"))
    if size is None:
        raise ResultsError(
            f"{where}: extra_info needs 'bytes' (bytes processed per call) as a positive number"
        )
    times = stats.get("data")
    if isinstance(times, list) and times and all(_positive(t) is not None for t in times):
        samples = [size / t for t in times]
        return {"bytes_per_second": statistics.median(samples), "samples": samples}
    median = _positive(stats.get("median"))
    if median is None:
        raise ResultsError(f"{where}: stats need a positive 'median' time")
    fastest, slowest = _notch_interval(stats, median)
    return {"bytes_per_second": size / median, "ci_low": size / slowest, "ci_high": size / fastest}


def _notch_interval(stats: Mapping[str, Any], median: float) -> tuple[float, float]:
    """Median time +- 1.57 IQR / sqrt(rounds), clipped to the observed min..max."""
    iqr = _positive(stats.get("iqr"))
    rounds = _positive(stats.get("rounds"))
    half_width = _NOTCH_FACTOR * iqr / math.sqrt(rounds) if iqr and rounds else 0.0
    fastest = max(median - half_width, _positive(stats.get("min")) or median)
    slowest = min(median + half_width, _positive(stats.get("max")) or median)
    return fastest, slowest


def _positive(value: Any) -> float | None:
    """`value` as a float when it is a finite positive number, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value > 0 else None


__all__ = [
    "DEFAULT_MAX_DROP",
    "DEFAULT_MIN_RATIO",
    "Comparison",
    "HwSwComparison",
    "MatchKey",
    "any_failed",
    "compare",
    "compare_hw_sw",
    "compare_measurements",
    "comparisons_to_json",
    "crossover_by_algorithm",
    "format_comparison_lines",
    "format_hw_sw_lines",
    "format_mib_s",
    "format_min_ratio",
    "format_ratio",
    "parse_fraction",
    "pooled_stats",
    "regressed",
    "results_from_document",
    "results_from_pytest_benchmark",
    "unmatched",
]
