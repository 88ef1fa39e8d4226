# SPDX-License-Identifier: MIT
"""A /dev/crypto client: cryptodev-linux sessions through ctypes and fcntl.ioctl, no compiler.

cryptodev-linux (the out-of-tree module OpenWrt, Turris OS and OpenSSL's devcrypto engine
use) turns ioctls on /dev/crypto into kernel crypto API requests: CIOCGSESSION opens a
session, CIOCCRYPT runs one cipher or hash request, CIOCAUTHCRYPT one AEAD request,
CIOCGSESSINFO names the driver the kernel gave the session, CIOCFSESSION ends it.

Callers use this package as one module (``from pytest_hwcrypto.kernel import cryptodev``);
the work is split by concern, lower modules first:

* ``abi``: ioctl numbers, struct layouts and algorithm ids, derived from the uapi header
  ``crypto/cryptodev.h`` (pure);
* ``device``: whether /dev/crypto is usable, the open device, ioctls under the operation
  timeout, and ``CryptodevError``;
* ``sessions``: sessions by algorithm name, prepared requests, and ``open_on_driver``
  (a session served by a chosen driver, proven by CIOCGSESSINFO);
* ``pool``: the sessions many checks of one subject (a name, or one driver) need, opened
  in one preference window.
"""

from __future__ import annotations

from pytest_hwcrypto.kernel.cryptodev.abi import (
    ALGORITHMS,
    CryptodevAlgorithm,
    SessionInfo,
    algorithm,
)
from pytest_hwcrypto.kernel.cryptodev.device import (
    DEV_CRYPTO,
    HOW_TO_GET,
    CryptodevError,
    CryptoDevice,
    unavailable_reason,
)
from pytest_hwcrypto.kernel.cryptodev.pool import SessionPool, Subject, discover_subjects
from pytest_hwcrypto.kernel.cryptodev.sessions import (
    AeadSession,
    CipherSession,
    HashSession,
    Prefer,
    Request,
    Session,
    open_many_on_driver,
    open_on_driver,
    open_session,
)

__all__ = [
    "ALGORITHMS",
    "DEV_CRYPTO",
    "HOW_TO_GET",
    "AeadSession",
    "CipherSession",
    "CryptoDevice",
    "CryptodevAlgorithm",
    "CryptodevError",
    "HashSession",
    "Prefer",
    "Request",
    "Session",
    "SessionInfo",
    "SessionPool",
    "Subject",
    "algorithm",
    "discover_subjects",
    "open_many_on_driver",
    "open_on_driver",
    "open_session",
    "unavailable_reason",
]
