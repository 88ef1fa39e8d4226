# SPDX-License-Identifier: MIT
"""The correctness suite's requests to a board's helper, and its answers read back (pure)."""

from __future__ import annotations

from pytest_hwcrypto.kernel.check_targets import CheckTarget
from pytest_hwcrypto.kernel.differential import SPECS, expected_output, generate_case
from pytest_hwcrypto.kernel.vectors import CipherVector, DigestVector
from pytest_hwcrypto.target.correctness import (
    bind_request,
    bound,
    case_requests,
    vector_request,
)
from pytest_hwcrypto.target.helper_run import BatchAnswer, parse_batch_answers

CBC = CheckTarget("cbc(aes)", "cbc(aes-generic)", "skcipher", "generic")
SHA = CheckTarget("sha256", "sha256-generic", "hash", "generic")


def test_answers_are_read_in_order_with_empty_output_and_errors() -> None:
    text = "ok 00ff\nnoise\nok -\nerror 2 bind no-such\nerror 126 request hmac(sha256)\n"
    assert parse_batch_answers(text) == [
        BatchAnswer(b"\x00\xff"),
        BatchAnswer(b""),
        BatchAnswer(None, 2, "bind no-such"),
        BatchAnswer(None, 126, "request hmac(sha256)"),
    ]


def test_a_failed_request_after_a_good_bind_still_made_the_instance() -> None:
    assert bound(BatchAnswer(b""))
    assert bound(BatchAnswer(None, 126, "request hmac(sha256-generic)"))  # ENOKEY
    assert not bound(BatchAnswer(None, 2, "bind cbc(aes-nope)"))


def test_a_cipher_vector_goes_in_its_own_direction() -> None:
    vector = CipherVector("cbc(aes)", "CBCVarKey128", 3, False, b"\x01", b"\x02", b"", b"\xaa")
    assert vector_request(CBC, vector) == "skcipher cbc(aes-generic) dec 01 02 aa"


def test_a_keyed_digest_vector_carries_its_key() -> None:
    keyed = DigestVector("hmac(sha256)", "HMAC", 0, b"\x0b", b"hi", b"")
    plain = DigestVector("sha256", "SHA256ShortMsg", 0, None, b"", b"")
    assert vector_request(SHA, keyed) == "hash sha256-generic 0b 6869"
    assert vector_request(SHA, plain) == "hash sha256-generic -"


def test_a_cipher_case_is_encrypted_and_its_expected_output_decrypted() -> None:
    spec = SPECS["cbc(aes)"]
    case = generate_case(spec, 0, 1234)
    expected = expected_output(spec, case)
    encrypt, decrypt = case_requests(CBC, case, expected)
    assert encrypt.split()[2:] == ["enc", case.key.hex(), case.iv.hex(), case.data.hex() or "-"]
    assert decrypt.split()[2:] == ["dec", case.key.hex(), case.iv.hex(), expected.hex() or "-"]


def test_an_aead_is_not_asked_of_the_board() -> None:
    gcm = CheckTarget("gcm(aes)", "gcm-aes-aesni", "aead", "cpu-accel")
    assert case_requests(gcm, generate_case(SPECS["gcm(aes)"], 0, 1), b"") == []
    assert bind_request("gcm(aes)", "gcm(aes-generic)") is None
    assert bind_request("sha256", "sha256-generic") == "hash sha256-generic -"
