# SPDX-License-Identifier: MIT
"""Comparing a driver's output with the expected bytes, and saying how they differ (pure).

A correctness failure must let a kernel engineer find the bug without re-running anything:
which byte is the first wrong one, how long the output was against how long it should be,
and the expected and actual bytes around that offset. Offsets matter because driver bugs
have shapes: a wrong first block points at the IV, a wrong last partial block at
ciphertext stealing, a difference at a page boundary at scatterlist handling, output that
is a prefix of the right answer at a driver that stopped early.

Only test keys and test data ever reach these messages (published vectors and seeded
random cases), so printing them is safe and is what makes a failure reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass

# Bytes shown on each side of the first difference: two AES blocks' worth, enough to see
# whether the damage is one byte, one block or everything from there on.
DEFAULT_CONTEXT = 16

# Longer values (keys, IVs, messages) are abbreviated in messages to keep them readable.
DEFAULT_HEX_LIMIT = 64


def first_difference(expected: bytes, got: bytes) -> int | None:
    """Offset of the first byte where `got` differs from `expected`, None when equal.

    When one is a prefix of the other, the difference is where the shorter one ends.
    """
    for offset, (want, have) in enumerate(zip(expected, got)):
        if want != have:
            return offset
    if len(expected) == len(got):
        return None
    return min(len(expected), len(got))


def hex_preview(data: bytes, limit: int = DEFAULT_HEX_LIMIT) -> str:
    """Hex of `data`, abbreviated past `limit` bytes with the total length said."""
    if len(data) <= limit:
        return data.hex() if data else "(empty)"
    half = limit // 2
    return f"{data[:half].hex()}…{data[-half:].hex()} ({len(data)} bytes)"


def window(
    offset: int, expected_length: int, got_length: int, context: int = DEFAULT_CONTEXT
) -> tuple[int, int]:
    """[start, end) of the excerpt around `offset`, clamped to the longer of both inputs."""
    start = max(0, offset - context)
    end = min(max(expected_length, got_length), offset + context)
    return start, max(start, end)


def excerpt(data: bytes, start: int, end: int) -> str:
    """Hex of data[start:end] with ellipses where it was cut, or a note past its end."""
    if start >= len(data):
        return f"(ends at byte {len(data)})"
    prefix = "…" if start > 0 else ""
    if end < len(data):
        suffix = "…"
    elif end > len(data):
        suffix = f" (ends at byte {len(data)})"  # the other side goes on: say where this stopped
    else:
        suffix = ""
    return f"{prefix}{data[start:end].hex()}{suffix}"


@dataclass(frozen=True)
class BytesDiff:
    """How `got` differs from `expected`; built only when they do differ."""

    offset: int
    expected_length: int
    got_length: int
    expected_excerpt: str
    got_excerpt: str
    excerpt_start: int

    @property
    def short(self) -> bool:
        return self.got_length < self.expected_length

    @property
    def long(self) -> bool:
        return self.got_length > self.expected_length

    @property
    def truncated_only(self) -> bool:
        """Got is a correct prefix: the driver stopped early, the bytes it gave are right."""
        return self.short and self.offset == self.got_length

    def reason(self) -> str:
        """One phrase for the kind of failure, as the first words of a failure message."""
        if self.truncated_only:
            return f"short output: {self.got_length} of {self.expected_length} bytes"
        if self.short:
            return (
                f"short and wrong output: {self.got_length} of {self.expected_length} bytes, "
                f"first difference at byte {self.offset}"
            )
        if self.long:
            return (
                f"long output: {self.got_length} bytes instead of {self.expected_length}, "
                f"first difference at byte {self.offset}"
            )
        return f"wrong output: first difference at byte {self.offset} of {self.expected_length}"

    def message(self) -> str:
        """The reason plus the expected and actual bytes around the first difference."""
        return (
            f"{self.reason()}\n"
            f"  expected [{self.excerpt_start}:] {self.expected_excerpt}\n"
            f"  got      [{self.excerpt_start}:] {self.got_excerpt}"
        )


def compare_bytes(expected: bytes, got: bytes, context: int = DEFAULT_CONTEXT) -> BytesDiff | None:
    """None when equal, else where and how they differ."""
    offset = first_difference(expected, got)
    if offset is None:
        return None
    start, end = window(offset, len(expected), len(got), context)
    return BytesDiff(
        offset=offset,
        expected_length=len(expected),
        got_length=len(got),
        expected_excerpt=excerpt(expected, start, end),
        got_excerpt=excerpt(got, start, end),
        excerpt_start=start,
    )


def mismatch_message(
    subject: str, expected: bytes, got: bytes, context: int = DEFAULT_CONTEXT
) -> str | None:
    """`subject: <reason + excerpts>` when they differ, None when equal.

    `subject` says who produced what, e.g. "cbc(aes-generic) encrypt vs OpenSSL".
    """
    diff = compare_bytes(expected, got, context)
    return None if diff is None else f"{subject}: {diff.message()}"
