# SPDX-License-Identifier: MIT
"""`cryptsetup benchmark`, run once per kernel driver of each cipher it measures.

cryptsetup measures a cipher through AF_ALG by its kernel name (`cbc(aes)`, `xts(aes)`),
so it only ever reports the winner. Here each run for a driver happens inside
`Reranker.prefer(driver)`: the driver is the winner for that run, proven in /proc/crypto,
and put back after. Runs of the drivers of one cipher alternate, round after round, so
drift on a shared machine hits them alike, and the samples of each (driver, direction)
become one Measurement with an interval (model/stats.py).

Not on the run loop of measure/runner.py: one cryptsetup run measures both directions of
a fixed buffer, and its timing is its own (cryptsetup grows the run until it lasts long
enough), so a sample here is one whole run, not a slice of a budget.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field

from pytest_hwcrypto.kernel.rerank import Reranker, RerankError
from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.model.stats import SampleStats
from pytest_hwcrypto.parsers.parse import parse_text
from pytest_hwcrypto.parsers.tables import ParseError
from pytest_hwcrypto.vocabulary import Op, Source

# cryptsetup's cipher spelling -> the kernel name it asks AF_ALG for.
KERNEL_NAMES = {
    "aes-cbc": "cbc(aes)",
    "aes-xts": "xts(aes)",
    "serpent-cbc": "cbc(serpent)",
    "serpent-xts": "xts(serpent)",
    "twofish-cbc": "cbc(twofish)",
    "twofish-xts": "xts(twofish)",
}
_TIMEOUT_SECONDS = 120.0


class CryptsetupError(RuntimeError):
    """A benchmark run failed; the message says which command and why."""


@dataclass(frozen=True)
class CipherCase:
    """One `cryptsetup benchmark -c CIPHER -s KEY_BITS`, to be run on `driver`."""

    cipher: str
    key_bits: int
    driver: str


@dataclass
class CaseSamples:
    case: CipherCase
    encrypt: list[float] = field(default_factory=list)
    decrypt: list[float] = field(default_factory=list)
    error: str | None = None


def cryptsetup_path() -> str | None:
    return shutil.which("cryptsetup") or shutil.which("cryptsetup", path="/usr/sbin:/sbin")


def run_benchmark(args: Sequence[str] = ()) -> list[Measurement]:
    """`cryptsetup benchmark ARGS`, parsed; cipher rows only (PBKDF rows are no bytes)."""
    binary = cryptsetup_path()
    if binary is None:
        raise CryptsetupError("cryptsetup is not installed: apt-get install cryptsetup-bin")
    argv = [binary, "benchmark", *args]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=_TIMEOUT_SECONDS, check=False
        )
    except subprocess.TimeoutExpired:
        raise CryptsetupError(f"{' '.join(argv)}: no result in {_TIMEOUT_SECONDS:g} s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise CryptsetupError(f"{' '.join(argv)}: {last}")
    try:
        return list(parse_text("cryptsetup-benchmark", done.stdout, " ".join(argv)).measurements)
    except ParseError as error:
        raise CryptsetupError(str(error)) from None


def measure_cases(
    cases: Sequence[CipherCase], reranker: Reranker, rounds: int = 3
) -> list[CaseSamples]:
    """`rounds` interleaved runs of every case, each with its driver as the winner."""
    collected = [CaseSamples(case) for case in cases]
    for _ in range(rounds):
        for samples in collected:
            if samples.error:
                continue
            case = samples.case
            try:
                with reranker.prefer(case.driver):
                    rows = run_benchmark(["-c", case.cipher, "-s", str(case.key_bits)])
            except (CryptsetupError, RerankError) as error:
                samples.error = str(error)
                continue
            for row in rows:
                if row.algorithm == case.cipher and row.key_bits == case.key_bits:
                    (samples.encrypt if row.op == Op.ENCRYPT else samples.decrypt).append(
                        row.bytes_per_second
                    )
    return collected


def measurements_of(samples: CaseSamples, driver_class: str | None) -> list[Measurement]:
    """One Measurement per direction, with the samples, the interval and the evidence."""
    found = []
    case = samples.case
    for op, values in ((Op.ENCRYPT, samples.encrypt), (Op.DECRYPT, samples.decrypt)):
        if not values:
            continue
        stats = SampleStats.from_samples(values)
        found.append(
            Measurement(
                source=Source.CRYPTSETUP,
                algorithm=case.cipher,
                driver=case.driver,
                key_bits=case.key_bits,
                block_size=None,
                op=op,
                bytes_per_second=stats.median,
                samples=list(values),
                ci_low=stats.ci_low,
                ci_high=stats.ci_high,
                cov=stats.cov,
                driver_class=driver_class,
                extra={
                    "evidence": f"cryptsetup benchmark -c {case.cipher} -s {case.key_bits}; "
                    f"{case.driver} made the winner of {KERNEL_NAMES[case.cipher]} for each "
                    "run (crypto_user, checked in /proc/crypto)",
                    "kernel_name": KERNEL_NAMES[case.cipher],
                },
            )
        )
    return found
