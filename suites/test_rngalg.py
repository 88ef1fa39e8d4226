# SPDX-License-Identifier: MIT
"""rngalg suite: the kernel's random number generator algorithms through AF_ALG's rng type.

Every rng driver /proc/crypto lists (``stdrng``'s DRBGs ``drbg_nopr_*`` and ``drbg_pr_*``,
``jitterentropy_rng``, ``ansi_cprng``, a hardware PRNG an engine registers) is:

* self-tested: /proc/crypto's word for it, and the kernel log's failure line where there
  is one; a failed or pending self-test fails that driver's test;
* bound by its driver name (else by the algorithm's name, when that gives it), seeded with
  ``seedsize`` bytes (kernel-seeded when 0), read: 64 KiB from each of two sessions, neither
  stuck nor repeating nor equal to the other (verdict/rng_output.py);
* measured: bytes/s per read size (16, 128 -- algif_rng's largest request -- and 4096 B)
  within --hwcrypto-budget, through the same plan and run loop as the throughput suite
  (measure/rng_engine.py), so the results file, reports and rules read them like any
  AF_ALG measurement (op ``generate``, the read size as block size). A hardware PRNG
  registered beside the DRBGs under ``stdrng`` is judged against them by the
  ``hw-loses-to-sw`` and ``winner-not-fastest`` findings the throughput suite records.

A suite of its own rather than more cases in correctness and throughput: an rng has no key,
no known answer (except ansi_cprng's) and no reference to compare with, and its checks are
about its state (seeded, not stuck); what it shares with throughput -- plan, run loop,
findings -- it takes from the same modules.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.fixtures import AfAlg
from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.inventory import InventoryEntry
from pytest_hwcrypto.measure.plan import make_plan
from pytest_hwcrypto.measure.rng_engine import (
    DEFAULT_READ_SIZES,
    RNG_OPS,
    RngEngine,
    open_rng_session,
    rng_targets,
)
from pytest_hwcrypto.measure.runner import ThroughputRun, run_plan
from pytest_hwcrypto.model.results import Finding, inventory_items
from pytest_hwcrypto.report.recorder import ResultsRecorder
from pytest_hwcrypto.run import HwcryptoRun, run_of
from pytest_hwcrypto.units import format_mib_s
from pytest_hwcrypto.verdict.rng_output import output_problem, streams_problem
from pytest_hwcrypto.verdict.rules import hw_loses_to_sw_findings, winner_not_fastest_findings
from pytest_hwcrypto.vocabulary import AlgType, FindingKind

pytestmark = pytest.mark.hwcrypto_rngalg

# Enough output for the period and repeated-block checks to mean something, small enough
# for UML's ~90 us syscalls (512 reads of 128 B).
OUTPUT_BYTES = 65536
SESSIONS_COMPARED = 2


def rng_entries(state: HwcryptoRun) -> list[InventoryEntry]:
    return [
        e
        for e in fixtures.inventory(state)
        if e.type == AlgType.RNG and not e.alg.is_internal and state.options.chooses(e.name)
    ]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "rng" in metafunc.fixturenames:
        entries = rng_entries(run_of(metafunc.config))
        metafunc.parametrize("rng", entries, ids=[f"{e.name}:{e.driver}" for e in entries])


def test_output_not_stuck_or_repeating(
    rng: InventoryEntry,
    hwcrypto_afalg: AfAlg,
    hwcrypto_results: ResultsRecorder,
    record_property: Callable[[str, object], None],
) -> None:
    """The driver passed its self-test, binds, seeds, and two sessions give output that is
    neither stuck, nor periodic, nor the same as each other's."""
    if rng.selftest not in (None, "passed"):
        said = rng.selftest_failure.describe() if rng.selftest_failure else ""
        pytest.fail(
            f"{rng.name}: {rng.driver} self-test is {rng.selftest}, not passed"
            + (f": {said}" if said else ""),
            pytrace=False,
        )
    hwcrypto_afalg.require(AlgType.RNG)
    streams: list[bytes] = []
    how = ""
    for _ in range(SESSIONS_COMPARED):
        try:
            session, how = open_rng_session(
                rng.driver, rng.name, rng.alg.seedsize, hwcrypto_afalg.timeout
            )
        except afalg.AfAlgError as error:
            pytest.fail(f"{rng.driver}: {error}", pytrace=False)
        with session:
            if session.driver != rng.driver:
                pytest.skip(
                    f"{rng.driver}: AF_ALG binds it only {how}, which gives {session.driver}"
                )
            streams.append(session.generate(OUTPUT_BYTES))
    record_property("hwcrypto.rng.bound", how)
    record_property("hwcrypto.rng.seedsize", rng.alg.seedsize)
    problems = [p for p in (output_problem(s) for s in streams) if p]
    problems += [p for p in [streams_problem(streams)] if p]
    if problems:
        hwcrypto_results.add_finding(
            Finding(
                FindingKind.RNG_OUTPUT_REPEATS, rng.name, f"{rng.driver}: " + "; ".join(problems)
            )
        )
        pytest.fail(f"{rng.name}: {rng.driver}: " + "; ".join(problems), pytrace=False)


@pytest.fixture(scope="module")
def rng_throughput(
    pytestconfig: pytest.Config,
    hwcrypto_run: HwcryptoRun,
    hwcrypto_afalg: AfAlg,
    hwcrypto_results: ResultsRecorder,
) -> ThroughputRun:
    """Every rng driver's bytes/s per read size, once for the module."""
    reason = fixtures.concurrent_measuring_reason(pytestconfig, "rngalg")
    if reason is not None:
        pytest.skip(reason)
    hwcrypto_afalg.require(AlgType.RNG)
    entries = rng_entries(hwcrypto_run)
    targets = rng_targets(entries)
    if not targets:
        pytest.skip("no rng driver passed its self-test (modprobe drbg, jitterentropy_rng)")
    plan = make_plan(
        targets,
        DEFAULT_READ_SIZES,
        hwcrypto_run.options.budget,
        ops=RNG_OPS,
        max_samples=hwcrypto_run.options.max_samples,
        sessions=hwcrypto_run.options.sessions,
    )
    engine = RngEngine({e.driver: e.alg.seedsize for e in entries}, hwcrypto_afalg.timeout)
    run = run_plan(plan, engine)
    measurements = run.measurements()
    for measurement in measurements:
        hwcrypto_results.add_measurement(measurement)
    inventory = inventory_items([e.to_json() for e in entries])
    for finding in [
        *winner_not_fastest_findings(measurements, inventory),
        *hw_loses_to_sw_findings(measurements, inventory),
    ]:
        hwcrypto_results.add_finding(finding)
    return run


def test_measured(
    rng: InventoryEntry,
    rng_throughput: ThroughputRun,
    record_property: Callable[[str, object], None],
) -> None:
    """The driver was measured at every read size (bytes/s), or says why not."""
    records = [r for r in rng_throughput.records if r.cell.target.driver == rng.driver]
    failures = [f for f in rng_throughput.failures if f.target.driver == rng.driver]
    if rng.name in rng_throughput.plan.left_out:
        pytest.skip(f"{rng.name}: {rng_throughput.plan.left_out[rng.name]}")
    if not records and not failures:
        pytest.skip(f"{rng.driver}: not measured (its self-test is {rng.selftest})")
    if failures and not records:
        pytest.skip(f"{rng.driver}: {failures[0].message}")
    errors = [f"{r.cell.describe()}: {r.error}" for r in records if r.error]
    if errors:
        pytest.fail("; ".join(errors), pytrace=False)
    for record in records:
        measurement = record.measurement("")
        if measurement is not None:
            record_property(
                f"hwcrypto.rng.{record.cell.block_size}",
                f"{format_mib_s(measurement.bytes_per_second)} MiB/s",
            )
    assert all(record.samples for record in records)
