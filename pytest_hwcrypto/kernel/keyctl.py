# SPDX-License-Identifier: MIT
"""Public-key operations user space can reach: keyctl's pkey_* on an asymmetric key.

AF_ALG has no akcipher type, so the kernel's rsa/ecdsa drivers are reachable from user space
only through the keys subsystem: a key of type ``asymmetric`` (an X.509 certificate for the
public half, a PKCS#8 private key for both -- the latter needs CONFIG_PKCS8_PRIVATE_KEY_PARSER,
module ``pkcs8_key_parser``) and ``keyctl(KEYCTL_PKEY_*)`` (include/uapi/linux/keyctl.h,
since 4.20). Called here through ctypes and the raw system calls, so nothing beyond libc is
needed (keyutils' libkeyutils is not used).

Which driver serves cannot be chosen: crypto/asymmetric_keys/public_key.c allocates its
transform by algorithm name (``pkcs1pad(rsa,sha256)`` on 6.1; ``pkcs1(rsa,sha256)`` as a sig
on 7.x) for each operation and frees it after, so the kernel's winner serves. What the
caller can see is the template instance that appears in /proc/crypto on first use, whose
driver name carries the inner driver (``pkcs1pad(rsa-generic,sha256)``): that is the
evidence of which driver served. Re-ranking (kernel/rerank.py) moves the winner, but never
to a driver whose self-test failed: the kernel hands out only tested implementations.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from pytest_hwcrypto.kernel.modprobe import load_module_quietly
from pytest_hwcrypto.units import errno_name

# (add_key, keyctl) system call numbers per machine (arch/*/include/uapi + unistd tables).
_SYSCALLS = {
    "x86_64": (248, 250),
    "aarch64": (217, 219),
    "armv7l": (309, 311),
    "armv6l": (309, 311),
    "i686": (286, 288),
    "i386": (286, 288),
    "riscv64": (217, 219),
}

KEY_SPEC_PROCESS_KEYRING = -2
KEYCTL_UNLINK = 9
KEYCTL_PKEY_QUERY = 24
KEYCTL_PKEY_ENCRYPT = 25
KEYCTL_PKEY_DECRYPT = 26
KEYCTL_PKEY_SIGN = 27
KEYCTL_PKEY_VERIFY = 28

# keyctl_pkey_query.supported_ops bits
SUPPORTS_ENCRYPT = 0x01
SUPPORTS_DECRYPT = 0x02
SUPPORTS_SIGN = 0x04
SUPPORTS_VERIFY = 0x08


class _Query(ctypes.Structure):
    _fields_ = [
        ("supported_ops", ctypes.c_uint32),
        ("key_size", ctypes.c_uint32),
        ("max_data_size", ctypes.c_uint16),
        ("max_sig_size", ctypes.c_uint16),
        ("max_enc_size", ctypes.c_uint16),
        ("max_dec_size", ctypes.c_uint16),
        ("spare", ctypes.c_uint32 * 10),
    ]


class _Params(ctypes.Structure):
    _fields_ = [
        ("key_id", ctypes.c_int32),
        ("in_len", ctypes.c_uint32),
        ("out_len", ctypes.c_uint32),  # in2_len for verify
        ("spare", ctypes.c_uint32 * 7),
    ]


class KeyctlError(OSError):
    """A keys-subsystem call that failed, worded with what was asked."""


@dataclass(frozen=True)
class PkeyInfo:
    """KEYCTL_PKEY_QUERY's answer for one key and one info string."""

    supported_ops: int
    key_bits: int
    max_data_size: int
    max_sig_size: int
    max_enc_size: int
    max_dec_size: int

    def supports(self, op_bit: int) -> bool:
        return bool(self.supported_ops & op_bit)


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _numbers() -> tuple[int, int]:
    machine = platform.machine()
    if machine not in _SYSCALLS:
        raise KeyctlError(errno.ENOSYS, f"keyctl: no system call numbers known for {machine}")
    return _SYSCALLS[machine]


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise KeyctlError(err, f"{what}: {errno_name(err)} ({os.strerror(err)})")
    return result


def add_asymmetric_key(description: str, der: bytes) -> int:
    """Load an X.509 certificate or a PKCS#8 private key (DER) as an ``asymmetric`` key in
    this process's keyring; its serial number."""
    add_key, _ = _numbers()
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    result = libc.syscall(
        ctypes.c_long(add_key),
        ctypes.c_char_p(b"asymmetric"),
        ctypes.c_char_p(description.encode()),
        ctypes.c_char_p(der),
        ctypes.c_size_t(len(der)),
        ctypes.c_int32(KEY_SPEC_PROCESS_KEYRING),
    )
    return _check(int(result), f"add_key asymmetric {description}")


def _keyctl(*args: object) -> int:
    _, keyctl = _numbers()
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    return int(libc.syscall(ctypes.c_long(keyctl), *args))


def unlink(key: int) -> None:
    """Drop the key from this process's keyring (the kernel frees it when unreferenced)."""
    _check(
        _keyctl(
            ctypes.c_long(KEYCTL_UNLINK),
            ctypes.c_long(key),
            ctypes.c_long(KEY_SPEC_PROCESS_KEYRING),
        ),
        f"keyctl unlink {key}",
    )


def query(key: int, info: str) -> PkeyInfo:
    """What the key can do under ``info`` (e.g. ``enc=pkcs1 hash=sha256``), and its sizes."""
    answer = _Query()
    _check(
        _keyctl(
            ctypes.c_long(KEYCTL_PKEY_QUERY),
            ctypes.c_long(key),
            ctypes.c_long(0),
            ctypes.c_char_p(info.encode()),
            ctypes.byref(answer),
        ),
        f"keyctl pkey_query {key} '{info}'",
    )
    return PkeyInfo(
        answer.supported_ops,
        answer.key_size,
        answer.max_data_size,
        answer.max_sig_size,
        answer.max_enc_size,
        answer.max_dec_size,
    )


def _pkey_op(op: int, name: str, key: int, info: str, data: bytes, out_size: int) -> bytes:
    params = _Params(key_id=key, in_len=len(data), out_len=out_size)
    out = ctypes.create_string_buffer(out_size)
    length = _check(
        _keyctl(
            ctypes.c_long(op),
            ctypes.byref(params),
            ctypes.c_char_p(info.encode()),
            ctypes.c_char_p(data),
            out,
        ),
        f"keyctl pkey_{name} {key} '{info}'",
    )
    return out.raw[:length]


def encrypt(key: int, info: str, data: bytes, out_size: int) -> bytes:
    return _pkey_op(KEYCTL_PKEY_ENCRYPT, "encrypt", key, info, data, out_size)


def decrypt(key: int, info: str, data: bytes, out_size: int) -> bytes:
    return _pkey_op(KEYCTL_PKEY_DECRYPT, "decrypt", key, info, data, out_size)


def sign(key: int, info: str, digest: bytes, out_size: int) -> bytes:
    return _pkey_op(KEYCTL_PKEY_SIGN, "sign", key, info, digest, out_size)


def verify(key: int, info: str, digest: bytes, signature: bytes) -> bool:
    """True when the kernel accepts the signature; False when it rejects it (EKEYREJECTED,
    EBADMSG); any other error raises."""
    params = _Params(key_id=key, in_len=len(digest), out_len=len(signature))
    result = _keyctl(
        ctypes.c_long(KEYCTL_PKEY_VERIFY),
        ctypes.byref(params),
        ctypes.c_char_p(info.encode()),
        ctypes.c_char_p(digest),
        ctypes.c_char_p(signature),
    )
    if result == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EKEYREJECTED, errno.EBADMSG):
        return False
    raise KeyctlError(err, f"keyctl pkey_verify {key} '{info}': {errno_name(err)}")


__all__ = [
    "SUPPORTS_DECRYPT",
    "SUPPORTS_ENCRYPT",
    "SUPPORTS_SIGN",
    "SUPPORTS_VERIFY",
    "KeyctlError",
    "PkeyInfo",
    "add_asymmetric_key",
    "decrypt",
    "encrypt",
    "query",
    "sign",
    "unlink",
    "verify",
]


@contextmanager
def loaded_rsa_key(bits: int, description: str) -> Iterator[tuple[int, rsa.RSAPrivateKey]]:
    """A fresh RSA key of `bits`, generated here and loaded into the kernel as an
    asymmetric key (PKCS#8, through the pkcs8_key_parser module): (its serial, the
    private key to check the kernel's answers with); unlinked afterwards. KeyctlError
    where the kernel cannot load it."""
    load_module_quietly("pkcs8_key_parser")
    private = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    der = private.private_bytes(
        serialization.Encoding.DER,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    key = add_asymmetric_key(description, der)
    try:
        yield key, private
    finally:
        unlink(key)
