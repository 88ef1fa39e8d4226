# SPDX-License-Identifier: MIT
"""bytes_diff: first differing offset, lengths, excerpts and the failure message."""

from __future__ import annotations

import pytest

from pytest_hwcrypto.bytes_diff import (
    compare_bytes,
    excerpt,
    first_difference,
    hex_preview,
    mismatch_message,
    window,
)


@pytest.mark.parametrize(
    ("expected", "got", "offset"),
    [
        (b"", b"", None),
        (b"abc", b"abc", None),
        (b"abc", b"abd", 2),
        (b"abc", b"xbc", 0),
        (b"abcdef", b"abc", 3),  # short: differs where got ends
        (b"abc", b"abcdef", 3),  # long
        (b"abc", b"", 0),
    ],
)
def test_first_difference(expected: bytes, got: bytes, offset: int | None) -> None:
    assert first_difference(expected, got) == offset


def test_equal_bytes_give_no_diff_and_no_message() -> None:
    assert compare_bytes(b"\x00" * 32, b"\x00" * 32) is None
    assert mismatch_message("cbc(aes-generic) vs OpenSSL", b"x", b"x") is None


def test_one_flipped_bit_in_the_middle_names_its_offset_and_shows_both_sides() -> None:
    expected = bytes(range(64))
    got = bytearray(expected)
    got[37] ^= 0x01
    diff = compare_bytes(expected, bytes(got), context=4)
    assert diff is not None
    assert diff.offset == 37
    assert not diff.short and not diff.long
    assert diff.reason() == "wrong output: first difference at byte 37 of 64"
    assert diff.excerpt_start == 33
    assert diff.expected_excerpt == "…2122232425262728…"
    assert diff.got_excerpt == "…2122232424262728…"
    message = diff.message()
    assert "expected [33:] …2122232425262728…" in message
    assert "got      [33:] …2122232424262728…" in message


def test_a_correct_prefix_is_reported_as_short_output() -> None:
    expected = bytes(range(48))
    diff = compare_bytes(expected, expected[:32])
    assert diff is not None
    assert diff.truncated_only
    assert diff.reason() == "short output: 32 of 48 bytes"
    assert "(ends at byte 32)" in diff.got_excerpt


def test_short_and_wrong_output_says_both() -> None:
    diff = compare_bytes(b"\x00" * 32, b"\x00\x01" + b"\x00" * 14)
    assert diff is not None
    assert diff.short and not diff.truncated_only
    assert diff.reason().startswith(
        "short and wrong output: 16 of 32 bytes, first difference at byte 1"
    )


def test_long_output() -> None:
    diff = compare_bytes(b"ab", b"abc")
    assert diff is not None
    assert diff.long
    assert diff.reason() == "long output: 3 bytes instead of 2, first difference at byte 2"


def test_mismatch_message_starts_with_the_subject() -> None:
    message = mismatch_message("xts(ecb(aes-generic)) encrypt vs OpenSSL", b"\x01", b"\x02")
    assert message is not None
    assert message.startswith(
        "xts(ecb(aes-generic)) encrypt vs OpenSSL: wrong output: first difference at byte 0 of 1"
    )


def test_window_is_clamped_to_the_data() -> None:
    assert window(0, 10, 10, context=16) == (0, 10)
    assert window(100, 200, 50, context=8) == (92, 108)
    assert window(5, 5, 0, context=2) == (3, 5)


def test_excerpt_marks_cuts() -> None:
    data = bytes(range(10))
    assert excerpt(data, 0, 10) == data.hex()
    assert excerpt(data, 2, 4) == "…0203…"
    assert excerpt(data, 12, 14) == "(ends at byte 10)"


def test_hex_preview_abbreviates_long_values() -> None:
    assert hex_preview(b"") == "(empty)"
    assert hex_preview(b"\xab" * 4) == "abababab"
    long = bytes(range(100))
    preview = hex_preview(long, limit=8)
    assert preview == "00010203…60616263 (100 bytes)"
