# SPDX-License-Identifier: MIT
from __future__ import annotations

import pytest

from pytest_hwcrypto.verdict.blocksizes import ALL_BLOCK_SIZES, parse_block_sizes, parse_size

SIZES = [16, 64, 256, 1024, 4096, 8192, 16384, 65536, 1048576]


def admitted(spec: str) -> list[int]:
    size_range = parse_block_sizes(spec)
    return [size for size in SIZES if size_range.contains(size)]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (">=65536", [65536, 1048576]),
        (">65536", [1048576]),
        ("<=4096", [16, 64, 256, 1024, 4096]),
        ("<4096", [16, 64, 256, 1024]),
        ("4096..65536", [4096, 8192, 16384, 65536]),
        ("4K..64KiB", [4096, 8192, 16384, 65536]),
        ("16K..", [16384, 65536, 1048576]),
        ("..1k", [16, 64, 256, 1024]),
        ("16,64,4096", [16, 64, 4096]),
        (" 16 , 64 ", [16, 64]),
        ("4096", [4096]),
        (">= 1M", [1048576]),
        ("all", SIZES),
        ("ALL", SIZES),
        ("*", SIZES),
        ("", SIZES),
    ],
)
def test_specs_admit_the_right_sizes(spec: str, expected: list[int]) -> None:
    assert admitted(spec) == expected


def test_none_means_everything() -> None:
    assert parse_block_sizes(None) is ALL_BLOCK_SIZES
    assert ALL_BLOCK_SIZES.is_everything


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("4096", 4096),
        ("4096B", 4096),
        ("16K", 16384),
        ("16k", 16384),
        ("16KiB", 16384),
        ("64kib", 65536),
        ("1M", 1048576),
        ("1MiB", 1048576),
        ("2G", 2 * 1024**3),
    ],
)
def test_size_suffixes_are_binary(text: str, size: int) -> None:
    assert parse_size(text) == size


def test_measurement_without_block_size_only_in_unrestricted_range() -> None:
    assert parse_block_sizes("all").contains(None)
    assert not parse_block_sizes(">=16").contains(None)
    assert not parse_block_sizes("16,64").contains(None)
    assert None in parse_block_sizes("")
    assert 4096 in parse_block_sizes(">=4K")
    assert "4096" not in parse_block_sizes("all")


@pytest.mark.parametrize(
    "spec",
    [
        ">=",
        "abc",
        "16,,64",
        "64KB",
        "1MB",
        "65536..4096",
        "..",
        ">=-5",
        "4096...8192",
        "1T",
        "16 K B",
    ],
)
def test_bad_specs_raise_naming_the_spec(spec: str) -> None:
    with pytest.raises(ValueError) as error:
        parse_block_sizes(spec)
    message = str(error.value)
    assert repr(spec) in message
    assert "bad block-size range" in message
    assert "'>=65536'" in message  # the examples tell how to write it right


def test_ambiguous_decimal_suffix_says_how_to_write_it() -> None:
    with pytest.raises(ValueError, match="64KiB or 64K"):
        parse_size("64KB")


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        (">=4096", "from 4096 B"),
        ("<=4096", "up to 4096 B"),
        ("4096..65536", "from 4096 B to 65536 B"),
        ("64,16", "at 16, 64 B"),
        ("all", "at every block size"),
    ],
)
def test_describe_for_messages(spec: str, words: str) -> None:
    assert parse_block_sizes(spec).describe() == words
