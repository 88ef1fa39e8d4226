# SPDX-License-Identifier: MIT
"""Reading pytest-benchmark's saved JSON as Results, so it can serve as a baseline.

This reads a document format and judges nothing, so it lives beside the results model
rather than in the verdict layer: `hwcrypto compare` and `--hwcrypto-baseline` both take
either our results JSON or a pytest-benchmark run, and go through results_from_document.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from typing import Any

from pytest_hwcrypto.model.results import Measurement, Results, ResultsError
from pytest_hwcrypto.vocabulary import Op, Source

# pytest-benchmark stores no interval; the boxplot notch (median +- 1.57 IQR / sqrt(n),
# McGill, Tukey & Larsen 1978) is the usual distribution-free ~95 % interval for a median.
_NOTCH_FACTOR = 1.57
# pytest-benchmark measurements carry no path; ours come from the AF_ALG throughput suite.
_PYTEST_BENCHMARK_DEFAULT_SOURCE = Source.AFALG


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
        "op": extra_info.get("op", Op.ENCRYPT),
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


__all__ = ["results_from_document", "results_from_pytest_benchmark"]
