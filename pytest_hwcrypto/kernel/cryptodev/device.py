# SPDX-License-Identifier: MIT
"""/dev/crypto itself: is it there, the open device, guarded ioctls, and the one error class.

A request waits in the kernel with `wait_for_completion`, which no signal interrupts, so an
offload engine that never completes would hang the caller: every ioctl runs under the
operation timeout in a watched thread (kernel/afalg/deadline.py, shared with AF_ALG), and
a stall becomes a CryptodevError instead of a hung test run.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import stat
from pathlib import Path
from typing import Any, Callable, Optional

from pytest_hwcrypto.kernel.afalg.deadline import Hung, call_with_deadline
from pytest_hwcrypto.kernel.cryptodev import abi
from pytest_hwcrypto.units import errno_name
from pytest_hwcrypto.vocabulary import DEFAULT_TIMEOUT_SECONDS

DEV_CRYPTO = Path("/dev/crypto")
HOW_TO_GET = (
    "load cryptodev-linux built for this kernel (insmod cryptodev.ko); on the QEMU board "
    "use pytest --hwcrypto-vm=qemu --hwcrypto-cryptodev, or hwcrypto vm qemu --cryptodev"
)
# Buffers start at a multiple of ALIGNMENT (plus any misalignment asked for): cryptodev maps
# user pages straight into the request when they satisfy the driver's alignmask, and copies
# through a bounce page when they do not -- both paths are worth exercising.
ALIGNMENT = 64

# errno -> a sentence about what the kernel meant, for one ioctl (None: strerror will do).
Explainer = Callable[[int], Optional[str]]


class CryptodevError(Exception):
    """A /dev/crypto operation failed; the message is one line that says why.

    `errno` is the kernel's answer (None when the client refused before asking);
    `authentication_failed` marks an AEAD tag that did not verify (EBADMSG).
    """

    def __init__(self, message: str, error_number: int | None = None) -> None:
        super().__init__(message)
        self.errno = error_number

    @property
    def authentication_failed(self) -> bool:
        return self.errno == errno.EBADMSG


def unavailable_reason(path: Path = DEV_CRYPTO) -> str | None:
    """Why /dev/crypto cannot be used here (and how to get it), or None when it can."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return f"{path} is missing: cryptodev-linux is not loaded; {HOW_TO_GET}"
    except OSError as error:
        return f"{path}: {error.strerror}"
    if not stat.S_ISCHR(mode):
        return f"{path} is not a character device, so not cryptodev's: {HOW_TO_GET}"
    if not os.access(path, os.R_OK | os.W_OK):
        return (
            f"{path} (mode {stat.filemode(mode)}) is not readable and writable by uid "
            f"{os.geteuid()}: run as root or give this user access to it"
        )
    return None


class Buffer:
    """`size` bytes of C memory starting `misalign` bytes past an ALIGNMENT boundary.

    The ioctl structs carry raw addresses, so whoever holds the struct holds its Buffers.
    """

    def __init__(self, size: int, data: bytes = b"", misalign: int = 0) -> None:
        self._memory = ctypes.create_string_buffer(size + ALIGNMENT + misalign + 1)
        base = ctypes.addressof(self._memory)
        self.address = base + (-base % ALIGNMENT) + misalign
        self.size = size
        if data:
            ctypes.memmove(self.address, bytes(data), len(data))

    def read(self, length: int | None = None) -> bytes:
        return ctypes.string_at(self.address, self.size if length is None else length)


class CryptoDevice:
    """An open /dev/crypto; the sessions opened through it end when it is closed."""

    def __init__(self, path: Path = DEV_CRYPTO, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        reason = unavailable_reason(path)
        if reason is not None:
            raise CryptodevError(reason, errno.ENOENT)
        try:
            self.fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except OSError as error:
            raise CryptodevError(f"cannot open {path}: {error.strerror}", error.errno) from None
        self.path = path
        self.timeout = timeout

    def ioctl(
        self, request: int, argument: Any, what: str, explain: Explainer | None = None
    ) -> None:
        """One ioctl under the timeout; a failure becomes a CryptodevError naming `what`."""
        fd = self.fd

        def call() -> None:
            fcntl.ioctl(fd, request, argument)

        self.guarded(call, what, explain)

    def guarded(
        self,
        work: Callable[[], None],
        what: str,
        explain: Explainer | None = None,
        progress: Callable[[], int] | None = None,
    ) -> None:
        """Run kernel calls under the timeout, turning OSError and a stall into CryptodevError.

        With `progress` (a counter `work` advances) a long loop may outlast the timeout as
        long as requests keep completing.
        """
        try:
            call_with_deadline(work, self.timeout, progress)
        except Hung:
            raise CryptodevError(
                f"{what} did not return within {self.timeout:g} s: the driver never "
                "completed the request (a hung offload engine?)",
                errno.ETIMEDOUT,
            ) from None
        except OSError as error:
            number = error.errno or 0
            detail = explain(number) if explain else None
            raise CryptodevError(
                f"{what}: {detail or os.strerror(number)} ({errno_name(number)})", number
            ) from None

    def finish_session(self, ses: int) -> None:
        """CIOCFSESSION; on a closed device the session already ended with it."""
        if self.fd < 0:
            return
        try:
            fcntl.ioctl(self.fd, abi.CIOCFSESSION, ctypes.c_uint32(ses))
        except OSError as error:
            if error.errno != errno.ENOENT:  # ENOENT: already gone
                raise CryptodevError(
                    f"CIOCFSESSION: {error.strerror} ({errno_name(error.errno or 0)})",
                    error.errno,
                ) from None

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> CryptoDevice:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
