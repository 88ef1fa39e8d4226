# SPDX-License-Identifier: MIT
"""The AF_ALG engine: drive kernel crypto drivers from user space through ``socket.AF_ALG``.

Callers use this package as one module (``from pytest_hwcrypto.kernel import afalg``;
``afalg.open_skcipher(...)``, ``afalg.AfAlgError``); the work is split by concern, lower
modules first, none of them importing the sessions:

* ``deadline``: kernel calls under a timeout (watchdog thread, socket waits);
* ``wire``: control messages, sends taken whole, reads until complete;
* ``resolve``: which driver a bind got, from /proc/crypto read around it;
* ``errors``: the error classes and the explainers that turn an errno into one line;
* ``probe``: whether AF_ALG of a type works here (probe binds, modprobe algif_<type>);
* ``base`` and ``sessions``: the session types and the ``open_*`` functions.

The type, op and default names (``SKCIPHER``, ``ENCRYPT``, ``DEFAULT_TIMEOUT``, ...) are the
shared words of pytest_hwcrypto.vocabulary under the names callers have always used.
"""

from __future__ import annotations

from pytest_hwcrypto.kernel.afalg.base import AfAlgSession
from pytest_hwcrypto.kernel.afalg.errors import (
    MASKING_COMMIT,
    AfAlgError,
    AfAlgMasked,
    AfalgPolicy,
    AfAlgRestricted,
    AfAlgUnavailable,
    AlgTypeMismatch,
    AuthenticationFailed,
    BadAuthSize,
    BadKeyLength,
    BindRefused,
    DriverNotRegistered,
    OperationFailed,
    OperationTimeout,
    SelfTestFailed,
    algif_module,
    check_type,
    config_option,
    explain_bind_error,
    explain_key_error,
    explain_op_error,
    read_policy,
    unavailable_message,
)
from pytest_hwcrypto.kernel.afalg.probe import DEFAULT_PROBE, Probe, afalg_available
from pytest_hwcrypto.kernel.afalg.resolve import resolve_driver
from pytest_hwcrypto.kernel.afalg.sessions import (
    AeadSession,
    HashSession,
    RngSession,
    SkcipherSession,
    open_aead,
    open_hash,
    open_rng,
    open_skcipher,
)
from pytest_hwcrypto.vocabulary import DEFAULT_TIMEOUT_SECONDS, AlgType, FindingKind, Op

SKCIPHER = AlgType.SKCIPHER
AEAD = AlgType.AEAD
HASH = AlgType.HASH
RNG = AlgType.RNG
ALG_TYPES: tuple[AlgType, ...] = tuple(AlgType)

ENCRYPT = Op.ENCRYPT
DECRYPT = Op.DECRYPT

FINDING_AFALG_MASKED = FindingKind.AFALG_MASKED
DEFAULT_TIMEOUT = DEFAULT_TIMEOUT_SECONDS

__all__ = [
    "AEAD",
    "ALG_TYPES",
    "DECRYPT",
    "DEFAULT_PROBE",
    "DEFAULT_TIMEOUT",
    "ENCRYPT",
    "FINDING_AFALG_MASKED",
    "HASH",
    "MASKING_COMMIT",
    "RNG",
    "SKCIPHER",
    "AeadSession",
    "AfAlgError",
    "AfAlgMasked",
    "AfAlgRestricted",
    "AfAlgSession",
    "AfAlgUnavailable",
    "AfalgPolicy",
    "AlgTypeMismatch",
    "AuthenticationFailed",
    "BadAuthSize",
    "BadKeyLength",
    "BindRefused",
    "DriverNotRegistered",
    "HashSession",
    "OperationFailed",
    "OperationTimeout",
    "Probe",
    "RngSession",
    "SelfTestFailed",
    "SkcipherSession",
    "afalg_available",
    "algif_module",
    "config_option",
    "explain_bind_error",
    "explain_key_error",
    "explain_op_error",
    "instantiate",
    "instantiate_any",
    "open_aead",
    "open_hash",
    "open_rng",
    "open_skcipher",
    "read_policy",
    "resolve_driver",
    "unavailable_message",
]


def instantiate(
    name: str,
    alg_type: str,
    key: bytes = b"",
    authsize: int | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
) -> None:
    """Open and close one session of ``alg_type`` (an :class:`AlgType`) bound to ``name``.

    Binding is what makes the kernel build a template instance: ``cbc(aes-generic)`` is
    listed in /proc/crypto only once something has asked for it, so this is how callers
    create the instances they then select or measure. Raises what opening raises (the
    :class:`AfAlgError` subclasses). ``key`` is set on a skcipher or aead (a rejected key
    raises :class:`BadKeyLength` after the bind, so the instance exists all the same) and
    ``authsize`` is the aead's tag length; a hash is bound unkeyed and an rng seeded from
    kernel entropy unless ``key`` is given.

    Defined here rather than in sessions.py so that it opens through this package's own
    names: whoever replaces ``afalg.open_skcipher`` and friends (the correctness mutation
    test installs a fake engine that way) replaces what this binds with too.
    """
    check_type(alg_type)
    if alg_type == AlgType.SKCIPHER:
        open_skcipher(name, key, timeout=timeout).close()
    elif alg_type == AlgType.AEAD:
        if authsize is None:
            raise ValueError(f"binding aead {name} needs authsize (the tag length)")
        open_aead(name, key, authsize=authsize, timeout=timeout).close()
    elif alg_type == AlgType.HASH:
        open_hash(name, key or None, timeout=timeout).close()
    else:
        open_rng(name, key or None, timeout=timeout).close()


def instantiate_any(
    name: str, key: bytes = bytes(16), timeout: float = DEFAULT_TIMEOUT_SECONDS
) -> str | None:
    """Bind ``name`` as whichever AF_ALG type takes it; the type that bound, or None.

    For callers that know a driver string but not its type yet (``hwcrypto bench``,
    re-ranking a template instance that does not exist yet). A rejected key still bound
    the name. AfAlgUnavailable (no AF_ALG here) propagates; so does the last error that is
    not "no such driver", which says more than None would.
    """
    last: AfAlgError | None = None
    for alg_type, authsize in ((AlgType.SKCIPHER, None), (AlgType.HASH, None), (AlgType.AEAD, 16)):
        try:
            instantiate(name, alg_type, b"" if alg_type == AlgType.HASH else key, authsize, timeout)
            return alg_type
        except BadKeyLength:
            return alg_type
        except AfAlgUnavailable:
            raise
        except AfAlgError as error:
            last = error
    if last is not None and not isinstance(last, DriverNotRegistered):
        raise last
    return None
