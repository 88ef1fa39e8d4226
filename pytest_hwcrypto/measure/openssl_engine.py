# SPDX-License-Identifier: MIT
"""`openssl speed` as a measurement engine: OpenSSL's own software, and each kernel driver
through OpenSSL's afalg engine.

Always `-elapsed` (without it openssl divides by its own CPU time, which hides the time an
offload engine makes it wait) and always `-evp` (the legacy cipher names bypass engines),
with `-mr` output parsed by parsers/ (the paste parser reads it too). One sample is one
`openssl speed -bytes B -seconds S` run, S a whole number of seconds (openssl counts
whole seconds).

The afalg engine asks the kernel for `cbc(aes)` by name, so it measures whichever driver
wins. To measure one driver, each sample of it runs inside `Reranker.prefer(driver)`: the
driver is made the winner for that one run and put back right after, so samples of
different drivers can interleave and the kernel is re-ranked only while a sample runs.
The evidence of the driver is that re-ranking, proven in /proc/crypto before each run.

With N requests in flight (`at_concurrency`, --hwcrypto-concurrency) each sample is one
`openssl speed -multi N` run: N forked processes, each its own afalg engine and so its own
AF_ALG sockets (or its own software loop), and the parent's summed `+F` rate is the sample.

The other way OpenSSL offers (`OpenSslEngine(..., async_jobs=True)`, source
`openssl-async-jobs`): one process with `-async_jobs N`, N ASYNC jobs each with its own
cipher context and so its own AF_ALG socket; the afalg engine submits each job's request
with io_submit and pauses the job until the kernel completes it. That puts N requests in
flight only where the kernel completes AF_ALG's AIO asynchronously: kernels carrying the
stable change "crypto: algif_skcipher - force synchronous processing" (Debian 6.1.180 and
later, 6.12.97 and later) complete each request inside io_submit, so the jobs take turns.
Level 1 runs `-async_jobs 1` too, so every level of this source goes the same way.
"""

from __future__ import annotations

import resource
import shutil
import subprocess
from collections.abc import Sequence

from pytest_hwcrypto.kernel.inventory import InventoryEntry
from pytest_hwcrypto.kernel.rerank import Reranker, RerankError
from pytest_hwcrypto.measure.cpu import CpuUsage, usage_between
from pytest_hwcrypto.measure.engine import EngineError, Evidence, Sample, Timing
from pytest_hwcrypto.measure.plan import Cell, Plan, cells_for
from pytest_hwcrypto.measure.targets import RANK_CIPHER_MODES, Target, discover_targets
from pytest_hwcrypto.parsers.parse import parse_text
from pytest_hwcrypto.parsers.tables import ParseError
from pytest_hwcrypto.vocabulary import AlgType, DriverClass, Op, Source

# What OpenSSL itself runs: the software side of every comparison here.
SOFTWARE = "openssl"
AFALG_ENGINE = "afalg"
# How requests in flight are made: N processes, or N ASYNC jobs in one process.
MULTI = "multi"
ASYNC_JOBS = "async_jobs"
# OpenSSL's names of what the afalg engine can serve, and the kernel's name for each.
KERNEL_NAMES = {"aes-128-cbc": "cbc(aes)", "aes-192-cbc": "cbc(aes)", "aes-256-cbc": "cbc(aes)"}
# A run that takes this much longer than asked is stuck (an offload engine that hangs).
_RUN_GRACE_SECONDS = 30.0


def engine_ciphers(openssl: str = "openssl", engine: str = AFALG_ENGINE) -> list[str]:
    """The ciphers `openssl engine -c` says the engine serves (lower case); [] without it."""
    try:
        done = subprocess.run(
            [openssl, "engine", "-c", engine],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if done.returncode != 0 or "[" not in done.stdout:
        return []
    listed = done.stdout.split("[", 1)[1].split("]", 1)[0]
    return [name.strip().lower() for name in listed.split(",") if name.strip()]


def software_target(cipher: str) -> Target:
    bits = int(cipher.split("-")[1])
    return Target(
        algorithm=cipher,
        driver=SOFTWARE,
        kind=AlgType.SKCIPHER,
        key_bits=bits,
        rank=RANK_CIPHER_MODES,
        # OpenSSL's userspace code (AES-NI or NEON where the CPU has them): the software
        # path a kernel driver must beat, whatever instructions it uses.
        driver_class=DriverClass.GENERIC,
        block_multiple=16,
    )


def kernel_targets(cipher: str, inventory: Sequence[InventoryEntry]) -> list[Target]:
    """Every kernel driver of the cipher's kernel name, as AF_ALG can bind them."""
    name, bits = KERNEL_NAMES[cipher], int(cipher.split("-")[1])
    found = [t for t in discover_targets(inventory) if t.algorithm == name]
    by_driver = {t.driver: t for t in found}
    return [
        Target(cipher, t.driver, t.kind, bits, t.rank, t.driver_class, t.registered, 16)
        for t in sorted(by_driver.values(), key=lambda t: t.driver)
    ]


def openssl_plan(
    targets: Sequence[Target],
    block_sizes: Sequence[int],
    budget: float,
    concurrency: Sequence[int] = (1,),
) -> Plan:
    """Whole-second samples: as many interleaved rounds as the budget holds, 1 to 5; a
    cell per level of `concurrency` (openssl speed -multi N)."""
    cells: tuple[Cell, ...] = tuple(
        cells_for(targets, block_sizes, {AlgType.SKCIPHER: (Op.ENCRYPT,)}, concurrency)
    )
    rounds = max(1, min(5, int(budget // max(len(cells), 1))))
    return Plan(cells, rounds, 1.0, 0.0, 0.0, budget)


class OpenSslEngine:
    """Runs `openssl speed`; kernel targets need `reranker` (None: software only).
    `async_jobs`: requests in flight as ASYNC jobs of one process (source
    openssl-async-jobs), not as processes."""

    # every sample is a fresh `openssl speed` process already
    max_sessions = 1

    def __init__(
        self, reranker: Reranker | None, openssl: str | None = None, async_jobs: bool = False
    ) -> None:
        self.reranker = reranker
        self.openssl = openssl or shutil.which("openssl") or "openssl"
        self.way = ASYNC_JOBS if async_jobs else MULTI
        self.source = Source.OPENSSL_ASYNC_JOBS if async_jobs else Source.OPENSSL

    def reachable(self, inventory: Sequence[InventoryEntry]) -> list[Target]:
        ciphers = engine_ciphers(self.openssl) if self.reranker else []
        software = [software_target(cipher) for cipher in KERNEL_NAMES]
        kernel = [
            t
            for cipher in ciphers
            if cipher in KERNEL_NAMES
            for t in kernel_targets(cipher, inventory)
        ]
        return software + kernel

    def open(self, target: Target, timing: Timing) -> OpenSslBound:
        if target.driver == SOFTWARE:
            evidence = Evidence(SOFTWARE, "OpenSSL's own code, no engine")
            return OpenSslBound(self.openssl, target, None, evidence, timing, way=self.way)
        if self.reranker is None:
            raise EngineError(
                f"{target.driver}: measuring a kernel driver through OpenSSL's afalg engine "
                "needs re-ranking (root and crypto_user)",
                unavailable=True,
            )
        if target.algorithm not in engine_ciphers(self.openssl):
            raise EngineError(
                f"OpenSSL's {AFALG_ENGINE} engine does not serve {target.algorithm} here",
                unavailable=True,
            )
        how = (
            f"openssl -engine {AFALG_ENGINE}; {target.driver} made the winner of "
            f"{KERNEL_NAMES[target.algorithm]} for each run (crypto_user, checked in /proc/crypto)"
        )
        return OpenSslBound(
            self.openssl, target, self.reranker, Evidence(target.driver, how), timing, way=self.way
        )


class OpenSslBound:
    """One target; every sample is one `openssl speed` run."""

    def __init__(
        self,
        openssl: str,
        target: Target,
        reranker: Reranker | None,
        evidence: Evidence,
        timing: Timing,
        multi: int = 1,
        way: str = MULTI,
    ) -> None:
        self.openssl = openssl
        self.target = target
        self.reranker = reranker
        self.evidence = evidence
        self.timing = timing
        # requests in flight: openssl processes at once (-multi) or ASYNC jobs (-async_jobs)
        self.multi = multi
        self.way = way

    def at_concurrency(self, level: int) -> OpenSslBound:
        """The same target measured by `openssl speed -multi level` (or -async_jobs)."""
        return OpenSslBound(
            self.openssl, self.target, self.reranker, self.evidence, self.timing, level, self.way
        )

    def warm_up(self, op: str, block_size: int, seconds: float) -> None:
        """Nothing to calibrate: openssl times itself."""

    def close(self) -> None:
        """Nothing stays open between runs (each sample restores the priorities)."""

    def argv(self, op: str, block_size: int, seconds: int) -> list[str]:
        argv = [self.openssl, "speed", "-elapsed", "-evp", self.target.algorithm, "-mr"]
        argv += ["-bytes", str(block_size), "-seconds", str(seconds)]
        if op == Op.DECRYPT:
            argv.append("-decrypt")
        if self.reranker is not None:
            argv += ["-engine", AFALG_ENGINE]
        if self.way == ASYNC_JOBS:
            argv += ["-async_jobs", str(self.multi)]
        elif self.multi > 1:
            argv += ["-multi", str(self.multi)]
        return argv

    def sample(self, op: str, block_size: int, seconds: float) -> Sample:
        whole = max(1, round(seconds))
        if self.reranker is None:
            return self._run(op, block_size, whole)
        try:
            with self.reranker.prefer(self.target.driver):
                return self._run(op, block_size, whole)
        except RerankError as error:
            raise EngineError(str(error)) from None

    def _run(self, op: str, block_size: int, seconds: int) -> Sample:
        argv = self.argv(op, block_size, seconds)
        before, children_before = self.timing.meter.snapshot(), _children_cpu()
        began = self.timing.clock()
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=seconds + _RUN_GRACE_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise EngineError(
                f"{' '.join(argv)}: no result after {seconds + _RUN_GRACE_SECONDS:g} s"
            ) from None
        elapsed = self.timing.clock() - began
        usage = usage_between(before, self.timing.meter.snapshot())
        # The work is openssl's (and the kernel's on its behalf), not this process's.
        cpu = CpuUsage(_children_cpu() - children_before, usage.system_seconds)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            raise EngineError(f"{' '.join(argv)}: {last}")
        try:
            found = parse_text("openssl-speed", done.stdout, " ".join(argv)).measurements
        except ParseError as error:
            raise EngineError(str(error)) from None
        rates = [m.bytes_per_second for m in found if m.block_size == block_size]
        if not rates:
            raise EngineError(f"{' '.join(argv)}: no {block_size}-byte result in its output")
        # openssl reports a rate over its own `seconds`; the sample keeps that rate exactly
        # (operations x block / seconds), with the wall time of the whole run beside it.
        operations = max(1, round(rates[0] * seconds / block_size))
        rate_seconds = operations * block_size / rates[0] if rates[0] else elapsed
        return Sample(operations, block_size, rate_seconds, cpu)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
