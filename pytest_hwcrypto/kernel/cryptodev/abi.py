# SPDX-License-Identifier: MIT
"""cryptodev-linux's /dev/crypto interface as data: ioctl numbers, struct layouts, algorithm ids.

Everything here is derived from the published uapi header `crypto/cryptodev.h` (public
domain) of cryptodev-linux 1.14, which keeps the OpenBSD cryptodev API; no code of the module
is used. The structs are ctypes Structures in the header's field order, so the compiler's
natural alignment -- and the pointer size of this machine -- give the padding and sizes the
module expects; the ioctl numbers are computed from those sizes the way `_IOWR` does. On
x86-64 that yields the values checked on the QEMU board (tests/unit/test_cryptodev.py):
CIOCGSESSION 0xc0306366, CIOCFSESSION 0x40046367, CIOCCRYPT 0xc0306368,
CIOCGSESSINFO 0xc10c636b; session_op and crypt_op 48 bytes, session_info_op 268.

The ioctl encoding is asm-generic's (x86, arm, arm64, riscv: 2 direction bits, 14 size
bits); powerpc, mips, sparc and alpha encode differently and are not supported here.

Pure: no file is opened here (device.py and sessions.py are the client).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

from pytest_hwcrypto.vocabulary import AlgType

# --- ioctl number arithmetic (include/uapi/asm-generic/ioctl.h) ----------------------------

IOC_NRBITS = 8
IOC_TYPEBITS = 8
IOC_SIZEBITS = 14
IOC_NRSHIFT = 0
IOC_TYPESHIFT = IOC_NRSHIFT + IOC_NRBITS
IOC_SIZESHIFT = IOC_TYPESHIFT + IOC_TYPEBITS
IOC_DIRSHIFT = IOC_SIZESHIFT + IOC_SIZEBITS
IOC_WRITE = 1  # user space writes the argument (the kernel reads it)
IOC_READ = 2  # the kernel writes it back


def ioc(direction: int, kind: str, number: int, size: int) -> int:
    """`_IOC(dir, type, nr, size)`: one ioctl request number."""
    if not 0 <= size < (1 << IOC_SIZEBITS):
        raise ValueError(f"ioctl argument size {size} does not fit in {IOC_SIZEBITS} bits")
    return (
        (direction << IOC_DIRSHIFT)
        | (ord(kind) << IOC_TYPESHIFT)
        | (number << IOC_NRSHIFT)
        | (size << IOC_SIZESHIFT)
    )


def iowr(kind: str, number: int, size: int) -> int:
    return ioc(IOC_READ | IOC_WRITE, kind, number, size)


def iow(kind: str, number: int, size: int) -> int:
    return ioc(IOC_WRITE, kind, number, size)


# --- the structs (field order and types as in crypto/cryptodev.h) --------------------------

CRYPTODEV_MAX_ALG_NAME = 64
CRYPTO_HMAC_MAX_KEY_LEN = 512
CRYPTO_CIPHER_MAX_KEY_LEN = 64
AALG_MAX_RESULT_LEN = 64  # the largest digest a hash request writes to `mac`
COP_ENCRYPT = 0
COP_DECRYPT = 1
# Set in session_info_op.flags when the driver is one only the kernel can use (an engine,
# not CPU instructions): cryptodev's own "is this hardware" answer.
SIOP_FLAG_KERNEL_DRIVER_ONLY = 1


class SessionOp(ctypes.Structure):
    """`struct session_op`, the argument of CIOCGSESSION; the kernel fills in `ses`."""

    _fields_ = (
        ("cipher", ctypes.c_uint32),
        ("mac", ctypes.c_uint32),
        ("keylen", ctypes.c_uint32),
        ("key", ctypes.c_void_p),
        ("mackeylen", ctypes.c_uint32),
        ("mackey", ctypes.c_void_p),
        ("ses", ctypes.c_uint32),
    )


class AlgInfo(ctypes.Structure):
    """`struct alg_info`: the name asked for and the driver the kernel gave the session."""

    _fields_ = (
        ("cra_name", ctypes.c_char * CRYPTODEV_MAX_ALG_NAME),
        ("cra_driver_name", ctypes.c_char * CRYPTODEV_MAX_ALG_NAME),
    )


class SessionInfoOp(ctypes.Structure):
    """`struct session_info_op`, the argument of CIOCGSESSINFO."""

    _fields_ = (
        ("ses", ctypes.c_uint32),
        ("cipher_info", AlgInfo),
        ("hash_info", AlgInfo),
        ("alignmask", ctypes.c_uint16),
        ("flags", ctypes.c_uint32),
    )


class CryptOp(ctypes.Structure):
    """`struct crypt_op`, the argument of CIOCCRYPT (one cipher or hash request)."""

    _fields_ = (
        ("ses", ctypes.c_uint32),
        ("op", ctypes.c_uint16),
        ("flags", ctypes.c_uint16),
        ("len", ctypes.c_uint32),
        ("src", ctypes.c_void_p),
        ("dst", ctypes.c_void_p),
        ("mac", ctypes.c_void_p),
        ("iv", ctypes.c_void_p),
    )


class CryptAuthOp(ctypes.Structure):
    """`struct crypt_auth_op`, the argument of CIOCAUTHCRYPT (one AEAD request).

    Plain AEAD mode (flags 0): the tag follows the ciphertext in `dst`, as the kernel's
    AEAD API produces it; on decryption `len` counts ciphertext and tag.
    """

    _fields_ = (
        ("ses", ctypes.c_uint32),
        ("op", ctypes.c_uint16),
        ("flags", ctypes.c_uint16),
        ("len", ctypes.c_uint32),
        ("auth_len", ctypes.c_uint32),
        ("auth_src", ctypes.c_void_p),
        ("src", ctypes.c_void_p),
        ("dst", ctypes.c_void_p),
        ("tag", ctypes.c_void_p),
        ("tag_len", ctypes.c_uint32),
        ("iv", ctypes.c_void_p),
        ("iv_len", ctypes.c_uint32),
    )


CIOCGSESSION = iowr("c", 102, ctypes.sizeof(SessionOp))
CIOCFSESSION = iow("c", 103, ctypes.sizeof(ctypes.c_uint32))
CIOCCRYPT = iowr("c", 104, ctypes.sizeof(CryptOp))
CIOCGSESSINFO = iowr("c", 107, ctypes.sizeof(SessionInfoOp))
CIOCAUTHCRYPT = iowr("c", 109, ctypes.sizeof(CryptAuthOp))


# --- algorithms: kernel names and cryptodev's ids for them ---------------------------------


@dataclass(frozen=True)
class CryptodevAlgorithm:
    """A kernel algorithm name cryptodev can open a session for, and how.

    cryptodev does not take names: a session names an id (`enum cryptodev_crypto_op_t`),
    which the module turns into the kernel name below and allocates *by that name* -- so the
    session gets the name's highest-priority driver, whatever is asked.
    `ident` goes into session_op.cipher (skcipher, aead) or session_op.mac (hash).
    """

    name: str  # kernel name, e.g. "cbc(aes)"
    ident: int
    kind: AlgType  # SKCIPHER, AEAD or HASH
    keyed: bool = True  # False: an unkeyed hash
    digest_size: int = 0  # hashes: bytes of output
    # Request lengths must be multiples of this: cryptodev refuses any other length of a
    # cipher with EINVAL (the kernel's cra_blocksize: 1 for stream modes), so it does no
    # XTS ciphertext stealing.
    block_size: int = 1

    @property
    def is_mac_field(self) -> bool:
        """Does the id go into `mac` (hashes and HMACs) rather than `cipher`?"""
        return self.kind == AlgType.HASH


def _cipher(
    name: str, ident: int, block_size: int, kind: AlgType = AlgType.SKCIPHER
) -> CryptodevAlgorithm:
    return CryptodevAlgorithm(name, ident, kind, block_size=block_size)


def _hash(name: str, ident: int, digest_size: int, keyed: bool) -> CryptodevAlgorithm:
    return CryptodevAlgorithm(name, ident, AlgType.HASH, keyed, digest_size)


# The ids of crypto/cryptodev.h with the names cryptodev-linux 1.14 allocates for them
# (CRYPTO_CAMELLIA_CBC = 101 and the ids after it count on from there).
ALGORITHMS: dict[str, CryptodevAlgorithm] = {
    alg.name: alg
    for alg in (
        _cipher("cbc(des)", 1, 8),
        _cipher("cbc(des3_ede)", 2, 8),
        _cipher("cbc(blowfish)", 3, 8),
        _cipher("cbc(aes)", 11, 16),
        _cipher("ctr(aes)", 21, 1),
        _cipher("xts(aes)", 22, 16),
        _cipher("ecb(aes)", 23, 16),
        _cipher("cfb(aes)", 24, 1),
        _cipher("ofb(aes)", 25, 1),
        _cipher("gcm(aes)", 50, 1, AlgType.AEAD),
        _cipher("ccm(aes)", 51, 1, AlgType.AEAD),
        _cipher("cbc(camellia)", 101, 16),
        _hash("hmac(md5)", 6, 16, keyed=True),
        _hash("hmac(sha1)", 7, 20, keyed=True),
        _hash("hmac(rmd160)", 8, 20, keyed=True),
        _hash("md5", 13, 16, keyed=False),
        _hash("sha1", 14, 20, keyed=False),
        _hash("hmac(sha256)", 18, 32, keyed=True),
        _hash("hmac(sha384)", 19, 48, keyed=True),
        _hash("hmac(sha512)", 20, 64, keyed=True),
        _hash("rmd160", 102, 20, keyed=False),
        _hash("sha224", 103, 28, keyed=False),
        _hash("sha256", 104, 32, keyed=False),
        _hash("sha384", 105, 48, keyed=False),
        _hash("sha512", 106, 64, keyed=False),
        _hash("hmac(sha224)", 107, 28, keyed=True),
    )
}


def algorithm(name: str) -> CryptodevAlgorithm | None:
    """cryptodev's entry for a kernel algorithm name, or None when it has no id for it."""
    return ALGORITHMS.get(name)


# --- encoding and decoding ------------------------------------------------------------------


def session_request(alg: CryptodevAlgorithm, key_address: int | None, key_length: int) -> SessionOp:
    """The CIOCGSESSION argument for `alg` with a key at `key_address` (None: no key)."""
    request = SessionOp()
    if alg.is_mac_field:
        request.mac = alg.ident
        request.mackey = key_address
        request.mackeylen = key_length
    else:
        request.cipher = alg.ident
        request.key = key_address
        request.keylen = key_length
    return request


def decode_name(raw: bytes) -> str:
    """A NUL-terminated name from an alg_info field."""
    return raw.split(b"\0", 1)[0].decode("ascii", "replace")


@dataclass(frozen=True)
class SessionInfo:
    """What CIOCGSESSINFO says about a session: the name and the driver behind it."""

    name: str  # "cbc(aes)"
    driver: str  # "cbc-aes-aesni"
    alignmask: int
    flags: int

    @property
    def kernel_driver_only(self) -> bool:
        """cryptodev's SIOP_FLAG_KERNEL_DRIVER_ONLY: an engine, not CPU instructions."""
        return bool(self.flags & SIOP_FLAG_KERNEL_DRIVER_ONLY)


def decode_session_info(info: SessionInfoOp, alg: CryptodevAlgorithm) -> SessionInfo:
    """The half of session_info_op that describes `alg` (cipher_info or hash_info)."""
    part = info.hash_info if alg.is_mac_field else info.cipher_info
    return SessionInfo(
        name=decode_name(bytes(part.cra_name)),
        driver=decode_name(bytes(part.cra_driver_name)),
        alignmask=int(info.alignmask),
        flags=int(info.flags),
    )
