# SPDX-License-Identifier: MIT
"""AF_ALG on a host-driven board as a measurement engine: the helper's timed loop.

The board has no Python, so the request loop runs there in `hwcrypto-helper speed`: one
process per warm-up or sample binds the driver by its exact name, sets a random key, opens
one request socket and sends one request at a time (one sendmsg with op and IV, one read,
as the in-board engine's fast path does) for the asked seconds, then prints its own count
and nanoseconds. The link's latency is outside the timed loop, so a slow serial console
costs wall time, not throughput. The samples become the same Sample records the in-board
engine gives, so the statistics and the verdicts are the same ones.

The driver that served is proven as in-board: the helper reads the driver's /proc/crypto
refcnt before the bind and with the request socket open; a rise means the kernel allocated
the transform from that very driver. A sample whose bind does not show it fails the cell.
CPU use is not metered on the board (the host's meter would see only the SSH client).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence

from pytest_hwcrypto.kernel.inventory import InventoryEntry
from pytest_hwcrypto.measure.cpu import CPU_NOT_MEASURED
from pytest_hwcrypto.measure.engine import EngineError, Evidence, Sample, Timing
from pytest_hwcrypto.measure.targets import Target, discover_targets
from pytest_hwcrypto.target.helper_run import (
    EXIT_NO_AFALG,
    BoardHelper,
    BoundRefcnt,
    parse_bound_line,
    parse_speed_output,
)
from pytest_hwcrypto.target.protocol import TargetError
from pytest_hwcrypto.vocabulary import DEFAULT_TIMEOUT_SECONDS, AlgType, Op, Source

# The shortest run `open` makes to bind and prove the driver (a decimal the helper reads).
PROBE_SECONDS = 0.01
# Every cipher mode measured here but ecb takes a 16-byte IV; ecb takes none.
IV_BYTES = 16


class TargetAfAlgEngine:
    """Every skcipher and hash driver the board's AF_ALG binds, through its helper."""

    source = Source.AFALG
    # Each sample is a new helper process with a bind of its own: sessions are not kept.
    max_sessions = 1

    def __init__(self, helper: BoardHelper, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        self.helper = helper
        self.timeout = timeout

    def reachable(self, inventory: Sequence[InventoryEntry]) -> list[Target]:
        return discover_targets(inventory)

    def open(self, target: Target, timing: Timing) -> TargetAfAlgBound:
        return TargetAfAlgBound(self, target)


class TargetAfAlgBound:
    """One driver on the board: its key and IV, and the helper's runs with them."""

    def __init__(self, engine: TargetAfAlgEngine, target: Target) -> None:
        self._engine = engine
        self.target = target
        self._key = os.urandom(target.key_bytes or 0)
        self._iv = b"" if target.algorithm.startswith("ecb(") else bytes(range(IV_BYTES))
        probe_block = max(target.block_multiple, 1) * -(-16 // max(target.block_multiple, 1))
        bound, _ = self._speed(probe_block, PROBE_SECONDS)
        self.evidence = Evidence(
            driver=target.driver,
            how=(
                f"hwcrypto-helper on the board: AF_ALG bind of {target.driver} (its "
                f"/proc/crypto refcnt rose {bound.before} -> {bound.after} on bind)"
            ),
        )

    def _speed(self, block_size: int, seconds: float) -> tuple[BoundRefcnt, Sample]:
        words = [
            "speed",
            AlgType.HASH if self.target.kind == AlgType.HASH else AlgType.SKCIPHER,
            shlex.quote(self.target.driver),
            str(block_size),
            f"{seconds:.3f}",
        ]
        if self.target.kind != AlgType.HASH:
            words += [self._key.hex() or "-", self._iv.hex() or "-"]
        try:
            result = self._engine.helper.run(
                " ".join(words), timeout=seconds + self._engine.timeout
            )
        except TargetError as error:
            raise EngineError(f"{self.target.driver}: {error}") from None
        said = result.output.strip().splitlines()
        if result.status == EXIT_NO_AFALG:
            raise EngineError(f"the board has no AF_ALG: {said[-1:]}", unavailable=True)
        bound = parse_bound_line(result.output)
        _, total = parse_speed_output(result.output)
        if not result.ok or bound is None or total is None:
            last = said[-1] if said else "no output"
            raise EngineError(f"{self.target.driver}: the helper's speed run failed: {last}")
        if bound.driver != self.target.driver or not bound.rose:
            raise EngineError(
                f"{self.target.driver}: not proven to serve on the board (its /proc/crypto "
                f"refcnt went {bound.before} -> {bound.after} on bind)"
            )
        return bound, Sample(
            total.operations,
            block_size,
            max(total.nanoseconds / 1e9, 1e-9),
            cpu=CPU_NOT_MEASURED,
        )

    def _check_op(self, op: str) -> None:
        if op not in (Op.ENCRYPT, Op.DIGEST):
            raise EngineError(f"{self.target.driver}: the helper times {Op.ENCRYPT} only")

    def warm_up(self, op: str, block_size: int, seconds: float) -> None:
        self._check_op(op)
        self._speed(block_size, seconds)

    def sample(self, op: str, block_size: int, seconds: float) -> Sample:
        self._check_op(op)
        return self._speed(block_size, seconds)[1]

    def close(self) -> None:
        """Nothing stays open on the board between runs of the helper."""
