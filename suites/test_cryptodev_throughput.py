# SPDX-License-Identifier: MIT
"""/dev/crypto suite, throughput: every driver cryptodev can be steered to, per block size.

Every algorithm cryptodev offers that the kernel serves with two or more drivers (the AES
modes, the SHA-1/SHA-2 digests) is measured on each driver through /dev/crypto within
--hwcrypto-budget: measure/runner.py with the cryptodev engine, which makes each driver the
winner while its session opens and proves it by CIOCGSESSINFO. Measurements carry source
`cryptodev` and that evidence; the findings that need no rule (winner-not-fastest,
hw-loses-to-sw, crossover) are recorded beside them; each algorithm's test records a verdict
with the MiB/s per driver and block size. Not measured under pytest-xdist (the workers
would compete for the CPUs being measured).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.kernel.inventory import build_inventory
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.measure.cryptodev_engine import reachable_by_cryptodev
from pytest_hwcrypto.measure.load import BackgroundLoad
from pytest_hwcrypto.measure.plan import make_plan
from pytest_hwcrypto.measure.runner import ThroughputRun, run_plan
from pytest_hwcrypto.measure.targets import algorithms, discover_targets
from pytest_hwcrypto.model.results import Verdict, inventory_items
from pytest_hwcrypto.report.recorder import ResultsRecorder
from pytest_hwcrypto.run import HwcryptoRun, run_of
from pytest_hwcrypto.units import format_mib_s
from pytest_hwcrypto.verdict.rules import (
    crossover_findings,
    hw_loses_to_sw_findings,
    needs_concurrency_findings,
    winner_not_fastest_findings,
)
from pytest_hwcrypto.vocabulary import Suite

pytestmark = pytest.mark.hwcrypto_cryptodev


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "algorithm" not in metafunc.fixturenames:
        return
    state = run_of(metafunc.config)
    names: list[str] = []
    if Suite.CRYPTODEV in state.options.suite:
        if fixtures.cryptodev_unavailable_reason() is not None:
            names = ["no-dev-crypto"]  # one test, which skips with the reason
        else:
            targets = discover_targets(fixtures.inventory(state))
            chosen = [t for t in targets if state.options.chooses(t.algorithm)]
            names = algorithms(t for t in chosen if reachable_by_cryptodev(t)) or ["no-choice"]
    metafunc.parametrize("algorithm", names, ids=names)


@pytest.fixture(scope="module")
def cryptodev_throughput(
    pytestconfig: pytest.Config,
    hwcrypto_run: HwcryptoRun,
    hwcrypto_cryptodev: fixtures.Cryptodev,
    hwcrypto_results: ResultsRecorder,
) -> ThroughputRun:
    """Every cryptodev-reachable driver, per block size, once for the module."""
    reason = fixtures.concurrent_measuring_reason(pytestconfig, "cryptodev")
    if reason is not None:
        pytest.skip(reason)
    options = hwcrypto_run.options
    engine = hwcrypto_cryptodev.engine(options.timeout)
    reachable = engine.reachable(build_inventory(read_proc_crypto(fixtures.PROC_CRYPTO)))
    targets = [t for t in reachable if options.chooses(t.algorithm)]
    if not targets:
        pytest.skip("no algorithm cryptodev offers has two or more drivers here")
    plan = make_plan(
        targets,
        options.block_sizes,
        options.budget,
        max_samples=options.max_samples,
        sessions=options.sessions,
        concurrency=options.concurrency,
    )
    with BackgroundLoad(options.load) as load:
        run = run_plan(plan, engine, load=load)
    measurements = run.measurements()
    inventory = inventory_items(
        [e.to_json() for e in build_inventory(read_proc_crypto(fixtures.PROC_CRYPTO))]
    )
    for measurement in measurements:
        hwcrypto_results.add_measurement(measurement)
    for finding in (
        winner_not_fastest_findings(measurements, inventory)
        + hw_loses_to_sw_findings(measurements, inventory)
        + crossover_findings(measurements, inventory)
        + needs_concurrency_findings(measurements, inventory)
    ):
        hwcrypto_results.add_finding(finding)
    return run


def test_throughput_per_driver(
    algorithm: str,
    cryptodev_throughput: ThroughputRun,
    hwcrypto_results: ResultsRecorder,
    record_testsuite_property: Callable[[str, object], None],
) -> None:
    """Every driver of the algorithm was measured through /dev/crypto, proven by CIOCGSESSINFO."""
    run = cryptodev_throughput
    if algorithm in run.plan.left_out:
        pytest.skip(f"{algorithm}: {run.plan.left_out[algorithm]}")
    records = run.records_of(algorithm)
    unavailable = [f.message for f in run.failures_of(algorithm) if f.unavailable]
    if unavailable and not records:
        pytest.skip(unavailable[0])
    if not records and not run.failures_of(algorithm):
        pytest.skip(f"{algorithm}: not in this run's plan")
    failures = [f"{f.target.driver}: {f.message}" for f in run.failures_of(algorithm)]
    failures += [f"{r.cell.describe()}: {r.error}" for r in records if r.error]
    failures += [
        f"{r.cell.target.driver}: CIOCGSESSINFO named {r.driver}"
        for r in records
        if r.driver != r.cell.target.driver
    ]
    table: dict[str, list[str]] = {}
    for record in records:
        measurement = record.measurement(run.load)
        if measurement is not None:
            table.setdefault(record.driver, []).append(
                f"{record.cell.block_size} B {format_mib_s(measurement.bytes_per_second)}"
            )
    summary = "; ".join(f"{driver}: {', '.join(cells)} MiB/s" for driver, cells in table.items())
    record_testsuite_property(f"hwcrypto.cryptodev.throughput.{algorithm}", summary)
    message = "; ".join(failures) if failures else summary
    verdict = Verdict(f"cryptodev-throughput {algorithm}", not failures, message)
    fixtures.record_and_judge(hwcrypto_results, verdict)
