# SPDX-License-Identifier: MIT
"""Real posts, read as they were pasted: the share of hand-read values `parse auto` finds.

tests/data/world/paste holds outputs people posted (mailing lists, issue trackers, blogs,
wikis), each `<name>.txt` beside `<name>.expect.json`, whose `values` were read by hand:
``{"table", "algorithm" (as the tool prints it), "key_bits", "op", "block_size", "value",
"unit", "text"}``.  A value is found when a measurement of that table with that
algorithm (named the project's way), key size, op and block size carries that value,
converted to bytes/s, within `TOLERANCE`; a count of CPU cycles (tcrypt ``sec=0``) is
compared with the cycles the parser keeps for it.

Units are converted as each tool means them: ``MiB/s`` (cryptsetup, fio 3.x) 2^20;
openssl's ``k`` 1000 bytes/s; fio 3.x's ``kB/s``/``MB/s`` (in brackets after the IEC
value) powers of 1000; fio 2.x's ``KB/s``/``MB/s`` powers of 1024 (fio before 3.0
printed binary multiples with those names unless kb_base=1000 was set; fio 3.0 renamed
them KiB/MiB and added the decimal ones).

An expectation's ``"algorithm": null`` names no algorithm (fio's job name is not one),
so any measurement of that table, op and block size may carry the value.

No post may make the parser raise, not even ParseError (each holds a table), and at least
`REQUIRED_SHARE` of all values must be found; the share per tool and every miss are
printed (`pytest -s`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.parsers.openssl_lines import normalise_name
from pytest_hwcrypto.parsers.parse import ParsedDocument, ParseError, parse_text

WORLD = Path(__file__).parent.parent / "data" / "world" / "paste"
POSTS = sorted(WORLD.glob("*.txt"))
TOLERANCE = 0.005
REQUIRED_SHARE = 0.95

_BINARY = {"B": 1.0, "K": 2.0**10, "M": 2.0**20, "G": 2.0**30, "T": 2.0**40}
_DECIMAL = {"B": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


@dataclass(frozen=True)
class Expected:
    post: str
    tool: str
    table: int
    algorithm: str | None  # None: not stated (fio's job name is not an algorithm)
    key_bits: int | None
    op: str
    block_size: int | None
    value: float
    unit: str
    text: str

    def describe(self) -> str:
        where = f"{self.post} table {self.table}"
        what = f"{self.algorithm or ''} {self.key_bits or ''} {self.op} {self.block_size or ''}"
        return f"{where}: {' '.join(what.split())} = {self.value:g} {self.unit} ({self.text!r})"


def expected_values(post: Path) -> list[Expected]:
    data = json.loads(post.with_suffix(".expect.json").read_text(encoding="utf-8"))
    tool = str(data["tool"])
    return [
        Expected(
            post=post.name,
            tool=str(value.get("tool", tool)),
            table=int(value.get("table", 0)),
            algorithm=None if value.get("algorithm") is None else str(value["algorithm"]),
            key_bits=value.get("key_bits"),
            op=str(value["op"]),
            block_size=value.get("block_size"),
            value=float(value["value"]),
            unit=str(value["unit"]),
            text=str(value.get("text", "")),
        )
        for value in data["values"]
    ]


def project_name(tool: str, algorithm: str | None) -> str | None:
    """The algorithm as the parsers name it (openssl: 'aes-128 cbc' -> 'aes-128-cbc')."""
    if algorithm is None:
        return None
    if tool == "openssl":
        return normalise_name(algorithm)
    if tool == "cryptsetup":
        return algorithm.lower()
    return algorithm


def in_bytes_per_second(expected: Expected) -> float | None:
    """The expected value in bytes/s, or None for a count of cycles."""
    unit = expected.unit.strip()
    if unit in ("k", "1000s of bytes/s"):  # openssl's table
        return expected.value * 1000.0
    if unit in ("B/s", "bytes/s", "bytes/sec"):
        return expected.value
    if unit.endswith("iB/s"):
        return expected.value * _BINARY[unit[0].upper()]
    if unit.endswith("B/s") and len(unit) == 4:
        # fio 3.x prints its decimal figure beside an IEC one; fio 2.x only its binary one
        fio_2x = expected.tool == "fio" and "iB/s" not in expected.text
        return expected.value * (_BINARY if fio_2x else _DECIMAL)[unit[0].upper()]
    if unit.startswith("cycles"):
        return None
    raise ValueError(f"{expected.post}: unit {unit!r} is not understood by this test")


def _matches(expected: Expected, candidate: dict[str, Any]) -> bool:
    algorithm = project_name(expected.tool, expected.algorithm)
    return (
        candidate.get("table") == expected.table
        and (algorithm is None or candidate.get("algorithm") == algorithm)
        and candidate.get("key_bits") == expected.key_bits
        and candidate.get("op") == expected.op
        and candidate.get("block_size") == expected.block_size
    )


def found(expected: Expected, document: ParsedDocument) -> bool:
    target = in_bytes_per_second(expected)
    if target is None:
        # cycles: kept on the record of a result that has no bytes/s (tcrypt sec=0)
        for table, record in document.records():
            data = {"table": table.index, **record.to_json()}
            cycles = data.get("cycles_per_operation")
            if (
                _matches(expected, data)
                and isinstance(cycles, (int, float))
                and abs(cycles - expected.value) <= TOLERANCE * expected.value
            ):
                return True
        return False
    for measurement in document.measurements:
        data = {
            "table": measurement.extra.get("table"),
            "algorithm": measurement.algorithm,
            "key_bits": measurement.key_bits,
            "op": measurement.op,
            "block_size": measurement.block_size,
        }
        if _matches(expected, data) and (
            abs(measurement.bytes_per_second - target) <= TOLERANCE * target
        ):
            return True
    return False


def evaluate(posts: Iterable[Path]) -> tuple[dict[str, list[int]], list[str]]:
    """Per tool [found, total], and one line per miss."""
    shares: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    misses: list[str] = []
    for post in posts:
        values = expected_values(post)
        text = post.read_bytes().decode("utf-8", errors="replace")
        try:
            document: ParsedDocument | None = parse_text("auto", text, post.name)
        except ParseError as error:
            document = None
            misses.append(f"{post.name}: no table read: {error}")
        for expected in values:
            shares[expected.tool][1] += 1
            if document is not None and found(expected, document):
                shares[expected.tool][0] += 1
            else:
                misses.append("missed " + expected.describe())
    return dict(shares), misses


@pytest.mark.parametrize("post", POSTS, ids=[post.stem for post in POSTS])
def test_every_post_reads_without_an_error(post: Path) -> None:
    """Each post holds a table, so no exception at all -- not even ParseError."""
    text = post.read_bytes().decode("utf-8", errors="replace")
    document = parse_text("auto", text, post.name)
    assert document.tables
    assert {table.tool for table in document.tables} >= {
        value.tool for value in expected_values(post)
    }


@pytest.mark.skipif(not POSTS, reason="no real posts in tests/data/world/paste yet")
def test_parse_auto_finds_the_values_read_by_hand_in_real_posts() -> None:
    shares, misses = evaluate(POSTS)
    total_found = sum(share[0] for share in shares.values())
    total = sum(share[1] for share in shares.values())
    print(f"\n{len(POSTS)} posts, {total_found}/{total} values found ({total_found / total:.0%})")
    for tool, (hits, count) in sorted(shares.items()):
        print(f"  {tool}: {hits}/{count} ({hits / count:.0%})")
    for miss in misses:
        print(f"  {miss}")
    assert total_found >= REQUIRED_SHARE * total, "\n".join(misses)


def test_units_are_converted_as_each_tool_means_them() -> None:
    """The conversion this evaluation relies on, checked on the cases that differ."""

    def value(tool: str, number: float, unit: str, text: str = "") -> float | None:
        return in_bytes_per_second(
            Expected("p", tool, 0, "a", None, "read", None, number, unit, text)
        )

    assert value("openssl", 1190581.81, "k") == pytest.approx(1190581810.0)
    assert value("cryptsetup", 690.1, "MiB/s") == pytest.approx(690.1 * 2**20)
    assert value("fio", 34952, "KB/s", "read : io=1024.0MB, bw=34952KB/s") == 34952 * 1024
    assert value("fio", 401, "kB/s", "BW=392KiB/s (401kB/s)") == 401_000
    assert value("fio", 12.9, "MB/s", "bw=12.3MiB/s (12.9MB/s)") == pytest.approx(12.9e6)
    assert value("fio", 1.5, "MB/s", "aggrb=1.5MB/s") == pytest.approx(1.5 * 2**20)
    assert value("tcrypt", 339, "cycles") is None
