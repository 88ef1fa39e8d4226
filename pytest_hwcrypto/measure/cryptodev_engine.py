# SPDX-License-Identifier: MIT
"""/dev/crypto (cryptodev-linux) as a measurement engine: sessions proven by CIOCGSESSINFO.

cryptodev opens a session by algorithm *name* and the kernel hands it the name's winner, so
on its own it can only ever measure one driver per name. To measure a chosen driver the
engine makes it the winner through crypto_user (kernel/rerank.py: recorded in the run's
ledger first, put back when the session is open) and opens the session meanwhile. A session
keeps the driver it got for life, so the priorities are back before the first sample is
taken and every target of a plan can stay open for interleaved rounds at once.

The evidence of every measurement is what CIOCGSESSINFO names; when it is not the driver
asked for, the target does not open (EngineError naming both), so a measurement never
carries a driver that did not serve it.

The timing loop issues one prepared CIOCCRYPT per request (kernel/cryptodev `Request`):
one ioctl with a fixed IV and reused buffers, what a C user of /dev/crypto does.

With N requests in flight (`at_concurrency`) the target gets N sessions of its own, each
opened like the first (and proven by CIOCGSESSINFO to be served by the same driver), each
driven by a thread (measure/parallel.py): cryptodev's asynchronous ioctls are compiled out
by default and serialise anyway, so a session per thread is how a user keeps N in flight.
Each lane sends an input of its own (measure/afalg_engine.lane_input) and compares every
output with what its session gave that input alone, before timing: an engine that hands
one request's result to another fails the level, naming the driver ("mixed up requests
in flight"), as on AF_ALG's lanes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

from pytest_hwcrypto.kernel import afalg, cryptodev
from pytest_hwcrypto.kernel.crypto_user import CryptoUserError
from pytest_hwcrypto.kernel.inventory import InventoryEntry
from pytest_hwcrypto.kernel.rerank import Preference, Reranker, RerankError
from pytest_hwcrypto.ledger import Ledger
from pytest_hwcrypto.measure.afalg_engine import lane_input
from pytest_hwcrypto.measure.engine import EngineError, Evidence, RequestLoop, Sample, Timing
from pytest_hwcrypto.measure.parallel import LanePool, LaneWork, ParallelRequests
from pytest_hwcrypto.measure.targets import Target, discover_targets
from pytest_hwcrypto.vocabulary import (
    DEFAULT_TIMEOUT_SECONDS,
    MAX_SESSIONS,
    PROC_CRYPTO,
    AlgType,
    Op,
    Source,
)

# Every request starts from this IV; cryptodev reads as many bytes as the mode's IV has
# (none for ecb), so one 16-byte IV fits every block-cipher mode it offers.
FIXED_IV = bytes(range(16))


def reachable_by_cryptodev(target: Target) -> bool:
    """Can a /dev/crypto session of the target's algorithm be opened at all?"""
    alg = cryptodev.algorithm(target.algorithm)
    if alg is None or alg.kind != target.kind:
        return False
    return target.kind == AlgType.SKCIPHER or not alg.keyed


class CryptodevEngine:
    """Every skcipher and hash driver cryptodev can be steered to, through `reranker`.

    Without a reranker (no root, no crypto_user) only each name's winner opens; the others
    fail with `no_rerank_reason`, which says how to enable re-ranking.
    """

    source = Source.CRYPTODEV
    # a session is an open /dev/crypto and one CIOCGSESSION (re-ranked while it opens)
    max_sessions = MAX_SESSIONS

    def __init__(
        self,
        reranker: Reranker | None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        path: Path = cryptodev.DEV_CRYPTO,
        no_rerank_reason: str = "re-ranking is not available here",
    ) -> None:
        self.reranker = reranker
        self.timeout = timeout
        self.path = path
        self.no_rerank_reason = no_rerank_reason

    @classmethod
    def with_ledger(
        cls,
        ledger: Ledger,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        proc_crypto: Path = PROC_CRYPTO,
    ) -> CryptodevEngine:
        """Re-ranking through crypto_user, recorded in `ledger`; template instances are
        created by binding them once through AF_ALG, which is what makes them exist."""
        return cls(Reranker(ledger, _instantiate, proc_crypto), timeout)

    def reachable(self, inventory: Sequence[InventoryEntry]) -> list[Target]:
        return [target for target in discover_targets(inventory) if reachable_by_cryptodev(target)]

    def open(self, target: Target, timing: Timing) -> CryptodevBound:
        reason = cryptodev.unavailable_reason(self.path)
        if reason is not None:
            raise EngineError(reason, unavailable=True)
        try:
            device = cryptodev.CryptoDevice(self.path, self.timeout)
        except cryptodev.CryptodevError as error:
            raise EngineError(str(error), unavailable=True) from None
        try:
            session, how = self._open_session(device, target)
        except BaseException:
            device.close()
            raise
        evidence = Evidence(driver=session.driver, how=how)
        return CryptodevBound(
            device, session, evidence, timing, opener=lambda: self.open(target, timing)
        )

    def _open_session(
        self, device: cryptodev.CryptoDevice, target: Target
    ) -> tuple[cryptodev.Session, str]:
        key = os.urandom(target.key_bytes or 0) if target.kind == AlgType.SKCIPHER else b""
        preferences: list[Preference] = []
        reranker = self.reranker

        @contextmanager
        def prefer(driver: str) -> Iterator[Preference]:
            assert reranker is not None
            with reranker.prefer(driver) as preference:
                preferences.append(preference)
                yield preference

        try:
            session = cryptodev.open_on_driver(
                device, target.algorithm, key, target.driver, prefer if reranker else None
            )
        except cryptodev.CryptodevError as error:
            message = str(error)
            if reranker is None:
                message += f"; {self.no_rerank_reason}"
            raise EngineError(message) from None
        except (RerankError, CryptoUserError, afalg.AfAlgError) as error:
            raise EngineError(
                f"{target.driver}: cannot make it the winner of {target.algorithm} for "
                f"/dev/crypto: {error}"
            ) from None
        return session, _how(target, session, preferences)


def _how(target: Target, session: cryptodev.Session, preferences: Sequence[Preference]) -> str:
    """The evidence sentence: what CIOCGSESSINFO said, and how the driver came to win."""
    said = f"CIOCGSESSINFO of a /dev/crypto {target.algorithm} session names {session.driver}"
    changed = [p for p in preferences if p.changed]
    if changed:
        p = changed[0]
        return f"{said} (opened while re-ranked to priority {p.priority}, from {p.original})"
    return f"{said} (the winner of the name)"


def _instantiate(driver: str) -> None:
    afalg.instantiate_any(driver)


class CryptodevBound:
    """A target's /dev/crypto session and its prepared requests, one per op and size."""

    def __init__(
        self,
        device: cryptodev.CryptoDevice,
        session: cryptodev.Session,
        evidence: Evidence,
        timing: Timing,
        opener: Callable[[], CryptodevBound] | None = None,
    ) -> None:
        self.device = device
        self.session = session
        self.evidence = evidence
        self._requests: dict[tuple[str, int], cryptodev.Request] = {}
        self._timing = timing
        self._loop = RequestLoop(self, timing, os.urandom)
        self._opener = opener
        self._levels: dict[int, CryptodevConcurrent] = {}

    def at_concurrency(self, level: int) -> CryptodevConcurrent:
        """The target measured through `level` sessions at once, a thread each (kept)."""
        if level not in self._levels:
            if self._opener is None:
                raise EngineError(f"{self.evidence.driver}: cannot open more sessions")
            self._levels[level] = CryptodevConcurrent(self, level, self._opener)
        return self._levels[level]

    def lane_work(self, lane: int, op: str, block: bytes) -> LaneWork:
        """This session's request loop, for lane `lane` of a concurrent measurement: the
        lane's own input, its output taken once alone here (outside any timing) and every
        timed request's output compared with it."""
        session = self.session
        if not isinstance(session, (cryptodev.HashSession, cryptodev.CipherSession)):
            raise EngineError(f"{session.describe()}: only skciphers and hashes are timed")
        mine = lane_input(block, lane)
        if op not in (Op.ENCRYPT, Op.DECRYPT, Op.DIGEST):
            raise EngineError(f"unknown op {op!r}")
        # its own request (not the one-at-a-time loop's, which has another input)
        if isinstance(session, cryptodev.HashSession):
            request = session.request(mine)
        else:
            request = session.request(op, mine, FIXED_IV)
        try:
            request.run(1)
        except cryptodev.CryptodevError as error:
            raise EngineError(str(error)) from None
        expected = request.output()

        def run(count: int, progress: list[int]) -> None:
            try:
                request.run(count, expected)
            except cryptodev.CryptodevError as error:
                raise EngineError(str(error)) from None
            progress[0] = count

        return run

    def _request(self, op: str, block: bytes) -> cryptodev.Request:
        key = (op, len(block))
        if key not in self._requests:
            session = self.session
            if isinstance(session, cryptodev.HashSession):
                self._requests[key] = session.request(block)
            elif isinstance(session, cryptodev.CipherSession):
                self._requests[key] = session.request(op, block, FIXED_IV)
            else:
                raise EngineError(f"{session.describe()}: only skciphers and hashes are timed")
        return self._requests[key]

    def run(self, op: str, block: bytes, count: int) -> None:
        """`count` CIOCCRYPT requests of `block`; cryptodev's errors become EngineErrors."""
        if op not in (Op.ENCRYPT, Op.DECRYPT, Op.DIGEST):
            raise EngineError(f"unknown op {op!r}")
        try:
            self._request(op, block).run(count)
        except cryptodev.CryptodevError as error:
            raise EngineError(str(error)) from None

    def warm_up(self, op: str, block_size: int, seconds: float) -> None:
        self._loop.warm_up(op, block_size, seconds)

    def sample(self, op: str, block_size: int, seconds: float) -> Sample:
        return self._loop.sample(op, block_size, seconds)

    def close(self) -> None:
        for level in self._levels.values():
            level.close()
        self._levels.clear()
        # Closing the device below ends the session all the same.
        with suppress(cryptodev.CryptodevError):
            self.session.close()
        self.device.close()


class CryptodevConcurrent:
    """`level` sessions of one target (the first is the target's own), a thread each."""

    def __init__(
        self, first: CryptodevBound, level: int, opener: Callable[[], CryptodevBound]
    ) -> None:
        self.evidence = first.evidence
        self._extra: list[CryptodevBound] = []
        try:
            for _ in range(level - 1):
                more = opener()
                self._extra.append(more)
                if more.evidence.driver != first.evidence.driver:
                    raise EngineError(
                        f"{first.evidence.driver}: a further /dev/crypto session was served "
                        f"by {more.evidence.driver}"
                    )
        except BaseException:
            self.close()
            raise
        sessions = [first, *self._extra]
        # Each lane's own loop already stops at the operation timeout; the pool's watch is
        # the backstop for a lane stuck where that cannot reach.
        self._pool = LanePool(
            level, 2 * first.device.timeout, f"{first.evidence.driver} ({level} sessions)"
        )
        self._runner = ParallelRequests(
            self._pool, lambda lane, op, block: sessions[lane].lane_work(lane, op, block)
        )
        self._loop = RequestLoop(self._runner, first._timing, os.urandom)

    def warm_up(self, op: str, block_size: int, seconds: float) -> None:
        # Every lane with its reference request, before the warm-up's timing.
        self._runner.prepare(op, os.urandom(block_size))
        self._loop.warm_up(op, block_size, seconds)

    def sample(self, op: str, block_size: int, seconds: float) -> Sample:
        return self._loop.sample(op, block_size, seconds)

    def close(self) -> None:
        pool: LanePool | None = getattr(self, "_pool", None)
        if pool is not None:
            pool.close()
        for session in self._extra:
            session.close()
        self._extra.clear()
