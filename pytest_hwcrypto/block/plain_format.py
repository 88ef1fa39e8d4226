"""What a plain dm-crypt volume's sectors hold, recomputed with pyca `cryptography`.

A plain volume (no header) is, per encryption sector of `sector_size` bytes, the
plaintext encrypted with the volume key and an IV from the sector number. plain64 is the
sector number as a 64-bit little-endian integer zero-padded to the IV size, counted in
512-byte units even for 4096-byte sectors (dm-crypt's default without iv_large_sectors).
cbc: each sector is one CBC chain with that IV; xts: each sector one XTS unit with it as
the tweak. Decrypting the raw loop contents this way and finding the plaintext shows the
on-disk format is what dm-crypt says it is.
"""

from __future__ import annotations

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from pytest_hwcrypto.block.tools import BlockError

MODES = ("cbc(aes)", "xts(aes)")


def plain64_iv(sector: int) -> bytes:
    return (sector & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little") + bytes(8)


def decrypt_plain(
    algorithm: str, key: bytes, raw: bytes, sector_size: int, iv_mode: str = "plain64"
) -> bytes:
    """The plaintext dm-crypt stores as `raw` (from sector 0, iv offset 0)."""
    if algorithm not in MODES or iv_mode != "plain64":
        raise BlockError(f"recomputing {algorithm} with {iv_mode} is not supported here")
    if len(raw) % sector_size:
        raise BlockError(f"{len(raw)} bytes is not a whole number of {sector_size}-byte sectors")
    out = bytearray()
    for offset in range(0, len(raw), sector_size):
        iv = plain64_iv(offset // 512)
        mode = modes.XTS(iv) if algorithm == "xts(aes)" else modes.CBC(iv)
        decryptor = Cipher(algorithms.AES(key), mode).decryptor()
        out += decryptor.update(raw[offset : offset + sector_size]) + decryptor.finalize()
    return bytes(out)
