# SPDX-License-Identifier: MIT
"""Differential cases: seeded random inputs, and what OpenSSL (via pyca) says they must give.

Pure: no kernel is touched here. The correctness suite feeds each case to every driver of
an algorithm and compares the driver with the reference computed here and with the
generic C driver.

Reproducibility. Every run has one *run seed* (--hwcrypto-seed, else shared by all
pytest-xdist workers, else fresh; always printed on failure). Each case derives its own
seed from the run seed and its case id ("cbc(aes) fuzz #3") with SHA-256, so:
  * a case's inputs do not depend on which other tests ran, in what order, or on which
    worker — rerunning one failing test with the printed seed gives the same bytes;
  * every driver of an algorithm gets the *same* inputs in case #k (the driver is not part
    of the case id on purpose), so "aesni fails #3, generic passes #3" compares like with
    like.

Coverage is by case index, not by luck: case k takes length class k (0, 1, block-1,
block+1, page-1, page+1, 64 KiB + odd, then random lengths), cycles through the key
sizes, and every odd case uses misaligned user buffers (an odd offset in cases 1, 5, 9...,
so some case splits a driver's scatterlist at an odd byte). Lengths a mode cannot take
(ECB/CBC need whole blocks, XTS at least one block) are rounded up to the next valid one.
"""

from __future__ import annotations

import hashlib
import random
import secrets
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable

from cryptography.hazmat.primitives import cmac, hashes, hmac
from cryptography.hazmat.primitives.ciphers import Cipher, CipherAlgorithm, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

from pytest_hwcrypto.bytes_diff import hex_preview
from pytest_hwcrypto.vocabulary import AlgType

PAGE = 4096
SIXTY_FOUR_KIB = 65536
SEED_BITS = 32  # short enough to type back on a command line


LENGTH_CLASSES: tuple[str, ...] = ("0", "1", "block-1", "block+1", "page-1", "page+1", "64KiB+odd")
RANDOM_LENGTH = "random"


# --- algorithms and their OpenSSL references ------------------------------------------------

# Any: pyca types Cipher by mode, and these factories mix ECB, IV, tweak and nonce modes.
CipherFactory = Callable[[bytes, bytes], "Cipher[Any]"]


@dataclass(frozen=True)
class AlgorithmSpec:
    """What the differential cases of one kernel algorithm name look like."""

    name: str  # kernel name: "cbc(aes)"
    kind: str  # skcipher, aead or hash
    key_sizes: tuple[int, ...] = ()  # () = unkeyed hash
    iv_size: int = 0
    block_size: int = 1  # the primitive's block: where block-1 / block+1 fall
    granularity: int = 1  # lengths must be multiples of this (ECB/CBC: the block)
    min_length: int = 0  # shortest valid input (XTS: one block); 0 also allows empty input
    authsizes: tuple[int, ...] = ()  # AlgType.AEAD tag lengths to cycle through
    digest_size: int = 0

    def fit_length(self, length: int) -> int:
        """The next length this mode can take (see the module docstring)."""
        if length == 0 and self.min_length == 0:
            return 0
        length = max(length, self.min_length, 1)
        return -(-length // self.granularity) * self.granularity


def _aes_mode(mode: Callable[[bytes], modes.Mode] | None) -> CipherFactory:
    def factory(key: bytes, iv: bytes) -> Cipher[Any]:
        return Cipher(algorithms.AES(key), mode(iv) if mode else modes.ECB())

    return factory


def _des3_mode(mode: Callable[[bytes], modes.Mode] | None) -> CipherFactory:
    def factory(key: bytes, iv: bytes) -> Cipher[Any]:
        return Cipher(_triple_des(key), mode(iv) if mode else modes.ECB())

    return factory


def _triple_des(key: bytes) -> CipherAlgorithm:
    # TripleDES moved to the "decrepit" module in cryptography 43; older ones have it here.
    try:
        from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
    except ImportError:  # pragma: no cover - cryptography < 43
        from cryptography.hazmat.primitives.ciphers.algorithms import TripleDES
    cipher: CipherAlgorithm = TripleDES(key)
    return cipher


def _chacha20(key: bytes, iv: bytes) -> Cipher[Any]:
    # The kernel's and pyca's 16-byte chacha20 IV agree: LE32 block counter, then the nonce.
    return Cipher(algorithms.ChaCha20(key, iv), None)


CIPHERS: dict[str, CipherFactory] = {
    "ecb(aes)": _aes_mode(None),
    "cbc(aes)": _aes_mode(modes.CBC),
    "ctr(aes)": _aes_mode(modes.CTR),
    "xts(aes)": _aes_mode(modes.XTS),
    "ecb(des3_ede)": _des3_mode(None),
    "cbc(des3_ede)": _des3_mode(modes.CBC),
    "chacha20": _chacha20,
}

HASHES: dict[str, Callable[[], hashes.HashAlgorithm]] = {
    "sha1": hashes.SHA1,
    "sha224": hashes.SHA224,
    "sha256": hashes.SHA256,
    "sha384": hashes.SHA384,
    "sha512": hashes.SHA512,
    "sha3-224": hashes.SHA3_224,
    "sha3-256": hashes.SHA3_256,
    "sha3-384": hashes.SHA3_384,
    "sha3-512": hashes.SHA3_512,
}

# pyca leaves block_size None for SHA-3; these are the Keccak rates in bytes.
HASH_BLOCK_SIZES = {
    "sha1": 64,
    "sha224": 64,
    "sha256": 64,
    "sha384": 128,
    "sha512": 128,
    "sha3-224": 144,
    "sha3-256": 136,
    "sha3-384": 104,
    "sha3-512": 72,
}

AES_KEYS = (16, 24, 32)
# Shorter than, equal to and longer than the hash block (longer keys are hashed first).
HMAC_KEYS = (16, 32, 64, 100, 131, 200)


def _hash_specs() -> dict[str, AlgorithmSpec]:
    specs = {}
    for name, factory in HASHES.items():
        block = HASH_BLOCK_SIZES[name]
        size = factory().digest_size
        specs[name] = AlgorithmSpec(name, AlgType.HASH, block_size=block, digest_size=size)
        if not name.startswith("sha3-"):
            specs[f"hmac({name})"] = AlgorithmSpec(
                f"hmac({name})", AlgType.HASH, HMAC_KEYS, block_size=block, digest_size=size
            )
    return specs


SPECS: dict[str, AlgorithmSpec] = {
    "ecb(aes)": AlgorithmSpec("ecb(aes)", AlgType.SKCIPHER, AES_KEYS, 0, 16, 16),
    "cbc(aes)": AlgorithmSpec("cbc(aes)", AlgType.SKCIPHER, AES_KEYS, 16, 16, 16),
    "ctr(aes)": AlgorithmSpec("ctr(aes)", AlgType.SKCIPHER, AES_KEYS, 16, 16),
    # XTS takes two AES keys; 1..15 bytes are invalid, 17..31 need ciphertext stealing.
    "xts(aes)": AlgorithmSpec("xts(aes)", AlgType.SKCIPHER, (32, 64), 16, 16, min_length=16),
    "gcm(aes)": AlgorithmSpec(
        "gcm(aes)", AlgType.AEAD, AES_KEYS, 12, 16, authsizes=(16, 12, 8, 15, 4, 13, 14)
    ),
    "ecb(des3_ede)": AlgorithmSpec("ecb(des3_ede)", AlgType.SKCIPHER, (24,), 0, 8, 8),
    "cbc(des3_ede)": AlgorithmSpec("cbc(des3_ede)", AlgType.SKCIPHER, (24,), 8, 8, 8),
    "chacha20": AlgorithmSpec("chacha20", AlgType.SKCIPHER, (32,), 16, 64),
    "rfc7539(chacha20,poly1305)": AlgorithmSpec(
        "rfc7539(chacha20,poly1305)", AlgType.AEAD, (32,), 12, 64, authsizes=(16,)
    ),
    "cmac(aes)": AlgorithmSpec("cmac(aes)", AlgType.HASH, AES_KEYS, block_size=16, digest_size=16),
    **_hash_specs(),
}


def encrypt_reference(spec: AlgorithmSpec, key: bytes, iv: bytes, data: bytes) -> bytes:
    """What OpenSSL gives for this skcipher encryption."""
    encryptor = CIPHERS[spec.name](key, iv).encryptor()
    return encryptor.update(data) + encryptor.finalize()


def seal_reference(
    spec: AlgorithmSpec, key: bytes, iv: bytes, aad: bytes, plaintext: bytes, authsize: int
) -> bytes:
    """Ciphertext then tag, as the kernel's AlgType.AEAD returns it; a short tag is a prefix."""
    if spec.name == "gcm(aes)":
        sealed = AESGCM(key).encrypt(iv, plaintext, aad)
    else:
        sealed = ChaCha20Poly1305(key).encrypt(iv, plaintext, aad)
    return sealed[: len(plaintext) + authsize]


def digest_reference(spec: AlgorithmSpec, key: bytes | None, message: bytes) -> bytes:
    """The hash, HMAC or CMAC of the message."""
    if spec.name == "cmac(aes)":
        mac = cmac.CMAC(algorithms.AES(key or b""))
        mac.update(message)
        return mac.finalize()
    if spec.name.startswith("hmac("):
        keyed = hmac.HMAC(key or b"", HASHES[spec.name[5:-1]]())
        keyed.update(message)
        return keyed.finalize()
    digest = hashes.Hash(HASHES[spec.name]())
    digest.update(message)
    return digest.finalize()


# --- seeds ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunSeed:
    value: int
    source: str  # "option --hwcrypto-seed", "pytest-xdist run id", "random"

    def rerun_hint(self) -> str:
        return f"seed {self.value} ({self.source}; rerun with --hwcrypto-seed={self.value})"


def seed_from_text(text: str) -> int:
    """A stable SEED_BITS-bit number from any text (Python's hash() is salted per process)."""
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:8], "big") % (1 << SEED_BITS)


def run_seed(
    configured: int | None,
    shared_run_id: str | None,
    fresh: Callable[[], int] = lambda: secrets.randbits(SEED_BITS),
) -> RunSeed:
    """The run's seed: the configured one, else one every xdist worker derives alike, else new.

    pytest-xdist hands each worker the same `testrunuid` (workerinput); deriving from it
    makes all workers of one run agree without a hook on the controller.
    """
    if configured is not None:
        return RunSeed(configured, "option --hwcrypto-seed")
    if shared_run_id:
        return RunSeed(seed_from_text(shared_run_id), "derived from the pytest-xdist run id")
    return RunSeed(fresh(), "random")


def shared_run_id(workerinput: Mapping[str, object] | None) -> str | None:
    """The run id pytest-xdist gives every worker of one run, or None outside xdist."""
    if not workerinput:
        return None
    run_id = workerinput.get("testrunuid")
    return str(run_id) if run_id else None


def case_id(algorithm: str, index: int) -> str:
    return f"{algorithm} fuzz #{index}"


def case_seed(session: int, algorithm: str, index: int) -> int:
    return seed_from_text(f"{session}:{case_id(algorithm, index)}")


# --- cases ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class DifferentialCase:
    """One seeded input for every driver of an algorithm, and how to submit it."""

    algorithm: str
    index: int
    seed: int  # this case's own seed (derived; see the module docstring)
    run_seed: int
    length_class: str
    key: bytes
    iv: bytes
    data: bytes  # plaintext or message
    aad: bytes = b""
    authsize: int = 0
    misalign: int = 0  # offset of the user buffers from a 16-byte boundary
    chunks: tuple[int, ...] = ()  # sizes of the sendmsg(MSG_MORE) calls of the chunked run

    @property
    def key_or_none(self) -> bytes | None:
        return self.key or None

    def describe(self) -> str:
        """Everything needed to reproduce the case by hand (test keys only)."""
        parts = [
            f"{case_id(self.algorithm, self.index)} (length class {self.length_class}, "
            f"case seed {self.seed}, run seed {self.run_seed})"
        ]
        if self.key:
            parts.append(f"key ({len(self.key)} bytes) {hex_preview(self.key)}")
        if self.iv:
            parts.append(f"iv {hex_preview(self.iv)}")
        if self.aad or self.authsize:
            parts.append(
                f"aad ({len(self.aad)} bytes) {hex_preview(self.aad)}, authsize {self.authsize}"
            )
        parts.append(
            f"length {len(self.data)}, buffers misaligned by {self.misalign}, "
            f"chunked as {'+'.join(map(str, self.chunks)) or 'nothing'}"
        )
        return "; ".join(parts)


def length_class_of(index: int) -> str:
    return LENGTH_CLASSES[index] if index < len(LENGTH_CLASSES) else RANDOM_LENGTH


def raw_length(spec: AlgorithmSpec, length_class: str, rng: random.Random) -> int:
    """The length a class names before the mode's constraints are applied."""
    block = spec.block_size
    fixed = {
        "0": 0,
        "1": 1,
        "block-1": block - 1,
        "block+1": block + 1,
        "page-1": PAGE - 1,
        "page+1": PAGE + 1,
    }
    if length_class in fixed:
        return fixed[length_class]
    if length_class == "64KiB+odd":
        return SIXTY_FOUR_KIB + rng.randrange(1, 2 * block, 2)
    return rng.randrange(1, 3 * PAGE)


def split_into_chunks(length: int, rng: random.Random) -> tuple[int, ...]:
    """2 to 4 pieces of uneven, mostly odd sizes (one piece when there is little to split).

    Odd piece sizes leave scatterlist entries that end mid-block, the layout offload
    drivers most often get wrong.
    """
    if length < 2:
        return (length,) if length else ()
    pieces = min(rng.randint(2, 4), length)
    cuts = sorted(rng.sample(range(1, length), pieces - 1))
    bounds = [0, *cuts, length]
    return tuple(end - start for start, end in zip(bounds, bounds[1:]))


def _iv_for(spec: AlgorithmSpec, index: int, rng: random.Random) -> bytes:
    iv = rng.randbytes(spec.iv_size)
    if spec.name == "ctr(aes)" and index % 2:
        # Counter about to carry out of the low 64 bits: drivers that only increment 32 or
        # 64 bits of the counter block get every block after the carry wrong.
        iv = iv[:8] + struct.pack(">Q", (1 << 64) - rng.randrange(1, 4))
    if spec.name == "chacha20":
        # Keep the 32-bit block counter far from wrapping: OpenSSL carries into the nonce,
        # the kernel does not, and that difference is not a driver bug.
        iv = struct.pack("<I", rng.randrange(1 << 24)) + iv[4:]
    return iv


def generate_case(spec: AlgorithmSpec, index: int, session: int) -> DifferentialCase:
    """Case `index` of `spec.name` for this run seed (same for every driver)."""
    seed = case_seed(session, spec.name, index)
    rng = random.Random(seed)
    length_class = length_class_of(index)
    length = spec.fit_length(raw_length(spec, length_class, rng))
    key = rng.randbytes(spec.key_sizes[index % len(spec.key_sizes)]) if spec.key_sizes else b""
    if spec.name == "xts(aes)" and key[: len(key) // 2] == key[len(key) // 2 :]:
        key = bytes([key[0] ^ 1]) + key[1:]  # equal halves are refused (FIPS), never tested
    iv = _iv_for(spec, index, rng)
    aad = _aad_for(spec, index, rng)
    authsize = spec.authsizes[index % len(spec.authsizes)] if spec.authsizes else 0
    data = rng.randbytes(length)
    misalign = _misalign_for(index, rng)
    chunks = split_into_chunks(len(aad) + length if spec.kind == AlgType.AEAD else length, rng)
    return DifferentialCase(
        spec.name,
        index,
        seed,
        session,
        length_class,
        key,
        iv,
        data,
        aad,
        authsize,
        misalign,
        chunks,
    )


def _misalign_for(index: int, rng: random.Random) -> int:
    """Even cases aligned; odd ones misaligned by 1..15, by an odd amount when index % 4 is 1:
    an odd offset is what splits a driver's scatterlist at an odd byte, so some case must
    have one whatever the seed."""
    if not index % 2:
        return 0
    offset = rng.randrange(1, 16)
    return offset | 1 if index % 4 == 1 else offset


def _aad_for(spec: AlgorithmSpec, index: int, rng: random.Random) -> bytes:
    if spec.kind != AlgType.AEAD:
        return b""
    # No AAD, one block of it, or an odd amount that leaves the payload unaligned.
    return rng.randbytes((0, 16, rng.randrange(1, 64))[index % 3])


def generate_cases(spec: AlgorithmSpec, count: int, session: int) -> list[DifferentialCase]:
    return [generate_case(spec, index, session) for index in range(count)]


def expected_output(spec: AlgorithmSpec, case: DifferentialCase) -> bytes:
    """OpenSSL's answer for the case: ciphertext, ciphertext||tag, or digest."""
    if spec.kind == AlgType.SKCIPHER:
        return encrypt_reference(spec, case.key, case.iv, case.data)
    if spec.kind == AlgType.AEAD:
        return seal_reference(spec, case.key, case.iv, case.aad, case.data, case.authsize)
    return digest_reference(spec, case.key_or_none, case.data)


# Modes whose kernel drivers hand back the IV to continue from (testmgr's iv_out): a
# stream of requests (AF_ALG keeps the IV per socket) must equal one request.
CHAINED_IV_MODES = frozenset({"cbc(aes)", "ctr(aes)", "cbc(des3_ede)"})


def first_request_length(spec: AlgorithmSpec, case: DifferentialCase) -> int:
    """Where to split the case into two requests for the IV-chaining check (whole blocks,
    about half), or 0 when the mode does not chain or the case is under two blocks."""
    if spec.name not in CHAINED_IV_MODES:
        return 0
    blocks = len(case.data) // spec.block_size
    if blocks < 2:
        return 0
    return (blocks // 2) * spec.block_size


def flip_bit(data: bytes, bit: int) -> bytes:
    """`data` with one bit inverted (bit 0 = lowest bit of the last byte)."""
    if not data:
        return data
    position = len(data) - 1 - (bit // 8) % len(data)
    flipped = bytearray(data)
    flipped[position] ^= 1 << (bit % 8)
    return bytes(flipped)
