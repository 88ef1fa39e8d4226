# SPDX-License-Identifier: MIT
"""The shipped suites against kernel drivers that are wrong or slow on purpose.

The test-only module of pytest_hwcrypto/kmod (hwcrypto_test) registers cbc(aes), gcm(aes) and sha256
drivers wrapping the generic code; a module parameter makes one of them wrong under one
condition (long requests, decryption, an odd scatterlist split, one key length, a stale
chained IV) or slow. Each test switches a fault on, runs a suite in a pytester subprocess
(a session of its own, as a user runs it) and checks the suite fails on exactly that
driver, saying under which condition, and on no real driver.

Needs the QEMU board with the module loaded:
`pytest --hwcrypto-vm=qemu --hwcrypto-test-drivers tests/board/test_faulty_drivers.py`
(add --hwcrypto-cryptodev for the /dev/crypto tests, also the one inside an LXC
container); elsewhere the tests skip. The whole
file took 16.7 min inside the board on a busy 2-core host (load 5-6, 2026-12-02); CI's
QEMU tier runs the part not marked slow_board (a correctness round of three modes, the
inventory and /dev/crypto tests): its three suite sessions took 79 + 34 + 38 s in that
run, but 10.5 min in all on the same host an hour later with another board measuring.
The crossover test (two throughput sessions, slow_board) took 6.5 min inside the board,
9 min with the boot (load 3.3-3.7, 2026-12-02). Since a round also runs the real drivers
of the algorithms it faults (cbc(aes) and gcm(aes) on aesni, generic and virtio-crypto),
the four correctness rounds took 80 + 58 + 58 + 58 s, the CI round 83 s (load 0.7-1.1,
2026-12-05). Selecting by --hwcrypto-algorithm (exactly cbc(aes), gcm(aes), sha256 and
hmac(sha256), where -k could only say "cbc" or "gcm") took them to 74 + 56 + 56 + 55 s, the
whole file 608 s inside the board (load 1.0-1.2, 2026-12-05).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.container import lxc
from pytest_hwcrypto.kernel import cryptodev
from pytest_hwcrypto.kernel.inventory import build_inventory
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.kernel.test_drivers import (
    ALGORITHM_OF,
    CBC_A,
    CBC_B,
    DRIVERS,
    GCM,
    MODULE_NAME,
    SHA256,
    SYS_MODULE,
)
from pytest_hwcrypto.kernel.test_drivers import TestDriversControl as Control
from pytest_hwcrypto.measure.afalg_engine import AfAlgEngine
from pytest_hwcrypto.measure.plan import make_plan
from pytest_hwcrypto.measure.runner import ThroughputRun, run_plan
from pytest_hwcrypto.measure.targets import discover_targets
from pytest_hwcrypto.run import run_of
from pytest_hwcrypto.vocabulary import PROC_CRYPTO

pytest_plugins = ["pytester"]

SESSION_ARGS = ("--hwcrypto", "-p", "no:cacheprovider", "--junitxml=junit.xml")


@dataclass(frozen=True)
class Fault:
    """One driver made wrong one way, and what its failures must say."""

    driver: str
    parameter: str
    value: object
    condition: str  # words every failure of the driver must contain

    def describe(self) -> str:
        return f"{self.driver} {self.parameter}={self.value}"


LONG = 65536  # only the correctness suite's "64KiB+odd" case (#6) is this long


@dataclass(frozen=True)
class Round:
    """Faults on at once, at most one per driver (a failure is attributed by the driver it
    names), and how many cases per driver reach them all."""

    faults: tuple[Fault, ...]
    cases: int  # 7 reaches 64KiB+odd; 4 reaches every key size, an odd offset, 2 blocks

    @property
    def algorithms(self) -> list[str]:
        """The algorithms the round makes wrong on some driver, e.g. ["cbc(aes)", "sha256"]."""
        return sorted({ALGORITHM_OF[fault.driver] for fault in self.faults})


# Together the rounds cover every mode on each driver kind it applies to (an shash sees
# no scatterlists and has no IV, so sha256 has only the length mode). A round's session
# runs every test driver and every real driver of the algorithms it makes wrong: each
# fault is caught on its driver, and no other driver fails while it is on.
CORRECTNESS_ROUNDS: dict[str, Round] = {
    "long-requests-and-decrypt": Round(
        (
            Fault(CBC_A, "wrong_min_bytes", LONG, "(length class 64KiB+odd"),
            Fault(CBC_B, "wrong_decrypt", True, "decrypt(encrypt(x))"),
            Fault(GCM, "wrong_min_bytes", LONG, "(length class 64KiB+odd"),
            Fault(SHA256, "wrong_min_bytes", LONG, "(length class 64KiB+odd"),
        ),
        cases=7,
    ),
    "odd-split-stale-iv-decrypt": Round(
        (
            Fault(CBC_A, "wrong_odd_split", True, "into a buffer misaligned by"),
            Fault(CBC_B, "stale_iv", True, "encrypt as two requests"),
            Fault(GCM, "wrong_decrypt", True, "decrypt(encrypt(x))"),
        ),
        cases=4,
    ),
    "one-key-length-odd-split": Round(
        (
            Fault(CBC_A, "wrong_key_bytes", 24, "key (24 bytes)"),
            Fault(GCM, "wrong_odd_split", True, "into a buffer misaligned by"),
        ),
        cases=4,
    ),
    "one-key-length": Round((Fault(GCM, "wrong_key_bytes", 32, "key (32 bytes)"),), cases=4),
}


@pytest.fixture
def drivers(pytestconfig: pytest.Config) -> Iterator[Control]:
    """The module the QEMU board loaded (the plugin's hwcrypto_test_drivers fixture needs
    --hwcrypto; this session only starts the suites' sessions)."""
    control = fixtures.test_drivers_or_skip(run_of(pytestconfig).options)
    yield control
    if control.module_file is not None and control.loaded():
        control.reset()


@contextmanager
def faults_on(control: Control, faults: tuple[Fault, ...]) -> Iterator[None]:
    with ExitStack() as stack:
        for fault in faults:
            stack.enter_context(control.setting(fault.parameter, fault.driver, fault.value))
        yield


def junit_cases(pytester: pytest.Pytester) -> list[ElementTree.Element]:
    """The <testcase> elements of the subprocess session's JUnit file."""
    return list(ElementTree.parse(pytester.path / "junit.xml").iter("testcase"))


def failures(cases: list[ElementTree.Element]) -> dict[str, str]:
    """Test name -> failure (or error) text."""
    found = {}
    for case in cases:
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        if failure is not None:
            found[case.get("name", "?")] = (failure.get("message") or "") + (failure.text or "")
    return found


def passed_tests(cases: list[ElementTree.Element]) -> list[str]:
    """Names of the tests that passed (neither failed, errored nor skipped)."""
    return [
        case.get("name", "?")
        for case in cases
        if not any(case.find(tag) is not None for tag in ("failure", "error", "skipped"))
    ]


# Every algorithm a test driver serves, with the hmac(sha256-hwcrypto-test) instance the
# correctness suite builds over the sha256 one: a round runs all of them, so every test
# driver not made wrong shows it still passes, beside every real driver of them.
TEST_DRIVER_ALGORITHMS = sorted({*ALGORITHM_OF.values(), f"hmac({ALGORITHM_OF[SHA256]})"})


def only(*algorithms: str) -> str:
    """The option that leaves every other algorithm out of a suite's session."""
    return "--hwcrypto-algorithm=" + ",".join(algorithms)


def real_driver_tests(names: list[str], algorithm: str) -> list[str]:
    """The tests among `names` of `algorithm` on a driver that is not a test driver."""
    return [
        name
        for name in names
        if name.startswith(f"test_differential[{algorithm}:")
        and not any(names_driver(name, driver) for driver in DRIVERS)
    ]


def names_driver(test_name: str, driver: str) -> bool:
    """The test ran on `driver`, or on a template instance built on it: hmac(sha256) over
    a wrong sha256 is wrong too (ids end in ":<driver>:fuzz#6]" or ":hmac(<driver>):...")."""
    return f":{driver}:" in test_name or f"({driver})" in test_name


def check_caught(found: Mapping[str, str], faults: tuple[Fault, ...]) -> None:
    """Every fault caught, each failure of its driver saying the condition, nothing else."""
    innocent = [n for n in found if not any(names_driver(n, f.driver) for f in faults)]
    assert not innocent, f"drivers that were not made wrong failed: {innocent}"
    for fault in faults:
        caught = {name: text for name, text in found.items() if names_driver(name, fault.driver)}
        assert caught, f"{fault.describe()} was not caught: failures {sorted(found)}"
        for name, text in caught.items():
            assert fault.driver in text, f"{name}: the failure does not name the driver"
            assert fault.condition in text, (
                f"{name}: the failure does not say {fault.condition!r}:\n{text}"
            )


# CI runs one round (three modes); the others take minutes more under TCG.
ROUNDS_IN_CI = ("odd-split-stale-iv-decrypt",)


@pytest.mark.parametrize(
    "round_name",
    [
        pytest.param(name, marks=() if name in ROUNDS_IN_CI else pytest.mark.slow_board)
        for name in CORRECTNESS_ROUNDS
    ],
)
def test_correctness_suite_catches_each_faulty_mode(
    round_name: str, drivers: Control, pytester: pytest.Pytester
) -> None:
    chosen = CORRECTNESS_ROUNDS[round_name]
    faults = chosen.faults
    with faults_on(drivers, faults):
        result = pytester.runpytest_subprocess(
            *SESSION_ARGS,
            "--hwcrypto-suite=correctness",
            f"--hwcrypto-fuzz-iterations={chosen.cases}",
            only(*TEST_DRIVER_ALGORITHMS),
            "-k",
            "test_differential",
        )
    cases = junit_cases(pytester)
    check_caught(failures(cases), faults)
    # Every test driver not made wrong passed every case (counted on those drivers alone,
    # as the real drivers' passes would otherwise make up for a missing one),
    passed = passed_tests(cases)
    innocent = [driver for driver in DRIVERS if driver not in {f.driver for f in faults}]
    innocent_passed = [n for n in passed if any(names_driver(n, d) for d in innocent)]
    assert len(innocent_passed) >= len(innocent) * chosen.cases, result.outlines
    # and the real drivers of each faulted algorithm ran beside the faulty one and passed.
    for algorithm in chosen.algorithms:
        real = real_driver_tests(passed, algorithm)
        assert real, f"no real {algorithm} driver passed beside the faulty one: {passed}"


def test_inventory_suite_reports_a_fault_on_the_kernels_own_vectors_as_a_selftest_failure(
    drivers: Control, pytester: pytest.Pytester
) -> None:
    """Faults on at load time: the kernel's self-test of each driver fails, and the
    inventory suite fails that driver with the kernel's own log line."""
    load = {"wrong_decrypt": {CBC_A: True}, "stale_iv": {CBC_B: True}}
    with drivers.loaded_with(load):
        pytester.runpytest_subprocess(
            *SESSION_ARGS, "--hwcrypto-suite=inventory", "-k", "selftest_passed and hwcrypto-test"
        )
    found = failures(junit_cases(pytester))
    assert sorted(found) == sorted(
        f"test_selftest_passed[cbc(aes):{driver}]" for driver in (CBC_A, CBC_B)
    )
    texts = {driver: next(t for n, t in found.items() if driver in n) for driver in (CBC_A, CBC_B)}
    assert f"kernel log: alg: skcipher: {CBC_A} decryption test failed" in texts[CBC_A]
    assert (
        f"kernel log: alg: skcipher: {CBC_B} encryption test failed (wrong output IV)"
        in (texts[CBC_B])
    )


@pytest.mark.slow_board
def test_throughput_suite_finds_a_slow_winner_not_fastest(
    drivers: Control, pytester: pytest.Pytester
) -> None:
    """A test driver made the cbc(aes) winner and 2 ms slower per request: the suite
    records winner-not-fastest for it (a finding, not a failure)."""
    with drivers.loaded_with({"priority": {CBC_A: 1000}, "delay_us": {CBC_A: 2000}}):
        pytester.runpytest_subprocess(
            *SESSION_ARGS,
            "--hwcrypto-suite=throughput",
            "--hwcrypto-budget=8",
            "--hwcrypto-block-sizes=4096",
            "--hwcrypto-json=results.json",
            only(ALGORITHM_OF[CBC_A]),  # the whole budget measures cbc(aes)
            "-k",
            "measured_on_every_driver",
        )
    findings = json.loads((pytester.path / "results.json").read_text())["findings"]
    slow_winner = [
        f for f in findings if f["kind"] == "winner-not-fastest" and f["algorithm"] == "cbc(aes)"
    ]
    assert slow_winner, f"no winner-not-fastest for cbc(aes) in {findings}"
    assert all(CBC_A in f["detail"] for f in slow_winner), slow_winner


# A pays a fixed cost per request (an offload engine's setup), B a cost per byte (a slow
# software path): A loses while a request is shorter than delay_us / delay_ns_per_kib KiB
# and wins beyond it. Both ties lie halfway (in log scale) between two measured sizes, so
# the added delays differ by a factor 2 at the sizes either side; two ties, so the
# reported crossover has to move with the delays.
CROSSOVER_BLOCK_SIZES = (1024, 4096, 16384, 65536)
CROSSOVER_DELAYS = {  # tie at 2 ms / (250 us per KiB) = 8 KiB, and at 2 ms / 62.5 us = 32 KiB
    "tie-8KiB": (2000, 250_000),
    "tie-32KiB": (2000, 62_500),
}
UNDELAYED = "cbc(aes-generic)"  # what both test drivers wrap: their speed without delays
# The undelayed time must not drown the delays: at the sizes either side of the tie the
# predicted ratio must be this far from 1, or noise could put the crossover either way.
CROSSOVER_MARGIN = 0.15


def predicted_ratios(
    undelayed_bps: Mapping[int, float], delay_us: int, ns_per_kib: int
) -> dict[int, float]:
    """A/B throughput the delays predict at each size: per request A takes t0 + its delay
    and B t0 + size x its cost per KiB, t0 = size / the undelayed rate."""
    ratios = {}
    for size, rate in undelayed_bps.items():
        t0 = size / rate
        ratios[size] = (t0 + size / 1024 * ns_per_kib * 1e-9) / (t0 + delay_us * 1e-6)
    return ratios


@pytest.mark.slow_board
@pytest.mark.parametrize("tie", list(CROSSOVER_DELAYS))
def test_throughput_suite_reports_the_crossover_the_delays_predict(
    tie: str, drivers: Control, pytester: pytest.Pytester
) -> None:
    """A board-profile rule puts A (per-request delay) against B (per-KiB delay); the
    crossover the suite reports is the measured size just above delay / cost per KiB."""
    delay_us, ns_per_kib = CROSSOVER_DELAYS[tie]
    tie_bytes = delay_us * 1000 * 1024 / ns_per_kib
    below = max(size for size in CROSSOVER_BLOCK_SIZES if size < tie_bytes)
    above = min(size for size in CROSSOVER_BLOCK_SIZES if size > tie_bytes)
    rule_name = f"per-request delay beats per-byte delay from {above} B"
    pytester.makefile(
        ".toml",
        board=f"""
[board]
name = "qemu-crossover"

[[rule]]
name = "{rule_name}"
type = "hw-beats-sw"
algorithm = "cbc(aes)"
hw = "{CBC_A}"
sw = "{CBC_B}"
block_sizes = ">={above}"
source = "afalg"
""",
    )
    delays = {"delay_us": {CBC_A: delay_us}, "delay_ns_per_kib": {CBC_B: ns_per_kib}}
    with drivers.loaded_with(delays):
        pytester.runpytest_subprocess(
            *SESSION_ARGS,
            "--hwcrypto-suite=throughput",
            "--hwcrypto-board=board.toml",
            "--hwcrypto-budget=20",
            "--hwcrypto-block-sizes=" + ",".join(map(str, CROSSOVER_BLOCK_SIZES)),
            "--hwcrypto-json=results.json",
            only(ALGORITHM_OF[CBC_A]),
            "-k",
            "measured_on_every_driver or profile_rule",
        )
    results = json.loads((pytester.path / "results.json").read_text())
    verdicts = [v for v in results["verdicts"] if v["rule"] == rule_name]
    assert len(verdicts) == 1, results["verdicts"]
    verdict = verdicts[0]
    # the rule's message ends "crossover <size> B" or "no crossover", over every size
    reported = re.search(r"(no crossover|crossover (\d+) B)", verdict["message"])
    assert reported, verdict
    undelayed = {
        m["block_size"]: m["bytes_per_second"]
        for m in results["measurements"]
        if m["driver"] == UNDELAYED and m["source"] == "afalg"
    }
    assert sorted(undelayed) == list(CROSSOVER_BLOCK_SIZES), f"{UNDELAYED} not measured"
    predicted = predicted_ratios(undelayed, delay_us, ns_per_kib)
    shown = ", ".join(f"{size} B {ratio:.2f}x" for size, ratio in sorted(predicted.items()))
    print(f"predicted A/B: {shown}; rule: {verdict['message']}")
    assert predicted[below] < 1 - CROSSOVER_MARGIN < 1 + CROSSOVER_MARGIN < predicted[above], (
        f"the undelayed rate drowns the delays (predicted A/B: {shown})"
    )
    assert reported.group(2) is not None and int(reported.group(2)) == above, (
        f"expected the crossover between {below} and {above} B (tie at {tie_bytes:.0f} B), "
        f"got {reported.group(1)!r}: {verdict['message']}"
    )
    assert verdict["passed"], verdict


@pytest.mark.slow_board
def test_dmcrypt_suite_integrity_fails_a_faulty_driver_pinned_through_capi(
    drivers: Control, pytester: pytest.Pytester
) -> None:
    """Wrong only when decrypting: what is on the disk is right, what is read back is not."""
    with drivers.setting("wrong_decrypt", CBC_A, True):
        pytester.runpytest_subprocess(
            *SESSION_ARGS, "--hwcrypto-suite=dmcrypt", "-k", f"test_integrity and {CBC_A}"
        )
    found = failures(junit_cases(pytester))
    assert list(found) == [f"test_integrity[cbc(aes):{CBC_A}]"], found
    text = found[f"test_integrity[cbc(aes):{CBC_A}]"]
    assert f"{CBC_A}: read back" in text, text


def test_cryptodev_suite_catches_the_faulty_driver_through_dev_crypto(
    drivers: Control, pytester: pytest.Pytester
) -> None:
    reason = cryptodev.unavailable_reason()
    if reason:
        pytest.skip(f"{reason} (run with --hwcrypto-cryptodev)")
    with drivers.setting("wrong_min_bytes", CBC_A, LONG):
        pytester.runpytest_subprocess(
            *SESSION_ARGS,
            "--hwcrypto-suite=cryptodev",
            only(ALGORITHM_OF[CBC_A]),
            "-k",
            "(test_differential or test_random_sizes) and hwcrypto-test",
        )
    found = failures(junit_cases(pytester))
    assert found, "the cryptodev suite did not catch the faulty driver"
    assert all(CBC_A in name and CBC_A in text for name, text in found.items()), found


# The lxc suite's probes encrypt this much (suites/test_lxc.py PLAINTEXT): a fault from
# this length on reaches them, and stays clear of the kernel's short self-test vectors.
LXC_PROBE_BYTES = 1024


def test_lxc_suite_catches_the_faulty_driver_inside_a_container(
    drivers: Control, pytester: pytest.Pytester
) -> None:
    """The faulty driver made the cbc(aes) winner: a container is handed it through AF_ALG
    (and /dev/crypto, when the board has it) exactly as the host is, and the lxc suite's
    ciphertext checks fail inside, naming it."""
    reason = lxc.unavailable_reason()
    if reason:
        pytest.skip(reason)
    with (
        drivers.loaded_with({"priority": {CBC_A: 1000}}),
        drivers.setting("wrong_min_bytes", CBC_A, LXC_PROBE_BYTES),
    ):
        pytester.runpytest_subprocess(
            *SESSION_ARGS,
            "--hwcrypto-suite=lxc",
            "-k",
            "(afalg_inside and cbc) or cryptodev_inside",
        )
    found = failures(junit_cases(pytester))
    expected = {"test_afalg_inside_gets_the_hosts_winner[cbc(aes)]"}
    if cryptodev.unavailable_reason() is None:
        expected.add("test_cryptodev_inside_reports_the_hosts_driver_and_follows_reranking")
    assert set(found) == expected, found
    afalg_text = found["test_afalg_inside_gets_the_hosts_winner[cbc(aes)]"]
    assert f"the ciphertext of {CBC_A} inside differs" in afalg_text, afalg_text
    if len(expected) == 2:
        text = found["test_cryptodev_inside_reports_the_hosts_driver_and_follows_reranking"]
        assert f"as registered: the ciphertext inside ({CBC_A})" in text, text
        # once another driver is preferred on the host, the container gets a correct one
        # (JUnit holds the message twice: as the attribute and as the text)
        assert "preferred on the host: the ciphertext" not in text, text


# The asynchronous driver (an offload engine's shape) and its plain parameters.
ASYNC_ENGINE = "cbc-aes-hwcrypto-test-async"
LOST_TIMEOUT = 2  # --hwcrypto-timeout of the session whose engine loses a completion
# Time for the whole session: a hung run would take the board's timeout instead.
LOST_SESSION_SECONDS = 600.0


def async_parameter(name: str) -> Path:
    return SYS_MODULE / MODULE_NAME / "parameters" / name


@pytest.mark.slow_board
def test_a_lost_completion_is_a_named_timeout_and_the_run_goes_on(
    drivers: Control, pytester: pytest.Pytester
) -> None:
    """The asynchronous engine never completes any request (async_lose_every=1): the
    caller sleeps in the kernel with nothing to wake it. The throughput session must fail
    that driver after --hwcrypto-timeout, naming it, measure every other cbc(aes) driver,
    and end. The requests kept aside are completed (-EIO) once it has written its results,
    as an engine reset would, so the abandoned threads return and the process can exit."""
    if not async_parameter("async_lose_every").exists():
        pytest.skip(f"{MODULE_NAME} without async_lose_every: rebuild the test drivers")
    async_parameter("async_lose_every").write_text("1")
    results = pytester.path / "results.json"
    try:
        session = pytester.popen(
            [
                sys.executable,
                "-m",
                "pytest",
                *SESSION_ARGS,
                "--hwcrypto-suite=throughput",
                f"--hwcrypto-timeout={LOST_TIMEOUT}",
                "--hwcrypto-budget=6",
                "--hwcrypto-block-sizes=4096",
                f"--hwcrypto-json={results}",
                only("cbc(aes)"),
                "-k",
                "measured_on_every_driver",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        lost, began = 0, time.monotonic()
        while session.poll() is None and time.monotonic() - began < LOST_SESSION_SECONDS:
            lost = max(lost, int(async_parameter("async_lost").read_text()))
            if results.exists():  # written at session end: release what it left waiting
                async_parameter("async_lost").write_text("1")
            time.sleep(0.5)
        if session.poll() is None:
            session.kill()
            pytest.fail(f"the session did not end in {LOST_SESSION_SECONDS:.0f} s")
        output = session.stdout.read().decode(errors="replace") if session.stdout else ""
    finally:
        async_parameter("async_lose_every").write_text("0")
        async_parameter("async_lost").write_text("1")
    assert lost >= 1, f"the engine lost no request:\n{output[-2000:]}"
    found = failures(junit_cases(pytester))
    assert list(found) == ["test_measured_on_every_driver[cbc(aes)]"], found
    text = found["test_measured_on_every_driver[cbc(aes)]"]
    assert f"{ASYNC_ENGINE}" in text and f"within {LOST_TIMEOUT} s" in text, text
    measured = {
        m["driver"] for m in json.loads(results.read_text())["measurements"] if m["samples"]
    }
    assert ASYNC_ENGINE not in measured
    assert {CBC_A, CBC_B, "cbc(aes-generic)"} <= measured, measured


def measure_engine_in_flight(level: int, timeout: float) -> ThroughputRun:
    """The asynchronous engine through AF_ALG with `level` requests in flight, 4 KiB."""
    inventory = build_inventory(read_proc_crypto(PROC_CRYPTO))
    targets = [t for t in discover_targets(inventory) if t.driver == ASYNC_ENGINE]
    assert targets, f"{ASYNC_ENGINE} is not registered"
    plan = make_plan(targets, [4096], 8.0, sessions=1, concurrency=[level])
    return run_plan(plan, AfAlgEngine(timeout))


@pytest.mark.slow_board
def test_a_busy_queue_backlogs_and_a_driver_that_drops_on_ebusy_is_named(
    drivers: Control,
) -> None:
    """A queue of one and 8 requests in flight on 4 flows: requests are answered -EBUSY.
    Backlogged (then -EINPROGRESS, then completed) every one completes; with the fault
    (-EBUSY answered, the request dropped) the dropped ones never complete, and the
    measurement fails after the operation timeout naming the engine."""
    for name in ("async_queue_len", "async_busy", "async_busy_drops"):
        if not async_parameter(name).exists():
            pytest.skip(f"{MODULE_NAME} without {name}: rebuild the test drivers")
    try:
        async_parameter("async_latency_us").write_text("50000")
        async_parameter("async_queue_len").write_text("1")
        async_parameter("async_busy").write_text("0")
        backlogged = measure_engine_in_flight(8, timeout=10.0)
        busy_backlogged = int(async_parameter("async_busy").read_text())
        async_parameter("async_busy_drops").write_text("Y")
        async_parameter("async_busy").write_text("0")
        dropped = measure_engine_in_flight(8, timeout=LOST_TIMEOUT)
        busy_dropped = int(async_parameter("async_busy").read_text())
        kept_aside = int(async_parameter("async_lost").read_text())
    finally:
        async_parameter("async_busy_drops").write_text("N")
        async_parameter("async_queue_len").write_text("128")
        async_parameter("async_latency_us").write_text("0")
        async_parameter("async_lost").write_text("1")
    errors = [r.error for r in backlogged.records if r.error]
    assert not errors and not backlogged.failures, errors
    assert busy_backlogged > 0, "the queue of one never answered -EBUSY: nothing backlogged"
    assert [m.level for m in backlogged.measurements()] == [8]
    print(
        f"\nbacklogged: {busy_backlogged} -EBUSY answers, all completed; dropped: "
        f"{busy_dropped} -EBUSY answers, {kept_aside} requests never completed"
    )
    failed = [r.error for r in dropped.records if r.error]
    assert busy_dropped > 0 and kept_aside > 0
    assert failed and all(ASYNC_ENGINE in (e or "") for e in failed), failed
    assert any(f"within {LOST_TIMEOUT} s" in (e or "") for e in failed), failed
