# SPDX-License-Identifier: MIT
"""openssl speed parser, on real UML output (tests/data/paste/raw)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.parsers.openssl_lines import PublicKeyRecord, normalise_name
from pytest_hwcrypto.parsers.parse import ParsedDocument, parse_text

DATA = Path(__file__).parent.parent / "data" / "paste"
SIZES = [16, 64, 256, 1024, 8192, 16384]


def parse(name: str, folder: str = "raw") -> ParsedDocument:
    text = (DATA / folder / f"{name}.txt").read_text(encoding="utf-8")
    return parse_text("openssl-speed", text, f"{name}.txt")


def series(document: ParsedDocument, table: int = 0) -> dict[int | None, float]:
    return {m.block_size: m.bytes_per_second for m in document.tables[table].measurements}


def test_legacy_table_k_is_1000_bytes_per_second() -> None:
    document = parse("openssl_legacy")
    [table] = document.tables
    assert [m.block_size for m in table.measurements] == SIZES
    first = table.measurements[0]
    assert (first.algorithm, first.key_bits, first.op, first.source) == (
        "aes-128-cbc",
        128,
        "encrypt",
        "openssl",
    )
    assert first.bytes_per_second == pytest.approx(1190581.81e3)
    assert series(document)[16384] == pytest.approx(2004271.10e3)
    assert table.facts["version"] == "3.0.19"
    assert table.facts["built_on"] == "Fri Apr  3 12:29:32 2026 UTC"
    assert table.facts["options"] == "bn(64,64)"
    assert table.facts["compiler"].startswith("gcc -fPIC")
    assert table.facts["cpuinfo"].startswith("OPENSSL_ia32cap=0xfffa32034f8bffff")
    assert table.facts["elapsed"] is True
    assert table.facts["evp"] is False  # lower-case name without -evp on 3.x


def test_evp_table_normalises_the_upper_case_name() -> None:
    document = parse("openssl_evp")
    assert {m.algorithm for m in document.measurements} == {"aes-128-cbc"}
    assert document.measurements[0].extra["name_printed"] == "AES-128-CBC"
    assert document.tables[0].facts["evp"] is True


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("aes-128 cbc", "aes-128-cbc"),
        ("AES-256-GCM", "aes-256-gcm"),
        ("des ede3", "des-ede3"),
        ("hmac(md5)", "hmac(md5)"),
    ],
)
def test_names(name: str, expected: str) -> None:
    assert normalise_name(name) == expected


def test_mr_lines_are_bytes_per_second_without_k() -> None:
    document = parse("openssl_mr")
    assert series(document)[16] == 1536153424.00
    assert series(document)[16384] == 1897807872.00
    assert document.tables[0].facts["mr"] is True


def test_multi_uses_the_summed_row_and_its_sizes_from_the_children() -> None:
    document = parse("openssl_multi")
    table = document.tables[0]
    assert table.facts["multi"] == 2
    assert series(document)[16] == pytest.approx(1533950.54e3)
    # the summed row is the sum of the children's +F results
    assert series(document)[16] == pytest.approx(762600288.00 + 771350256.00, rel=1e-8)
    assert not table.warnings


def test_async_jobs_is_a_fact_of_the_run_and_said_beside_each_figure() -> None:
    """-async_jobs N (QEMU board, the async test engine through the afalg engine): the
    run's fact and each measurement's `async_jobs`, but no `concurrency` -- N jobs are N
    requests in flight only where the kernel completes their AIO asynchronously (6.1.176:
    4 jobs 139 kB/s; 6.1.192, whose AF_ALG waits inside io_submit: 35 kB/s, one's rate)."""
    for name, rate in (
        ("qemu_openssl_async_jobs", 138.95e3),  # the table: 1000s of bytes a second
        ("qemu_openssl_async_jobs_mr", 144020.65),  # -mr's +F: bytes a second
        ("qemu_openssl_async_jobs_sync", 35.15e3),
    ):
        document = parse(name)
        [table] = document.tables
        assert table.facts["async_jobs"] == 4 and table.facts["engine"] == "afalg"
        [measurement] = table.measurements
        assert measurement.bytes_per_second == pytest.approx(rate)
        assert measurement.block_size == 4096 and measurement.extra["async_jobs"] == 4
        assert measurement.driver == "engine:afalg"
        assert measurement.concurrency is None
        assert not table.warnings


def test_digest_rows_are_digests_and_sign_verify_rows_are_records() -> None:
    sha = parse("openssl_sha256")
    assert {(m.algorithm, m.op, m.key_bits) for m in sha.measurements} == {
        ("sha256", "digest", None)
    }
    for name in ("openssl_rsa2048", "openssl_rsa2048_mr"):
        document = parse(name)
        assert not document.measurements
        [(_, record)] = list(document.records())
        assert isinstance(record, PublicKeyRecord)
        assert (record.algorithm, record.bits) == ("rsa", 2048)
        assert set(record.per_second) == {"sign/s", "verify/s"}
    table = parse("openssl_rsa2048")
    [(_, rsa)] = list(table.records())
    assert isinstance(rsa, PublicKeyRecord)
    assert rsa.per_second == {"sign/s": 2086.0, "verify/s": 66689.0}
    assert rsa.seconds == {"sign": 0.000479, "verify": 0.000015}


def test_single_block_size_run() -> None:
    document = parse("openssl_bytes")
    [m] = document.measurements
    assert (m.algorithm, m.key_bits, m.block_size) == ("aes-256-gcm", 256, 4096)
    assert m.bytes_per_second == pytest.approx(3986034.69e3)


def test_engine_facts_from_the_text_alone() -> None:
    document = parse("openssl_engine_legacy_cputime")
    facts = document.tables[0].facts
    assert facts["engine"] == "afalg"
    assert facts["elapsed"] is False  # 'Doing' lines without the elapsed-time notice
    assert facts["timed_seconds"] == [0.32, 0.99]
    assert {m.driver for m in document.measurements} == {"engine:afalg"}
    [finding] = document.findings
    assert finding.kind == "cpu-time-not-elapsed"
    assert "0.32 s of CPU time in 1 s" in finding.detail


def test_command_line_flags_decide_evp_elapsed_and_engine() -> None:
    text = "$ openssl speed -engine afalg aes-128-cbc\n" + (
        DATA / "raw" / "openssl_legacy.txt"
    ).read_text(encoding="utf-8")
    document = parse_text("openssl-speed", text, "post")
    facts = document.tables[0].facts
    assert facts["engine"] == "afalg"
    assert facts["evp"] is False
    assert facts["elapsed"] is True  # the notice is in the text even if the flag is not


@pytest.mark.parametrize(
    ("variant", "warning"),
    [
        ("ossl_no_table", "ossl_no_table.txt:2: no result table for aes-128-cbc"),
        ("ossl_mr_no_results", "ossl_mr_no_results.txt:2: no result table for AES-128-CBC"),
        ("ossl_multi_no_sum", "ossl_multi_no_sum.txt:30: no summed row after"),
        ("ossl_row_cut", "ossl_row_cut.txt:15: aes-128-cbc has 3 values for 6 block sizes"),
    ],
)
def test_cut_output_is_read_from_what_remains_with_a_warning(variant: str, warning: str) -> None:
    document = parse(variant, "variants")
    assert document.measurements
    assert any(item.startswith(warning) for item in document.warnings), document.warnings


def test_counts_give_the_same_rates_as_the_table_within_rounding() -> None:
    table = series(parse("openssl_legacy"))
    counts = series(parse("ossl_no_table", "variants"))
    assert counts.keys() == table.keys()
    for size, rate in table.items():
        assert counts[size] == pytest.approx(rate, rel=0.01)
    mr = series(parse("openssl_mr"))
    mr_counts = series(parse("ossl_mr_no_results", "variants"))
    for size, rate in mr.items():
        assert mr_counts[size] == pytest.approx(rate, rel=0.001)


def test_openssl_1_1_spelling_and_unknown_version() -> None:
    document = parse("ossl_11_names", "variants")
    assert {m.algorithm for m in document.measurements} == {"aes-128-cbc"}
    assert series(document) == pytest.approx(series(parse("openssl_engine_legacy")))
    facts = document.tables[0].facts
    assert facts["evp"] is False and "version" not in facts
    [finding] = document.findings
    assert finding.kind == "legacy-bypasses-engine"
    assert "does not say which OpenSSL" in finding.detail


def test_engine_that_did_not_serve_the_cipher_is_a_legacy_bypass() -> None:
    document = parse("post_openssl_camellia", "variants")
    assert len(document.tables) == 2
    [finding] = document.findings
    assert finding.kind == "legacy-bypasses-engine"
    assert finding.extra == {"table": 1, "engine": "afalg", "compared_with": 0}
    assert "0.97x to 1.11x over 6 block sizes" in finding.detail
