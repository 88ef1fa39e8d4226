# SPDX-License-Identifier: MIT
"""Requests in flight: N submitters on one driver at once, for engines that are queued.

An offload engine is asynchronous: it holds several requests at once (sun8i-ce has four
flows, each working one request), so one submitter at a time leaves most of it idle and
"hardware loses to software" measured at depth 1 can be the wrong verdict. A CPU driver
computes inside the submitter's own syscall and gains nothing from more submitters than
CPUs. Measuring at several levels N shows which of the two a driver is.

Here N *lanes* -- each a request loop of its own (an AF_ALG op socket accepted from one
bound transform, a /dev/crypto session) -- are driven by N long-lived worker threads
(`LanePool`): the kernel calls release the GIL, so N requests really are in the kernel at
once. Threads are started once per pool, not per sample, because a thread start costs
milliseconds on UML and would be timed. `ParallelRequests` splits a sample's request count
over the lanes and waits for all of them, which is what `engine.RequestLoop` times: total
bytes over wall time, and the process CPU of every thread (getrusage counts them all).

A request that never completes leaves its worker asleep in the kernel where no signal
reaches; the pool stops waiting when no lane has made progress for the operation timeout,
names the lane, and is broken from then on (the stuck thread is a daemon and abandoned).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Callable, Protocol, runtime_checkable

from pytest_hwcrypto.measure.engine import BoundTarget, EngineError

# More submitters than this is a different question (a benchmark of the scheduler);
# dm-crypt's deepest queue in the suites is 32.
MAX_CONCURRENCY = 64
DEFAULT_CONCURRENCY: tuple[int, ...] = (1,)

# One lane's share of a sample: run `count` requests, advancing progress[0] per request.
LaneWork = Callable[[int, list[int]], None]


def parse_concurrency_levels(text: str) -> tuple[int, ...]:
    """'1,4,16' -> (1, 4, 16): sorted, unique, each 1..MAX_CONCURRENCY."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts:
        raise ValueError("give at least one level, e.g. 1,4,16")
    levels = []
    for part in parts:
        try:
            value = int(part)
        except ValueError:
            raise ValueError(f"{part!r} is not a whole number of requests in flight") from None
        if not 1 <= value <= MAX_CONCURRENCY:
            raise ValueError(f"{value} is not between 1 and {MAX_CONCURRENCY}")
        levels.append(value)
    return tuple(sorted(set(levels)))


def shares(count: int, width: int) -> list[int]:
    """`count` requests over `width` lanes as evenly as whole requests allow (the first
    lanes take the remainder). Exactly `count`, because the sample's bytes are counted from
    it: a calibration run of fewer requests than lanes leaves some lanes idle."""
    base, extra = divmod(max(count, 0), width)
    return [base + (1 if lane < extra else 0) for lane in range(width)]


@runtime_checkable
class Concurrent(Protocol):
    """A bound target that can also be measured with several requests in flight."""

    def at_concurrency(self, level: int) -> BoundTarget:
        """The same driver, sampled with `level` submitters at once (level >= 2)."""


def at_level(bound: BoundTarget, level: int) -> BoundTarget:
    """`bound` itself at level 1; its concurrent form above; EngineError if it has none."""
    if level == 1:
        return bound
    if not isinstance(bound, Concurrent):
        raise EngineError(
            f"{bound.evidence.driver}: this path measures one request at a time only "
            f"(asked for {level} in flight)"
        )
    return bound.at_concurrency(level)


@dataclass
class _Lane:
    inbox: queue.SimpleQueue[tuple[LaneWork, int] | None] = field(default_factory=queue.SimpleQueue)
    progress: list[int] = field(default_factory=lambda: [0])
    thread: threading.Thread | None = None


class LanePool:
    """`width` daemon threads, each running the work handed to its lane, watched for progress.

    `describe` names what a stall is about ("cbc-aes-... lane 3 of 4") in the error.
    """

    def __init__(self, width: int, timeout: float, describe: str) -> None:
        self.width = width
        self.timeout = timeout
        self.describe = describe
        self.broken: str | None = None
        self._lanes = [_Lane() for _ in range(width)]
        self._done: queue.SimpleQueue[tuple[int, BaseException | None]] = queue.SimpleQueue()
        for index, lane in enumerate(self._lanes):
            lane.thread = threading.Thread(
                target=self._serve, args=(index,), name=f"hwcrypto-lane-{index}", daemon=True
            )
            lane.thread.start()

    def _serve(self, index: int) -> None:
        lane = self._lanes[index]
        while True:
            job = lane.inbox.get()
            if job is None:
                return
            work, count = job
            try:
                work(count, lane.progress)
                self._done.put((index, None))
            except BaseException as error:  # handed to the waiting thread, raised there
                self._done.put((index, error))

    def run(self, works: Sequence[LaneWork], counts: Sequence[int]) -> None:
        """Run works[i] with counts[i] requests on lane i, all at once; return when all
        are done. Raises the first lane's error, or EngineError when no lane progressed
        for `timeout` seconds (the pool is broken from then on)."""
        if self.broken:
            raise EngineError(f"{self.describe}: unusable since {self.broken}; open a new one")
        if len(works) != self.width or len(counts) != self.width:
            raise ValueError(f"{self.width} lanes need {self.width} works and counts")
        pending: set[int] = set()
        for index, (lane, work, count) in enumerate(zip(self._lanes, works, counts)):
            lane.progress[0] = 0
            if count > 0:
                lane.inbox.put((work, count))
                pending.add(index)
        first_error: BaseException | None = None
        seen = self._total_progress()
        while pending:
            try:
                index, error = self._done.get(timeout=self.timeout)
            except queue.Empty:
                now = self._total_progress()
                if now != seen:
                    seen = now
                    continue
                stalled = sorted(pending)
                self.broken = (
                    f"lane {stalled[0] + 1} of {self.width} made no progress in {self.timeout:g} s"
                )
                raise EngineError(
                    f"{self.describe}: {len(stalled)} of {self.width} requests in flight did "
                    f"not complete within {self.timeout:g} s (--hwcrypto-timeout); the driver "
                    "may be hung (its threads are left stuck in the kernel)"
                ) from None
            pending.discard(index)
            if error is not None and first_error is None:
                first_error = error
        if first_error is not None:
            raise first_error

    def _total_progress(self) -> int:
        return sum(lane.progress[0] for lane in self._lanes)

    def close(self) -> None:
        """End the idle workers; a stuck one stays asleep in the kernel (daemon, abandoned)."""
        for lane in self._lanes:
            lane.inbox.put(None)


class ParallelRequests:
    """A RequestRunner whose `run(op, block, count)` spreads `count` over the pool's lanes.

    `make_work(lane, op, block)` gives lane `lane`'s loop for that op and block (built once
    and kept: e.g. an AF_ALG op socket with its buffers sized for the block).
    """

    def __init__(self, pool: LanePool, make_work: Callable[[int, str, bytes], LaneWork]) -> None:
        self.pool = pool
        self._make_work = make_work
        self._works: dict[tuple[str, int], list[LaneWork]] = {}

    def prepare(self, op: str, block: bytes) -> None:
        """Build every lane's loop for `op` on blocks of this size now, outside any timing:
        a lane's setup may make requests of its own (AF_ALG's reference output), which
        timed in the warm-up's first step would understate the rate that sizes samples."""
        key = (op, len(block))
        if key not in self._works:
            self._works[key] = [self._make_work(lane, op, block) for lane in range(self.pool.width)]

    def run(self, op: str, block: bytes, count: int) -> None:
        self.prepare(op, block)
        self.pool.run(self._works[(op, len(block))], shares(count, self.pool.width))
