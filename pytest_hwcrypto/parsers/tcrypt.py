# SPDX-License-Identifier: MIT
"""Parse tcrypt speed results from the kernel log (pure: text in, Measurements out).

`modprobe tcrypt mode=N sec=S` (CONFIG_CRYPTO_TEST, CONFIG_CRYPTO_BENCHMARK since 2025)
prints its results with printk; the formats matched here are those of crypto/tcrypt.c:

* a header per algorithm, driver and direction::

      tcrypt: testing speed of async cbc(aes) (cbc-aes-aesni) encryption
      tcrypt: testing speed of gcm(aes) (generic-gcm-aesni) decryption     (AEAD)
      tcrypt: testing speed of multibuffer ecb(aes) (ecb-aes-aesni) encryption
      tcrypt: testing speed of async sha256 (sha256-avx2)                  (hash)

  (old kernels omit the driver; the driver can itself contain parentheses, e.g.
  ``xts(ecb(aes-generic))``);
* cipher and AEAD tests, the result printed with pr_cont on the same line, or (AEAD in
  cycles mode) with pr_info on the next one::

      test 0 (128 bit key, 16 byte blocks): 1234567 operations in 1 seconds (19753072 bytes)
      test 3 (256 bit key,512 byte blocks):
      1 operation in 1234 cycles (512 bytes)

* hash tests; single-update results arrive with pr_info, i.e. on a line of their own::

      test  0 (   16 byte blocks,   16 bytes per update,   1 updates):
       5234567 opers/sec,  83753072 bytes/sec
      test  1 (   64 byte blocks,   16 bytes per update,   4 updates):  1209874 opers/sec, ...

  and in cycles mode ``   704 cycles/operation,   11 cycles/byte``.

Because results and their test line may be split over lines, joined on one line (text
pasted into a bug report with its whitespace collapsed), or interleaved with dmesg
timestamps (``[   12.345678] ``) and other messages, the text is read as a stream of
events (header, test, result) found anywhere in it, and each result is paired with the
test announced last.

Output: one Measurement per result, source "tcrypt", op "encrypt"/"decrypt" for ciphers
and AEADs, "digest" for single-update hashes and "update-<n>" for hashes fed n bytes per
update (so that the key (algorithm, block size, op) stays unique).  Results in cycles
(``sec=0``) become bytes/s only when the CPU clock is given; without it each is kept as a
`CycleResult` record (cycles are not bytes/s, so never a Measurement).  akcipher results
(sign/verify, operations without bytes) carry no throughput and are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Union

from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.parsers.tables import Record

SOURCE = "tcrypt"


@dataclass
class CycleResult(Record):
    """A tcrypt result counted in CPU cycles (sec=0) for want of the CPU clock."""

    KIND = "tcrypt-cycles"
    algorithm: str
    driver: str | None
    key_bits: int | None
    block_size: int
    op: str
    cycles_per_operation: int
    cycles_per_byte: int | None = None
    mode: str | None = None

    def describe(self) -> str:
        key = f" {self.key_bits}-bit" if self.key_bits is not None else ""
        driver = f" [{self.driver}]" if self.driver else ""
        return (
            f"{self.algorithm}{key} {self.block_size} B {self.op}{driver}: "
            f"{self.cycles_per_operation} cycles/operation"
        )


@dataclass
class TcryptResults:
    """What a stretch of tcrypt log holds: throughput, and results counted in cycles."""

    measurements: list[Measurement]
    cycles: list[CycleResult]


class TcryptParseError(ValueError):
    """The text holds no tcrypt speed result; the message says what was found instead."""


@dataclass(frozen=True)
class _Header:
    algorithm: str
    driver: str | None
    op: str | None  # None for hashes
    mode: str | None  # "async", "sync", "multibuffer" or None


@dataclass(frozen=True)
class _CipherTest:
    index: int
    key_bits: int
    block_size: int


@dataclass(frozen=True)
class _HashTest:
    index: int
    block_size: int
    update_size: int


_Event = Union[_Header, _CipherTest, _HashTest, "_Result"]


@dataclass(frozen=True)
class _Result:
    """A result as printed: bytes/s directly, cycles or nanoseconds per operation.

    `block_bytes` is the block size a per-operation result states ("(1024 bytes)").
    """

    bytes_per_second: float | None
    cycles_per_operation: int | None
    details: dict[str, Any]
    nsecs_per_operation: int | None = None
    block_bytes: int | None = None


_HEADER = re.compile(
    r"testing speed of\s+(?:(?P<mode>async|sync|multibuffer)\s+)?"
    r"(?P<algorithm>[^\s(]+(?:\(\S*\))?)"
)
_DIRECTION = re.compile(r"\s*(?P<op>encryption|decryption)\b")
_CIPHER_TEST = re.compile(
    r"\btest\s*(?P<index>\d+)\s*\(\s*(?P<key_bits>\d+)\s*bit key\s*,"
    r"\s*(?P<block_size>\d+)\s*byte blocks\s*\)\s*:"
)
_HASH_TEST = re.compile(
    r"\btest\s*(?P<index>\d+)\s*\(\s*(?P<block_size>\d+)\s*byte blocks\s*,"
    r"\s*(?P<update_size>\d+)\s*bytes per update\s*,\s*(?P<updates>\d+)\s*updates\s*\)\s*:"
)
# "(N bytes)" may be wrapped onto the next line by a mailer, or cut off
_OPERATIONS = re.compile(
    r"\b(?P<operations>\d+)\s*operations in\s*(?P<seconds>\d+)\s*seconds"
    r"(?:\s*\(\s*(?P<bytes>\d+)\s*bytes\s*\))?"
)
# cycles until 2026; then nanoseconds (tcrypt timed with ktime_get()); the multibuffer
# tests of some kernels print no "(bytes)"
_CYCLES = re.compile(
    r"\b1 operation in\s*(?P<count>\d+)\s*(?P<unit>cycles|nsecs)"
    r"(?:\s*\(\s*(?P<bytes>\d+)\s*bytes\s*\))?"
)
_HASH_RATE = re.compile(
    r"\b(?P<operations>\d+)\s*opers/sec\s*,\s*(?P<bytes_per_second>\d+)\s*bytes/sec"
)
# the cycles per byte may be cut off by a pasted line's width ("18 cycle")
_HASH_CYCLES = re.compile(
    r"\b(?P<count>\d+)\s*(?P<unit>cycles|nsecs)/operation"
    r"(?:\s*,\s*(?P<per_byte>\d+)\s*(?:cycles|nsecs)/byte)?"
)


def parse_tcrypt(
    text: str, source_name: str = "<input>", cpu_hz: float | None = None
) -> list[Measurement]:
    """Measurements from tcrypt speed output; TcryptParseError when there are none.

    `cpu_hz` converts results in cycles (tcrypt run with sec=0) to bytes/s.
    """
    results = read_tcrypt(text, cpu_hz)
    if not results.measurements:
        raise TcryptParseError(_nothing_found(source_name, text, len(results.cycles)))
    return results.measurements


def read_tcrypt(text: str, cpu_hz: float | None = None) -> TcryptResults:
    """Every result in `text`: bytes/s where known, else the cycles as printed."""
    results = TcryptResults([], [])
    header: _Header | None = None
    test: _CipherTest | _HashTest | None = None
    for event in _events(text):
        if isinstance(event, _Header):
            header, test = event, None
        elif isinstance(event, (_CipherTest, _HashTest)):
            test = event if header is not None else None
        elif header is not None and test is None and event.block_bytes is not None:
            # a per-operation result whose test line was cut from the post: it still
            # names its block size, not its key size
            test = _CipherTest(-1, 0, event.block_bytes)
            _add_result(results, header, test, event, cpu_hz, orphan=True)
            test = None
        elif header is not None and test is not None:
            _add_result(results, header, test, event, cpu_hz)
            test = None  # one result per announced test
    return results


def _events(text: str) -> Iterator[_Event]:
    """Headers, tests and results in the order they appear in the text."""
    readers: list[tuple[re.Pattern[str], Callable[[re.Match[str]], _Event]]] = [
        (_HEADER, lambda match: _header(match, text)),
        (_CIPHER_TEST, _cipher_test),
        (_HASH_TEST, _hash_test),
        (_OPERATIONS, _operations_result),
        (_CYCLES, _cycles_result),
        (_HASH_RATE, _hash_rate_result),
        (_HASH_CYCLES, _hash_cycles_result),
    ]
    found = [
        (match.start(), read(match))
        for pattern, read in readers
        for match in pattern.finditer(text)
    ]
    for _, event in sorted(found, key=lambda item: item[0]):
        yield event


def _cipher_test(match: re.Match[str]) -> _CipherTest:
    return _CipherTest(int(match["index"]), int(match["key_bits"]), int(match["block_size"]))


def _hash_test(match: re.Match[str]) -> _HashTest:
    return _HashTest(int(match["index"]), int(match["block_size"]), int(match["update_size"]))


def _cycles_result(match: re.Match[str]) -> _Result:
    block = int(match["bytes"]) if match["bytes"] else None
    return _per_operation(int(match["count"]), match["unit"], block, {})


def _per_operation(count: int, unit: str, block: int | None, details: dict[str, Any]) -> _Result:
    if unit == "nsecs":
        return _Result(None, None, {"nsecs_per_operation": count, **details}, count, block)
    return _Result(None, count, {"cycles_per_operation": count, **details}, None, block)


def _hash_rate_result(match: re.Match[str]) -> _Result:
    details = {"operations_per_second": int(match["operations"])}
    return _Result(float(match["bytes_per_second"]), None, details)


def _hash_cycles_result(match: re.Match[str]) -> _Result:
    details = {}
    if match["per_byte"] is not None:
        details[f"{match['unit']}_per_byte"] = int(match["per_byte"])
    return _per_operation(int(match["count"]), match["unit"], None, details)


def _header(match: re.Match[str], text: str) -> _Header:
    driver, end = _parenthesised(text, match.end())
    direction = _DIRECTION.match(text, end)
    op = None
    if direction is not None:
        op = "encrypt" if direction["op"] == "encryption" else "decrypt"
    return _Header(algorithm=match["algorithm"], driver=driver, op=op, mode=match["mode"])


def _parenthesised(text: str, start: int) -> tuple[str | None, int]:
    """The balanced '( ... )' group after optional blanks at `start`: its inside and its end."""
    position = start
    while position < len(text) and text[position] in " \t":
        position += 1
    if text.startswith("\n", position):  # the driver wrapped onto the next line
        position += 1
        while position < len(text) and text[position] in " \t":
            position += 1
    if position >= len(text) or text[position] != "(":
        return None, start
    depth = 0
    for index in range(position, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return text[position + 1 : index].strip() or None, index + 1
        elif text[index] == "\n":
            break
    return None, start


def _operations_result(match: re.Match[str]) -> _Result:
    seconds = int(match["seconds"])
    details: dict[str, Any] = {"operations": int(match["operations"]), "seconds": seconds}
    if match["bytes"] is None:  # bytes/s from the test's block size (see _measurement)
        return _Result(None, None, details)
    total_bytes = int(match["bytes"])
    details["bytes"] = total_bytes
    return _Result(total_bytes / seconds if seconds > 0 else None, None, details)


def _measurement(
    header: _Header, test: _CipherTest | _HashTest, result: _Result, cpu_hz: float | None
) -> Measurement | None:
    bytes_per_second = result.bytes_per_second
    operations, seconds = result.details.get("operations"), result.details.get("seconds")
    if bytes_per_second is None and isinstance(operations, int) and isinstance(seconds, int):
        bytes_per_second = operations * test.block_size / seconds if seconds > 0 else None
    if bytes_per_second is None and result.nsecs_per_operation:
        bytes_per_second = test.block_size * 1e9 / result.nsecs_per_operation
    if bytes_per_second is None and result.cycles_per_operation and cpu_hz:
        bytes_per_second = test.block_size * cpu_hz / result.cycles_per_operation
    if bytes_per_second is None:
        return None
    extra: dict[str, Any] = {"tcrypt_test": test.index, **result.details}
    if header.mode is not None:
        extra["tcrypt_mode"] = header.mode
    op, key_bits = _op_and_key(header, test)
    return Measurement(
        source=SOURCE,
        algorithm=header.algorithm,
        driver=header.driver,
        key_bits=key_bits,
        block_size=test.block_size,
        op=op,
        bytes_per_second=bytes_per_second,
        extra=extra,
    )


def _add_result(
    results: TcryptResults,
    header: _Header,
    test: _CipherTest | _HashTest,
    result: _Result,
    cpu_hz: float | None,
    orphan: bool = False,
) -> None:
    measurement = _measurement(header, test, result, cpu_hz)
    if measurement is not None:
        if orphan:
            measurement.key_bits = None
            measurement.extra.pop("tcrypt_test", None)
        results.measurements.append(measurement)
    elif result.cycles_per_operation is not None:
        cycles = _cycle_result(header, test, result)
        if orphan:
            cycles.key_bits = None
        results.cycles.append(cycles)


def _cycle_result(header: _Header, test: _CipherTest | _HashTest, result: _Result) -> CycleResult:
    op, key_bits = _op_and_key(header, test)
    cycles_per_byte = result.details.get("cycles_per_byte")
    return CycleResult(
        algorithm=header.algorithm,
        driver=header.driver,
        key_bits=key_bits,
        block_size=test.block_size,
        op=op,
        cycles_per_operation=result.cycles_per_operation or 0,
        cycles_per_byte=cycles_per_byte if isinstance(cycles_per_byte, int) else None,
        mode=header.mode,
    )


def _op_and_key(header: _Header, test: _CipherTest | _HashTest) -> tuple[str, int | None]:
    if isinstance(test, _HashTest):
        op = "digest" if test.update_size == test.block_size else f"update-{test.update_size}"
        return op, None
    return header.op or "encrypt", test.key_bits


def _nothing_found(source_name: str, text: str, cycle_results: int) -> str:
    if cycle_results:
        return (
            f"{source_name}: tcrypt reported {cycle_results} results in CPU cycles (sec=0); "
            "give the CPU clock to convert them, or rerun with sec=1"
        )
    if "testing speed of" in text:
        return f"{source_name}: tcrypt speed headers found but no results (did the tests fail?)"
    return (
        f"{source_name}: no tcrypt speed results "
        "(expected lines like 'tcrypt: testing speed of ...')"
    )
