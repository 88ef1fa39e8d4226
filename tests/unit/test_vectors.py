# SPDX-License-Identifier: MIT
"""vectors: parsing the NIST/pyca format, sampling, and loading from cryptography_vectors."""

from __future__ import annotations

import cryptography_vectors
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from pytest_hwcrypto.kernel import vectors
from pytest_hwcrypto.kernel.vector_records import (
    evenly_spaced,
    message_of,
    parse_records,
    record_shape,
    sample,
)
from pytest_hwcrypto.kernel.vectors import (
    AeadVector,
    CipherVector,
    DigestVector,
    known_answers,
)

# A made-up file in the CAVP layout (not a real vector: the parser is what is tested here).
CAVP_TEXT = """\
# CAVS 11.1
# comment lines are skipped

[ENCRYPT]

COUNT = 0
KEY = 00
IV = 01
PLAINTEXT = 02
CIPHERTEXT = 03

COUNT = 1
KEY = 10
IV = 11
PLAINTEXT = 12
CIPHERTEXT = 13

[DECRYPT]

COUNT = 0
KEY = 20
IV = 21
CIPHERTEXT = 23
PLAINTEXT = 22
"""

GCM_TEXT = """\
[Keylen = 128]
[IVlen = 96]

Count = 0
Key = aa
IV = bb
CT =
AAD =
Tag = cc
FAIL

Count = 1
Key = dd
IV = ee
CT =
AAD =
Tag = ff
PT =
"""


def test_records_sections_and_directions() -> None:
    records = parse_records(CAVP_TEXT.splitlines())
    assert [r.position for r in records] == [0, 1, 2]
    assert [r.direction for r in records] == ["encrypt", "encrypt", "decrypt"]
    assert records[2].fields == {
        "COUNT": "0",
        "KEY": "20",
        "IV": "21",
        "CIPHERTEXT": "23",
        "PLAINTEXT": "22",
    }
    assert records[2].where() == "COUNT = 0 in [DECRYPT]"


def test_section_parameters_and_fail_lines() -> None:
    records = parse_records(GCM_TEXT.splitlines())
    assert [r.failed for r in records] == [True, False]
    assert records[0].section == (("KEYLEN", "128"), ("IVLEN", "96"))
    assert records[0].where() == "COUNT = 0 [KEYLEN = 128, IVLEN = 96]"
    assert records[1].get("PT") == ""


def test_a_repeated_field_starts_a_new_record_without_a_blank_line() -> None:
    records = parse_records(["COUNT = 0", "KEY = 00", "COUNT = 1", "KEY = 01"])
    assert [r.get("KEY") for r in records] == ["00", "01"]


def test_empty_hash_message_is_written_as_len_0_msg_00() -> None:
    record = parse_records(["Len = 0", "Msg = 00", "MD = ab"])[0]
    assert message_of(record) == b""


@pytest.mark.parametrize(
    ("count", "limit", "picked"),
    [
        (10, 3, [0, 4, 9]),  # round(4.5) == 4 (banker's rounding), documented by this test
        (3, 5, [0, 1, 2]),
        (5, 1, [0]),
        (5, 0, []),
    ],
)
def test_evenly_spaced(count: int, limit: int, picked: list[int]) -> None:
    assert evenly_spaced(list(range(count)), limit) == picked


def test_sample_takes_every_shape_first_then_spreads_and_keeps_file_order() -> None:
    items = ["a1", "a2", "a3", "a4", "b1", "a5", "a6", "a7"]
    chosen = sample(items, 4, lambda item: item[0])
    assert chosen[:2] == ["a1", "a2"] or "b1" in chosen
    assert "b1" in chosen and "a1" in chosen
    assert len(chosen) == 4
    assert chosen == sorted(chosen, key=items.index)


def test_sample_is_deterministic() -> None:
    items = list(range(1000))
    assert sample(items, 7, lambda i: i % 3) == sample(items, 7, lambda i: i % 3)


def test_record_shape_ignores_count_but_not_lengths() -> None:
    one, two = parse_records(["COUNT = 0", "KEY = 00", "", "COUNT = 1", "KEY = 11"])
    three = parse_records(["COUNT = 2", "KEY = 0000"])[0]
    assert record_shape(one) == record_shape(two)
    assert record_shape(one) != record_shape(three)


# --- the real package ------------------------------------------------------------------------


def test_every_catalogued_file_exists_in_the_installed_package() -> None:
    for files in vectors.VECTOR_FILES.values():
        for vector_file in files:
            with cryptography_vectors.open_vector_file(vector_file.path, "r") as handle:
                assert handle.readline(), vector_file.path


@pytest.mark.parametrize("algorithm", vectors.algorithms_with_vectors())
def test_every_algorithm_has_vectors(algorithm: str) -> None:
    assert known_answers(algorithm), algorithm


def test_core_and_further_algorithms_partition_the_catalogue() -> None:
    assert set(vectors.CORE_ALGORITHMS) | set(vectors.FURTHER_ALGORITHMS) == set(
        vectors.VECTOR_FILES
    )
    assert not set(vectors.CORE_ALGORITHMS) & set(vectors.FURTHER_ALGORITHMS)


def test_cbc_vectors_match_openssl() -> None:
    """A loaded vector is what OpenSSL computes: the loader read the right fields."""
    loaded = known_answers("cbc(aes)")
    assert {len(v.key) for v in loaded if isinstance(v, CipherVector)} == {16, 24, 32}
    for vector in loaded:
        assert isinstance(vector, CipherVector)
        encryptor = Cipher(algorithms.AES(vector.key), modes.CBC(vector.iv)).encryptor()
        assert encryptor.update(vector.plaintext) + encryptor.finalize() == vector.ciphertext


def test_sampling_keeps_both_directions_and_labels_name_file_and_record() -> None:
    loaded = known_answers("cbc(aes)")
    assert {v.direction for v in loaded} == {"encrypt", "decrypt"}
    assert loaded[0].label == "CBCGFSbox128 #0"
    assert len({(v.source, v.position) for v in loaded}) == len(loaded)


def test_xts_keeps_whole_byte_units_including_ciphertext_stealing_lengths() -> None:
    loaded = known_answers("xts(aes)")
    lengths = {len(v.plaintext) for v in loaded if isinstance(v, CipherVector)}
    assert 25 in lengths  # 200-bit data units: 1 block + 9 bytes stolen
    assert {16, 32} <= lengths
    for vector in loaded:
        assert isinstance(vector, CipherVector)
        encryptor = Cipher(algorithms.AES(vector.key), modes.XTS(vector.iv)).encryptor()
        assert encryptor.update(vector.plaintext) + encryptor.finalize() == vector.ciphertext


def test_gcm_keeps_96_bit_ivs_and_has_forgeries_to_reject() -> None:
    loaded = [v for v in known_answers("gcm(aes)") if isinstance(v, AeadVector)]
    assert loaded and all(len(v.iv) == 12 for v in loaded)
    assert any(not v.authentic for v in loaded)
    assert {len(v.tag) for v in loaded} >= {16, 12, 8, 4}
    assert {v.direction for v in loaded} == {"encrypt", "decrypt"}


def test_sha256_vectors_match_openssl_including_the_empty_message() -> None:
    loaded = [v for v in known_answers("sha256") if isinstance(v, DigestVector)]
    assert loaded[0].message == b""
    for vector in loaded:
        digest = hashes.Hash(hashes.SHA256())
        digest.update(vector.message)
        assert digest.finalize() == vector.digest


def test_hmac_vectors_carry_keys_longer_than_the_block() -> None:
    loaded = [v for v in known_answers("hmac(sha256)") if isinstance(v, DigestVector)]
    assert all(v.key is not None for v in loaded)
    assert max(len(v.key or b"") for v in loaded) > 64


def test_chacha20_iv_is_counter_then_nonce() -> None:
    loaded = [v for v in known_answers("chacha20") if isinstance(v, CipherVector)]
    assert all(len(v.iv) == 16 for v in loaded)
    assert loaded[1].iv[:4] == (1).to_bytes(4, "little")


def test_3des_keys_are_three_des_keys() -> None:
    assert {len(v.key) for v in known_answers("cbc(des3_ede)") if isinstance(v, CipherVector)} == {
        24
    }


def test_unknown_algorithm_has_no_vectors() -> None:
    assert known_answers("lzo") == []


def test_skipped_sections_keep_file_positions() -> None:
    text = [
        "[IVlen = 8]",
        "",
        "Count = 0",
        "IV = 00",
        "",
        "Count = 1",
        "IV = 01",
        "",
        "[IVlen = 96]",
        "",
        "Count = 0",
        "IV = 000000000000000000000000",
    ]
    every = parse_records(text)
    kept = parse_records(text, keep_section=lambda section: section.get("IVLEN") == "96")
    assert [r.position for r in every] == [0, 1, 2]
    assert [(r.position, r.get("IV")) for r in kept] == [(2, "000000000000000000000000")]


def test_gcm_positions_do_not_depend_on_skipping_sections() -> None:
    vector_file = vectors.VECTOR_FILES["gcm(aes)"][0]
    lines = vectors.read_vector_file(vector_file.path)
    full = [r for r in parse_records(lines) if vectors.gcm_usable(r)]
    fast = parse_records(lines, vectors.gcm_section)
    assert [r.position for r in full] == [r.position for r in fast]
