# SPDX-License-Identifier: MIT
"""cryptsetup benchmark parser, on real board output (tests/data/paste/raw)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.parsers.cryptsetup import PbkdfRecord, UnavailableCipher
from pytest_hwcrypto.parsers.parse import ParseError, parse_text

RAW = Path(__file__).parent.parent / "data" / "paste" / "raw"
MIB = 2**20


def parse(name: str, tool: str = "cryptsetup-benchmark"):  # type: ignore[no-untyped-def]
    return parse_text(tool, (RAW / f"{name}.txt").read_text(encoding="utf-8"), f"{name}.txt")


def rates(document) -> dict[tuple[str, int | None, str], float]:  # type: ignore[no-untyped-def]
    return {(m.algorithm, m.key_bits, m.op): m.bytes_per_second for m in document.measurements}


def test_full_benchmark_gives_two_measurements_per_row_in_bytes_per_second() -> None:
    document = parse("uml_cryptsetup_aes_ti")
    assert len(document.tables) == 1
    table = document.tables[0]
    assert len(table.measurements) == 24
    first = table.measurements[0]
    assert first.to_json() == {
        "source": "cryptsetup",
        "algorithm": "aes-cbc",
        "driver": None,
        "key_bits": 128,
        "block_size": None,
        "op": "encrypt",
        "bytes_per_second": 119.4 * MIB,
        "table": 0,
        "label": None,
        "mib_per_second": 119.4,
    }
    assert rates(document)[("aes-xts", 512, "decrypt")] == 71.1 * MIB
    assert rates(document)[("twofish-xts", 512, "encrypt")] == 241.2 * MIB
    assert not document.warnings


def test_pbkdf2_and_argon2_are_records_never_bytes() -> None:
    document = parse("uml_cryptsetup_aes_ti")
    records = [record for _, record in document.records()]
    assert all(isinstance(record, PbkdfRecord) for record in records)
    pbkdf2 = {r.hash: r for r in records if isinstance(r, PbkdfRecord) and r.kdf == "pbkdf2"}
    assert set(pbkdf2) == {"sha1", "sha256", "sha512", "ripemd160", "whirlpool"}
    assert pbkdf2["sha256"].iterations_per_second == 4821039
    assert pbkdf2["sha256"].key_bits == 256
    argon = next(r for r in records if isinstance(r, PbkdfRecord) and r.kdf == "argon2id")
    assert (argon.iterations, argon.memory_kib, argon.threads) == (4, 192187, 4)
    assert argon.requested_ms == 2000
    assert {m.algorithm for m in document.measurements}.isdisjoint({"pbkdf2", "argon2id"})


def test_na_rows_are_unavailable_ciphers() -> None:
    document = parse("qemu_cryptsetup_na")
    assert len(document.measurements) == 8  # aes-cbc and aes-xts, two key sizes, two ops
    unavailable = [r for _, r in document.records() if isinstance(r, UnavailableCipher)]
    assert {(r.algorithm, r.key_bits) for r in unavailable} == {
        (cipher, bits)
        for cipher, sizes in (
            ("serpent-cbc", (128, 256)),
            ("twofish-cbc", (128, 256)),
            ("serpent-xts", (256, 512)),
            ("twofish-xts", (256, 512)),
        )
        for bits in sizes
    }


def test_single_cipher_header_spacing_and_pbkdf2_only_run() -> None:
    single = parse("qemu_cryptsetup_single")
    assert rates(single) == {
        ("aes-xts", 512, "encrypt"): 85.2 * MIB,
        ("aes-xts", 512, "decrypt"): 84.8 * MIB,
    }
    pbkdf2 = parse("uml_cryptsetup_pbkdf2")
    assert not pbkdf2.measurements
    [(_, record)] = list(pbkdf2.records())
    assert isinstance(record, PbkdfRecord) and record.iterations_per_second == 4821039


def test_missing_cipher_message_is_a_record_and_a_warning() -> None:
    document = parse("qemu_cryptsetup_missing")
    [(_, record)] = list(document.records())
    assert record == UnavailableCipher("camellia-foo", 256)
    assert document.warnings == [
        "qemu_cryptsetup_missing.txt:1: cryptsetup says: "
        "Cipher camellia-foo (with 256 bits key) is not available."
    ]


@pytest.mark.parametrize(
    "lines",
    [
        # 1.x: no 'for N-bit key', narrower header
        [
            "PBKDF2-sha1       364088 iterations per second",
            "#  Algorithm | Key |  Encryption |  Decryption",
            "     aes-cbc   128b   600.4 MiB/s  2095.1 MiB/s",
        ],
        # a hash cryptsetup could not benchmark, and a header with no blanks at all
        [
            "PBKDF2-whirlpool       N/A",
            "#Algorithm|Key|Encryption|Decryption",
            "aes-cbc 128b 600.4 MiB/s 2095.1 MiB/s",
        ],
    ],
)
def test_other_spellings_of_the_format(lines: list[str]) -> None:
    document = parse_text("cryptsetup-benchmark", "\n".join(lines), "post")
    assert rates(document) == {
        ("aes-cbc", 128, "encrypt"): 600.4 * MIB,
        ("aes-cbc", 128, "decrypt"): 2095.1 * MIB,
    }
    [(_, record)] = list(document.records())
    assert isinstance(record, PbkdfRecord) and record.kdf == "pbkdf2"


def test_partial_row_is_read_with_a_warning_naming_the_line() -> None:
    text = "#  Algorithm | Key | Encryption | Decryption\naes-xts 512b 88.7 MiB/s\n"
    document = parse_text("cryptsetup-benchmark", text, "cut.txt")
    assert rates(document) == {("aes-xts", 512, "encrypt"): 88.7 * MIB}
    assert document.warnings == ["cut.txt:2: aes-xts 512b row has no decryption value"]


def test_a_repeated_row_with_other_values_starts_a_new_table() -> None:
    text = "aes-xts 512b 88.7 MiB/s 60.3 MiB/s\naes-xts 512b 240.3 MiB/s 225.3 MiB/s\n"
    document = parse_text("cryptsetup-benchmark", text, "two.txt")
    assert [len(table.measurements) for table in document.tables] == [2, 2]


def test_no_table_is_one_error_naming_the_file_and_what_was_looked_for() -> None:
    with pytest.raises(ParseError) as error:
        parse("openssl_legacy")
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("openssl_legacy.txt: no cryptsetup benchmark output")
    assert message.endswith("it holds openssl-speed output (try 'auto')")
