# SPDX-License-Identifier: MIT
"""How numbers are written for people: throughput in MiB/s, ratios, drops. Pure, at the
bottom layer, so that every layer words a figure the same way without importing the
wording module of one command (format_mib_s lived in verdict/compare_text.py, which tied
verdict/storage_bound.py into a cycle with verdict/compare.py)."""

from __future__ import annotations

import errno
import math

from pytest_hwcrypto.vocabulary import MIB


def format_mib_s(bytes_per_second: float) -> str:
    """MiB/s with enough digits to tell small numbers apart: 1350, 26.7, 6.60, 0.0300."""
    mib = bytes_per_second / MIB
    if mib >= 100:
        return f"{mib:.0f}"
    if mib >= 10:
        return f"{mib:.1f}"
    if mib >= 1:
        return f"{mib:.2f}"
    return f"{mib:.3g}"


def format_mib_s_as_tools_print(bytes_per_second: float) -> str:
    """MiB/s as cryptsetup and openssl print it: one decimal, more digits only below
    1 MiB/s (`hwcrypto parse` echoes the tools' own tables)."""
    mib = bytes_per_second / MIB
    return f"{mib:.1f}" if mib >= 1 else f"{mib:.3g}"


def format_operations(operations_per_second: float) -> str:
    """Operations per second, three significant figures: ``1.23e+03`` is written ``1230``."""
    if operations_per_second >= 100:
        return f"{operations_per_second:.0f}"
    return f"{operations_per_second:.3g}"


def format_ratio(ratio: float) -> str:
    """0.45, 1.6, 48: two significant digits are all the noise allows."""
    if math.isinf(ratio):
        return "inf"
    return f"{ratio:.2f}" if ratio < 10 else f"{ratio:.0f}"


def format_min_ratio(ratio: float) -> str:
    """1.0 -> '1.0' (as people write it in profiles), 1.25 -> '1.25'."""
    return f"{ratio:.1f}" if round(ratio, 1) == ratio else f"{ratio:g}"


def format_drop(drop: float) -> str:
    """'23 %' -- whole percent; the noise allows no finer claim."""
    return f"{drop * 100:.0f} %"


def size_label(size: int | None) -> str:
    """16, 4K, 64K, 1M: block sizes as column heads, plot ticks and short messages."""
    if size is None:
        return "-"
    for unit, factor in (("M", 1 << 20), ("K", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def errno_name(err: int | None) -> str:
    """``EINVAL`` for 22; messages name errno symbolically."""
    if err is None:
        return "an unknown error"
    return errno.errorcode.get(err, f"errno {err}")


__all__ = [
    "errno_name",
    "format_drop",
    "format_mib_s",
    "format_mib_s_as_tools_print",
    "format_min_ratio",
    "format_operations",
    "format_ratio",
    "size_label",
]
