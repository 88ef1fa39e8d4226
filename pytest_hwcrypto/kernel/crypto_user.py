# SPDX-License-Identifier: MIT
"""The kernel's crypto_user netlink interface: read a driver's flags, change its priority.

NETLINK_CRYPTO (21), served by `crypto_user.ko`. Two requests matter here:

* CRYPTO_MSG_GETALG with a `struct crypto_user_alg` naming `cru_driver_name`: the reply
  carries the driver's `cru_flags`, which /proc/crypto does not show -- among them
  CRYPTO_ALG_ALLOCATES_MEMORY, which makes dm-crypt refuse a driver (seen on the QEMU
  board: 0x00010485 for virtio_crypto_aes_cbc, 0x00000485 for cbc-aes-aesni).
* CRYPTO_MSG_UPDATEALG with a CRYPTOCFGA_PRIORITY_VAL attribute: a new priority for that
  driver, so every user that asks by name (cryptodev, OpenSSL's afalg engine, cryptsetup
  benchmark, dm-crypt without `capi:`) gets the new winner. Needs CAP_NET_ADMIN. The kernel
  also drops the template instances built on the driver (crypto_remove_spawns); they are
  rebuilt on next use.

The encoding and decoding are pure functions (unit-tested); `CryptoUser` does the I/O.
Layouts follow include/uapi/linux/cryptouser.h.
"""

from __future__ import annotations

import errno
import os
import socket
import struct
from dataclasses import dataclass

NETLINK_CRYPTO = 21
CRYPTO_MSG_UPDATEALG = 0x12
CRYPTO_MSG_GETALG = 0x13
CRYPTOCFGA_PRIORITY_VAL = 1

NLM_F_REQUEST = 0x01
NLM_F_ACK = 0x04
NLMSG_ERROR = 0x02

CRYPTO_MAX_NAME = 64
# struct crypto_user_alg: three names, then type, mask, refcnt, flags (u32 each).
_USER_ALG = struct.Struct(f"={CRYPTO_MAX_NAME}s{CRYPTO_MAX_NAME}s{CRYPTO_MAX_NAME}sIIII")
_NLMSGHDR = struct.Struct("=IHHII")  # len, type, flags, seq, pid
_NLATTR = struct.Struct("=HH")  # len, type

# include/linux/crypto.h
CRYPTO_ALG_ASYNC = 0x00000080
CRYPTO_ALG_ALLOCATES_MEMORY = 0x00010000


class CryptoUserError(OSError):
    """A crypto_user request failed; the message says which request, driver and why."""


@dataclass(frozen=True)
class AlgReport:
    """What CRYPTO_MSG_GETALG says about one driver."""

    name: str
    driver: str
    module: str
    flags: int
    refcnt: int

    @property
    def allocates_memory(self) -> bool:
        return bool(self.flags & CRYPTO_ALG_ALLOCATES_MEMORY)


def _align4(length: int) -> int:
    return (length + 3) & ~3


def encode_request(message_type: int, driver: str, seq: int, priority: int | None = None) -> bytes:
    """A netlink message naming `driver` (and a new priority for UPDATEALG)."""
    encoded = driver.encode()
    if not encoded or len(encoded) >= CRYPTO_MAX_NAME:
        raise ValueError(f"driver name {driver!r} must be 1..{CRYPTO_MAX_NAME - 1} bytes")
    body = _USER_ALG.pack(b"", encoded, b"", 0, 0, 0, 0)
    if priority is not None:
        attribute = _NLATTR.pack(_NLATTR.size + 4, CRYPTOCFGA_PRIORITY_VAL)
        body += attribute + struct.pack("=I", priority)
    flags = NLM_F_REQUEST | (NLM_F_ACK if message_type == CRYPTO_MSG_UPDATEALG else 0)
    header = _NLMSGHDR.pack(_NLMSGHDR.size + len(body), message_type, flags, seq, 0)
    return header + body


def decode_reply(data: bytes, driver: str) -> AlgReport | None:
    """The GETALG report in `data`, or None for a bare ACK; errors raise CryptoUserError."""
    offset = 0
    while offset + _NLMSGHDR.size <= len(data):
        length, message_type, _flags, _seq, _pid = _NLMSGHDR.unpack_from(data, offset)
        if length < _NLMSGHDR.size:
            break
        payload = data[offset + _NLMSGHDR.size : offset + length]
        if message_type == NLMSG_ERROR:
            (code,) = struct.unpack_from("=i", payload)
            if code:
                raise _error(-code, driver)
            return None
        if message_type == CRYPTO_MSG_GETALG and len(payload) >= _USER_ALG.size:
            name, drv, module, _type, _mask, refcnt, flags = _USER_ALG.unpack_from(payload)
            return AlgReport(_text(name), _text(drv), _text(module), flags, refcnt)
        offset += _align4(length)
    raise CryptoUserError(errno.EPROTO, f"crypto_user: no answer about {driver}")


def _text(raw: bytes) -> str:
    return raw.split(b"\0", 1)[0].decode(errors="replace")


def _error(code: int, driver: str) -> CryptoUserError:
    hints = {
        errno.ENOENT: f"{driver} is not registered (a template instance exists only after "
        "its first use: bind it once)",
        errno.EPERM: "changing priorities needs CAP_NET_ADMIN (run as root)",
        errno.EACCES: "changing priorities needs CAP_NET_ADMIN (run as root)",
    }
    return CryptoUserError(code, f"crypto_user: {hints.get(code, os.strerror(code))}")


class CryptoUser:
    """A NETLINK_CRYPTO socket; `with CryptoUser() as cu: cu.report("cbc-aes-aesni")`."""

    def __init__(self, timeout: float = 5.0) -> None:
        try:
            self._sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_CRYPTO)
        except OSError as error:
            raise CryptoUserError(
                error.errno or errno.EPROTONOSUPPORT,
                "crypto_user netlink is not available: modprobe crypto_user (CONFIG_CRYPTO_USER)",
            ) from None
        self._sock.settimeout(timeout)
        self._sock.bind((0, 0))
        self._seq = 0

    def __enter__(self) -> CryptoUser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._sock.close()

    def _ask(self, message_type: int, driver: str, priority: int | None = None) -> AlgReport | None:
        self._seq += 1
        self._sock.send(encode_request(message_type, driver, self._seq, priority))
        try:
            return decode_reply(self._sock.recv(65536), driver)
        except TimeoutError:
            raise CryptoUserError(
                errno.ETIMEDOUT, f"crypto_user: no reply about {driver}"
            ) from None

    def report(self, driver: str) -> AlgReport:
        """Name, flags and refcnt of the registered driver `driver` (exact name)."""
        found = self._ask(CRYPTO_MSG_GETALG, driver)
        if found is None:
            raise CryptoUserError(errno.EPROTO, f"crypto_user: empty report for {driver}")
        return found

    def set_priority(self, driver: str, priority: int) -> None:
        """Give `driver` this priority (the kernel then re-picks the winner of its name)."""
        self._ask(CRYPTO_MSG_UPDATEALG, driver, priority)
