# SPDX-License-Identifier: MIT
"""Known-answer vectors for kernel algorithms, read from the installed `cryptography_vectors`.

pyca's `cryptography_vectors` package ships NIST CAVP response files and RFC test vectors
in one text format ("KEY = …" lines, records separated by blank lines, "[…]" section
headers). Nothing is copied into this project: every vector is read from the package at
collection time, so the published files are the single source of truth.

Each kernel algorithm name (`cbc(aes)`, `hmac(sha256)`, …) maps to the files that hold its
vectors. Records the kernel's interface cannot express are dropped, not failed: GCM IVs
other than 96 bits (the kernel's gcm(aes) has a fixed 12-byte IV), XTS data units that are
not a whole number of bytes, ChaCha20-Poly1305 nonces other than 12 bytes.

Sampling (kept small so the whole correctness suite fits in a minute on the UML board,
where every syscall costs ~90 µs): from each file, first the first record of every
distinct *shape* (the lengths of key, IV, data, AAD and tag, plus the file's section
parameters) in file order, evenly thinned to the file's limit if there are more shapes;
then records evenly spaced over the whole file until the limit is reached. The rule only
depends on the file's contents, so every pytest-xdist worker picks the same vectors.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Callable, Union

import cryptography_vectors

from pytest_hwcrypto.kernel.vector_records import (
    RawRecord,
    keep_every_section,
    message_of,
    parse_records,
    record_shape,
    sample,
    unhex,
)

# --- the vector types -----------------------------------------------------------------------


class _Directional:
    """What cipher and AEAD vectors share: a label for test ids and their direction."""

    source: str
    position: int
    encrypt: bool

    @property
    def label(self) -> str:
        return f"{self.source} #{self.position}"

    @property
    def direction(self) -> str:
        return "encrypt" if self.encrypt else "decrypt"


@dataclass(frozen=True)
class CipherVector(_Directional):
    """One skcipher known answer: key, IV, plaintext and ciphertext, in one direction."""

    algorithm: str  # kernel name, e.g. "cbc(aes)"
    source: str  # file stem, e.g. "CBCVarKey128"
    position: int  # index of the record in its file, counted from 0
    encrypt: bool  # the file's [ENCRYPT] or [DECRYPT] section
    key: bytes
    iv: bytes
    plaintext: bytes
    ciphertext: bytes
    where: str = ""  # how to find the record in the file ("COUNT = 5 in [DECRYPT]")


@dataclass(frozen=True)
class AeadVector(_Directional):
    """One AEAD known answer; `authentic` False means decryption must be refused."""

    algorithm: str
    source: str
    position: int
    encrypt: bool
    key: bytes
    iv: bytes
    aad: bytes
    plaintext: bytes
    ciphertext: bytes
    tag: bytes
    authentic: bool = True
    where: str = ""


@dataclass(frozen=True)
class DigestVector:
    """One hash, HMAC or CMAC known answer (`key` is None for unkeyed hashes)."""

    algorithm: str
    source: str
    position: int
    key: bytes | None
    message: bytes
    digest: bytes
    where: str = ""

    @property
    def label(self) -> str:
        return f"{self.source} #{self.position}"

    @property
    def direction(self) -> str:
        return "digest"


Vector = Union[CipherVector, AeadVector, DigestVector]


# --- record -> vector, per file format (pure) -----------------------------------------------


def _is_encrypt(record: RawRecord, default_encrypt: bool) -> bool:
    return default_encrypt if record.direction is None else record.direction == "encrypt"


def _always(record: RawRecord) -> bool:
    return True


def block_cipher_vector(
    algorithm: str, source: str, record: RawRecord, default_encrypt: bool
) -> Vector:
    """AES and 3DES CAVP files, RFC 3686 CTR, pyca's Camellia/SM4 reformattings."""
    key = unhex(record.get("KEY")) if "KEY" in record.fields else _des3_key(record)
    return CipherVector(
        algorithm,
        source,
        record.position,
        _is_encrypt(record, default_encrypt),
        key=key,
        iv=unhex(record.get("IV")),
        plaintext=unhex(record.get("PLAINTEXT")),
        ciphertext=unhex(record.get("CIPHERTEXT")),
        where=record.where(),
    )


def _des3_key(record: RawRecord) -> bytes:
    """TDES files give KEY1..KEY3, or KEYs for one key used three times."""
    if "KEYS" in record.fields:
        return unhex(record.get("KEYS")) * 3
    return b"".join(unhex(record.get(f"KEY{n}")) for n in (1, 2, 3))


def xts_usable(record: RawRecord) -> bool:
    """130- and 250-bit data units exist in the files; the kernel works on whole bytes."""
    return int(record.get("DATAUNITLEN", "0")) % 8 == 0


def xts_vector(algorithm: str, source: str, record: RawRecord, default_encrypt: bool) -> Vector:
    """XTSGenAES files: the tweak is field "i"; DataUnitLen is in bits."""
    return CipherVector(
        algorithm,
        source,
        record.position,
        _is_encrypt(record, default_encrypt),
        key=unhex(record.get("KEY")),
        iv=unhex(record.get("I")),
        plaintext=unhex(record.get("PT")),
        ciphertext=unhex(record.get("CT")),
        where=record.where(),
    )


def gcm_usable(record: RawRecord) -> bool:
    """The kernel's gcm(aes) has a fixed 96-bit IV (rfc4106 and others build on that)."""
    return len(record.get("IV")) == 24


def gcm_section(section: Mapping[str, str]) -> bool:
    return section.get("IVLEN", "96") == "96"


def gcm_vector(algorithm: str, source: str, record: RawRecord, default_encrypt: bool) -> Vector:
    """gcmEncryptExtIV / gcmDecrypt files; FAIL records must not authenticate."""
    authentic = not record.failed
    return AeadVector(
        algorithm,
        source,
        record.position,
        default_encrypt,
        key=unhex(record.get("KEY")),
        iv=unhex(record.get("IV")),
        aad=unhex(record.get("AAD")),
        plaintext=unhex(record.get("PT")) if authentic else b"",
        ciphertext=unhex(record.get("CT")),
        tag=unhex(record.get("TAG")),
        authentic=authentic,
        where=record.where(),
    )


def chacha20_vector(
    algorithm: str, source: str, record: RawRecord, default_encrypt: bool
) -> Vector:
    """RFC 7539 A.2: the kernel's chacha20 IV is the 32-bit LE block counter, then the nonce."""
    counter = int(record.get("INITIAL_BLOCK_COUNTER", "0"))
    iv = struct.pack("<I", counter) + unhex(record.get("NONCE"))
    return CipherVector(
        algorithm,
        source,
        record.position,
        default_encrypt,
        key=unhex(record.get("KEY")),
        iv=iv,
        plaintext=unhex(record.get("PLAINTEXT")),
        ciphertext=unhex(record.get("CIPHERTEXT")),
        where=record.where(),
    )


def chacha20poly1305_usable(record: RawRecord) -> bool:
    """rfc7539(chacha20,poly1305) takes a 12-byte nonce and a 16-byte tag only."""
    return len(record.get("IV")) == 24 and len(record.get("TAG")) == 32


def chacha20poly1305_vector(
    algorithm: str, source: str, record: RawRecord, default_encrypt: bool
) -> Vector:
    """OpenSSL's evpciph ChaCha20-Poly1305 cases; "Result = CIPHERFINAL_ERROR" is a forgery."""
    authentic = "RESULT" not in record.fields
    return AeadVector(
        algorithm,
        source,
        record.position,
        encrypt=authentic,
        key=unhex(record.get("KEY")),
        iv=unhex(record.get("IV")),
        aad=unhex(record.get("AAD")),
        plaintext=unhex(record.get("PLAINTEXT")),
        ciphertext=unhex(record.get("CIPHERTEXT")),
        tag=unhex(record.get("TAG")),
        authentic=authentic,
        where=record.where(),
    )


def hash_vector(algorithm: str, source: str, record: RawRecord, default_encrypt: bool) -> Vector:
    """SHA-1/SHA-2/SHA-3 ShortMsg/LongMsg and the RFC 2202/4231 HMAC files (Len in bits)."""
    key = unhex(record.get("KEY")) if "KEY" in record.fields else None
    return DigestVector(
        algorithm,
        source,
        record.position,
        key=key,
        message=message_of(record),
        digest=unhex(record.get("MD")),
        where=record.where(),
    )


def cmac_vector(algorithm: str, source: str, record: RawRecord, default_encrypt: bool) -> Vector:
    """NIST SP 800-38B examples as pyca reformatted them."""
    return DigestVector(
        algorithm,
        source,
        record.position,
        key=unhex(record.get("KEY")),
        message=unhex(record.get("MESSAGE")),
        digest=unhex(record.get("OUTPUT")),
        where=record.where(),
    )


@dataclass(frozen=True)
class VectorFormat:
    """How records of one file layout become vectors; `usable` filters before sampling."""

    convert: Callable[[str, str, RawRecord, bool], Vector]
    usable: Callable[[RawRecord], bool] = _always
    keep_section: Callable[[Mapping[str, str]], bool] = keep_every_section


BLOCK_CIPHER = VectorFormat(block_cipher_vector)
XTS = VectorFormat(xts_vector, xts_usable)
GCM = VectorFormat(gcm_vector, gcm_usable, gcm_section)
CHACHA20 = VectorFormat(chacha20_vector)
CHACHA20_POLY1305 = VectorFormat(chacha20poly1305_vector, chacha20poly1305_usable)
DIGEST = VectorFormat(hash_vector)
CMAC = VectorFormat(cmac_vector)


# --- the catalogue: kernel algorithm -> files -----------------------------------------------


@dataclass(frozen=True)
class VectorFile:
    path: str  # inside the cryptography_vectors package
    format: VectorFormat
    limit: int  # records sampled from this file (see the module docstring)
    encrypt: bool = True  # direction when the file has no [ENCRYPT]/[DECRYPT] sections

    @property
    def source(self) -> str:
        return self.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


# Four per CAVP block-mode file: 5 kinds x 3 key sizes = 60 vectors per mode and driver.
_BLOCK_LIMIT = 4
_NIST_KINDS = ("GFSbox", "KeySbox", "MMT", "VarKey", "VarTxt")
_AES_KEY_BITS = (128, 192, 256)


def _aes_cavp(mode: str) -> tuple[VectorFile, ...]:
    return tuple(
        VectorFile(f"ciphers/AES/{mode}/{mode}{kind}{bits}.rsp", BLOCK_CIPHER, _BLOCK_LIMIT)
        for kind in _NIST_KINDS
        for bits in _AES_KEY_BITS
    )


def _hash_files(directory: str, stem: str) -> tuple[VectorFile, ...]:
    return (
        VectorFile(f"hashes/{directory}/{stem}ShortMsg.rsp", DIGEST, 6),
        VectorFile(f"hashes/{directory}/{stem}LongMsg.rsp", DIGEST, 2),
    )


def _sha3(bits: int) -> tuple[VectorFile, ...]:
    return _hash_files("SHA3", f"SHA3_{bits}")


def _gcm_files() -> tuple[VectorFile, ...]:
    encrypt = tuple(
        VectorFile(f"ciphers/AES/GCM/gcmEncryptExtIV{bits}.rsp", GCM, 8) for bits in _AES_KEY_BITS
    )
    decrypt = tuple(
        VectorFile(f"ciphers/AES/GCM/gcmDecrypt{bits}.rsp", GCM, 8, encrypt=False)
        for bits in _AES_KEY_BITS
    )
    return encrypt + decrypt


VECTOR_FILES: dict[str, tuple[VectorFile, ...]] = {
    "ecb(aes)": _aes_cavp("ECB"),
    "cbc(aes)": _aes_cavp("CBC"),
    "ctr(aes)": tuple(
        VectorFile(f"ciphers/AES/CTR/aes-{bits}-ctr.txt", BLOCK_CIPHER, 8) for bits in _AES_KEY_BITS
    ),
    # 8 per file: 16- and 32-byte units, both directions, and in the 128-bit file the 25-byte
    # units that need ciphertext stealing (the 256-bit file has none in whole bytes).
    "xts(aes)": tuple(
        VectorFile(f"ciphers/AES/XTS/tweak-128hexstr/XTSGenAES{bits}.rsp", XTS, 8)
        for bits in (128, 256)
    ),
    "gcm(aes)": _gcm_files(),
    "sha1": _hash_files("SHA1", "SHA1"),
    "sha224": _hash_files("SHA2", "SHA224"),
    "sha256": _hash_files("SHA2", "SHA256"),
    "sha384": _hash_files("SHA2", "SHA384"),
    "sha512": _hash_files("SHA2", "SHA512"),
    "sha3-224": _sha3(224),
    "sha3-256": _sha3(256),
    "sha3-384": _sha3(384),
    "sha3-512": _sha3(512),
    "hmac(sha1)": (VectorFile("HMAC/rfc-2202-sha1.txt", DIGEST, 16),),
    "hmac(sha224)": (VectorFile("HMAC/rfc-4231-sha224.txt", DIGEST, 16),),
    "hmac(sha256)": (VectorFile("HMAC/rfc-4231-sha256.txt", DIGEST, 16),),
    "hmac(sha384)": (VectorFile("HMAC/rfc-4231-sha384.txt", DIGEST, 16),),
    "hmac(sha512)": (VectorFile("HMAC/rfc-4231-sha512.txt", DIGEST, 16),),
    # Further algorithms: run only where the kernel has two or more drivers for them.
    "cmac(aes)": tuple(
        VectorFile(f"CMAC/nist-800-38b-aes{bits}.txt", CMAC, 8) for bits in _AES_KEY_BITS
    ),
    "ecb(des3_ede)": tuple(
        VectorFile(f"ciphers/3DES/ECB/TECBMMT{n}.rsp", BLOCK_CIPHER, _BLOCK_LIMIT) for n in (2, 3)
    ),
    "cbc(des3_ede)": tuple(
        VectorFile(f"ciphers/3DES/CBC/TCBCMMT{n}.rsp", BLOCK_CIPHER, _BLOCK_LIMIT) for n in (2, 3)
    ),
    "chacha20": (VectorFile("ciphers/ChaCha20/rfc7539.txt", CHACHA20, 8),),
    "rfc7539(chacha20,poly1305)": (
        VectorFile("ciphers/ChaCha20Poly1305/openssl.txt", CHACHA20_POLY1305, 8),
    ),
}

# Checked on every driver, even a single one: the core list.
CORE_ALGORITHMS: tuple[str, ...] = (
    "ecb(aes)",
    "cbc(aes)",
    "ctr(aes)",
    "xts(aes)",
    "gcm(aes)",
    "sha1",
    "sha224",
    "sha256",
    "sha384",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "hmac(sha1)",
    "hmac(sha224)",
    "hmac(sha256)",
    "hmac(sha384)",
    "hmac(sha512)",
)

# Checked only where the kernel registered two or more drivers, i.e. where it had a choice.
FURTHER_ALGORITHMS: tuple[str, ...] = tuple(
    name for name in VECTOR_FILES if name not in CORE_ALGORITHMS
)


def read_vector_file(path: str) -> list[str]:
    """Lines of one file of the installed cryptography_vectors package."""
    with cryptography_vectors.open_vector_file(path, "r") as handle:
        lines: list[str] = handle.read().splitlines()
        return lines


def sampled_vectors(algorithm: str, vector_file: VectorFile, lines: Iterable[str]) -> list[Vector]:
    """Parse, drop what the kernel cannot express, sample, then convert (pure)."""
    records = parse_records(lines, vector_file.format.keep_section)
    usable = [record for record in records if vector_file.format.usable(record)]
    chosen = sample(usable, vector_file.limit, record_shape)
    return [
        vector_file.format.convert(algorithm, vector_file.source, record, vector_file.encrypt)
        for record in chosen
    ]


@functools.cache
def _vectors_of_file(algorithm: str, vector_file: VectorFile) -> tuple[Vector, ...]:
    return tuple(sampled_vectors(algorithm, vector_file, read_vector_file(vector_file.path)))


def known_answers(algorithm: str) -> list[Vector]:
    """The sampled known-answer vectors of a kernel algorithm name ([] when none)."""
    return [
        vector
        for vector_file in VECTOR_FILES.get(algorithm, ())
        for vector in _vectors_of_file(algorithm, vector_file)
    ]


def algorithms_with_vectors() -> tuple[str, ...]:
    return tuple(VECTOR_FILES)
