# SPDX-License-Identifier: MIT
"""Hardware RNG suite: every hw_random source, read through /dev/hwrng, measured and judged.

Each source in rng_available is made current in turn (kernel/hwrng.py; the original is put
back after, and a run killed meanwhile is undone by the next run's sweep), read at the
suite's block sizes within its share of --hwcrypto-budget (bytes/s, source `hwrng`), and
the output read is judged: rng-tools' rngtest (FIPS 140-2: monobit, poker, runs, long run,
continuous run) on up to RNGTEST_BLOCKS blocks, stuck bits and repeated output, and
whether the kernel credits the source's entropy (rng_quality). A profile's
`[[expect]] hwrng = "GLOB"` must match a registered source. Every failure names the source
and the check.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.kernel.hwrng import CurrentSource, HwrngInventory, read_hw_random
from pytest_hwcrypto.measure.hwrng_read import read_source
from pytest_hwcrypto.model.results import Finding, Measurement, Verdict
from pytest_hwcrypto.parsers.rngtest import BLOCK_BYTES, PRIMING_BYTES, parse_rngtest
from pytest_hwcrypto.profile import BoardProfile, HwrngExpectation
from pytest_hwcrypto.report.recorder import ResultsRecorder
from pytest_hwcrypto.run import HwcryptoRun, run_of
from pytest_hwcrypto.units import format_mib_s
from pytest_hwcrypto.verdict import rng_health
from pytest_hwcrypto.vocabulary import Op, Source, Suite

pytestmark = pytest.mark.hwcrypto_rng

BLOCK_SIZES = (64, 4096, 65536)
RNGTEST_BLOCKS = 20000  # the most rngtest blocks judged per source (50 MB)
LEAST_RNGTEST_BLOCKS = 20  # read this many even past the budget: fewer tell nothing
# The share of --hwcrypto-budget this suite spends per source.
BUDGET_SHARE = 0.25
HWRNG = "hwrng"  # the `algorithm` of a hw_random measurement


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    state = run_of(metafunc.config)
    if "hwrng_source" in metafunc.fixturenames:
        names: list[str] = []
        if Suite.RNG in state.options.suite:
            names = list(read_hw_random().available) or ["no-hwrng"]
        metafunc.parametrize("hwrng_source", names, ids=names)
    if "hwrng_expectation" in metafunc.fixturenames:
        expected = list(state.profile.hwrngs) if state.profile else []
        if not expected:
            skip = pytest.mark.skip(reason="the board profile expects no hw_random source")
            metafunc.parametrize("hwrng_expectation", [pytest.param(None, marks=skip)])
            return
        metafunc.parametrize("hwrng_expectation", expected, ids=[e.describe() for e in expected])


@pytest.fixture(scope="module")
def hwrng_sources(hwcrypto_results: ResultsRecorder) -> HwrngInventory:
    state = read_hw_random()
    hwcrypto_results.hwrng = state.to_json()
    return state


def test_expected_hwrng_registered(
    hwrng_expectation: HwrngExpectation,
    hwrng_sources: HwrngInventory,
    hwcrypto_results: ResultsRecorder,
) -> None:
    judged = rng_health.expected_source_judgement(
        hwrng_expectation.pattern, hwrng_expectation.where, hwrng_sources.available
    )
    fixtures.record_and_judge(
        hwcrypto_results,
        Verdict(f"expect {hwrng_expectation.describe()}", judged.passed, judged.message),
        [] if judged.passed else [Finding(judged.kind, HWRNG, judged.message)],
    )


def run_rngtest(data: bytes) -> str:
    done = subprocess.run(["rngtest"], input=data, capture_output=True, check=False, timeout=600)
    return done.stderr.decode(errors="replace")


def test_source(
    hwrng_source: str,
    hwrng_sources: HwrngInventory,
    hwcrypto_run: HwcryptoRun,
    hwcrypto_results: ResultsRecorder,
    hwcrypto_profile: BoardProfile | None,
) -> None:
    """Throughput, rngtest, stuck/repeating output and crediting of one source."""
    if hwrng_source == "no-hwrng":
        pytest.skip("no hw_random source registered (/sys/class/misc/hw_random)")
    seconds = hwcrypto_run.options.budget * BUDGET_SHARE
    switch = CurrentSource(fixtures.run_ledger(hwcrypto_run))
    with switch.switched_to(hwrng_source) as current:
        reading = read_source(
            BLOCK_SIZES,
            seconds,
            keep_bytes=RNGTEST_BLOCKS * BLOCK_BYTES + PRIMING_BYTES,
            least_kept=LEAST_RNGTEST_BLOCKS * BLOCK_BYTES + PRIMING_BYTES,
        )
    speeds = []
    for size in BLOCK_SIZES:
        samples = reading.samples[size]
        hwcrypto_results.add_measurement(
            Measurement(
                Source.HWRNG,
                HWRNG,
                hwrng_source,
                None,
                size,
                Op.GENERATE,
                reading.median(size),
                samples=samples,
                # A driver's short reads are filled by the core (6.1 rng_dev_read loops
                # until the request is met), so short_reads stays 0 where the core does.
                # (bytes/s: the default unit, so no `unit` is written)
                extra={
                    "reads": reading.reads[size],
                    "short_reads": reading.short_reads.get(size, 0),
                },
            )
        )
        speeds.append(f"{size} B: {format_mib_s(reading.median(size))} MiB/s")
    data = bytes(reading.kept)
    judgements = [
        rng_health.output_judgement(hwrng_source, data),
        rng_health.credit_judgement(hwrng_source, current.quality),
    ]
    if shutil.which("rngtest"):
        summary = parse_rngtest(run_rngtest(data))
        judgements.append(rng_health.fips_judgement(hwrng_source, summary))
    failed = [j for j in judgements if not j.passed]
    findings = [Finding(j.kind, HWRNG, j.message, {"source": hwrng_source}) for j in failed]
    message = "; ".join(j.message for j in (failed or judgements))
    if not shutil.which("rngtest"):
        message += "; rngtest not installed (rng-tools5), FIPS 140-2 tests not run"
    fixtures.record_and_judge(
        hwcrypto_results,
        Verdict(
            f"hwrng {hwrng_source}",
            not failed,
            f"{message} ({', '.join(speeds)})",
        ),
        findings,
    )
