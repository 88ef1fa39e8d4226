# SPDX-License-Identifier: MIT
"""dm-crypt as a measurement engine: O_DIRECT reads and writes on a volume pinned to one
driver, and the same workload on a bare loop device for comparison.

Each target gets its own volume (block/volume.py) on a loop device over a tmpfs file, so
the storage under the cipher is memory and what is measured is the cipher plus the block
layer. Writes are `encrypt` and reads `decrypt` (what dm-crypt does to the bytes). O_DIRECT
keeps the page cache of the dm device out of it: every read goes through the cipher. The
bare loop device (driver BARE, algorithm BARE_ALGORITHM) runs the same I/O with no cipher;
a volume within noise of it is storage-bound, not cipher-bound.

Evidence of the driver is the volume's proof: `dmsetup table` shows the pinned `capi:`
cipher and the driver's /proc/crypto refcnt rose when the volume was made.
"""

from __future__ import annotations

import mmap
import os
import time
from collections.abc import Sequence
from dataclasses import replace

from pytest_hwcrypto.block import dmcrypt, loop, naming
from pytest_hwcrypto.block.tools import BlockError
from pytest_hwcrypto.block.volume import Volume, VolumeMaker
from pytest_hwcrypto.kernel.inventory import InventoryEntry
from pytest_hwcrypto.measure.cpu import usage_between
from pytest_hwcrypto.measure.engine import EngineError, Evidence, Sample, Timing
from pytest_hwcrypto.measure.targets import RANK_CIPHER_MODES, Target, discover_targets
from pytest_hwcrypto.vocabulary import MIB, AlgType, Op, Source

# What disks use, and the key sizes measured (total dm key: xts takes two AES keys).
KEY_BITS = {"xts(aes)": 256, "cbc(aes)": 128}
BARE = "bare-loop"
BARE_ALGORITHM = "none"
SECTOR_SIZE = 4096
DEFAULT_VOLUME_SIZE = 64 * MIB


def dmcrypt_targets(inventory: Sequence[InventoryEntry]) -> list[Target]:
    """Every driver of the disk ciphers (template instances too), and the bare device."""
    found = [t for t in discover_targets(inventory) if t.algorithm in KEY_BITS]
    by_driver = {(t.algorithm, t.driver): t for t in found}
    # dm-crypt's key is the whole table key, and I/O must fill whole 4096-byte sectors.
    targets = [
        replace(t, key_bits=KEY_BITS[t.algorithm], block_multiple=SECTOR_SIZE)
        for t in sorted(by_driver.values(), key=lambda t: (t.algorithm, t.driver))
    ]
    return [*targets, bare_target()]


def bare_target() -> Target:
    return Target(
        BARE_ALGORITHM, BARE, AlgType.SKCIPHER, None, RANK_CIPHER_MODES, None, True, SECTOR_SIZE
    )


class DmcryptEngine:
    source = Source.DMCRYPT
    # a target is a whole dm-crypt volume on a loop device
    max_sessions = 1

    def __init__(self, maker: VolumeMaker, size: int = DEFAULT_VOLUME_SIZE) -> None:
        self.maker = maker
        self.size = size

    def reachable(self, inventory: Sequence[InventoryEntry]) -> list[Target]:
        return dmcrypt_targets(inventory)

    def open(self, target: Target, timing: Timing) -> DmcryptBound:
        if target.driver == BARE:
            device = loop.attach(
                self.maker.ledger, naming.next_name(), self.size, self.maker.directory
            )
            evidence = Evidence(BARE, f"the bare loop device {device.device}, no cipher")
            return self._bound(device.device, evidence, timing, device)
        try:
            volume = self.maker.open(target.driver, target.key_bits or 256, SECTOR_SIZE, self.size)
        except dmcrypt.DriverRefused as error:
            raise EngineError(str(error), masked=True) from None
        except BlockError as error:
            raise EngineError(str(error)) from None
        return self._bound(volume.path, Evidence(volume.driver, volume.evidence), timing, volume)

    def _bound(
        self, path: str, evidence: Evidence, timing: Timing, held: Volume | loop.LoopDevice
    ) -> DmcryptBound:
        try:
            return DmcryptBound(path, evidence, timing, self.size, self.maker, held)
        except OSError as error:
            # Not opened: nothing will close what was made for it, so remove it here.
            if isinstance(held, Volume):
                self.maker.close(held)
            else:
                loop.detach(self.maker.ledger, held)
            raise EngineError(
                f"{evidence.driver}: cannot open {path} with O_DIRECT: {error}"
            ) from None


class DmcryptBound:
    """One open device; each sample is a run of O_DIRECT pread/pwrite of one block size."""

    def __init__(
        self,
        path: str,
        evidence: Evidence,
        timing: Timing,
        size: int,
        maker: VolumeMaker,
        held: Volume | loop.LoopDevice | None,
    ) -> None:
        """`held` is what closing removes; None: the caller keeps the device (benchmarks)."""
        self.evidence = evidence
        self.timing = timing
        self.size = size
        self._maker = maker
        self._held = held
        self._closed = False
        self._fd = os.open(path, os.O_RDWR | os.O_DIRECT)
        self._buffers: dict[int, mmap.mmap] = {}
        self._offset = 0

    def _buffer(self, block_size: int) -> mmap.mmap:
        # O_DIRECT wants page-aligned memory: an anonymous mmap is.
        if block_size not in self._buffers:
            buffer = mmap.mmap(-1, block_size)
            buffer.write(os.urandom(block_size))
            self._buffers[block_size] = buffer
        return self._buffers[block_size]

    def _io(self, op: str, buffer: mmap.mmap, count: int) -> None:
        block_size = len(buffer)
        for _ in range(count):
            if self._offset + block_size > self.size:
                self._offset = 0
            if op == Op.ENCRYPT:
                done = os.pwritev(self._fd, [buffer], self._offset)
            else:
                done = os.preadv(self._fd, [buffer], self._offset)
            if done != block_size:
                raise EngineError(f"{self.evidence.driver}: short I/O ({done} of {block_size})")
            self._offset += block_size

    def warm_up(self, op: str, block_size: int, seconds: float) -> None:
        # One pass over the device: reads then see written (encrypted) sectors.
        buffer = self._buffer(block_size)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self._io(op, buffer, 1)

    def sample(self, op: str, block_size: int, seconds: float) -> Sample:
        buffer, clock, meter = self._buffer(block_size), self.timing.clock, self.timing.meter
        before = meter.snapshot()
        began = clock()
        operations = 0
        try:
            # Batches between clock reads: a clock read per I/O costs in UML (~90 us a call).
            while True:
                self._io(op, buffer, 8)
                operations += 8
                if clock() - began >= seconds:
                    break
        except OSError as error:
            raise EngineError(f"{self.evidence.driver}: {op} {block_size} B: {error}") from None
        elapsed = clock() - began
        return Sample(operations, block_size, elapsed, usage_between(before, meter.snapshot()))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        os.close(self._fd)
        for buffer in self._buffers.values():
            buffer.close()
        held, self._held = self._held, None
        if isinstance(held, Volume):
            self._maker.close(held)
        elif held is not None:
            loop.detach(self._maker.ledger, held)
