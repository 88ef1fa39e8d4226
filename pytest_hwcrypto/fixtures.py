# SPDX-License-Identifier: MIT
"""Fixtures of `pytest --hwcrypto`, thin: each composes objects from the pure modules.

Registered by plugin.py only when --hwcrypto is given, so other projects never see them.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from pytest_hwcrypto import target_run
from pytest_hwcrypto.block import tools as block_tools
from pytest_hwcrypto.block.volume import DEFAULT_SIZE, Volume, VolumeMaker
from pytest_hwcrypto.container import lxc
from pytest_hwcrypto.kernel import afalg, cryptodev
from pytest_hwcrypto.kernel.afalg_reach import AfalgReach
from pytest_hwcrypto.kernel.afalg_reach import probe as probe_afalg_reach
from pytest_hwcrypto.kernel.classify_evidence import LiveFacts
from pytest_hwcrypto.kernel.crypto_user import CryptoUser, CryptoUserError
from pytest_hwcrypto.kernel.cryptodev import DEV_CRYPTO as DEV_CRYPTO  # patched by tests
from pytest_hwcrypto.kernel.environment import config_digest, gather_environment
from pytest_hwcrypto.kernel.evidence import gather_live_facts
from pytest_hwcrypto.kernel.facts import KernelFacts, gather_kernel_facts
from pytest_hwcrypto.kernel.inventory import InventoryEntry, build_inventory
from pytest_hwcrypto.kernel.kmsg import read_kernel_log
from pytest_hwcrypto.kernel.modprobe import load_module_quietly
from pytest_hwcrypto.kernel.procfs import (
    CryptoAlg,
    ProcCryptoError,
    parse_proc_crypto,
    read_proc_crypto,
)
from pytest_hwcrypto.kernel.rerank import Preference, Reranker, RerankError, reranking_lock
from pytest_hwcrypto.kernel.selftest_log import failures as selftest_failures
from pytest_hwcrypto.kernel.test_drivers import MODULE_NAME as TEST_DRIVERS_MODULE_NAME
from pytest_hwcrypto.kernel.test_drivers import TestDriversControl
from pytest_hwcrypto.ledger import Ledger
from pytest_hwcrypto.model.results import Finding, Verdict
from pytest_hwcrypto.model.sensitivity import blind_below
from pytest_hwcrypto.profile import BoardProfile
from pytest_hwcrypto.report.recorder import ResultsRecorder
from pytest_hwcrypto.run import (
    BOARD_KIND_ENV,
    CRYPTODEV_STATE_ENV,
    TEST_DRIVERS_MODULE_ENV,
    TEST_DRIVERS_STATE_ENV,
    HwcryptoRun,
)
from pytest_hwcrypto.settings import Options
from pytest_hwcrypto.target.session import TargetSession
from pytest_hwcrypto.vocabulary import PROC_CRYPTO as PROC_CRYPTO  # patched by a board test
from pytest_hwcrypto.vocabulary import AlgType
from pytest_hwcrypto.xdist_exclusive import measuring_serialized

if TYPE_CHECKING:
    from pytest_hwcrypto.measure.cryptodev_engine import CryptodevEngine


def kernel_log(run: HwcryptoRun) -> list[str]:
    """The kernel's log of the kernel under test: this one's (/dev/kmsg; [] without root),
    or the target's dmesg. The self-test failures the inventory and its suite read; a
    module-level function so a test can replace it."""
    session = target_run.target_session(run)
    return session.kernel_log() if session is not None else read_kernel_log()


def kernel_facts(run: HwcryptoRun) -> KernelFacts:
    if run.kernel_facts is None:
        session = target_run.target_session(run)
        run.kernel_facts = session.kernel if session is not None else gather_kernel_facts()
    return run.kernel_facts


def inventory(run: HwcryptoRun) -> list[InventoryEntry]:
    """The /proc/crypto inventory, read once per run (also at collection time), classed as
    `hwcrypto inventory` classes it: the board profile's [[classify]], then what this
    kernel says of its drivers (crypto_user flags, modules bound to devices), then names."""
    session = target_run.target_session(run) if run.inventory is None else None
    if session is not None:
        run.inventory = target_inventory(run, session, session.proc_crypto)
    if run.inventory is None:
        try:
            algs = read_proc_crypto(PROC_CRYPTO)
        except FileNotFoundError:
            run.inventory = []
        else:
            run.inventory = classified(run, algs)
    return run.inventory


def target_inventory(run: HwcryptoRun, session: TargetSession, text: str) -> list[InventoryEntry]:
    """The board's /proc/crypto `text` classed as `inventory` classes the host's."""
    algs = parse_proc_crypto(text, f"{session.transport.describe()} /proc/crypto")
    overrides = run.profile.classify if run.profile is not None else ()
    return build_inventory(
        algs,
        overrides=overrides,
        live=LiveFacts(notes=(target_run.TARGET_EVIDENCE_NOTE,)),
        selftest_failures=selftest_failures(kernel_log(run)),
    )


def classified(run: HwcryptoRun, algs: Sequence[CryptoAlg]) -> list[InventoryEntry]:
    """A /proc/crypto listing read now (one a suite re-reads after creating instances)
    classed as `inventory` classes it, so that every table of a run gives a driver one
    class (the throughput suite's name-table-only reading once made the test drivers
    `unknown` in AF_ALG's table and `offload` in dm-crypt's). A self-test /proc/crypto
    calls `unknown` is `failed` where the kernel log has the failure."""
    overrides = run.profile.classify if run.profile is not None else ()
    return build_inventory(
        algs,
        overrides=overrides,
        live=gather_live_facts(algs),
        selftest_failures=selftest_failures(kernel_log(run)),
    )


def afalg_reach(run: HwcryptoRun) -> AfalgReach:
    """Whether AF_ALG reaches this kernel's asynchronous drivers, asked of the kernel once
    per run (kernel/afalg_reach.py: each bound by driver name, the refused ones' names as
    the control); nothing is asked where /proc/crypto is missing."""
    if run.afalg_reach is None and run.options.target is not None:
        run.afalg_reach = AfalgReach(
            why_unknown="host-driven run: not probed on the board yet (the helper will)"
        )
    if run.afalg_reach is None:
        try:
            algs = read_proc_crypto(PROC_CRYPTO)
        except (OSError, ProcCryptoError):
            algs = []
        run.afalg_reach = probe_afalg_reach(algs)
    return run.afalg_reach


def recorder(run: HwcryptoRun) -> ResultsRecorder:
    if run.recorder is None:
        facts = kernel_facts(run)
        kernel = {**facts.to_json(), "config_sha256": config_digest(facts.config_source)}
        run.recorder = ResultsRecorder(
            kernel=kernel,
            inventory=[entry.to_json() for entry in inventory(run)],
            environment={**gather_environment(), "board": board_json(run), "seed": None},
        )
    return run.recorder


def board_json(run: HwcryptoRun) -> dict[str, Any]:
    """Which board the run measured on (host: none) and its profile."""
    profile = run.profile
    return {
        "kind": os.environ.get(BOARD_KIND_ENV, "host"),
        "profile": str(profile.path) if profile else None,
        "profile_name": profile.name if profile else None,
    }


@pytest.fixture(scope="session", autouse=True)
def hwcrypto_suite_properties(
    hwcrypto_run: HwcryptoRun, record_testsuite_property: Callable[[str, object], None]
) -> Iterator[None]:
    """Kernel, board and profile as JUnit testsuite properties; every finding at the end.

    (pytest-xdist workers' testsuite properties do not reach the controller's XML: there,
    the findings are in the results JSON and the summary.)
    """
    from pytest_hwcrypto.report.junit_properties import finding_properties, suite_properties

    rec = recorder(hwcrypto_run)
    board = rec.environment.get("board", {})
    run = {
        "kernel": rec.kernel.get("release"),
        "board": board.get("kind"),
        "profile": board.get("profile_name") or board.get("profile") or "none",
    }
    for name, value in suite_properties(run):
        record_testsuite_property(name, value)
    yield
    for name, value in finding_properties(rec.findings):
        record_testsuite_property(name, value)


def record_and_judge(
    results: ResultsRecorder,
    verdict: Verdict,
    findings: Sequence[Finding] = (),
    strict: bool = False,
) -> None:
    """Record a verdict and its findings, then fail the test (no traceback) if it failed.

    Every suite ends a judged test this way, so the results file and the test outcome
    can never disagree.  A passing verdict whose run could not have seen a drop as small
    as its max_drop warns, or, with --hwcrypto-strict, fails.
    """
    if verdict.passed and blind_below(
        verdict.extra.get("detectable_drop"), verdict.extra.get("max_drop")
    ):
        if strict:
            verdict = dataclasses.replace(
                verdict, passed=False, message=f"{verdict.message} (--hwcrypto-strict)"
            )
        else:
            warnings.warn(pytest.PytestWarning(f"{verdict.rule}: {verdict.message}"), stacklevel=2)
    results.add_verdict(verdict)
    for finding in findings:
        results.add_finding(finding)
    if not verdict.passed:
        pytest.fail(f"{verdict.rule}: {verdict.message}", pytrace=False)


@pytest.fixture(scope="session")
def hwcrypto_run(pytestconfig: pytest.Config) -> HwcryptoRun:
    """This run's typed options, board profile, baseline and what was read of the kernel."""
    from pytest_hwcrypto.run import run_of

    return run_of(pytestconfig)


@pytest.fixture(scope="session")
def hwcrypto_options(hwcrypto_run: HwcryptoRun) -> Options:
    """The resolved settings, typed: `hwcrypto_options.budget` is a float."""
    return hwcrypto_run.options


@pytest.fixture(scope="session")
def hwcrypto_profile(hwcrypto_run: HwcryptoRun) -> BoardProfile | None:
    """The board profile given with --hwcrypto-board, or None."""
    return hwcrypto_run.profile


@pytest.fixture(scope="session")
def hwcrypto_kernel(hwcrypto_run: HwcryptoRun) -> KernelFacts:
    """Facts of the running kernel: release, config, self-tests, user API, blacklists."""
    return kernel_facts(hwcrypto_run)


@pytest.fixture(scope="session")
def hwcrypto_inventory(hwcrypto_run: HwcryptoRun) -> list[InventoryEntry]:
    """Every registered implementation from /proc/crypto, classified, winners marked."""
    if hwcrypto_run.options.target is None and not PROC_CRYPTO.exists():
        pytest.skip(
            "/proc/crypto is missing: build the kernel with CONFIG_CRYPTO and CONFIG_PROC_FS"
        )
    try:
        return inventory(hwcrypto_run)
    except ProcCryptoError as error:
        pytest.fail(str(error), pytrace=False)


@pytest.fixture(scope="session")
def hwcrypto_results(hwcrypto_run: HwcryptoRun) -> ResultsRecorder:
    """Where tests record measurements, findings and verdicts for --hwcrypto-json."""
    return recorder(hwcrypto_run)


def concurrent_measuring_reason(config: pytest.Config, suite: str) -> str | None:
    """Why not to measure in this process: other xdist workers share the CPUs meanwhile.

    Under `-n N` with the default distribution the plugin makes the measuring suites wait
    for their turn (`measuring_turn`), so they measure; with another `--dist` each worker
    would run its own measuring run beside the others, and every number would be of a
    contended machine.
    """
    workerinput = getattr(config, "workerinput", None)
    workers = int(workerinput.get("workercount", 1)) if workerinput else 1
    if workers <= 1 or measuring_serialized(config):
        return None
    return (
        f"{suite} is not measured under pytest-xdist with {workers} workers and this "
        "--dist: they would compete for the CPUs being measured; use the default "
        "distribution (-n N alone, or --dist loadgroup), or run "
        f"this suite without -n (pytest --hwcrypto --hwcrypto-suite={suite})"
    )


def run_ledger(run: HwcryptoRun) -> Ledger:
    if run.ledger is None:
        run.ledger = Ledger()
    return run.ledger


PreferDriver = Callable[[str], Preference]


@pytest.fixture
def hwcrypto_prefer(hwcrypto_run: HwcryptoRun) -> Iterator[PreferDriver]:
    """`hwcrypto_prefer(driver)`: make `driver` the winner of its name for this test.

    Every by-name user (cryptodev, OpenSSL's afalg engine, cryptsetup benchmark, dm-crypt
    without capi:) then gets it. Priorities are put back at teardown, also when the test
    fails; a killed run's are put back by the next run's start or `hwcrypto sweep`.
    """
    reason = rerank_unavailable_reason()
    if reason:
        pytest.skip(reason)
    reranker = Reranker(run_ledger(hwcrypto_run), _instantiate, PROC_CRYPTO)
    with ExitStack() as stack:

        def prefer(driver: str) -> Preference:
            try:
                return stack.enter_context(reranker.prefer(driver))
            except (RerankError, CryptoUserError, afalg.AfAlgError) as error:
                pytest.fail(f"cannot prefer {driver}: {error}", pytrace=False)

        yield prefer


def _instantiate(driver: str) -> None:
    afalg.instantiate_any(driver)


def rerank_unavailable_reason() -> str | None:
    """Why priorities cannot be changed here (and how to fix it), or None."""
    if os.geteuid() != 0:
        return "re-ranking drivers needs CAP_NET_ADMIN: run as root (or inside a board)"
    load_module_quietly("crypto_user")
    try:
        CryptoUser().close()
    except CryptoUserError as error:
        return str(error)
    return None


_Session = TypeVar("_Session", bound=afalg.AfAlgSession)


class AfAlg:
    """The AF_ALG engine with this session's operation timeout; skips when AF_ALG is absent.

    Linux 7.3's af_alg_restrict = 1 refuses every driver name (kernel/afalg/errors.py).
    There a driver is reached as users' tools reach it, by its algorithm name: it is made
    the winner of that name (re-ranked through crypto_user under the run's re-ranking lock,
    put back at once; the ledger holds the change meanwhile), the name is bound, and the
    session must then be on that very driver (refcnt evidence) -- else the refusal stands.
    """

    def __init__(self, timeout: float, run: HwcryptoRun | None = None) -> None:
        self.timeout = timeout
        self._run = run
        self._reranker: Reranker | None = None
        self._no_rerank: str | None = None

    def require(self, alg_type: AlgType) -> None:
        available, why = afalg.afalg_available(alg_type)
        if not available:
            pytest.skip(why)

    def skcipher(self, alg: str, key: bytes) -> afalg.SkcipherSession:
        self.require(AlgType.SKCIPHER)
        return self._reached(alg, lambda name: afalg.open_skcipher(name, key, timeout=self.timeout))

    def aead(self, alg: str, key: bytes, authsize: int) -> afalg.AeadSession:
        self.require(AlgType.AEAD)
        return self._reached(
            alg, lambda name: afalg.open_aead(name, key, authsize=authsize, timeout=self.timeout)
        )

    def hash(self, alg: str, key: bytes | None = None) -> afalg.HashSession:
        self.require(AlgType.HASH)
        return self._reached(alg, lambda name: afalg.open_hash(name, key, timeout=self.timeout))

    def rng(self, alg: str, seed: bytes | None = None) -> afalg.RngSession:
        self.require(AlgType.RNG)
        return afalg.open_rng(alg, seed, timeout=self.timeout)

    def _reached(self, alg: str, opener: Callable[[str], _Session]) -> _Session:
        try:
            return opener(alg)
        except afalg.AfAlgRestricted as refused:
            name = _algorithm_of(alg)
            reranker = self._reranker_or_none()
            if name is None or name == alg or reranker is None:
                raise
            with reranking_lock():
                try:
                    with reranker.prefer(alg):
                        session = opener(name)
                except (RerankError, CryptoUserError, afalg.AfAlgError):
                    raise refused from None
            if session.driver != alg:
                session.close()
                raise
            return session

    def _reranker_or_none(self) -> Reranker | None:
        if self._run is None or self._no_rerank is not None:
            return None
        if self._reranker is None:
            self._no_rerank = rerank_unavailable_reason()
            if self._no_rerank is not None:
                return None
            self._reranker = Reranker(run_ledger(self._run), _instantiate, PROC_CRYPTO)
        return self._reranker


def _algorithm_of(driver: str) -> str | None:
    """The algorithm name /proc/crypto lists for `driver`, or None."""
    try:
        listed = read_proc_crypto(PROC_CRYPTO)
    except (OSError, ProcCryptoError):
        return None
    return next((alg.name for alg in listed if alg.driver == driver), None)


@pytest.fixture(scope="session")
def hwcrypto_afalg(hwcrypto_run: HwcryptoRun) -> Iterator[AfAlg]:
    """Open AF_ALG sessions bound to an algorithm or an exact driver name."""
    yield AfAlg(hwcrypto_run.options.timeout, hwcrypto_run)


class Cryptodev:
    """/dev/crypto for tests: sessions by name, or on a chosen driver.

    A chosen driver is made the winner of its name (re-ranking) only while its sessions
    are opened -- they keep their driver afterwards -- and under the run-wide re-ranking
    lock, so xdist workers opening by name meanwhile still get the kernel's own winner.
    """

    def __init__(
        self,
        device: cryptodev.CryptoDevice,
        reranker: Reranker | None,
        no_rerank_reason: str | None,
    ) -> None:
        self.device = device
        self.reranker = reranker
        self.no_rerank_reason = no_rerank_reason or "re-ranking is not available here"

    def by_name(self, algorithm: str, key: bytes = b"") -> cryptodev.Session:
        """A session of `algorithm` on whichever driver wins it (raises CryptodevError)."""
        with self.steady():
            return cryptodev.open_session(self.device, algorithm, key)

    def steady(self) -> AbstractContextManager[None]:
        """No re-ranking by this run while the block runs (a winner read stays the winner)."""
        return reranking_lock(shared=True)

    def on_driver(
        self, algorithm: str, driver: str, keys: Sequence[bytes]
    ) -> list[cryptodev.Session | cryptodev.CryptodevError]:
        """A session per key of `algorithm` served by `driver`, opened in one preference
        window; skips when priorities cannot be changed here, saying how to enable it."""
        if self.reranker is None:
            pytest.skip(f"/dev/crypto reaches {driver} only as the winner: {self.no_rerank_reason}")
        with reranking_lock():
            try:
                return cryptodev.open_many_on_driver(
                    self.device, algorithm, keys, driver, self.reranker.prefer
                )
            except (RerankError, CryptoUserError, afalg.AfAlgError) as error:
                pytest.fail(f"cannot prefer {driver} for /dev/crypto: {error}", pytrace=False)

    def engine(self, timeout: float) -> CryptodevEngine:
        """The /dev/crypto measurement engine with this run's re-ranking."""
        from pytest_hwcrypto.measure.cryptodev_engine import CryptodevEngine

        return CryptodevEngine(self.reranker, timeout, DEV_CRYPTO, self.no_rerank_reason)


def cryptodev_unavailable_reason() -> str | None:
    """Why /dev/crypto is unusable, with what the board's insmod said when it tried."""
    reason = cryptodev.unavailable_reason(DEV_CRYPTO)
    state = os.environ.get(CRYPTODEV_STATE_ENV)
    if reason is not None and state:
        reason += f" (the board says: {state})"
    return reason


@pytest.fixture(scope="session")
def hwcrypto_cryptodev(hwcrypto_run: HwcryptoRun) -> Iterator[Cryptodev]:
    """/dev/crypto (cryptodev-linux): sessions by name, or on an exact driver via re-ranking.

    Skips with the reason and how to get it when /dev/crypto is missing; fails instead when
    --hwcrypto-cryptodev says this board must have it.
    """
    reason = cryptodev_unavailable_reason()
    if reason is not None:
        if hwcrypto_run.options.cryptodev:
            pytest.fail(f"--hwcrypto-cryptodev: {reason}", pytrace=False)
        pytest.skip(reason)
    try:
        device = cryptodev.CryptoDevice(DEV_CRYPTO, hwcrypto_run.options.timeout)
    except cryptodev.CryptodevError as error:
        pytest.fail(str(error), pytrace=False)
    no_rerank = rerank_unavailable_reason()
    reranker = None if no_rerank else Reranker(run_ledger(hwcrypto_run), _instantiate, PROC_CRYPTO)
    try:
        yield Cryptodev(device, reranker, no_rerank)
    finally:
        device.close()


MakeVolume = Callable[..., Volume]


@pytest.fixture
def hwcrypto_dmcrypt_volume(hwcrypto_run: HwcryptoRun) -> Iterator[MakeVolume]:
    """`hwcrypto_dmcrypt_volume(algorithm=..., driver=..., key_bits=..., sector_size=...,
    size=..., integrity=False)`: a dm-crypt volume on its own loop device, pinned to exactly
    `driver` (by default the winner of `algorithm`) and proven to run it (`.path`,
    `.driver`, `.evidence`); `integrity=True` makes a LUKS2 volume with dm-integrity
    (hmac-sha256) through cryptsetup. Removed at teardown, also when the test fails; a
    killed run's volumes are removed by the next run's start or `hwcrypto sweep`.
    """
    reason = block_tools.unavailable_reason()
    if reason:
        pytest.skip(reason)
    # crypto_user tells which drivers dm-crypt refuses (block/dmcrypt.py); without it the
    # refusal is still caught, only worded by dm-crypt's ENOENT.
    load_module_quietly("crypto_user")
    maker = VolumeMaker(run_ledger(hwcrypto_run))
    with ExitStack() as stack:

        def make(
            driver: str | None = None,
            key_bits: int = 256,
            sector_size: int = 512,
            size: int = DEFAULT_SIZE,
            *,
            algorithm: str | None = None,
            integrity: bool = False,
        ) -> Volume:
            if integrity:
                missing = _integrity_missing_reason()
                if missing:
                    pytest.skip(missing)
            try:
                volume = maker.make(algorithm, driver, key_bits, sector_size, size, integrity)
            except block_tools.BlockError as error:
                what = driver or algorithm
                pytest.fail(f"cannot open a dm-crypt volume on {what}: {error}", pytrace=False)
            stack.callback(maker.close, volume)
            return volume

        yield make


MakeContainer = Callable[..., lxc.Container]


@pytest.fixture
def hwcrypto_lxc(hwcrypto_run: HwcryptoRun) -> Iterator[MakeContainer]:
    """`hwcrypto_lxc(devices=["/dev/crypto", ...], privileged=None)`: a started LXC
    container (busybox, no network, this interpreter and the plugin bound read-only) with
    each device passed through as a user does it (device cgroup allow, bind mount, autodev
    hook with the host's major:minor and mode). The object has `run(cmd)` and
    `python(code)` (exit code + output), `restart()`, `config` (the text written) and
    `config_path`. `privileged=None` is privileged (root is needed to pass devices);
    `False` maps the container's root to an unprivileged uid range (user namespace).
    Also: `refused=[...]` (node made, not allowed) and `device_policy=False` (no device
    lines at all). Destroyed at teardown, also when the test fails; a killed run's
    containers are removed by the next run's start or `hwcrypto sweep`.
    """
    reason = lxc.unavailable_reason()
    if reason:
        pytest.skip(reason)
    maker = lxc.ContainerMaker(run_ledger(hwcrypto_run))
    with ExitStack() as stack:

        def make(
            devices: Sequence[str] = (),
            privileged: bool | None = None,
            *,
            refused: Sequence[str] = (),
            device_policy: bool = True,
        ) -> lxc.Container:
            try:
                return stack.enter_context(
                    maker.container(
                        devices,
                        refused=refused,
                        privileged=True if privileged is None else privileged,
                        device_policy=device_policy,
                    )
                )
            except (lxc.ContainerError, ValueError) as error:
                pytest.fail(f"cannot start an LXC container: {error}", pytrace=False)

        yield make


def _integrity_missing_reason() -> str | None:
    """Why a dm-integrity volume cannot be made here, with how to fix it; None if it can."""
    if shutil.which("cryptsetup") is None:
        return "integrity volumes need cryptsetup: apt-get install cryptsetup-bin"
    load_module_quietly("dm_integrity")
    targets = block_tools.run(["dmsetup", "targets"])
    if not any(line.split()[:1] == ["integrity"] for line in targets.splitlines()):
        return "device-mapper has no integrity target: modprobe dm_integrity (CONFIG_DM_INTEGRITY)"
    return None


def test_drivers_or_skip(options: Options) -> TestDriversControl:
    """The loaded test-only drivers; skips without them, or fails when
    --hwcrypto-test-drivers says they must be there."""
    module = os.environ.get(TEST_DRIVERS_MODULE_ENV)
    control = TestDriversControl(Path(module) if module else None)
    if not control.loaded():
        reason = (
            f"the test-only drivers ({TEST_DRIVERS_MODULE_NAME}) are not loaded: run on "
            "--hwcrypto-vm=qemu with --hwcrypto-test-drivers"
        )
        state = os.environ.get(TEST_DRIVERS_STATE_ENV)
        if state:
            reason += f" (the board says: {state})"
        if options.test_drivers:
            pytest.fail(f"--hwcrypto-test-drivers: {reason}", pytrace=False)
        pytest.skip(reason)
    return control


test_drivers_or_skip.__test__ = False  # type: ignore[attr-defined]


@pytest.fixture
def hwcrypto_test_drivers(hwcrypto_run: HwcryptoRun) -> Iterator[TestDriversControl]:
    """The test-only drivers of pytest_hwcrypto/kmod, loaded by the QEMU board's
    --hwcrypto-test-drivers.

    `setting(parameter, driver, value)` makes one driver wrong or slow for a block and
    puts the old value back; `loaded_with({parameter: {driver: value}})` reloads the module
    with load-time values (self-tests run again). Skips without the module; fails instead
    when --hwcrypto-test-drivers says it must be there.
    """
    control = test_drivers_or_skip(hwcrypto_run.options)
    yield control
    if control.module_file is not None and control.loaded():
        control.reset()  # a board's own module: every driver correct for the next test
