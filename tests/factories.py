# SPDX-License-Identifier: MIT
"""Builders of `Measurement`s and results documents for the tests (not shipped).

A test names only the fields it is about; the rest take the values most tests share
(one AF_ALG cbc(aes) measurement with a 128-bit key, 4 KiB blocks, encrypting).
Imported as `tests.factories`: the repository's root conftest.py puts the root on sys.path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_hwcrypto.model.results import Measurement, Results
from pytest_hwcrypto.model.stats import SampleStats
from pytest_hwcrypto.vocabulary import MIB


def measurement(
    driver: str | None = "cbc(aes-generic)",
    bytes_per_second: float = 1.0,
    *,
    source: str = "afalg",
    algorithm: str = "cbc(aes)",
    key_bits: int | None = 128,
    block_size: int | None = 4096,
    op: str = "encrypt",
    **fields: Any,
) -> Measurement:
    """One measurement; `fields` are Measurement's optional ones (samples, extra, ...)."""
    return Measurement(
        source, algorithm, driver, key_bits, block_size, op, bytes_per_second, **fields
    )


def at_mib_s(driver: str | None, mib_s: float, **fields: Any) -> Measurement:
    """A measurement whose headline rate is given in MiB/s."""
    return measurement(driver, mib_s * MIB, **fields)


def sampled(driver: str | None, samples: Sequence[float], **fields: Any) -> Measurement:
    """A measurement of these samples (bytes/s), headed by their median like the runner's."""
    return measurement(
        driver, SampleStats.from_samples(list(samples)).median, samples=list(samples), **fields
    )


def spread(rate: float, percents: Sequence[float]) -> list[float]:
    """Samples around `rate`, each off by the given percentage."""
    return [rate * (1 + percent / 100) for percent in percents]


def results(*measurements: Measurement, **fields: Any) -> Results:
    """A results document holding these measurements; `fields` are Results' other parts."""
    return Results(measurements=list(measurements), **fields)
