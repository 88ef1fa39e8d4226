# SPDX-License-Identifier: MIT
"""Block-size ranges as written in board profiles and on the command line.

Accepted forms (whitespace is ignored):

* ``all``, ``*`` or the empty string: every block size;
* ``>=65536``, ``>65536``, ``<=4096``, ``<4096``: one-sided bounds;
* ``4096..65536``: both ends inclusive; ``4096..`` and ``..65536`` are open on one side;
* ``16,64,4096`` or a single ``4096``: exactly these sizes.

Sizes take binary suffixes, because crypto block sizes are powers of two: ``16K`` and
``16KiB`` are 16384, ``1M``/``1MiB`` 1048576, ``1G``/``1GiB`` 2**30; a trailing ``B`` is
allowed (``4096B``, ``16KiB``).  ``KB``/``MB`` are refused as ambiguous (1000 or 1024?).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_SUFFIX_MULTIPLIERS = {
    "": 1,
    "K": 1024,
    "KI": 1024,
    "M": 1024**2,
    "MI": 1024**2,
    "G": 1024**3,
    "GI": 1024**3,
}
_SIZE_PATTERN = re.compile(r"(?P<number>\d+)(?P<suffix>[KMG]I?)?(?P<unit>B)?", re.IGNORECASE)
_EXAMPLES = "expected e.g. '>=65536', '<=4K', '4096..64KiB', '16,64,4096' or 'all'"


@dataclass(frozen=True)
class BlockSizeRange:
    """A set of block sizes: an inclusive interval (either end open) or an explicit list.

    A measurement without a block size (cryptsetup benchmark, dm-crypt) is only inside the
    range that admits everything: a restricted range cannot say anything about it.
    """

    spec: str
    low: int | None = None
    high: int | None = None
    sizes: frozenset[int] | None = None

    @property
    def is_everything(self) -> bool:
        return self.sizes is None and self.low is None and self.high is None

    def contains(self, block_size: int | None) -> bool:
        if block_size is None:
            return self.is_everything
        if self.sizes is not None:
            return block_size in self.sizes
        if self.low is not None and block_size < self.low:
            return False
        return self.high is None or block_size <= self.high

    def __contains__(self, block_size: object) -> bool:
        return (block_size is None or isinstance(block_size, int)) and self.contains(block_size)

    def describe(self) -> str:
        """Words for messages: 'from 4096 B', 'up to 4096 B', 'at 16, 64 B', ..."""
        if self.sizes is not None:
            return "at " + ", ".join(str(size) for size in sorted(self.sizes)) + " B"
        if self.low is not None and self.high is not None:
            return f"from {self.low} B to {self.high} B"
        if self.low is not None:
            return f"from {self.low} B"
        if self.high is not None:
            return f"up to {self.high} B"
        return "at every block size"


ALL_BLOCK_SIZES = BlockSizeRange(spec="all")


def parse_block_sizes(spec: str | None) -> BlockSizeRange:
    """Parse a range spec; ValueError naming the spec when it cannot be read."""
    if spec is None:
        return ALL_BLOCK_SIZES
    text = "".join(spec.split())
    try:
        return _parse_compact(spec, text)
    except ValueError as error:
        raise ValueError(f"bad block-size range {spec!r}: {error}; {_EXAMPLES}") from None


def parse_size(text: str) -> int:
    """'4096' -> 4096, '16K'/'16KiB' -> 16384, '1M' -> 1048576; ValueError otherwise."""
    match = _SIZE_PATTERN.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a size")
    suffix = (match["suffix"] or "").upper()
    if suffix and not suffix.endswith("I") and match["unit"]:
        number = match["number"]
        raise ValueError(f"{text!r} is ambiguous (write {number}{suffix}iB or {number}{suffix})")
    return int(match["number"]) * _SUFFIX_MULTIPLIERS[suffix]


def _parse_compact(spec: str, text: str) -> BlockSizeRange:
    if text.lower() in ("", "all", "*"):
        return BlockSizeRange(spec=spec)
    for operator in (">=", "<=", ">", "<"):
        if text.startswith(operator):
            return _one_sided(spec, operator, parse_size(text[len(operator) :]))
    if ".." in text:
        return _interval(spec, *text.split("..", 1))
    sizes = [parse_size(part) for part in text.split(",")]
    return BlockSizeRange(spec=spec, sizes=frozenset(sizes))


def _one_sided(spec: str, operator: str, size: int) -> BlockSizeRange:
    if operator == ">=":
        return BlockSizeRange(spec=spec, low=size)
    if operator == ">":
        return BlockSizeRange(spec=spec, low=size + 1)
    if operator == "<=":
        return BlockSizeRange(spec=spec, high=size)
    return BlockSizeRange(spec=spec, high=size - 1)


def _interval(spec: str, low_text: str, high_text: str) -> BlockSizeRange:
    if not low_text and not high_text:
        raise ValueError("'..' needs at least one end")
    low = parse_size(low_text) if low_text else None
    high = parse_size(high_text) if high_text else None
    if low is not None and high is not None and low > high:
        raise ValueError(f"the range is empty ({low} > {high})")
    return BlockSizeRange(spec=spec, low=low, high=high)


def parse_block_size_list(text: str | Sequence[int]) -> tuple[int, ...]:
    """'16,64,4K' -> (16, 64, 4096): sorted, without duplicates; ValueError names the entry."""
    if not isinstance(text, str):
        sizes = [int(size) for size in text]
    else:
        sizes = []
        for part in text.split(","):
            if not part.strip():
                continue
            try:
                sizes.append(parse_size(part))
            except ValueError as error:
                raise ValueError(f"bad block size {part.strip()!r}: {error}") from None
    if not sizes:
        raise ValueError("no block size given (e.g. '16,64,256,1024,4096,16384,65536')")
    if any(size <= 0 for size in sizes):
        raise ValueError("block sizes must be positive")
    return tuple(sorted(set(sizes)))
