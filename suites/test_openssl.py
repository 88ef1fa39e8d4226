# SPDX-License-Identifier: MIT
"""The openssl suite: OpenSSL's own software against each kernel driver via the afalg engine.

`openssl speed -elapsed -evp CIPHER -mr -bytes B -seconds S` over --hwcrypto-block-sizes,
without an engine (OpenSSL's software, the path a user gets by default) and with
`-engine afalg` once per kernel driver of the cipher, each driver made the winner of its
name for its own runs (kernel/rerank.py). Samples of all paths interleave in rounds, within
--hwcrypto-budget. A run without -evp or -elapsed is never taken (see
measure/openssl_engine.py). Findings: `hw-loses-to-sw` where a kernel driver through the
engine is clearly slower than OpenSSL's software, worded by the driver's class ("the
kernel path (generic C) loses to OpenSSL's own code"; on a machine whose CPU has AES
instructions in userspace that is the normal outcome, and worth knowing), `crossover`
from where it keeps up, and `winner-not-fastest` among the kernel drivers.

With requests in flight (--hwcrypto-concurrency naming a level above 1) every path is
measured both ways OpenSSL has, each its own source with half the budget: `-multi N`
(source openssl: N processes) and `-async_jobs N` (source openssl-async-jobs: N ASYNC jobs
of one process, the afalg engine's AIO; measure/openssl_engine.py). Each is judged against
OpenSSL's software measured the same way, per level (`needs-concurrency` too). Where a
driver gains with N processes and not with N jobs, the kernel completed the engine's AIO
one request at a time: `async-jobs-serialized` says so once, and that source's levels
above 1 are left out of the verdicts (verdict/rules/async_jobs.py).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import pytest

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.inventory import build_inventory
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.kernel.rerank import Reranker, changed_priorities, priorities
from pytest_hwcrypto.measure.load import BackgroundLoad
from pytest_hwcrypto.measure.openssl_engine import (
    KERNEL_NAMES,
    SOFTWARE,
    OpenSslEngine,
    openssl_plan,
)
from pytest_hwcrypto.measure.runner import ThroughputRun, run_plan
from pytest_hwcrypto.model.results import (
    Finding,
    InventoryItem,
    Measurement,
    Results,
    inventory_items,
)
from pytest_hwcrypto.report.recorder import ResultsRecorder
from pytest_hwcrypto.run import HwcryptoRun
from pytest_hwcrypto.settings import Options
from pytest_hwcrypto.units import format_mib_s
from pytest_hwcrypto.verdict.compare import compare_hw_sw
from pytest_hwcrypto.verdict.rules import (
    async_jobs_serialized_finding,
    crossover_findings,
    hw_loses_to_sw_findings,
    judged_async_jobs,
    needs_concurrency_findings,
    winner_not_fastest_findings,
    wording,
)
from pytest_hwcrypto.vocabulary import DriverClass, FindingKind, Source

pytestmark = pytest.mark.hwcrypto_openssl

# The cipher measured: every kernel path the afalg engine has is cbc(aes); one key size
# keeps the suite inside its budget (the others differ only in rounds).
CIPHER = "aes-128-cbc"


@dataclass
class OpenSslRun:
    run: ThroughputRun
    priorities_before: dict[str, int | None]
    rerank_skipped: str | None  # why kernel drivers were not measured, if they were not
    # -async_jobs N for the levels above 1 (None: one level, or no kernel driver to reach)
    async_run: ThroughputRun | None = None

    def runs(self) -> list[ThroughputRun]:
        return [self.run] + ([self.async_run] if self.async_run else [])

    def measurements(self) -> list[Measurement]:
        return [m for run in self.runs() for m in run.measurements()]

    def of(self, driver: str) -> list[Measurement]:
        return [m for m in self.measurements() if m.driver == driver]


@pytest.fixture(scope="module")
def openssl_run(
    pytestconfig: pytest.Config,
    hwcrypto_run: HwcryptoRun,
    hwcrypto_options: Options,
    hwcrypto_results: ResultsRecorder,
) -> Iterator[OpenSslRun]:
    reason = fixtures.concurrent_measuring_reason(pytestconfig, "openssl")
    if reason:
        pytest.skip(reason)
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed: apt-get install openssl")
    rerank_reason = fixtures.rerank_unavailable_reason()
    reranker = None
    if rerank_reason is None:
        reranker = Reranker(fixtures.run_ledger(hwcrypto_run), afalg.instantiate_any)
        for name in dict.fromkeys(KERNEL_NAMES.values()):
            afalg.instantiate_any(name)  # load the algif and cipher modules the engine needs
    engine = OpenSslEngine(reranker)
    inventory = build_inventory(read_proc_crypto(fixtures.PROC_CRYPTO))
    # A driver this kernel keeps from AF_ALG would be "made the winner" and then measured
    # as software by the afalg engine: it is left out (the inventory suite's finding says so).
    reach = fixtures.afalg_reach(hwcrypto_run)
    targets = [
        t
        for t in engine.reachable(inventory)
        if t.algorithm == CIPHER and not reach.refuses(t.driver)
    ]
    for target in targets:  # template instances (cbc(aes-generic)) exist once bound
        if not target.registered:
            afalg.instantiate_any(target.driver)
    before = priorities(fixtures.PROC_CRYPTO)
    levels = hwcrypto_options.concurrency
    # -async_jobs only matters for what the afalg engine reaches (OpenSSL's own code runs
    # its jobs in one thread either way, and is measured so only as their baseline)
    both_ways = max(levels) > 1 and any(t.driver != SOFTWARE for t in targets)
    budget = hwcrypto_options.budget / (2 if both_ways else 1)
    plan = openssl_plan(targets, hwcrypto_options.block_sizes, budget, levels)
    async_run = None
    with BackgroundLoad(hwcrypto_options.load) as load:
        run = run_plan(plan, engine, load=load)
        if both_ways:
            async_engine = OpenSslEngine(reranker, async_jobs=True)
            async_run = run_plan(plan, async_engine, load=load)
    result = OpenSslRun(run, before, rerank_reason, async_run)
    # drivers that could keep requests in flight: asynchronous, and not the CPU's own
    asynchronous = {
        e.driver
        for e in fixtures.classified(hwcrypto_run, read_proc_crypto(fixtures.PROC_CRYPTO))
        if e.alg.is_async and e.driver_class not in (DriverClass.CPU_ACCEL, DriverClass.GENERIC)
    }
    serialized = async_jobs_serialized_finding(result.measurements(), CIPHER, asynchronous)
    for measurement in result.measurements():
        hwcrypto_results.add_measurement(_marked(measurement, serialized))
    after = build_inventory(read_proc_crypto(fixtures.PROC_CRYPTO))
    hwcrypto_results.update_inventory([entry.to_json() for entry in after])
    inventory_now = inventory_items([e.to_json() for e in after])
    findings = [serialized] if serialized else []
    judged = judged_async_jobs(result.measurements(), serialized)
    for source in (Source.OPENSSL, Source.OPENSSL_ASYNC_JOBS):
        findings += engine_findings(
            [m for m in judged if m.source == str(source)], inventory_now, str(source)
        )
    for finding in findings:
        hwcrypto_results.add_finding(finding)
    yield result


def _marked(measurement: Measurement, serialized: Finding | None) -> Measurement:
    """A -async_jobs measurement above level 1 on a kernel that serialized them says so."""
    if (
        serialized is None
        or measurement.source != str(Source.OPENSSL_ASYNC_JOBS)
        or measurement.level == 1
    ):
        return measurement
    extra = dict(measurement.extra, in_flight="one at a time (async-jobs-serialized)")
    return replace(measurement, extra=extra)


def engine_findings(
    measured: Sequence[Measurement],
    inventory: Sequence[InventoryItem],
    source: str = str(Source.OPENSSL),
) -> list[Finding]:
    """hw-loses-to-sw and crossover per kernel driver; winner-not-fastest, needs-concurrency
    among them: of one source's measurements (one way of putting requests in flight)."""
    way = " -async_jobs" if source == str(Source.OPENSSL_ASYNC_JOBS) else ""

    def of(driver: str, level: int) -> list[Measurement]:
        return [m for m in measured if m.driver == driver and m.level == level]

    findings: list[Finding] = []
    drivers = sorted({m.driver for m in measured if m.driver not in (SOFTWARE, None)})
    # what each kernel driver is (hardware, CPU-accelerated, generic C), for the wording
    classes = {item.driver: item.driver_class for item in inventory if item.driver}
    classes |= {m.driver: m.driver_class for m in measured if m.driver and m.driver_class}
    # per level of requests in flight, software at the same level: never two levels pooled
    for level in sorted({m.level for m in measured}):
        software = Results(measurements=of(SOFTWARE, level))
        depth = f" N={level}" if level != 1 else ""
        extra: dict[str, object] = {"source": source} | ({"concurrency": level} if depth else {})
        for driver in drivers:
            assert driver is not None
            outcome = compare_hw_sw(software, Results(measurements=of(driver, level)))
            losing = [c for c in outcome.comparisons if c.ratio_high < 1.0]
            where = f"{CIPHER} [openssl -engine afalg{way}{depth} -> {driver}]"
            if losing:
                worst = min(losing, key=lambda c: c.ratio)
                driver_class = classes.get(driver)
                detail = wording.openssl_loses_words(
                    where,
                    driver_class,
                    len(losing),
                    len(outcome.comparisons),
                    worst.ratio,
                    worst.block_size,
                    format_mib_s(worst.current),
                    format_mib_s(worst.baseline),
                )
                found = {"driver": driver, "driver_class": driver_class} | extra
                findings.append(Finding(FindingKind.HW_LOSES_TO_SW, CIPHER, detail, found))
            size = outcome.crossover.get(CIPHER)
            if size is not None and losing:
                findings.append(
                    Finding(
                        FindingKind.CROSSOVER,
                        CIPHER,
                        f"{where}: keeps up with OpenSSL's software from {size} B on",
                        {"driver": driver, "block_size": size} | extra,
                    )
                )
    kernel = [
        replace(m, algorithm=KERNEL_NAMES[CIPHER])
        for m in measured
        if m.driver not in (SOFTWARE, None)
    ]
    # Among the kernel drivers, as the AF_ALG throughput suite pairs them: an offload engine
    # against cpu-accel and generic, cpu-accel against generic.
    among_kernel = (
        winner_not_fastest_findings(kernel, inventory)
        + hw_loses_to_sw_findings(kernel, inventory)
        + crossover_findings(kernel, inventory)
        + needs_concurrency_findings(kernel, inventory)
    )
    for finding in among_kernel:
        findings.append(replace(finding, detail=f"[openssl -engine afalg{way}] {finding.detail}"))
    return findings


def test_openssl_software_measured(openssl_run: OpenSslRun) -> None:
    """OpenSSL's own code at every block size: the software side of every comparison."""
    measured = openssl_run.of(SOFTWARE)
    assert measured, "openssl speed gave no result"
    ways = {str(Source.OPENSSL), str(Source.OPENSSL_ASYNC_JOBS)}
    assert all(m.bytes_per_second > 0 and m.source in ways for m in measured)


def test_every_kernel_driver_measured_through_the_engine(openssl_run: OpenSslRun) -> None:
    """Each kernel driver of cbc(aes), each run with that driver as the winner."""
    if openssl_run.rerank_skipped:
        pytest.skip(f"kernel drivers not measured: {openssl_run.rerank_skipped}")
    runs = openssl_run.runs()
    failures = [f"{f.target.driver}: {f.message}" for run in runs for f in run.failures]
    errors = [f"{r.driver}: {r.error}" for run in runs for r in run.records if r.error]
    if failures or errors:
        pytest.fail("; ".join(failures + errors), pytrace=False)
    kernel = {m.driver for m in openssl_run.measurements()} - {SOFTWARE}
    assert kernel, "no kernel driver of cbc(aes) was measured through the afalg engine"
    assert all(
        "made the winner" in str(m.extra.get("evidence", ""))
        for m in openssl_run.measurements()
        if m.driver in kernel
    )


def test_priorities_are_back_to_their_boot_values(openssl_run: OpenSslRun) -> None:
    """The kernel is re-ranked only while a sample runs; nothing is left changed."""
    now = priorities(fixtures.PROC_CRYPTO)
    before = openssl_run.priorities_before
    changed = changed_priorities(before, now)
    assert not changed, f"priorities left changed (before, now): {changed}"
