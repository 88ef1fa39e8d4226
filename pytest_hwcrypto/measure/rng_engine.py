# SPDX-License-Identifier: MIT
"""The kernel's random number generators through AF_ALG's rng type, as a measurement engine.

The targets are /proc/crypto's ``type : rng`` entries: the DRBGs (name ``stdrng``, drivers
``drbg_nopr_*`` and ``drbg_pr_*``), ``jitterentropy_rng``, ``ansi_cprng`` and any hardware
PRNG an engine registers (sun8i-ce's, CAAM's: also under ``stdrng``). Each is bound by its
driver name -- the crypto API looks a driver name up like an algorithm name, and the rng
type is synchronous, so the off-CPU mask of 7.2's AF_ALG does not apply -- and where the
kernel refuses that, by its algorithm name, the evidence then naming the driver that served.

Seeding is ALG_SET_KEY with ``seedsize`` bytes (/proc/crypto's ``seedsize``) of the host's
randomness: ``ansi_cprng`` needs 48; the DRBGs and jitterentropy say 0, and an empty seed
makes the kernel seed them from its own entropy, which is also what a DRBG needs before it
generates at all.

One request is one ``recvmsg`` of up to 128 bytes (algif_rng's MAXSIZE): a read size above
that is several requests, as it is for every user of AF_ALG's rng.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.inventory import InventoryEntry
from pytest_hwcrypto.measure.engine import EngineError, Evidence, RequestLoop, Sample, Timing
from pytest_hwcrypto.measure.targets import Target
from pytest_hwcrypto.vocabulary import DEFAULT_TIMEOUT_SECONDS, MAX_SESSIONS, AlgType, Op, Source

# The read sizes worth timing by default: one small request, algif_rng's largest, and
# sizes a user asking for key material or a nonce stream reads.
DEFAULT_READ_SIZES: tuple[int, ...] = (16, 128, 4096)
# The op the plan gives rng targets.
RNG_OPS: Mapping[str, Sequence[str]] = {AlgType.RNG: (Op.GENERATE,)}


def rng_targets(entries: Sequence[InventoryEntry]) -> list[Target]:
    """Every rng driver AF_ALG may be asked for: not internal, its self-test not failed
    (a failed one is the inventory's finding, not a measurement), highest priority first."""
    usable = [
        entry
        for entry in entries
        if entry.type == AlgType.RNG
        and not entry.alg.is_internal
        and entry.selftest in (None, "passed")
    ]
    ordered = sorted(usable, key=lambda entry: -(entry.priority or 0))
    return [
        Target(
            algorithm=entry.name,
            driver=entry.driver,
            kind=AlgType.RNG,
            key_bits=None,
            rank=rank,
            driver_class=entry.driver_class,
        )
        for rank, entry in enumerate(ordered)
    ]


def seed_for(entry_seedsize: int | None) -> bytes:
    """``seedsize`` bytes of the host's randomness; empty (kernel-seeded) for 0 or unknown."""
    return os.urandom(entry_seedsize or 0)


def open_rng_session(
    driver: str, algorithm: str, seedsize: int | None, timeout: float
) -> tuple[afalg.RngSession, str]:
    """The driver bound by its own name, else by the algorithm's name; and how it was bound."""
    try:
        return afalg.open_rng(driver, seed_for(seedsize), timeout=timeout), "by driver name"
    except afalg.AfAlgError as by_driver:
        if algorithm == driver:
            raise
        try:
            session = afalg.open_rng(algorithm, seed_for(seedsize), timeout=timeout)
        except afalg.AfAlgError:
            raise by_driver from None
        return session, f"by algorithm name {algorithm} (driver name refused: {by_driver})"


class RngEngine:
    """Every rng driver of the inventory, through AF_ALG, with this run's timeout."""

    source = Source.AFALG
    max_sessions = MAX_SESSIONS

    def __init__(
        self,
        seedsizes: dict[str, int | None] | None = None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        # driver -> /proc/crypto seedsize, read with the inventory
        self.seedsizes = dict(seedsizes or {})
        self.timeout = timeout

    def reachable(self, inventory: Sequence[InventoryEntry]) -> list[Target]:
        for entry in inventory:
            self.seedsizes.setdefault(entry.driver, entry.alg.seedsize)
        return rng_targets(inventory)

    def open(self, target: Target, timing: Timing) -> RngBound:
        try:
            return RngBound(target, self.seedsizes.get(target.driver), self.timeout, timing)
        except afalg.AfAlgError as error:
            raise EngineError(
                str(error),
                masked=isinstance(error, afalg.AfAlgMasked),
                unavailable=isinstance(error, afalg.AfAlgUnavailable),
            ) from None
        except OSError as error:
            raise EngineError(f"{target.driver}: {error}") from None


class RngBound:
    """One seeded rng session; a request is one read of the block's size."""

    def __init__(
        self, target: Target, seedsize: int | None, timeout: float, timing: Timing
    ) -> None:
        self.target = target
        self.session, bound_how = open_rng_session(
            target.driver, target.algorithm, seedsize, timeout
        )
        served = self.session.driver or target.driver
        if served != target.driver:
            # By name the kernel hands out its winner: this driver is out of AF_ALG's reach.
            self.session.close()
            raise EngineError(
                f"{target.driver}: AF_ALG binds it only {bound_how}, which gives {served}"
            )
        self.evidence = Evidence(
            driver=served,
            how=f"AF_ALG rng bound {bound_how} (driver known by {self.session.driver_evidence})",
        )
        self._loop = RequestLoop(self, timing, bytes)

    def run(self, op: str, block: bytes, count: int) -> None:
        size = len(block)
        try:
            for _ in range(count):
                self.session.generate(size)
        except (afalg.AfAlgError, OSError) as error:
            raise EngineError(str(error)) from None

    def warm_up(self, op: str, block_size: int, seconds: float) -> None:
        self._loop.warm_up(op, block_size, seconds)

    def sample(self, op: str, block_size: int, seconds: float) -> Sample:
        return self._loop.sample(op, block_size, seconds)

    def close(self) -> None:
        self.session.close()


__all__ = [
    "DEFAULT_READ_SIZES",
    "RNG_OPS",
    "RngBound",
    "RngEngine",
    "open_rng_session",
    "rng_targets",
    "seed_for",
]
