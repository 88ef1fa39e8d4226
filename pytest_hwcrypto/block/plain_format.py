# SPDX-License-Identifier: MIT
"""What a plain dm-crypt volume's sectors hold, recomputed with pyca `cryptography`.

A plain volume (no header) is, per encryption sector of `sector_size` bytes, the
plaintext encrypted with the volume key and an IV from the sector number. plain64 is the
sector number as a 64-bit little-endian integer zero-padded to the IV size, counted in
512-byte units even for 4096-byte sectors (dm-crypt's default without iv_large_sectors).
cbc: each sector is one CBC chain with that IV; xts: each sector one XTS unit with it as
the tweak. essiv:sha256 (any driver of sha256) encrypts that plain64 value with AES under
the SHA-256 of the volume key and uses the result as the IV. Decrypting the raw loop
contents this way and finding the plaintext shows the on-disk format is what dm-crypt
says it is.
"""

from __future__ import annotations

import hashlib

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from pytest_hwcrypto.block.tools import BlockError

MODES = ("cbc(aes)", "xts(aes)")


def plain64_iv(sector: int) -> bytes:
    return (sector & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little") + bytes(8)


def _essiv_sha256(key: bytes) -> Cipher[modes.ECB]:
    return Cipher(algorithms.AES(hashlib.sha256(key).digest()), modes.ECB())


def _supported(iv_mode: str) -> bool:
    return iv_mode == "plain64" or iv_mode.split("-")[0] == "essiv:sha256"


def decrypt_plain(
    algorithm: str,
    key: bytes,
    raw: bytes,
    sector_size: int,
    iv_mode: str = "plain64",
    first_sector: int = 0,
) -> bytes:
    """The plaintext dm-crypt stores as `raw` (from 512-byte sector `first_sector`)."""
    if algorithm not in MODES or not _supported(iv_mode):
        raise BlockError(f"recomputing {algorithm} with {iv_mode} is not supported here")
    essiv = _essiv_sha256(key).encryptor() if iv_mode != "plain64" else None
    if len(raw) % sector_size:
        raise BlockError(f"{len(raw)} bytes is not a whole number of {sector_size}-byte sectors")
    out = bytearray()
    for offset in range(0, len(raw), sector_size):
        iv = plain64_iv(first_sector + offset // 512)
        if essiv is not None:
            iv = essiv.update(iv)
        mode = modes.XTS(iv) if algorithm == "xts(aes)" else modes.CBC(iv)
        decryptor = Cipher(algorithms.AES(key), mode).decryptor()
        out += decryptor.update(raw[offset : offset + sector_size]) + decryptor.finalize()
    return bytes(out)
