# SPDX-License-Identifier: MIT
"""Public-key operations per second through keyctl pkey_* (kernel/keyctl.py).

A sample is as many operations as fit in its seconds, one after another; a measurement is
the median of the samples in operations per second (`unit = "op/s"`, no block size), with
the driver that served: the inner driver of the template instance the kernel's
public_key code allocated (``pkcs1pad(rsa-generic,sha256)`` -> ``rsa-generic``), read from
/proc/crypto after the first operation. User space cannot pick that driver; it is the
winner of ``rsa`` among the drivers that passed their self-tests.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence

from pytest_hwcrypto.kernel.procfs import CryptoAlg
from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.model.stats import SampleStats
from pytest_hwcrypto.vocabulary import RateUnit, Source

# pkcs1pad(rsa-generic,sha256) on 6.1; pkcs1(rsa-generic,sha256) (the 7.x sig) alike.
_INSTANCE = re.compile(r"^(?:pkcs1pad|pkcs1|pss)\((?P<inner>[^,()]+)(?:,[^()]*)?\)$")


def inner_driver(instance_driver: str) -> str | None:
    """``rsa-generic`` for ``pkcs1pad(rsa-generic,sha256)``; None for any other name."""
    found = _INSTANCE.match(instance_driver)
    return found["inner"] if found else None


def served_driver(
    before: Sequence[CryptoAlg], after: Sequence[CryptoAlg], padded: str = "pkcs1pad(rsa,sha256)"
) -> tuple[str | None, str]:
    """The driver a keyctl operation used, and how that is known.

    A padding instance that appeared between the two listings names it. Where none did (the
    kernel made it at boot, checking module signatures), the tested entry of highest
    priority registered as `padded` served -- the kernel's winner for that name: either an
    instance (``pkcs1pad(rsa-generic,sha256)``: its inner driver) or a driver that does the
    padding itself (virtio-crypto's ``virtio-pkcs1-rsa`` for ``pkcs1pad(rsa,sha1)``)."""
    known = {alg.driver for alg in before}
    new = [(a.driver, inner_driver(a.driver)) for a in after if a.driver not in known]
    named = [(whole, inner) for whole, inner in new if inner]
    if named:
        instance, served = named[0]
        return served, f"the instance {instance} appeared in /proc/crypto at the first call"
    tested = [a for a in after if a.name == padded and a.selftest in (None, "passed")]
    if not tested:
        return None, f"no tested {padded} in /proc/crypto"
    winner = max(tested, key=lambda a: a.priority or 0)
    how = f"{winner.driver}, the winner of {padded} in /proc/crypto"
    return inner_driver(winner.driver) or winner.driver, how


def sample_rate(operation: Callable[[], object], seconds: float) -> float:
    """Operations per second: `operation` repeated for about `seconds`."""
    count, began = 0, time.perf_counter()
    while True:
        operation()
        count += 1
        elapsed = time.perf_counter() - began
        if elapsed >= seconds:
            return count / elapsed


def measure_operations(
    operation: Callable[[], object],
    *,
    algorithm: str,
    driver: str | None,
    key_bits: int,
    op: str,
    samples: int,
    seconds: float,
    evidence: str,
    driver_class: str | None = None,
) -> Measurement:
    """One op/s measurement of `samples` samples of `seconds` each."""
    rates = [sample_rate(operation, seconds) for _ in range(samples)]
    stats = SampleStats.from_samples(rates)
    return Measurement(
        str(Source.KEYCTL),
        algorithm,
        driver,
        key_bits,
        None,
        op,
        stats.median,
        samples=rates,
        ci_low=stats.ci_low,
        ci_high=stats.ci_high,
        cov=stats.cov,
        driver_class=driver_class,
        extra={"evidence": evidence},
        unit=str(RateUnit.OPERATIONS_PER_SECOND),
    )


__all__ = ["inner_driver", "measure_operations", "sample_rate", "served_driver"]
