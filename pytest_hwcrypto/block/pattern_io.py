# SPDX-License-Identifier: MIT
"""Seeded patterns written to and read back from block devices, in chunks.

A volume's pattern can be larger than the board's memory (256 MiB by default, beside a
tmpfs backing file of the same size), so nothing here holds a whole volume: the pattern
is generated chunk by chunk from a seeded PRNG (the same seed gives the same bytes), and
what is read back is hashed as it comes. `flip_byte` and `largest_changed_run` serve the
integrity checks: where in a backing file a write landed, and one byte of it changed
behind the kernel's back.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pytest_hwcrypto.block.plain_format import decrypt_plain
from pytest_hwcrypto.vocabulary import MIB

CHUNK = 4 * MIB
BLOCK = 4096


def pattern_chunks(seed: str, total: int, chunk: int = CHUNK) -> Iterator[bytes]:
    """`total` bytes of the pattern named by `seed`, `chunk` bytes at a time."""
    generator = random.Random(seed)
    left = total
    while left > 0:
        size = min(chunk, left)
        yield generator.randbytes(size)
        left -= size


def pattern_digest(seed: str, total: int) -> str:
    digest = hashlib.sha256()
    for chunk in pattern_chunks(seed, total):
        digest.update(chunk)
    return digest.hexdigest()


def _write_all(fd: int, data: bytes) -> None:
    """os.write may write less than asked (a block device in pieces): keep going."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_pattern(path: str | Path, seed: str, total: int) -> str:
    """Write the pattern from offset 0, fsync, and return its SHA-256."""
    digest = hashlib.sha256()
    fd = os.open(path, os.O_WRONLY)
    try:
        for chunk in pattern_chunks(seed, total):
            _write_all(fd, chunk)
            digest.update(chunk)
        os.fsync(fd)
    finally:
        os.close(fd)
    return digest.hexdigest()


@dataclass(frozen=True)
class ReadBack:
    digest: str  # SHA-256 of what was read
    size: int
    io_error_at: int | None = None  # offset of the chunk the kernel refused with EIO


def read_digest(path: str | Path, total: int, chunk: int = CHUNK) -> ReadBack:
    """Hash the first `total` bytes of `path`; an EIO ends the read and says where."""
    digest = hashlib.sha256()
    done = 0
    with open(path, "rb", buffering=0) as device:
        while done < total:
            try:
                data = device.read(min(chunk, total - done))
            except OSError as error:
                if error.errno != errno.EIO:
                    raise
                return ReadBack(digest.hexdigest(), done, io_error_at=done)
            if not data:
                break
            digest.update(data)
            done += len(data)
    return ReadBack(digest.hexdigest(), done)


def file_digest(path: Path) -> str:
    return read_digest(path, path.stat().st_size).digest


def block_digests(path: Path) -> list[bytes]:
    """A short hash of every 4096-byte block of a file, to find later what changed."""
    out = []
    with open(path, "rb") as handle:
        while block := handle.read(BLOCK):
            out.append(hashlib.blake2b(block, digest_size=8).digest())
    return out


def largest_changed_run(before: list[bytes], after: list[bytes]) -> tuple[int, int]:
    """(first block, block count) of the longest run of blocks that differ."""
    best = (0, 0)
    start = None
    for index in range(max(len(before), len(after)) + 1):
        changed = index < len(after) and (index >= len(before) or before[index] != after[index])
        if changed and start is None:
            start = index
        elif not changed and start is not None:
            if index - start > best[1]:
                best = (start, index - start)
            start = None
    return best


def flip_byte(path: Path, offset: int) -> None:
    """Invert one byte of a file in place (the plugin's own backing file only)."""
    with open(path, "r+b") as handle:
        handle.seek(offset)
        old = handle.read(1)
        handle.seek(offset)
        handle.write(bytes([old[0] ^ 0xFF]))
        handle.flush()
        os.fsync(handle.fileno())


def first_plain_mismatch(
    backing: Path,
    algorithm: str,
    key: bytes,
    sector_size: int,
    seed: str,
    total: int,
    iv_mode: str = "plain64",
) -> int | None:
    """Decrypt a plain volume's raw backing file chunk by chunk (pyca) and compare it with
    the pattern: the offset of the first chunk that differs, or None when all match. A
    chunk stored as plaintext (not encrypted at all) counts as a mismatch."""
    offset = 0
    with open(backing, "rb") as raw_file:
        for chunk in pattern_chunks(seed, total):
            raw = raw_file.read(len(chunk))
            if raw == chunk:
                return offset
            plain = decrypt_plain(algorithm, key, raw, sector_size, iv_mode, offset // 512)
            if plain != chunk:
                return offset
            offset += len(chunk)
    return None


@dataclass(frozen=True)
class WrongBlocks:
    """Where a read-back differs from the pattern, block by block."""

    wrong: int  # blocks that read wrong
    first: int  # offset of the first of them
    misplaced: int  # wrong blocks holding another block's data (see wrong_blocks)
    first_misplaced: tuple[int, int] | None  # (offset, offset of the data it holds)

    def describe(self, block: int = BLOCK) -> str:
        """What went wrong, in words; 'mixed up requests in flight' when blocks hold each
        other's data (which only an engine that mixes requests up produces)."""
        said = f"{self.wrong} {block}-byte blocks read wrong, the first at byte {self.first}"
        if self.first_misplaced is None:
            return said
        at, holds = self.first_misplaced
        return (
            f"{said}; {self.misplaced} of them hold another block's data (the block at byte "
            f"{at} reads as what was written at byte {holds}): the driver mixed up requests "
            "in flight"
        )


def wrong_blocks(path: str | Path, seed: str, total: int, block: int = BLOCK) -> WrongBlocks | None:
    """Compare the first `total` bytes of `path` with the pattern block by block (chunk by
    chunk, as they were written); None when every block matches.

    A wrong block is "misplaced" when, from its 17th byte on, it equals another block of
    the same chunk: a block cipher's output given to another sector's request decrypts,
    under CBC with that sector's IV, to the other sector's data with only the first
    16-byte block garbled (and to exactly it when the swap happened on the read).
    """
    wrong = misplaced = 0
    first: int | None = None
    first_misplaced: tuple[int, int] | None = None
    offset = 0
    with open(path, "rb", buffering=0) as device:
        for chunk in pattern_chunks(seed, total):
            data = _read_exactly(device, len(chunk))
            if data == chunk:
                offset += len(chunk)
                continue
            tails: dict[bytes, int] | None = None
            for start in range(0, len(chunk), block):
                got = data[start : start + block]
                if got == chunk[start : start + block]:
                    continue
                wrong += 1
                first = offset + start if first is None else first
                if tails is None:
                    tails = {chunk[s + 16 : s + block]: s for s in range(0, len(chunk), block)}
                holds = tails.get(got[16:])
                if holds is not None and holds != start:
                    misplaced += 1
                    if first_misplaced is None:
                        first_misplaced = (offset + start, offset + holds)
            offset += len(chunk)
    if first is None:
        return None
    return WrongBlocks(wrong, first, misplaced, first_misplaced)


def _read_exactly(device: io.RawIOBase, size: int) -> bytes:
    """`size` bytes (fewer only at the end of the device)."""
    parts = []
    left = size
    while left > 0:
        part = device.read(left)
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)
