# SPDX-License-Identifier: MIT
"""Throughput suite: is the driver the kernel hands out the fast one, and does hardware beat
software where the board profile says it must?

Every algorithm the kernel can serve with two or more drivers is measured through AF_ALG
on all of them, per block size, within --hwcrypto-budget (measure/plan.py decides what fits
and in which order; measure/runner.py times it through the AF_ALG engine). Block-cipher
modes are measured
over every implementation of the cipher: binding `cbc(aes-generic)` by driver name makes
the kernel instantiate the template over exactly that cipher, so a board with aes-generic
and aes-fixed-time compares the two even though only one would ever be handed out.

What is reported, and how:

* every measurement goes to the results recorder (so --hwcrypto-json holds it);
* findings that need no rule -- the winner is not the fastest (`winner-not-fastest`), a
  hardware driver loses to software (`hw-loses-to-sw`), and the crossover of every
  hardware/software pair (`crossover`) -- are recorded, never failed on;
* each [[rule]] of the board profile is one test, named after the rule, and fails with the
  rule's own message (numbers, driver, block size) when the data are clearly on the wrong
  side;
* tcrypt, the in-kernel path that still reaches offload engines AF_ALG masks, runs once
  where it can (not on UML, where it never returns) and its results are recorded too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from pytest_hwcrypto import fixtures, target_run
from pytest_hwcrypto.fixtures import AfAlg
from pytest_hwcrypto.kernel.inventory import InventoryEntry
from pytest_hwcrypto.kernel.procfs import ProcCryptoError, read_proc_crypto
from pytest_hwcrypto.measure import tcrypt_runner
from pytest_hwcrypto.measure.afalg_engine import AfAlgEngine
from pytest_hwcrypto.measure.budget_excuse import overshoot_excuse
from pytest_hwcrypto.measure.engine import Engine
from pytest_hwcrypto.measure.load import BackgroundLoad
from pytest_hwcrypto.measure.plan import make_plan
from pytest_hwcrypto.measure.runner import CellRecord, ThroughputRun, run_plan
from pytest_hwcrypto.measure.target_engine import TargetAfAlgEngine
from pytest_hwcrypto.measure.targets import Target, algorithms, discover_targets
from pytest_hwcrypto.model.results import (
    Finding,
    InventoryItem,
    Results,
    Verdict,
    inventory_items,
)
from pytest_hwcrypto.profile import BoardProfile
from pytest_hwcrypto.report.recorder import ResultsRecorder
from pytest_hwcrypto.run import HwcryptoRun, run_of
from pytest_hwcrypto.units import format_mib_s
from pytest_hwcrypto.verdict.rule_level import unmeasured_level
from pytest_hwcrypto.verdict.rules import (
    NoRegressionRule,
    Rule,
    Scope,
    crossover_findings,
    hw_loses_to_sw_findings,
    needs_concurrency_findings,
    rules_from_profile,
    winner_not_fastest_findings,
)
from pytest_hwcrypto.vocabulary import AlgType, Place, Source

pytestmark = pytest.mark.hwcrypto_throughput

# Share of the budget kept for tcrypt where it runs (in cycles mode it takes seconds).
TCRYPT_BUDGET_SHARE = 0.1
TCRYPT_MIN_TIMEOUT = 60.0
# tcrypt mode 500: every AES mode and key size on the winning (possibly async) driver;
# sec=0 counts cycles over 8 requests per test instead of running one second per test.
TCRYPT_REQUEST = tcrypt_runner.TcryptRequest(mode=tcrypt_runner.SKCIPHER_ASYNC_SPEED_MODE, sec=0)


@dataclass(frozen=True)
class ProfileRule:
    """A profile [[rule]] as collected: its label for the test id, and the rule or error."""

    label: str
    rule: Rule | None
    error: str | None = None


@dataclass
class SuiteRun:
    run: ThroughputRun
    inventory: list[dict[str, Any]]  # read after the run: includes the instances it created
    findings: list[Finding] = field(default_factory=list)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    state = run_of(metafunc.config)
    if "algorithm" in metafunc.fixturenames:
        names = algorithms(chosen_targets(fixtures.inventory(state), state))
        metafunc.parametrize("algorithm", names, ids=names)
    if "profile_rule" in metafunc.fixturenames:
        rules = collect_rules(state.profile) or [NO_RULES]
        metafunc.parametrize("profile_rule", rules, ids=[rule.label for rule in rules])


# Stands in for the rules when the profile has none, so the skip says why.
NO_RULES = ProfileRule("no-profile-rules", None)


def collect_rules(profile: BoardProfile | None) -> list[ProfileRule]:
    return [ProfileRule(c.label, c.rule, c.error) for c in rules_from_profile(profile)]


# ---------------------------------------------------------------------------------------
# the measuring run


@pytest.fixture(scope="module")
def throughput(
    pytestconfig: pytest.Config,
    hwcrypto_run: HwcryptoRun,
    hwcrypto_afalg: AfAlg,
    hwcrypto_results: ResultsRecorder,
) -> SuiteRun:
    """Measure every algorithm with two or more drivers (or those of --hwcrypto-algorithm)
    once, for all tests of this module."""
    reason = fixtures.concurrent_measuring_reason(pytestconfig, "throughput")
    if reason is not None:
        pytest.skip(reason)
    session = target_run.target_session(hwcrypto_run)
    engine: Engine
    if session is None:
        hwcrypto_afalg.require(AlgType.SKCIPHER)
        engine = AfAlgEngine(hwcrypto_afalg.timeout)
    else:
        # The board's helper times the requests there; host-side load would load the host.
        if hwcrypto_run.options.load is not None:
            pytest.skip("--hwcrypto-load: not host-driven yet (it would load this host)")
        engine = TargetAfAlgEngine(session.helper, hwcrypto_afalg.timeout)
    block_sizes = hwcrypto_run.options.block_sizes
    load_spec = hwcrypto_run.options.load
    targets = chosen_targets(_read_inventory(hwcrypto_run), hwcrypto_run)
    if not targets:
        pytest.skip(
            "no algorithm has two or more drivers here, so there is nothing to compare "
            "(load the accelerated or offload driver modules, e.g. aes_ti, aesni_intel)"
        )
    budget = hwcrypto_run.options.budget
    if session is None and tcrypt_runner.unavailable_reason() is None:
        budget *= 1.0 - TCRYPT_BUDGET_SHARE
    ruled = {r.rule.scope.algorithm for r in collect_rules(hwcrypto_run.profile) if r.rule}
    plan = make_plan(
        targets,
        block_sizes,
        budget,
        prefer={a for a in ruled if a},
        max_samples=hwcrypto_run.options.max_samples,
        sessions=hwcrypto_run.options.sessions,
        concurrency=hwcrypto_run.options.concurrency,
    )
    with BackgroundLoad(load_spec) as load:
        run = run_plan(plan, engine, load=load)
    inventory = [entry.to_json() for entry in _read_inventory(hwcrypto_run)]
    suite_run = SuiteRun(run, inventory, _findings(run, inventory_items(inventory)))
    _record(hwcrypto_results, suite_run)
    return suite_run


def chosen_targets(inventory: list[InventoryEntry], state: HwcryptoRun) -> list[Target]:
    """The drivers to measure: of every algorithm with two or more, or of those chosen."""
    return [t for t in discover_targets(inventory) if state.options.chooses(t.algorithm)]


def _read_inventory(run: HwcryptoRun) -> list[InventoryEntry]:
    """/proc/crypto now (after the run it lists the instances the run created), classed as
    the run's inventory is: one class per driver in every table of the run."""
    session = target_run.target_session(run)
    if session is not None:
        return fixtures.target_inventory(run, session, session.proc_crypto_now())
    try:
        return fixtures.classified(run, read_proc_crypto(fixtures.PROC_CRYPTO))
    except (OSError, ProcCryptoError) as error:
        pytest.skip(f"cannot read {fixtures.PROC_CRYPTO}: {error}")


def _findings(run: ThroughputRun, inventory: Sequence[InventoryItem]) -> list[Finding]:
    measurements = run.measurements()
    findings = (
        winner_not_fastest_findings(measurements, inventory)
        + hw_loses_to_sw_findings(measurements, inventory)
        + crossover_findings(measurements, inventory)
        + needs_concurrency_findings(measurements, inventory)
    )
    for failure in run.failures:
        if failure.masked:
            findings.append(
                Finding(
                    "afalg-masked",
                    failure.target.algorithm,
                    failure.message,
                    {"driver": failure.target.driver},
                )
            )
    return findings


def _record(results: ResultsRecorder, suite_run: SuiteRun) -> None:
    results.update_inventory(suite_run.inventory)
    for measurement in suite_run.run.measurements():
        results.add_measurement(measurement)
    for finding in suite_run.findings:
        results.add_finding(finding)


# ---------------------------------------------------------------------------------------
# tests


def test_budget_honoured(
    throughput: SuiteRun,
    hwcrypto_run: HwcryptoRun,
    record_testsuite_property: Callable[[str, object], None],
) -> None:
    """The measuring run stays within --hwcrypto-budget (10 % over at most)."""
    run = throughput.run
    budget = hwcrypto_run.options.budget
    record_testsuite_property("hwcrypto.throughput.budget_seconds", budget)
    record_testsuite_property("hwcrypto.throughput.seconds", round(run.seconds, 1))
    record_testsuite_property(
        "hwcrypto.throughput.plan",
        f"{len(run.records)} series x {run.rounds} samples, load {run.load}",
    )
    # Overshoots that are the budget's, not the engine's: it skips saying what to give.
    excuse = overshoot_excuse(run, budget)
    if excuse is not None:
        pytest.skip(excuse)
    assert run.seconds <= 1.1 * budget, (
        f"measuring took {run.seconds:.1f} s, more than --hwcrypto-budget={budget:g} s + 10 %"
    )


def test_measured_on_every_driver(
    algorithm: str,
    throughput: SuiteRun,
    record_testsuite_property: Callable[[str, object], None],
) -> None:
    """Every driver of the algorithm was measured at every block size it takes."""
    run = throughput.run
    if algorithm in run.plan.left_out:
        pytest.skip(f"{algorithm}: {run.plan.left_out[algorithm]}")
    records = run.records_of(algorithm)
    failures = run.failures_of(algorithm)
    # A one-line table per algorithm for the suite; each test case carries its cells as
    # properties and the findings are suite properties (fixtures.hwcrypto_suite_properties).
    record_testsuite_property(f"hwcrypto.throughput.{algorithm}", summary_table(records))
    unavailable = [f.message for f in failures if f.unavailable]
    if unavailable and len(unavailable) == len(failures) and not records:
        pytest.skip(unavailable[0])
    broken = [f"{f.target.driver}: {f.message}" for f in failures if not f.masked]
    broken += [f"{r.cell.describe()}: {r.error}" for r in records if r.error]
    if broken:
        pytest.fail(f"{algorithm}: " + "; ".join(broken), pytrace=False)
    measured = {record.driver for record in records if record.samples}
    if len(measured) < 2:
        masked = ", ".join(f.target.driver for f in failures if f.masked) or "none"
        pytest.skip(
            f"{algorithm}: only {len(measured)} driver measured (masked from AF_ALG: {masked})"
        )


def summary_table(records: Sequence[CellRecord]) -> str:
    """'driver: 16 B 0.28, 4096 B 55.0 MiB/s (CoV 3 %)' per driver, for the JUnit property."""
    by_driver: dict[str, list[str]] = {}
    for record in records:
        if not record.samples:
            continue
        measurement = record.measurement("")
        assert measurement is not None
        cov = f" ±{measurement.cov:.0%}" if measurement.cov is not None else ""
        by_driver.setdefault(record.driver, []).append(
            f"{record.cell.block_size} B {format_mib_s(measurement.bytes_per_second)}{cov}"
        )
    return "; ".join(f"{driver}: {', '.join(parts)} MiB/s" for driver, parts in by_driver.items())


def test_tcrypt_in_kernel(hwcrypto_run: HwcryptoRun, hwcrypto_results: ResultsRecorder) -> None:
    """tcrypt's in-kernel speed test of the winning AES drivers (reaches masked engines)."""
    if hwcrypto_run.options.target is not None:
        pytest.skip("tcrypt: not host-driven yet (it loads a module on the board)")
    reason = tcrypt_runner.unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    budget = hwcrypto_run.options.budget
    timeout = max(TCRYPT_MIN_TIMEOUT, budget * TCRYPT_BUDGET_SHARE * 10)
    try:
        tcrypt_run = tcrypt_runner.run_tcrypt(TCRYPT_REQUEST, timeout=timeout)
    except tcrypt_runner.TcryptError as error:
        pytest.fail(f"tcrypt {TCRYPT_REQUEST.describe()}: {error}", pytrace=False)
    for measurement in tcrypt_run.measurements:
        if math.isfinite(measurement.bytes_per_second):
            hwcrypto_results.add_measurement(measurement)
    assert tcrypt_run.measurements


def test_profile_rule(
    profile_rule: ProfileRule,
    request: pytest.FixtureRequest,
    hwcrypto_run: HwcryptoRun,
    hwcrypto_results: ResultsRecorder,
) -> None:
    """One board-profile rule; fails with the rule's message when the data break it."""
    if profile_rule is NO_RULES:
        pytest.skip(
            "no [[rule]] to apply: give a board profile with rules (--hwcrypto-board); "
            "findings without rules are recorded all the same"
        )
    if profile_rule.rule is None:
        pytest.fail(profile_rule.error or "invalid rule", pytrace=False)
    rule = profile_rule.rule
    if not hwcrypto_run.options.chooses(rule.scope.algorithm):
        pytest.skip(f"{rule.label}: {rule.scope.algorithm} is not among --hwcrypto-algorithm")
    unmeasured = unmeasured_level(
        rule.label, rule.scope.concurrency, hwcrypto_run.options.concurrency
    )
    if unmeasured is not None:
        pytest.skip(unmeasured)
    if rule.scope.place == Place.CONTAINER:
        pytest.skip(f"{rule.label}: about measurements inside a container: the lxc suite's")
    baseline = hwcrypto_run.baseline
    if isinstance(rule, NoRegressionRule) and baseline is None:
        pytest.skip(f"{rule.label}: {NO_BASELINE}")
    inventory = _inventory_for_rules(request)
    outcome = rule.evaluate(hwcrypto_results.measurements, inventory, baseline)
    fixtures.record_and_judge(
        hwcrypto_results, outcome.verdict, outcome.findings, strict=hwcrypto_run.options.strict
    )


NO_BASELINE = (
    "no baseline to compare against: give --hwcrypto-baseline=RESULTS.json, the "
    "--hwcrypto-json of an earlier run (or compare saved runs with `hwcrypto compare`)"
)


def test_no_regression_against_baseline(
    algorithm: str,
    throughput: SuiteRun,
    hwcrypto_run: HwcryptoRun,
    hwcrypto_results: ResultsRecorder,
) -> None:
    """With --hwcrypto-baseline: no driver of the algorithm is clearly slower than it was
    (beyond --hwcrypto-max-drop and beyond noise), and none measured then is missing now."""
    baseline = hwcrypto_run.baseline
    if baseline is None:
        pytest.skip(NO_BASELINE)
    then = [
        m for m in baseline.measurements if m.source == Source.AFALG and m.algorithm == algorithm
    ]
    if not then:
        pytest.skip(f"{algorithm}: not in the baseline ({baseline_kernel(baseline)}): new here")
    now = [m for m in throughput.run.measurements() if m.algorithm == algorithm]
    gone = sorted({m.driver or "?" for m in then} - {m.driver or "?" for m in now})
    rule = NoRegressionRule(
        Scope(algorithm, source=Source.AFALG),
        max_drop=hwcrypto_run.options.max_drop,
        name=f"no-regression {algorithm} vs baseline ({baseline_kernel(baseline)})",
        relative_to=hwcrypto_run.options.relative_to,
    )
    outcome = rule.evaluate(now, inventory_items(throughput.inventory), baseline)
    verdict = outcome.verdict
    if gone:
        message = f"measured in the baseline, not now: {', '.join(gone)}"
        verdict = Verdict(verdict.rule, False, f"{message}; {verdict.message}", verdict.extra)
    fixtures.record_and_judge(
        hwcrypto_results, verdict, outcome.findings, strict=hwcrypto_run.options.strict
    )


def baseline_kernel(baseline: Results) -> str:
    """'kernel 6.1.176' of the baseline run, so a message says what it compared with."""
    release = baseline.kernel.get("release") if baseline.kernel else None
    return f"kernel {release}" if release else "kernel not recorded"


def _inventory_for_rules(request: pytest.FixtureRequest) -> list[InventoryItem]:
    """The inventory after the measuring run; without AF_ALG the rule still sees other
    sources' measurements (dm-crypt, openssl, tcrypt) and the current /proc/crypto."""
    try:
        suite_run: SuiteRun = request.getfixturevalue("throughput")
        return inventory_items(suite_run.inventory)
    except pytest.skip.Exception:
        run = run_of(request.config)
        return inventory_items([entry.to_json() for entry in _read_inventory(run)])
