# SPDX-License-Identifier: MIT
"""The engine's errors, and the explainers that turn an errno into a one-line message.

AF_ALG answers every failure with a bare errno: ENOENT alone means "no algif module", "no
such driver", "registered but masked from AF_ALG" or "refused in FIPS mode" depending on
what /proc/crypto lists. The explainers here take the errno, the /proc/crypto entries and
what the probe found, and return the :class:`AfAlgError` subclass that says which, naming
the driver and what to do. They are pure (no sockets, no files read except optmem_max for a
hint), so unit tests inject errno values and /proc/crypto text.

The names of what provides AF_ALG for a type (Kconfig option, algif module) live here too,
because :class:`AfAlgUnavailable` and its message are built from them.
"""

from __future__ import annotations

import errno
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_hwcrypto.kernel.afalg.resolve import SYNCHRONOUS_TYPES, matches, of_type
from pytest_hwcrypto.kernel.procfs import CryptoAlg
from pytest_hwcrypto.units import errno_name
from pytest_hwcrypto.vocabulary import AlgType, FindingKind

# The crypto commit that masked off-CPU drivers from AF_ALG (named in AfAlgMasked messages).
MASKING_COMMIT = '7524070f26d8 ("crypto: af_alg - Drop support for off-CPU cryptography")'

# Requests above this size can run into net.core.optmem_max (20 KiB before Linux 6.9): on
# the UML board 640 KiB was the largest AES-XTS request that fit.
_LARGE_REQUEST = 256 * 1024
_OPTMEM_MAX = Path("/proc/sys/net/core/optmem_max")

# Linux 7.3's sysctl (crypto/af_alg.c): 0 unrestricted; 1 (the default) binds only the
# algorithm names on each algif type's allowlist, and some of those only with
# CAP_NET_ADMIN or CAP_SYS_ADMIN, refusing every other name with ENOENT; 2 refuses AF_ALG
# sockets (EAFNOSUPPORT). Absent before 7.3 and where no backport brought it.
AF_ALG_RESTRICT = "proc/sys/crypto/af_alg_restrict"
FIPS_ENABLED = "proc/sys/crypto/fips_enabled"


@dataclass(frozen=True)
class AfalgPolicy:
    """What the kernel says about AF_ALG's limits beyond /proc/crypto (None: file absent)."""

    restrict: int | None = None  # /proc/sys/crypto/af_alg_restrict
    fips: bool | None = None  # /proc/sys/crypto/fips_enabled

    def describe(self) -> str:
        """The restriction in a few words, for messages and the run's header."""
        if self.restrict is None:
            return "no /proc/sys/crypto/af_alg_restrict (a kernel before 7.3)"
        return f"/proc/sys/crypto/af_alg_restrict = {self.restrict}"


def read_policy(root: Path = Path("/")) -> AfalgPolicy:
    """af_alg_restrict and fips_enabled as the running kernel has them."""
    return AfalgPolicy(restrict=_read_int(root / AF_ALG_RESTRICT), fips=_fips(root))


def _fips(root: Path) -> bool | None:
    value = _read_int(root / FIPS_ENABLED)
    return None if value is None else value == 1


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


class AfAlgError(Exception):
    """Base of the engine's errors; the message is one line that says what to do."""

    def __init__(
        self,
        message: str,
        *,
        alg: str | None = None,
        driver: str | None = None,
        alg_type: str | None = None,
    ) -> None:
        super().__init__(message)
        self.alg = alg
        self.driver = driver
        self.alg_type = alg_type


class AfAlgUnavailable(AfAlgError):
    """The kernel has no AF_ALG, or no algif_<type> for this type."""

    @property
    def config_option(self) -> str:
        return config_option(self.alg_type or "")


class DriverNotRegistered(AfAlgError):
    """Nothing of that name or driver name is registered (bind ENOENT)."""


class AlgTypeMismatch(AfAlgError):
    """Registered, but as a type this AF_ALG type cannot bind (``aes`` is a bare cipher)."""


class AfAlgMasked(AfAlgError):
    """Registered, yet AF_ALG refuses it: off-CPU drivers are masked, internal helpers hidden."""

    finding_kind = FindingKind.AFALG_MASKED


class AfAlgRestricted(AfAlgMasked):
    """Registered, yet AF_ALG refuses the name: af_alg_restrict = 1 allows only the algorithm
    names on its allowlist (a driver name never binds; bind the algorithm name instead)."""


class SelfTestFailed(AfAlgError):
    """The kernel refuses the driver because its self-test failed (bind ELIBBAD)."""


class BindRefused(AfAlgError):
    """bind failed with an errno this module has no better explanation for."""

    def __init__(self, message: str, *, err: int, **where: str | None) -> None:
        super().__init__(message, **where)
        self.errno = err


class BadKeyLength(AfAlgError):
    """The driver rejected the key (or the rng its seed)."""

    def __init__(self, message: str, *, key_length: int, **where: str | None) -> None:
        super().__init__(message, **where)
        self.key_length = key_length


class BadAuthSize(AfAlgError):
    """The AEAD driver rejected the tag length."""


class AuthenticationFailed(AfAlgError):
    """AEAD decryption found a wrong tag (EBADMSG); no plaintext is returned."""


class OperationTimeout(AfAlgError):
    """A kernel call did not finish within the session timeout: the driver may be hung."""

    def __init__(self, message: str, *, op: str, timeout: float, **where: str | None) -> None:
        super().__init__(message, **where)
        self.op = op
        self.timeout = timeout


class OperationFailed(AfAlgError):
    """An operation failed with an errno (EINVAL for a partial block, ENOKEY, ...)."""

    def __init__(self, message: str, *, op: str, err: int | None, **where: str | None) -> None:
        super().__init__(message, **where)
        self.op = op
        self.errno = err


# --- what provides AF_ALG for a type -----------------------------------------------------------


def config_option(alg_type: str) -> str:
    """The Kconfig option providing AF_ALG for a type: CONFIG_CRYPTO_USER_API_SKCIPHER, ..."""
    if alg_type not in AlgType.values():
        return "CONFIG_CRYPTO_USER_API"
    return f"CONFIG_CRYPTO_USER_API_{alg_type.upper()}"


def algif_module(alg_type: str) -> str:
    """The module that provides AF_ALG for a type: algif_skcipher, ..."""
    return f"algif_{alg_type}"


def unavailable_message(alg_type: str, detail: str) -> str:
    return (
        f"AF_ALG {alg_type} is not available ({detail}): build the kernel with "
        f"{config_option(alg_type)}=y or =m and run 'modprobe {algif_module(alg_type)}'"
    )


def check_type(alg_type: str) -> None:
    """ValueError unless ``alg_type`` is one of the four AF_ALG types (a caller's mistake)."""
    if alg_type not in AlgType.values():
        raise ValueError(f"unknown AF_ALG type {alg_type!r} (expected one of {AlgType.values()})")


# --- explaining errno -------------------------------------------------------------------------


def explain_bind_error(
    alg: str,
    alg_type: str,
    err: int | None,
    registered: Sequence[CryptoAlg],
    availability: tuple[bool, str],
    policy: AfalgPolicy = AfalgPolicy(),
) -> AfAlgError:
    """Turn a failed bind into the error that says why (pure: tests inject errno, text and
    the kernel's AF_ALG policy)."""
    if err == errno.EAFNOSUPPORT and policy.restrict == 2:
        return AfAlgUnavailable(
            "AF_ALG is switched off on this kernel: /proc/sys/crypto/af_alg_restrict = 2 "
            "(Linux 7.3+) refuses every AF_ALG socket; 1 allows its allowlisted names, 0 all",
            alg=alg,
            alg_type=alg_type,
        )
    if err == errno.EAFNOSUPPORT or (err == errno.ENOENT and not availability[0]):
        return AfAlgUnavailable(
            availability[1]
            if not availability[0]
            else unavailable_message(alg_type, "no AF_ALG address family"),
            alg=alg,
            alg_type=alg_type,
        )
    listed = matches(registered, alg)
    if not listed:
        return DriverNotRegistered(
            f"driver {alg} is not registered: /proc/crypto has no {alg_type} algorithm or "
            "driver of that name (bind by a name or an exact driver string it lists)",
            alg=alg,
            alg_type=alg_type,
        )
    usable = of_type(listed, alg_type)
    if not usable:
        return _type_mismatch(alg, alg_type, listed)
    if err == errno.ELIBBAD:
        return _selftest_failed(alg, alg_type, usable)
    if err == errno.ENOENT:
        return _masked(alg, alg_type, usable, policy)
    return BindRefused(
        f"binding {alg_type} {alg} failed with {errno_name(err)} although /proc/crypto lists "
        f"{_drivers_text(usable)}",
        err=err or 0,
        alg=alg,
        driver=usable[0].driver,
        alg_type=alg_type,
    )


def _type_mismatch(alg: str, alg_type: str, listed: Sequence[CryptoAlg]) -> AlgTypeMismatch:
    types = sorted({entry.type or "?" for entry in listed})
    hint = " (wrap a bare cipher in a mode, e.g. cbc(aes))" if "cipher" in types else ""
    return AlgTypeMismatch(
        f"{alg} is registered as type {'/'.join(types)}, which AF_ALG {alg_type} cannot bind{hint}",
        alg=alg,
        driver=listed[0].driver,
        alg_type=alg_type,
    )


def _selftest_failed(alg: str, alg_type: str, usable: Sequence[CryptoAlg]) -> SelfTestFailed:
    failed = [entry for entry in usable if not entry.passed_selftest] or list(usable)
    return SelfTestFailed(
        f"the kernel refuses {alg} (ELIBBAD): driver {failed[0].driver} did not pass its "
        "self-test (selftest: unknown in /proc/crypto; see dmesg for 'alg: ... failed')",
        alg=alg,
        driver=failed[0].driver,
        alg_type=alg_type,
    )


def _masked(
    alg: str, alg_type: str, usable: Sequence[CryptoAlg], policy: AfalgPolicy
) -> AfAlgMasked:
    if all(entry.is_internal for entry in usable):
        return AfAlgMasked(
            f"{alg} is an internal helper (internal: yes in /proc/crypto), never reachable "
            "from AF_ALG: bind the driver that wraps it",
            alg=alg,
            driver=usable[0].driver,
            alg_type=alg_type,
        )
    synchronous = all(
        entry.is_async is False or entry.type in SYNCHRONOUS_TYPES for entry in usable
    )
    if policy.restrict == 1:
        return _restricted(alg, alg_type, usable, synchronous)
    if synchronous:
        # Nothing off-CPU here, so the mask does not explain it; FIPS mode can, when on.
        if policy.fips:
            reason = (
                "FIPS mode is on (/proc/sys/crypto/fips_enabled = 1), and then the kernel "
                "hands out only FIPS-allowed algorithms"
            )
        else:
            fips = "0" if policy.fips is False else "absent"
            reason = (
                f"not FIPS mode (fips_enabled {fips}), not the off-CPU mask (it is "
                f"synchronous), {policy.describe()}: see dmesg"
            )
        return AfAlgMasked(
            f"{alg_type} {alg} is registered ({_drivers_text(usable)}) and synchronous, yet "
            f"AF_ALG refuses it (ENOENT): {reason}",
            alg=alg,
            driver=usable[0].driver,
            alg_type=alg_type,
        )
    driver = next((entry.driver for entry in usable if entry.is_async), usable[0].driver)
    return AfAlgMasked(
        f"{alg_type} {alg} is registered ({_drivers_text(usable)}) but AF_ALG refuses it: "
        f"off-CPU (async/offload) implementations are masked from AF_ALG since crypto commit "
        f"{MASKING_COMMIT}; measure this driver through dm-crypt or tcrypt instead",
        alg=alg,
        driver=driver,
        alg_type=alg_type,
    )


def _restricted(
    alg: str, alg_type: str, usable: Sequence[CryptoAlg], synchronous: bool
) -> AfAlgRestricted:
    by_driver = [entry for entry in usable if entry.driver == alg and entry.name != alg]
    rule = (
        "/proc/sys/crypto/af_alg_restrict = 1 (the default since Linux 7.3) lets AF_ALG bind "
        "only the algorithm names on its allowlist, some only with CAP_NET_ADMIN or "
        "CAP_SYS_ADMIN"
    )
    if by_driver:
        name = by_driver[0].name
        what = f"refuses {alg_type} {alg} by driver name (ENOENT): {rule}, never a driver name"
        advice = f"bind {name} (the kernel picks its driver) or set af_alg_restrict to 0"
    else:
        what = f"refuses {alg_type} {alg} (ENOENT): {rule}, and {alg} is not on it for this process"
        advice = "set af_alg_restrict to 0 to reach it"
    masked = (
        ""
        if synchronous
        else (
            f"; {usable[0].driver} is off-CPU (async), which AF_ALG does not take even at 0 "
            f"(crypto commit {MASKING_COMMIT})"
        )
    )
    driver = next((entry.driver for entry in usable if entry.is_async), usable[0].driver)
    return AfAlgRestricted(
        f"AF_ALG {what}; {advice}{masked}",
        alg=alg,
        driver=driver if not synchronous else usable[0].driver,
        alg_type=alg_type,
    )


def _drivers_text(entries: Sequence[CryptoAlg]) -> str:
    return ", ".join(f"{entry.driver} [{entry.priority}]" for entry in entries[:4])


def explain_key_error(
    alg: str,
    alg_type: str,
    driver: str | None,
    key_length: int,
    err: int | None,
    entry: CryptoAlg | None,
) -> AfAlgError:
    """A rejected ALG_SET_KEY: name the length and the driver's advertised range."""
    where = alg_and_driver(alg, driver)
    if err != errno.EINVAL:
        return OperationFailed(
            f"{where}: setting a {key_length}-byte key failed with {errno_name(err)}",
            op="setkey",
            err=err,
            alg=alg,
            driver=driver,
            alg_type=alg_type,
        )
    if alg_type == AlgType.RNG:
        return BadKeyLength(
            _seed_message(where, key_length, entry),
            key_length=key_length,
            alg=alg,
            driver=driver,
            alg_type=alg_type,
        )
    return BadKeyLength(
        _key_message(where, key_length, entry),
        key_length=key_length,
        alg=alg,
        driver=driver,
        alg_type=alg_type,
    )


def _key_message(where: str, key_length: int, entry: CryptoAlg | None) -> str:
    low = entry.min_keysize if entry else None
    high = entry.max_keysize if entry else None
    if low is None or high is None:
        return f"{where}: key of {key_length} bytes rejected (EINVAL); keysize range unknown"
    if low <= key_length <= high:
        return (
            f"{where}: key of {key_length} bytes rejected although keysize is {low}..{high} "
            "bytes: the cipher takes only some sizes in that range (AES 16/24/32, XTS twice "
            "that) or refuses this key (weak key, equal XTS halves in FIPS mode)"
        )
    return f"{where}: key of {key_length} bytes rejected: keysize must be {low}..{high} bytes"


def _seed_message(where: str, seed_length: int, entry: CryptoAlg | None) -> str:
    size = entry.seedsize if entry else None
    wanted = f"a seed of {size} bytes (seedsize)" if size else "a different seed"
    return f"{where}: seed of {seed_length} bytes rejected: this rng needs {wanted}"


def explain_op_error(
    alg: str,
    alg_type: str,
    driver: str | None,
    op: str,
    err: int | None,
    entry: CryptoAlg | None,
    data_length: int | None = None,
    iv_length: int | None = None,
) -> AfAlgError:
    """A failed operation: EBADMSG is an authentication failure, the rest gets a hint."""
    where = alg_and_driver(alg, driver)
    if err == errno.EBADMSG and alg_type == AlgType.AEAD:
        return AuthenticationFailed(
            f"{where}: {op} found a wrong authentication tag (EBADMSG); no plaintext returned",
            alg=alg,
            driver=driver,
            alg_type=alg_type,
        )
    hint = _op_hint(alg_type, err, entry, data_length, iv_length)
    return OperationFailed(
        f"{where}: {op} failed with {errno_name(err)}{hint}",
        op=op,
        err=err,
        alg=alg,
        driver=driver,
        alg_type=alg_type,
    )


def _op_hint(
    alg_type: str,
    err: int | None,
    entry: CryptoAlg | None,
    data_length: int | None,
    iv_length: int | None,
) -> str:
    if err == errno.ENOKEY:
        return ": this algorithm needs a key (pass key=...)"
    if err == errno.EMSGSIZE:
        size = f"{data_length} bytes" if data_length is not None else "the request"
        # A send stops short when the send buffer (raised only up to net.core.wmem_max
        # unless root) or the socket's option memory (its scatterlists) runs out.
        return (
            f": {size} do not fit AF_ALG's socket buffers or option memory "
            f"(net.core.optmem_max = {_optmem_max()}); use smaller requests"
        )
    if err == errno.ENOMEM and data_length and data_length > _LARGE_REQUEST:
        # af_alg allocates its scatterlists from the socket's option memory.
        return (
            f": {data_length} bytes exceed AF_ALG's per-socket memory "
            f"(net.core.optmem_max = {_optmem_max()}); use smaller requests"
        )
    if err != errno.EINVAL or entry is None:
        return ""
    if iv_length is not None and entry.ivsize is not None and iv_length != entry.ivsize:
        return f": the IV must be {entry.ivsize} bytes, got {iv_length}"
    block = entry.blocksize
    if alg_type == AlgType.SKCIPHER and data_length is not None and block and data_length % block:
        return f": {data_length} bytes is not a multiple of the {block}-byte block size"
    return ""


def _optmem_max() -> str:
    try:
        return _OPTMEM_MAX.read_text(encoding="ascii").strip()
    except OSError:
        return "unknown"


def alg_and_driver(alg: str, driver: str | None) -> str:
    """How messages name a session: ``cbc(aes) (driver cbc(aes-generic))``, or just the name."""
    return alg if driver in (None, alg) else f"{alg} (driver {driver})"
