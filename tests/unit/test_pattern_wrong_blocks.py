# SPDX-License-Identifier: MIT
"""pattern_io.wrong_blocks on files: which blocks of a read-back differ from the pattern,
and whether they hold another block's data (an engine that mixed up requests in flight)."""

from __future__ import annotations

from pathlib import Path

from pytest_hwcrypto.block import pattern_io

SEED = "seed:engine"
BLOCK = pattern_io.BLOCK


def written(tmp_path: Path, total: int) -> tuple[Path, bytearray]:
    data = bytearray(b"".join(pattern_io.pattern_chunks(SEED, total)))
    return tmp_path / "volume", data


def test_a_faithful_read_back_has_no_wrong_blocks(tmp_path: Path) -> None:
    path, data = written(tmp_path, 64 * BLOCK)
    path.write_bytes(bytes(data))
    assert pattern_io.wrong_blocks(path, SEED, len(data)) is None


def test_swapped_sectors_read_as_each_others_data_after_their_first_cipher_block(
    tmp_path: Path,
) -> None:
    """Two encryptions' outputs swapped: each sector then decrypts, under its own IV, to the
    other's data with the first 16 bytes garbled -- blocks 5 and 9 here."""
    path, data = written(tmp_path, 64 * BLOCK)
    five, nine = bytes(data[5 * BLOCK : 6 * BLOCK]), bytes(data[9 * BLOCK : 10 * BLOCK])
    data[5 * BLOCK : 6 * BLOCK] = bytes(16) + nine[16:]
    data[9 * BLOCK : 10 * BLOCK] = bytes(16) + five[16:]
    path.write_bytes(bytes(data))
    found = pattern_io.wrong_blocks(path, SEED, len(data))
    assert found is not None
    assert (found.wrong, found.first, found.misplaced) == (2, 5 * BLOCK, 2)
    assert found.first_misplaced == (5 * BLOCK, 9 * BLOCK)
    words = found.describe()
    assert "mixed up requests in flight" in words
    assert f"the block at byte {5 * BLOCK} reads as what was written at byte {9 * BLOCK}" in words


def test_garbage_is_wrong_but_not_misplaced(tmp_path: Path) -> None:
    path, data = written(tmp_path, 64 * BLOCK)
    data[3 * BLOCK + 100] ^= 0xFF
    path.write_bytes(bytes(data))
    found = pattern_io.wrong_blocks(path, SEED, len(data))
    assert found is not None and (found.wrong, found.first, found.misplaced) == (1, 3 * BLOCK, 0)
    assert "mixed up" not in found.describe()
    assert found.describe().startswith("1 4096-byte blocks read wrong, the first at byte 12288")
