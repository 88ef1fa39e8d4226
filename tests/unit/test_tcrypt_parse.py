# SPDX-License-Identifier: MIT
from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.parsers.tcrypt import TcryptParseError, parse_tcrypt

DATA = Path(__file__).parent.parent / "data"


def load(name: str) -> str:
    return (DATA / name).read_text()


def find(
    measurements: list[Measurement],
    driver: str | None,
    block_size: int,
    op: str,
    key_bits: int | None = 128,
) -> Measurement:
    matching = [
        m
        for m in measurements
        if m.driver == driver
        and m.block_size == block_size
        and m.op == op
        and m.key_bits == key_bits
    ]
    assert len(matching) == 1, matching
    return matching[0]


def test_skcipher_dmesg_every_result_is_parsed() -> None:
    measurements = parse_tcrypt(load("tcrypt_skcipher_dmesg.txt"))
    # aesni: 2 key sizes x 7 encrypt + 7 decrypt; virtio 7; xts generic 7; gcm 8; rsa none
    assert len(measurements) == 14 + 7 + 7 + 7 + 8
    assert {m.source for m in measurements} == {"tcrypt"}
    first = measurements[0]
    assert (first.algorithm, first.driver, first.key_bits, first.block_size, first.op) == (
        "cbc(aes)",
        "cbc-aes-aesni",
        128,
        16,
        "encrypt",
    )
    assert first.bytes_per_second == 310000000.0
    assert first.extra["tcrypt_test"] == 0 and first.extra["tcrypt_mode"] == "async"
    assert first.extra["operations"] == 19375000


def test_key_size_and_direction_come_from_the_right_lines() -> None:
    measurements = parse_tcrypt(load("tcrypt_skcipher_dmesg.txt"))
    big_key = find(measurements, "cbc-aes-aesni", 8192, "encrypt", key_bits=256)
    assert big_key.bytes_per_second == 1319993344.0
    decrypt = find(measurements, "cbc-aes-aesni", 8192, "decrypt")
    assert decrypt.bytes_per_second == pytest.approx(5.2e9, rel=0.001)


def test_driver_names_with_parentheses_are_kept_whole() -> None:
    measurements = parse_tcrypt(load("tcrypt_skcipher_dmesg.txt"))
    xts = [m for m in measurements if m.algorithm == "xts(aes)"]
    assert {m.driver for m in xts} == {"xts(ecb(aes-generic))"}
    assert [m.block_size for m in xts] == [16, 64, 256, 512, 1024, 1472, 8192]


def test_offload_engine_numbers() -> None:
    measurements = parse_tcrypt(load("tcrypt_skcipher_dmesg.txt"))
    virtio = find(measurements, "virtio_crypto_aes_cbc", 16, "encrypt")
    assert virtio.bytes_per_second == 1937 * 16  # 0.031 MB/s: 1937 operations of 16 B


def test_aead_format_without_spaces() -> None:
    measurements = parse_tcrypt(load("tcrypt_skcipher_dmesg.txt"))
    gcm = [m for m in measurements if m.algorithm == "gcm(aes)"]
    assert [m.block_size for m in gcm] == [16, 64, 256, 512, 1024, 2048, 4096, 8192]
    assert {m.driver for m in gcm} == {"generic-gcm-aesni"}
    assert "tcrypt_mode" not in gcm[0].extra  # the AEAD header has no sync/async word
    assert gcm[-1].bytes_per_second == 415039 * 8192


def test_akcipher_results_without_bytes_are_skipped() -> None:
    measurements = parse_tcrypt(load("tcrypt_skcipher_dmesg.txt"))
    assert not [m for m in measurements if m.algorithm == "rsa"]


def test_hash_results_on_their_own_line_and_on_the_test_line() -> None:
    measurements = parse_tcrypt(load("tcrypt_hash_dmesg.txt"))
    assert len(measurements) == 11
    assert {(m.algorithm, m.driver, m.key_bits) for m in measurements} == {
        ("sha256", "sha256-avx2", None)
    }
    digest_16 = find(measurements, "sha256-avx2", 16, "digest", key_bits=None)
    assert digest_16.bytes_per_second == 120000000.0
    assert digest_16.extra["operations_per_second"] == 7500000
    chunked = find(measurements, "sha256-avx2", 8192, "update-16", key_bits=None)
    assert chunked.bytes_per_second == 211492864.0
    digest_8k = find(measurements, "sha256-avx2", 8192, "digest", key_bits=None)
    assert digest_8k.bytes_per_second == 469999616.0
    # (algorithm, block size, op) stays unique
    keys = [(m.block_size, m.op) for m in measurements]
    assert len(keys) == len(set(keys))


def test_cycles_mode_needs_the_cpu_clock() -> None:
    with pytest.raises(TcryptParseError) as error:
        parse_tcrypt(load("tcrypt_cycles_dmesg.txt"), "cycles.txt")
    message = str(error.value)
    assert message.startswith("cycles.txt:")
    assert "13 results in CPU cycles" in message and "sec=1" in message


def test_cycles_mode_with_cpu_clock() -> None:
    measurements = parse_tcrypt(load("tcrypt_cycles_dmesg.txt"), cpu_hz=2.0e9)
    assert len(measurements) == 13
    ecb = find(measurements, "ecb-aes-ce", 8192, "encrypt")
    assert ecb.bytes_per_second == pytest.approx(8192 * 2.0e9 / 19037)
    assert ecb.extra["cycles_per_operation"] == 19037
    # AEAD in cycles mode prints the result on the next line (pr_info)
    gcm = find(measurements, "gcm-aes-ce", 64, "decrypt")
    assert gcm.bytes_per_second == pytest.approx(64 * 2.0e9 / 1200)
    sha1 = find(measurements, "sha1-ce", 64, "update-16", key_bits=None)
    assert sha1.bytes_per_second == pytest.approx(64 * 2.0e9 / 905)
    assert sha1.extra["cycles_per_byte"] == 14


def test_pasted_bug_report_with_collapsed_lines_and_prose() -> None:
    """A real QEMU-board tcrypt run (mode=403, sha1) pasted as people do: a shell prompt,
    prose around it, and the dmesg lines run together in one paragraph."""
    raw = (DATA / "paste" / "raw" / "qemu_tcrypt_sha1.txt").read_text()
    pasted = (
        "Hi all, sha1 through the async interface looks slow here. What tcrypt says:\n\n"
        "root@board:~# modprobe tcrypt mode=403 sec=1\n"
        + " ".join(raw.split())
        + "\nroot@board:~#\n\nAny idea?\n"
    )
    measurements = parse_tcrypt(pasted)
    assert measurements == parse_tcrypt(raw)
    assert {m.driver for m in measurements} == {"sha1-avx2"}
    first = measurements[0]
    assert (first.block_size, first.bytes_per_second) == (16, 15786080.0)


def test_fully_collapsed_whitespace_gives_the_same_result() -> None:
    text = load("tcrypt_skcipher_dmesg.txt") + load("tcrypt_hash_dmesg.txt")
    collapsed = " ".join(text.split())
    assert parse_tcrypt(collapsed) == parse_tcrypt(text)


def test_old_kernel_without_driver_names_or_prefix() -> None:
    measurements = parse_tcrypt(load("tcrypt_old_kernel.txt"))
    assert {m.driver for m in measurements} == {None}
    encrypt = [m for m in measurements if m.op == "encrypt"]
    decrypt = [m for m in measurements if m.op == "decrypt"]
    assert len(encrypt) == 5
    # the failed test 1 gives nothing, test 2 is still paired with its own line
    assert [m.block_size for m in decrypt] == [16, 256]
    assert decrypt[1].bytes_per_second == 19461888.0


def test_result_without_announced_test_is_ignored() -> None:
    text = (
        "tcrypt: testing speed of async cbc(aes) (cbc-aes-aesni) encryption\n"
        "tcrypt: 1234 operations in 1 seconds (19744 bytes)\n"
        "tcrypt: test 0 (128 bit key, 16 byte blocks): 1000 operations in 2 seconds (16000 bytes)\n"
    )
    (only,) = parse_tcrypt(text)
    assert only.bytes_per_second == 8000.0  # bytes divided by the seconds of the run
    assert only.extra["seconds"] == 2


def test_text_without_results_says_what_it_found() -> None:
    with pytest.raises(TcryptParseError, match=r"^x\.log: no tcrypt speed results"):
        parse_tcrypt("[    0.000000] Linux version 6.1.0\n", "x.log")
    with pytest.raises(TcryptParseError, match="headers found but no results"):
        parse_tcrypt(
            "tcrypt: testing speed of async cbc(aes) (cbc-aes-aesni) encryption\n", "y.log"
        )
