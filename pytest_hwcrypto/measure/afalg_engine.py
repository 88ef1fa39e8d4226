# SPDX-License-Identifier: MIT
"""AF_ALG as a measurement engine: sessions bound by exact driver name, timed request loops.

Where the kernel refuses driver names (Linux 7.3's /proc/sys/crypto/af_alg_restrict = 1),
a target is bound by its algorithm name instead and measured only if the kernel handed out
that very driver for the name (the winner); the others are reported as not reachable.

The timing loop is the AF_ALG session's fast path (kernel/afalg `crypt_loop` and
`digest_loop`): per request one sendmsg carrying op and IV plus one read into a reused
buffer, on one op socket per driver -- what an efficient C user of AF_ALG does (the
harness-fidelity benchmark compares the two). Binding a template instance by driver name
makes the kernel create it, so opening is also where `cbc(aes-generic)` comes to exist.
The driver that served is the one the session resolved on bind (its /proc/crypto refcnt
rose), and a run records that, not the name asked for.

With N requests in flight (`at_concurrency`, --hwcrypto-concurrency) the bound transform
accepts N more op sockets, each driven by a thread of its own (measure/parallel.py): one
key, one transform, N requests in the kernel at once -- the way a server shares one tfm.
A socket carries one request at a time (AF_ALG allows one AIO request per socket since
2023), so N sockets is how user space keeps N requests in flight. Each lane sends an input
of its own (the block with its first byte changed by the lane's number), and every output
it reads is compared with what the transform gave that input alone, one request at a time:
an engine that hands one request's output to another (mixed-up completions) fails the
level naming the driver, instead of being measured.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.inventory import InventoryEntry
from pytest_hwcrypto.measure.engine import (
    EngineError,
    Evidence,
    RequestLoop,
    Sample,
    Timing,
)
from pytest_hwcrypto.measure.parallel import LanePool, LaneWork, ParallelRequests
from pytest_hwcrypto.measure.targets import Target, discover_targets
from pytest_hwcrypto.vocabulary import DEFAULT_TIMEOUT_SECONDS, MAX_SESSIONS, AlgType, Op, Source


class AfAlgEngine:
    """Every skcipher and hash driver AF_ALG can bind, with this run's operation timeout."""

    source = Source.AFALG
    # a session is a bound socket pair: a few syscalls to open
    max_sessions = MAX_SESSIONS

    def __init__(self, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        self.timeout = timeout

    def reachable(self, inventory: Sequence[InventoryEntry]) -> list[Target]:
        return discover_targets(inventory)

    def open(self, target: Target, timing: Timing) -> AfAlgBound:
        try:
            return AfAlgBound(target, self.timeout, timing)
        except afalg.AfAlgError as error:
            raise EngineError(
                str(error),
                masked=isinstance(error, afalg.AfAlgMasked),
                unavailable=isinstance(error, afalg.AfAlgUnavailable),
            ) from None
        except OSError as error:
            raise EngineError(f"{target.driver}: {error}") from None


class AfAlgBound:
    """A target's AF_ALG session: the key, the IV and the session's fast path."""

    def __init__(self, target: Target, timeout: float, timing: Timing) -> None:
        self.target = target
        self._skcipher: afalg.SkcipherSession | None = None
        self._hash: afalg.HashSession | None = None
        self._iv: bytes | None = None
        key = os.urandom(target.key_bytes or 0)
        try:
            session = self._open(target.driver, key, timeout)
            how = f"AF_ALG bind of {target.driver} (driver known by {session.driver_evidence})"
        except afalg.AfAlgRestricted as refused:
            # Linux 7.3's af_alg_restrict = 1 refuses every driver name; by algorithm name
            # the kernel picks the driver, as users' tools get it. Measured so only when
            # this very driver served the name (its refcnt rose), never credited to another.
            session = self._open(target.algorithm, key, timeout)
            if session.driver != target.driver:
                served = session.driver or "an unknown driver"
                session.close()
                raise afalg.AfAlgRestricted(
                    f"{refused}; a bind of {target.algorithm} by name is served by {served}, "
                    f"so AF_ALG does not reach {target.driver} here",
                    alg=target.driver,
                    driver=target.driver,
                    alg_type=target.kind,
                ) from None
            how = (
                f"AF_ALG bind of {target.algorithm} by algorithm name (driver names refused: "
                f"af_alg_restrict = 1), served by {session.driver} (known by "
                f"{session.driver_evidence})"
            )
        self.evidence = Evidence(driver=session.driver or target.driver, how=how)
        self._timing = timing
        self._timeout = timeout
        self._loop = RequestLoop(self, timing, os.urandom)
        self._levels: dict[int, AfAlgConcurrent] = {}

    def _open(self, name: str, key: bytes, timeout: float) -> afalg.AfAlgSession:
        """A session bound to `name` (a driver or algorithm name), kept as this target's."""
        if self.target.kind == AlgType.HASH:
            self._hash = afalg.open_hash(name, timeout=timeout)
            return self._hash
        self._skcipher = afalg.open_skcipher(name, key, timeout=timeout)
        self._iv = _iv_for(self._skcipher)
        return self._skcipher

    def at_concurrency(self, level: int) -> AfAlgConcurrent:
        """This transform measured with `level` requests in flight (kept for the session)."""
        if level not in self._levels:
            self._levels[level] = AfAlgConcurrent(self, level)
        return self._levels[level]

    def lane_work(self, lane: int, op: str, block: bytes) -> LaneWork:
        """One more op socket's request loop on this transform (for AfAlgConcurrent): lane
        `lane`'s own input, each output checked against that input's output alone."""
        mine = lane_input(block, lane)
        try:
            if self._hash is not None:
                return self._hash.lane(mine, self._hash.digest(mine))
            if self._skcipher is not None:
                crypt = self._skcipher.encrypt if op == Op.ENCRYPT else self._skcipher.decrypt
                return self._skcipher.lane(mine, self._iv, op, crypt(mine, self._iv))
        except (afalg.AfAlgError, OSError) as error:
            raise EngineError(str(error)) from None
        raise EngineError(f"{self.target.driver}: session is closed")

    def run(self, op: str, block: bytes, count: int) -> None:
        """`count` requests of `block`; AF_ALG's errors become EngineErrors."""
        try:
            if self._hash is not None:
                self._hash.digest_loop(block, count)
            elif self._skcipher is not None:
                self._skcipher.crypt_loop(block, self._iv, op, count)
        except (afalg.AfAlgError, OSError) as error:
            raise EngineError(str(error)) from None

    def warm_up(self, op: str, block_size: int, seconds: float) -> None:
        self._loop.warm_up(op, block_size, seconds)

    def sample(self, op: str, block_size: int, seconds: float) -> Sample:
        return self._loop.sample(op, block_size, seconds)

    def close(self) -> None:
        for level in self._levels.values():
            level.close()
        self._levels.clear()
        for session in (self._skcipher, self._hash):
            if session is not None:
                session.close()


class AfAlgConcurrent:
    """A target's transform sampled with `level` op sockets in flight, a thread each."""

    def __init__(self, bound: AfAlgBound, level: int) -> None:
        self.evidence = bound.evidence
        self.level = level
        self._pool = LanePool(
            level, bound._timeout, f"{bound.evidence.driver} ({level} requests in flight)"
        )
        self._runner = ParallelRequests(
            self._pool, lambda lane, op, block: bound.lane_work(lane, op, block)
        )
        self._loop = RequestLoop(self, bound._timing, os.urandom)

    def run(self, op: str, block: bytes, count: int) -> None:
        try:
            self._runner.run(op, block, count)
        except (afalg.AfAlgError, OSError) as error:
            raise EngineError(str(error)) from None

    def warm_up(self, op: str, block_size: int, seconds: float) -> None:
        # The lanes, with their one reference request each, before the warm-up's timing
        # (their inputs derive from any block of the size: the loop's own is not needed).
        try:
            self._runner.prepare(op, os.urandom(block_size))
        except (afalg.AfAlgError, OSError) as error:
            raise EngineError(str(error)) from None
        self._loop.warm_up(op, block_size, seconds)

    def sample(self, op: str, block_size: int, seconds: float) -> Sample:
        return self._loop.sample(op, block_size, seconds)

    def close(self) -> None:
        self._pool.close()


def lane_input(block: bytes, lane: int) -> bytes:
    """Lane `lane`'s request: `block` with its first byte xored by the lane's number, so
    that no two lanes' inputs (up to 256 lanes) -- nor, for any cipher or hash, their
    outputs -- are the same, and a request given another's output is seen."""
    if not block:
        return block
    return bytes([block[0] ^ (lane & 0xFF)]) + block[1:]


def _iv_for(session: afalg.SkcipherSession) -> bytes | None:
    """A fixed IV of the driver's IV size (ecb has none); every request starts from it."""
    size = session.registration.ivsize if session.registration else 16
    return bytes(range(size)) if size else None
