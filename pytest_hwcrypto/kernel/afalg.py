"""The AF_ALG engine: drive kernel crypto drivers from user space through ``socket.AF_ALG``.

A *session* binds one algorithm of one AF_ALG type (``skcipher``, ``aead``, ``hash``,
``rng``) either by algorithm name (``cbc(aes)``: the kernel picks the driver) or by exact
driver name (``cbc(aes-generic)``: that driver and no other). The bound socket holds the
kernel transform and the key; every operation runs on an *op socket* from ``accept()``.

What the kernel does that shapes this module (seen on the UML board, kernel 6.1):

* ``SO_RCVTIMEO``/``SO_SNDTIMEO`` do nothing on AF_ALG sockets (af_alg waits with
  ``MAX_SCHEDULE_TIMEOUT``), and a ``recvmsg`` on an async (offload) driver sleeps in
  ``crypto_wait_req``, which no signal or timeout interrupts. So op sockets are non-blocking
  (a wait in the socket layer polls with a deadline: cheaper than ``settimeout``, which
  polls before every syscall and tripled the cost of a 16-byte request on UML), and calls
  into a driver that may sleep (async, or not identified) run in a daemon worker thread
  watched from the caller's thread: a hung driver becomes :class:`OperationTimeout`
  instead of a hung test run, and the stuck thread is abandoned. Synchronous drivers
  compute inside the syscall and run in the caller's thread (a thread costs ~3 ms on UML).
* A send larger than the socket's send buffer (~208 KiB by default) blocks until someone
  reads, so buffers are raised to fit the request first; output larger than the receive
  buffer comes back in several reads, so reads loop until all bytes are there.
* DRBGs (``stdrng``) refuse to generate until reset: an empty seed makes the kernel seed
  them from its own entropy. ``ansi_cprng`` needs a real seed of ``seedsize`` bytes.
* A template name that does not round-trip (``gcm(aes-generic)``: the instance is called
  ``gcm_base(ctr(aes-generic),ghash-generic)``) is instantiated and then not found: bind by
  the exact driver string /proc/crypto shows.
"""

from __future__ import annotations

import contextlib
import errno
import os
import platform
import select
import shutil
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Callable, Generic, TypeVar

from pytest_hwcrypto.kernel.inventory import can_win, type_family
from pytest_hwcrypto.kernel.procfs import PROC_CRYPTO, CryptoAlg, read_proc_crypto

SKCIPHER = "skcipher"
AEAD = "aead"
HASH = "hash"
RNG = "rng"
ALG_TYPES = (SKCIPHER, AEAD, HASH, RNG)

ENCRYPT = "encrypt"
DECRYPT = "decrypt"

FINDING_AFALG_MASKED = "afalg-masked"
MASKING_COMMIT = '7524070f26d8 ("crypto: af_alg - Drop support for off-CPU cryptography")'

DEFAULT_TIMEOUT = 10.0

# Names the generic C code registers on practically every kernel: if none of them binds,
# the algif_<type> module is missing, not the algorithm.
_PROBE_NAMES = {
    SKCIPHER: ("ecb(aes)", "cbc(aes)", "ctr(aes)", "ecb(cipher_null)"),
    HASH: ("sha256", "sha1", "md5", "crc32c"),
    AEAD: ("gcm(aes)", "ccm(aes)", "authenc(hmac(sha256),cbc(aes))"),
    RNG: ("stdrng", "jitterentropy_rng", "ansi_cprng"),
}

# include/crypto/hash.h HASH_MAX_DIGESTSIZE: a read this large always gets the whole digest.
_HASH_MAX_DIGESTSIZE = 64
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
# asm-generic SO_SNDBUFFORCE/SO_RCVBUFFORCE (Python does not export them); alpha, mips,
# parisc and sparc number them differently, so forcing is skipped there.
_SO_SNDBUFFORCE = 32
_SO_RCVBUFFORCE = 33
_ODD_SOCKOPT_ARCHES = ("alpha", "mips", "parisc", "sparc")

# Requests above this size can run into net.core.optmem_max (20 KiB before Linux 6.9): on
# the UML board 640 KiB was the largest AES-XTS request that fit.
_LARGE_REQUEST = 256 * 1024
_OPTMEM_MAX = Path("/proc/sys/net/core/optmem_max")

# /proc/crypto types whose API has no asynchronous completion.
_SYNCHRONOUS_TYPES = frozenset({"shash", "lskcipher", "rng", "cipher"})

_OP_CODES = {ENCRYPT: socket.ALG_OP_ENCRYPT, DECRYPT: socket.ALG_OP_DECRYPT}

_T = TypeVar("_T")
_S = TypeVar("_S", bound="AfAlgSession")


# --- errors -----------------------------------------------------------------------------------


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

    finding_kind = FINDING_AFALG_MASKED


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


# --- names and availability -------------------------------------------------------------------


def config_option(alg_type: str) -> str:
    """The Kconfig option providing AF_ALG for a type: CONFIG_CRYPTO_USER_API_SKCIPHER, ..."""
    if alg_type not in ALG_TYPES:
        return "CONFIG_CRYPTO_USER_API"
    return f"CONFIG_CRYPTO_USER_API_{alg_type.upper()}"


def algif_module(alg_type: str) -> str:
    return f"algif_{alg_type}"


def unavailable_message(alg_type: str, detail: str) -> str:
    return (
        f"AF_ALG {alg_type} is not available ({detail}): build the kernel with "
        f"{config_option(alg_type)}=y or =m and run 'modprobe {algif_module(alg_type)}'"
    )


_modprobe_tried: set[str] = set()
_known_available: set[str] = set()


def afalg_available(
    alg_type: str, *, proc_crypto_path: Path = PROC_CRYPTO, timeout: float = DEFAULT_TIMEOUT
) -> tuple[bool, str]:
    """Whether AF_ALG sessions of ``alg_type`` can be opened here, and why not.

    Probes by binding names the generic C code always registers. Before answering "no" it
    runs ``modprobe algif_<type>`` once per process: the kernel loads algif modules on demand
    only through modprobe, which a minimal board may lack on its usermode-helper path.
    """
    _check_type(alg_type)
    if alg_type in _known_available:
        return True, f"AF_ALG {alg_type} is available"
    available, detail = _probe(alg_type, timeout)
    if not available and alg_type not in _modprobe_tried:
        _modprobe_tried.add(alg_type)
        _modprobe(algif_module(alg_type))
        available, detail = _probe(alg_type, timeout)
    if available:
        _known_available.add(alg_type)
        return True, f"AF_ALG {alg_type} is available"
    return False, unavailable_message(
        alg_type, _with_registered_hint(alg_type, detail, proc_crypto_path)
    )


def _probe(alg_type: str, timeout: float) -> tuple[bool, str]:
    try:
        sock = _new_alg_socket()
    except OSError as exc:
        return False, f"socket(AF_ALG) failed with {_errno_name(exc.errno)}"
    with sock:
        for name in _PROBE_NAMES[alg_type]:
            if _binds(sock, alg_type, name, timeout):
                return True, ""
    return False, f"none of {', '.join(_PROBE_NAMES[alg_type])} could be bound"


def _binds(sock: socket.socket, alg_type: str, name: str, timeout: float) -> bool:
    try:
        _call_with_deadline(partial(sock.bind, (alg_type, name)), timeout)
    except (OSError, _Hung):
        return False
    return True


def _with_registered_hint(alg_type: str, detail: str, proc_crypto_path: Path) -> str:
    """Say so when /proc/crypto lists a probe name: then it is algif_<type> that is missing."""
    registered = _registrations(proc_crypto_path)
    listed = [name for name in _PROBE_NAMES[alg_type] if _matches(registered, name)]
    if not listed or "socket(AF_ALG)" in detail:
        return detail
    return f"{detail}, though /proc/crypto lists {listed[0]}"


def _modprobe(module: str) -> None:
    """Try to load a module; quietly, because failing here is an expected outcome."""
    tool = shutil.which("modprobe") or next(
        (path for path in ("/sbin/modprobe", "/usr/sbin/modprobe") if os.path.exists(path)),
        None,
    )
    if tool is None:
        return
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            [tool, "-q", module],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=30,
            check=False,
        )


def _new_alg_socket() -> socket.socket:
    """A fresh AF_ALG socket (a seam: unit tests replace it with a fake)."""
    try:
        family = socket.AF_ALG
    except AttributeError:  # a Python built without AF_ALG support
        raise OSError(errno.EAFNOSUPPORT, "Python has no socket.AF_ALG") from None
    return socket.socket(family, socket.SOCK_SEQPACKET, 0)


def _check_type(alg_type: str) -> None:
    if alg_type not in ALG_TYPES:
        raise ValueError(f"unknown AF_ALG type {alg_type!r} (expected one of {ALG_TYPES})")


# --- /proc/crypto: which driver is bound, and what explains an error -------------------------


def _registrations(path: Path) -> list[CryptoAlg]:
    """/proc/crypto, or nothing when it cannot be read (errors then explain less)."""
    try:
        return read_proc_crypto(path)
    except (OSError, ValueError):
        return []


def _matches(registered: Sequence[CryptoAlg], alg: str) -> list[CryptoAlg]:
    return [entry for entry in registered if alg in (entry.name, entry.driver)]


def _of_type(entries: Sequence[CryptoAlg], alg_type: str) -> list[CryptoAlg]:
    return [entry for entry in entries if type_family(entry.type) == alg_type]


def resolve_driver(
    alg: str,
    alg_type: str,
    before: Sequence[CryptoAlg],
    after: Sequence[CryptoAlg],
) -> tuple[str | None, str]:
    """The driver a bind of ``alg`` got, and the evidence: ``refcnt``, ``exact`` or ``priority``.

    ``before``/``after`` are /proc/crypto read around the bind. The kernel takes a reference
    on the driver it hands out, so the one candidate whose ``refcnt`` rose is the answer
    (a template instance created by this bind appears with refcnt 2: its own plus ours).
    Without that evidence (another user raced us, or a static /proc/crypto), the kernel's
    lookup rule decides: an exact driver-name match wins, otherwise the highest-priority
    tested, non-internal driver of that name (crypto/api.c ``__crypto_alg_lookup``). Kernels
    with the off-CPU mask skip async drivers there, which only the refcnt evidence sees.
    """
    candidates = _of_type(_matches(after, alg), alg_type)
    # By driver name: the kernel may list two instances under one driver name (binding a
    # name that does not round-trip, such as xts(aes-fixed-time), registers a duplicate).
    raised = {entry.driver for entry in _refcnt_raised(candidates, before)}
    if len(raised) == 1:
        return raised.pop(), "refcnt"
    exact = [entry for entry in candidates if entry.driver == alg]
    if exact:
        return exact[0].driver, "exact"
    winner = _priority_winner([entry for entry in candidates if can_win(entry)])
    return (winner.driver, "priority") if winner else (None, "unknown")


def _refcnt_raised(candidates: Sequence[CryptoAlg], before: Sequence[CryptoAlg]) -> list[CryptoAlg]:
    old = {(entry.driver, entry.type): entry.refcnt for entry in before}
    raised = []
    for entry in candidates:
        # An instance absent before the bind was created by it with a refcnt of 1.
        baseline = old.get((entry.driver, entry.type), 1)
        if entry.refcnt is not None and baseline is not None and entry.refcnt > baseline:
            raised.append(entry)
    return raised


def _priority_winner(candidates: Sequence[CryptoAlg]) -> CryptoAlg | None:
    best: CryptoAlg | None = None
    for entry in candidates:
        # Strictly greater: on a tie the kernel keeps the first (newest) it meets.
        if best is None or (entry.priority or 0) > (best.priority or 0):
            best = entry
    return best


def explain_bind_error(
    alg: str,
    alg_type: str,
    err: int | None,
    registered: Sequence[CryptoAlg],
    availability: tuple[bool, str],
) -> AfAlgError:
    """Turn a failed bind into the error that says why (pure: tests inject errno and text)."""
    if err == errno.EAFNOSUPPORT or (err == errno.ENOENT and not availability[0]):
        return AfAlgUnavailable(
            availability[1]
            if not availability[0]
            else unavailable_message(alg_type, "no AF_ALG address family"),
            alg=alg,
            alg_type=alg_type,
        )
    listed = _matches(registered, alg)
    if not listed:
        return DriverNotRegistered(
            f"driver {alg} is not registered: /proc/crypto has no {alg_type} algorithm or "
            "driver of that name (bind by a name or an exact driver string it lists)",
            alg=alg,
            alg_type=alg_type,
        )
    usable = _of_type(listed, alg_type)
    if not usable:
        return _type_mismatch(alg, alg_type, listed)
    if err == errno.ELIBBAD:
        return _selftest_failed(alg, alg_type, usable)
    if err == errno.ENOENT:
        return _masked(alg, alg_type, usable)
    return BindRefused(
        f"binding {alg_type} {alg} failed with {_errno_name(err)} although /proc/crypto lists "
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


def _masked(alg: str, alg_type: str, usable: Sequence[CryptoAlg]) -> AfAlgMasked:
    if all(entry.is_internal for entry in usable):
        return AfAlgMasked(
            f"{alg} is an internal helper (internal: yes in /proc/crypto), never reachable "
            "from AF_ALG: bind the driver that wraps it",
            alg=alg,
            driver=usable[0].driver,
            alg_type=alg_type,
        )
    if all(entry.is_async is False or entry.type in _SYNCHRONOUS_TYPES for entry in usable):
        # Nothing off-CPU here, so the mask does not explain it; FIPS mode can.
        return AfAlgMasked(
            f"{alg_type} {alg} is registered ({_drivers_text(usable)}) and synchronous, yet "
            "AF_ALG refuses it (ENOENT): in FIPS mode (/proc/sys/crypto/fips_enabled) the "
            "kernel hands out only FIPS-allowed algorithms",
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
    where = _where(alg, driver)
    if err != errno.EINVAL:
        return OperationFailed(
            f"{where}: setting a {key_length}-byte key failed with {_errno_name(err)}",
            op="setkey",
            err=err,
            alg=alg,
            driver=driver,
            alg_type=alg_type,
        )
    if alg_type == RNG:
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
    where = _where(alg, driver)
    if err == errno.EBADMSG and alg_type == AEAD:
        return AuthenticationFailed(
            f"{where}: {op} found a wrong authentication tag (EBADMSG); no plaintext returned",
            alg=alg,
            driver=driver,
            alg_type=alg_type,
        )
    hint = _op_hint(alg_type, err, entry, data_length, iv_length)
    return OperationFailed(
        f"{where}: {op} failed with {_errno_name(err)}{hint}",
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
    if alg_type == SKCIPHER and data_length is not None and block and data_length % block:
        return f": {data_length} bytes is not a multiple of the {block}-byte block size"
    return ""


def _optmem_max() -> str:
    try:
        return _OPTMEM_MAX.read_text(encoding="ascii").strip()
    except OSError:
        return "unknown"


def _where(alg: str, driver: str | None) -> str:
    return alg if driver in (None, alg) else f"{alg} (driver {driver})"


def _errno_name(err: int | None) -> str:
    if err is None:
        return "an unknown error"
    return errno.errorcode.get(err, f"errno {err}")


# --- running kernel calls with a deadline -----------------------------------------------------


class _Hung(Exception):
    """A kernel call made no progress within the deadline.

    ``stuck`` when the watchdog gave up on the worker thread (it may never come back);
    otherwise the worker itself saw its socket wait expire and has finished.
    """

    def __init__(self, stuck: bool = False) -> None:
        super().__init__("stuck" if stuck else "timed out")
        self.stuck = stuck


@dataclass
class _Outcome(Generic[_T]):
    value: _T | None = None
    error: BaseException | None = None


def _call_with_deadline(
    work: Callable[[], _T], timeout: float, progress: Callable[[], int] | None = None
) -> _T:
    """Run ``work`` in a daemon thread; raise :class:`_Hung` when it stalls for ``timeout`` s.

    A thread because a driver can sleep uninterruptibly inside the syscall: nothing can wake
    it, but the caller can stop waiting. Daemon, so an abandoned thread never holds up
    interpreter exit. With ``progress`` (a counter the work advances) a long loop may run
    past ``timeout`` as long as the counter keeps moving.
    """
    outcome: _Outcome[_T] = _Outcome()
    finished = threading.Event()

    def run() -> None:
        try:
            outcome.value = work()
        except BaseException as exc:  # handed to the caller's thread, re-raised there
            outcome.error = exc
        finally:
            finished.set()

    threading.Thread(target=run, name="hwcrypto-afalg", daemon=True).start()
    # A grace period, so that a worker whose own socket wait expires reports that itself.
    patience = timeout + max(0.5, timeout / 10)
    seen = progress() if progress else 0
    while not finished.wait(patience):
        now = progress() if progress else seen
        if progress is None or now == seen:
            raise _Hung(stuck=True)
        seen = now
    if outcome.error is not None:
        raise outcome.error
    return outcome.value  # type: ignore[return-value]  # set whenever error is None


def _wait_for(sock: socket.socket, events: int, deadline: float) -> None:
    """Poll a non-blocking op socket until ready; raise :class:`_Hung` past the deadline."""
    remaining = deadline - _monotonic()
    if remaining <= 0:
        raise _Hung()
    poller = select.poll()
    poller.register(sock, events)
    if not poller.poll(remaining * 1000):
        raise _Hung()


def _monotonic() -> float:
    return time.monotonic()


@dataclass(frozen=True)
class _Control:
    """The control message of a request's first send: operation, IV, AEAD assoclen."""

    op: int
    iv: bytes | None = None
    assoclen: int | None = None

    def ancillary(self) -> list[tuple[int, int, bytes]]:
        """The fields as control messages for plain ``sendmsg``; absent ones are left out.

        Built here rather than by ``sendmsg_afalg``, which parses its keywords and packs
        them again on every call: at 16 B that is a measurable share of a request, so the
        timing loops build them once. Layouts are those of ``linux/if_alg.h``: a u32 op,
        ``struct af_alg_iv`` (u32 length then the bytes) and a u32 assoclen.
        """
        messages = [(socket.SOL_ALG, socket.ALG_SET_OP, struct.pack("=I", self.op))]
        if self.iv is not None:
            iv_message = struct.pack("=I", len(self.iv)) + self.iv
            messages.append((socket.SOL_ALG, socket.ALG_SET_IV, iv_message))
        if self.assoclen is not None:
            assoc_message = struct.pack("=I", self.assoclen)
            messages.append((socket.SOL_ALG, socket.ALG_SET_AEAD_ASSOCLEN, assoc_message))
        return messages


def _send(
    sock: socket.socket, deadline: float, data: memoryview, control: _Control | None, flags: int
) -> None:
    """One sendmsg that must take all of ``data`` (buffers were sized for it beforehand)."""
    while True:
        try:
            if control is not None:
                sent = sock.sendmsg([data], control.ancillary(), flags)
            else:
                sent = sock.sendmsg([data], [], flags)
            break
        except BlockingIOError:
            _wait_for(sock, select.POLLOUT, deadline)
    if sent != len(data):
        raise OSError(errno.EMSGSIZE, f"kernel took {sent} of {len(data)} bytes")


def _submit(
    sock: socket.socket, deadline: float, pieces: Sequence[memoryview], control: _Control | None
) -> None:
    """Send pieces, all but the last with MSG_MORE; the first carries the control message."""
    for index, piece in enumerate(pieces):
        flags = socket.MSG_MORE if index < len(pieces) - 1 else 0
        _send(sock, deadline, piece, control if index == 0 else None, flags)


def _recv_once(
    sock: socket.socket, deadline: float, out: memoryview, may_be_empty: bool = False
) -> int:
    """One read into ``out`` (waiting, up to the deadline, while the kernel has nothing).

    ``may_be_empty``: the request legitimately produces no bytes (an AEAD decrypt of a
    tag-only message), so a zero-length answer is the result, not a failure.
    """
    while True:
        try:
            count = sock.recv_into(out)
        except BlockingIOError:
            _wait_for(sock, select.POLLIN, deadline)
            continue
        if count == 0 and len(out) and not may_be_empty:
            raise OSError(errno.EIO, "the kernel returned no data")
        return count


def _recv_exact(sock: socket.socket, deadline: float, out: memoryview) -> None:
    """Fill ``out``: the kernel may return less than asked per read (receive buffer)."""
    got = 0
    while got < len(out):
        got += _recv_once(sock, deadline, out[got:])


def _split(data: bytes, chunks: Sequence[int] | None) -> list[memoryview]:
    """Pieces sent with MSG_MORE, then the final piece (the remainder, maybe empty)."""
    view = memoryview(data).cast("B")
    lengths = list(chunks or [])
    if any(length < 0 for length in lengths) or sum(lengths) > len(view):
        raise ValueError(
            f"chunks {lengths} must be non-negative and sum to at most {len(view)} bytes"
        )
    pieces, start = [], 0
    for length in lengths:
        pieces.append(view[start : start + length])
        start += length
    pieces.append(view[start:])
    return pieces


def _fit_buffers(sock: socket.socket, nbytes: int) -> None:
    """Raise send/receive buffers so one request of ``nbytes`` fits without a reader.

    af_alg admits a send only while a whole page of send buffer is free, so leave slack.
    SO_SNDBUF is capped by net.core.wmem_max; as root the FORCE variants pass that cap.
    """
    wanted = nbytes + 4 * _PAGE
    for plain, forced in ((socket.SO_SNDBUF, _SO_SNDBUFFORCE), (socket.SO_RCVBUF, _SO_RCVBUFFORCE)):
        if sock.getsockopt(socket.SOL_SOCKET, plain) >= wanted:
            continue
        # The kernel doubles the value it is given (bookkeeping overhead): ample room.
        _try_setsockopt(sock, plain, wanted)
        if sock.getsockopt(socket.SOL_SOCKET, plain) < wanted and _can_force():
            _try_setsockopt(sock, forced, wanted)


def _try_setsockopt(sock: socket.socket, option: int, value: int) -> None:
    # Not root, or a value the kernel refuses: the send then reports EMSGSIZE.
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, option, value)


def _can_force() -> bool:
    return not platform.machine().startswith(_ODD_SOCKOPT_ARCHES)


def _opcode(op: str) -> int:
    try:
        return _OP_CODES[op]
    except KeyError:
        raise ValueError(f"op must be {ENCRYPT!r} or {DECRYPT!r}, not {op!r}") from None


# --- sessions ---------------------------------------------------------------------------------


class AfAlgSession:
    """A bound AF_ALG transform: opening, driver discovery, guarded calls, closing."""

    alg_type = ""

    def __init__(self, alg: str, *, timeout: float, proc_crypto_path: Path) -> None:
        self.alg = alg
        self.timeout = timeout
        self.proc_crypto_path = proc_crypto_path
        # The driver the kernel bound, and how that is known: "refcnt" (its /proc/crypto
        # refcnt rose at bind), "exact" (bound by driver name), "priority" (lookup rule).
        self.driver: str | None = None
        self.driver_evidence = "unknown"
        self.registration: CryptoAlg | None = None
        self._tfm: socket.socket | None = None
        self._op_sockets: list[socket.socket] = []
        self._loop_sock: socket.socket | None = None
        self._broken: str | None = None

    def __enter__(self: _S) -> _S:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the op sockets and the bound socket (never waits on a stuck worker)."""
        for sock in self._op_sockets:
            sock.close()
        self._op_sockets.clear()
        self._loop_sock = None
        if self._tfm is not None:
            self._tfm.close()
            self._tfm = None

    @property
    def closed(self) -> bool:
        return self._tfm is None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.alg} driver={self.driver} closed={self.closed}>"

    # opening

    def _open(self, key: bytes | None) -> None:
        _check_type(self.alg_type)
        before = _registrations(self.proc_crypto_path)
        try:
            self._tfm = _new_alg_socket()
        except OSError as exc:
            raise self._bind_error(exc.errno, before) from None
        try:
            self._bind()
            self._identify_driver(before)
            if key is not None:
                self._set_key(key)
        except BaseException:
            self.close()
            raise

    def _bind(self) -> None:
        tfm = self._bound_socket()
        try:
            # Isolated: the driver is not known yet, and binding may instantiate templates.
            self._guard("bind", lambda: tfm.bind((self.alg_type, self.alg)), isolate=True)
        except OSError as exc:
            # Read again: a failed template lookup may have registered instances meanwhile.
            raise self._bind_error(exc.errno, _registrations(self.proc_crypto_path)) from None

    def _bind_error(self, err: int | None, registered: Sequence[CryptoAlg]) -> AfAlgError:
        availability = (True, "")
        if err in (errno.ENOENT, errno.EAFNOSUPPORT):
            availability = afalg_available(
                self.alg_type, proc_crypto_path=self.proc_crypto_path, timeout=self.timeout
            )
        return explain_bind_error(self.alg, self.alg_type, err, registered, availability)

    def _identify_driver(self, before: Sequence[CryptoAlg]) -> None:
        after = _registrations(self.proc_crypto_path)
        self.driver, self.driver_evidence = resolve_driver(self.alg, self.alg_type, before, after)
        self.registration = next(
            (entry for entry in _of_type(after, self.alg_type) if entry.driver == self.driver),
            None,
        )

    def _set_key(self, key: bytes) -> None:
        tfm = self._bound_socket()
        try:
            self._guard("setkey", lambda: tfm.setsockopt(socket.SOL_ALG, socket.ALG_SET_KEY, key))
        except OSError as exc:
            raise explain_key_error(
                self.alg, self.alg_type, self.driver, len(key), exc.errno, self.registration
            ) from None

    # running kernel calls

    def _bound_socket(self) -> socket.socket:
        if self._tfm is None:
            raise AfAlgError(
                f"{self._where()}: session is closed",
                alg=self.alg,
                driver=self.driver,
                alg_type=self.alg_type,
            )
        return self._tfm

    def _accept(self) -> socket.socket:
        """A new op socket, non-blocking (see the module docstring), closed with the session."""
        tfm = self._bound_socket()
        op_sock, _ = self._guard("accept", tfm.accept)
        op_sock.setblocking(False)
        self._op_sockets.append(op_sock)
        return op_sock

    def _release(self, op_sock: socket.socket) -> None:
        op_sock.close()
        if op_sock in self._op_sockets:
            self._op_sockets.remove(op_sock)
        if op_sock is self._loop_sock:
            self._loop_sock = None

    def _guard(
        self,
        op: str,
        work: Callable[[], _T],
        progress: Callable[[], int] | None = None,
        *,
        isolate: bool | None = None,
    ) -> _T:
        """Run one kernel call (or loop) under the session timeout.

        ``isolate`` runs it in a watched worker thread; by default only where the driver
        may sleep out of reach (see :attr:`_may_sleep_in_driver`), because a thread per
        call costs milliseconds on UML, where syscalls are slow.
        """
        if self._broken:
            raise OperationFailed(
                f"{self._where()}: session unusable since its {self._broken} timed out; "
                "open a new one",
                op=op,
                err=None,
                alg=self.alg,
                driver=self.driver,
                alg_type=self.alg_type,
            )
        if isolate is None:
            isolate = self._may_sleep_in_driver
        try:
            return _call_with_deadline(work, self.timeout, progress) if isolate else work()
        except _Hung as hung:
            if hung.stuck:
                # The abandoned thread may still own the transform: nothing more is safe.
                self._broken = op
            raise OperationTimeout(
                f"{self._where()}: {op} did not complete within {self.timeout:g} s; "
                + (
                    "the driver may be hung (its thread is left stuck in the kernel)"
                    if hung.stuck
                    else "the kernel never produced the result"
                ),
                op=op,
                timeout=self.timeout,
                alg=self.alg,
                driver=self.driver,
                alg_type=self.alg_type,
            ) from None

    @property
    def _may_sleep_in_driver(self) -> bool:
        """Whether a call can sleep inside the driver, where no timeout or signal reaches.

        Synchronous implementations (``async : no``; shash, lskcipher and rng are
        synchronous by API) compute inside the syscall. Only async ones wait for their
        hardware in crypto_wait_req. A driver not identified counts as async.
        """
        entry = self.registration
        if entry is None:
            return True
        if entry.type in _SYNCHRONOUS_TYPES:
            return False
        return entry.is_async is not False

    def _run_op(
        self,
        op: str,
        work: Callable[[socket.socket, float], _T],
        data_length: int | None = None,
        iv_length: int | None = None,
    ) -> _T:
        """One operation on a fresh op socket, so no state leaks between operations."""
        try:
            op_sock = self._accept()
            try:
                return self._guard(op, lambda: work(op_sock, _monotonic() + self.timeout))
            finally:
                self._release(op_sock)
        except OSError as exc:
            raise self._op_error(op, exc, data_length, iv_length) from None

    def _op_error(
        self, op: str, exc: OSError, data_length: int | None = None, iv_length: int | None = None
    ) -> AfAlgError:
        return explain_op_error(
            self.alg,
            self.alg_type,
            self.driver,
            op,
            exc.errno,
            self.registration,
            data_length,
            iv_length,
        )

    # the timing fast path

    def _loop_socket(self, block_size: int) -> socket.socket:
        """The op socket reused by the timing loops (buffers sized for ``block_size``)."""
        if self._loop_sock is None:
            self._loop_sock = self._accept()
        _fit_buffers(self._loop_sock, block_size)
        return self._loop_sock

    def _run_loop(
        self,
        op: str,
        work: Callable[[list[int]], None],
        data_length: int,
        iv_length: int | None = None,
    ) -> None:
        """Run a timing loop that counts its rounds in ``progress[0]``.

        The deadline applies per round: the loop may take as long as it needs while rounds
        keep completing. After any failure the op socket may hold half a request, so it is
        dropped rather than reused.
        """
        progress = [0]
        try:
            self._guard(op, lambda: work(progress), lambda: progress[0])
        except OSError as exc:
            self._drop_loop_socket()
            raise self._op_error(op, exc, data_length, iv_length) from None
        except BaseException:
            self._drop_loop_socket()
            raise

    def _drop_loop_socket(self) -> None:
        if self._loop_sock is not None:
            self._release(self._loop_sock)

    def _where(self) -> str:
        return _where(self.alg, self.driver)


class SkcipherSession(AfAlgSession):
    """A symmetric cipher (``cbc(aes)``, ``xts(aes)``, ...) with its key set."""

    alg_type = SKCIPHER

    def encrypt(
        self, data: bytes, iv: bytes | None = None, *, chunks: Sequence[int] | None = None
    ) -> bytes:
        """Encrypt ``data`` in one request; ``chunks`` sends it in pieces with MSG_MORE."""
        return self._crypt(ENCRYPT, data, iv, chunks)

    def decrypt(
        self, data: bytes, iv: bytes | None = None, *, chunks: Sequence[int] | None = None
    ) -> bytes:
        """Decrypt ``data`` in one request; ``chunks`` as for :meth:`encrypt`."""
        return self._crypt(DECRYPT, data, iv, chunks)

    def _crypt(self, op: str, data: bytes, iv: bytes | None, chunks: Sequence[int] | None) -> bytes:
        pieces = _split(data, chunks)
        total = sum(len(piece) for piece in pieces)
        control = _Control(_opcode(op), None if iv is None else bytes(iv))

        def work(op_sock: socket.socket, deadline: float) -> bytes:
            _fit_buffers(op_sock, total)
            _submit(op_sock, deadline, pieces, control)
            out = bytearray(total)
            if total:  # an empty request has nothing to read back
                _recv_exact(op_sock, deadline, memoryview(out))
            return bytes(out)

        return self._run_op(op, work, total, None if iv is None else len(iv))

    def crypt_loop(self, block: bytes, iv: bytes | None, op: str, count: int) -> bytes:
        """Run ``count`` independent ``op`` requests on ``block``, for throughput timing.

        Per request: one ``sendmsg`` carrying op and IV (every request starts from ``iv``,
        like a dm-crypt sector) and one ``recv_into`` a reused buffer, on an op socket
        reused across calls. Returns the last request's output, unchecked, so that a test
        can prove the loop's prebuilt control messages ask for what :meth:`encrypt` does.
        """
        size, timeout = len(block), self.timeout
        op_sock = self._loop_socket(size)
        control = _Control(_opcode(op), None if iv is None else bytes(iv))
        # Everything but the two syscalls is bound once, outside the loop.
        send = partial(op_sock.sendmsg, [block], control.ancillary())
        recv_into = op_sock.recv_into
        out = memoryview(bytearray(size))

        def work(progress: list[int]) -> None:
            for done in range(count):
                send()
                got = recv_into(out)
                if got != size:  # rare: output larger than the receive buffer
                    _recv_exact(op_sock, _monotonic() + timeout, out[got:])
                progress[0] = done + 1

        self._run_loop(op, work, size, None if iv is None else len(iv))
        return bytes(out)


class AeadSession(AfAlgSession):
    """An AEAD (``gcm(aes)``, ...) with key and tag length set."""

    alg_type = AEAD

    def __init__(self, alg: str, *, authsize: int, timeout: float, proc_crypto_path: Path) -> None:
        super().__init__(alg, timeout=timeout, proc_crypto_path=proc_crypto_path)
        self.authsize = authsize

    def _set_authsize(self) -> None:
        tfm = self._bound_socket()
        try:
            self._guard(
                "setauthsize",
                lambda: tfm.setsockopt(
                    socket.SOL_ALG, socket.ALG_SET_AEAD_AUTHSIZE, None, self.authsize
                ),
            )
        except OSError as exc:
            most = self.registration.maxauthsize if self.registration else None
            limit = f"; maxauthsize is {most}" if most is not None else ""
            raise BadAuthSize(
                f"{self._where()}: tag length {self.authsize} rejected with "
                f"{_errno_name(exc.errno)}{limit}",
                alg=self.alg,
                driver=self.driver,
                alg_type=self.alg_type,
            ) from None

    def encrypt(self, plaintext: bytes, iv: bytes, aad: bytes = b"") -> bytes:
        """Ciphertext followed by the tag."""
        out = self._aead(
            ENCRYPT,
            bytes(aad) + bytes(plaintext),
            iv,
            len(aad),
            len(aad) + len(plaintext) + self.authsize,
        )
        return out[len(aad) :]

    def decrypt(self, ciphertext_with_tag: bytes, iv: bytes, aad: bytes = b"") -> bytes:
        """The plaintext; :class:`AuthenticationFailed` when the tag does not match."""
        if len(ciphertext_with_tag) < self.authsize:
            raise ValueError(
                f"ciphertext of {len(ciphertext_with_tag)} bytes is shorter than "
                f"the {self.authsize}-byte tag"
            )
        out = self._aead(
            DECRYPT,
            bytes(aad) + bytes(ciphertext_with_tag),
            iv,
            len(aad),
            len(aad) + len(ciphertext_with_tag) - self.authsize,
        )
        return out[len(aad) :]

    def _aead(self, op: str, message: bytes, iv: bytes, assoclen: int, out_length: int) -> bytes:
        # The kernel takes AAD || text and gives back AAD || result.
        control = _Control(_opcode(op), bytes(iv), assoclen)

        def work(op_sock: socket.socket, deadline: float) -> bytes:
            _fit_buffers(op_sock, max(len(message), out_length))
            _submit(op_sock, deadline, [memoryview(message)], control)
            # At least one byte: a read into an empty buffer does not run the request at
            # all, so a forged tag-only message (no AAD, no text) would "decrypt" to b"".
            out = bytearray(max(out_length, 1))
            # One read: on a short read the kernel would split the request and authenticate
            # the pieces separately, so the output must arrive whole.
            count = _recv_once(op_sock, deadline, memoryview(out), may_be_empty=out_length == 0)
            del out[out_length:]
            if count != out_length:
                raise OSError(errno.EMSGSIZE, f"short AEAD read {count}/{out_length}")
            return bytes(out)

        return self._run_op(op, work, len(message), len(iv))


class HashSession(AfAlgSession):
    """A hash (``sha256``) or keyed hash (``hmac(sha256)``, key set at open)."""

    alg_type = HASH

    def __init__(self, alg: str, *, timeout: float, proc_crypto_path: Path) -> None:
        super().__init__(alg, timeout=timeout, proc_crypto_path=proc_crypto_path)
        self._digest_size: int | None = None

    @property
    def digest_size(self) -> int:
        """From /proc/crypto when listed, else measured once by digesting nothing."""
        if self._digest_size is None:
            listed = self.registration.digestsize if self.registration else None
            self._digest_size = listed if listed else len(self.digest(b""))
        return self._digest_size

    def digest(self, data: bytes, *, chunks: Sequence[int] | None = None) -> bytes:
        """The digest of ``data``; ``chunks`` sends it in pieces with MSG_MORE first."""
        pieces = _split(data, chunks)

        def work(op_sock: socket.socket, deadline: float) -> bytes:
            _submit(op_sock, deadline, pieces, None)
            # One read of the largest digest the kernel has gets the whole digest (a smaller
            # buffer would silently truncate it).
            out = bytearray(_HASH_MAX_DIGESTSIZE)
            count = _recv_once(op_sock, deadline, memoryview(out))
            return bytes(out[:count])

        result = self._run_op("digest", work, len(data))
        self._digest_size = self._digest_size or len(result)
        return result

    def digest_loop(self, block: bytes, count: int) -> None:
        """Digest ``block`` ``count`` times for throughput timing: one send, one read each.

        A send without MSG_MORE computes the whole digest and the next send starts a new
        one, so one op socket serves every round.
        """
        op_sock = self._loop_socket(len(block))
        send, recv_into = op_sock.send, op_sock.recv_into
        out = memoryview(bytearray(_HASH_MAX_DIGESTSIZE))

        def work(progress: list[int]) -> None:
            for done in range(count):
                send(block)
                recv_into(out)
                progress[0] = done + 1

        self._run_loop("digest", work, len(block))


class RngSession(AfAlgSession):
    """A random number generator (``stdrng``, ``jitterentropy_rng``, ...), seeded at open."""

    alg_type = RNG
    # algif_rng hands out at most 128 bytes per read (its MAXSIZE); reads loop past it.
    _READ_SIZE = 128

    def generate(self, n: int) -> bytes:
        """``n`` bytes from the generator."""
        if n < 0:
            raise ValueError(f"cannot generate {n} bytes")

        def work(op_sock: socket.socket, deadline: float) -> bytes:
            out = memoryview(bytearray(n))
            got = 0
            while got < n:
                got += _recv_once(op_sock, deadline, out[got : got + self._READ_SIZE])
            return bytes(out)

        return self._run_op("generate", work, n)


# --- opening ----------------------------------------------------------------------------------


def open_skcipher(
    alg: str, key: bytes, *, timeout: float = DEFAULT_TIMEOUT, proc_crypto_path: Path = PROC_CRYPTO
) -> SkcipherSession:
    """Bind a symmetric cipher by name or exact driver name and set its key."""
    session = SkcipherSession(alg, timeout=timeout, proc_crypto_path=proc_crypto_path)
    session._open(bytes(key))
    return session


def open_aead(
    alg: str,
    key: bytes,
    *,
    authsize: int,
    timeout: float = DEFAULT_TIMEOUT,
    proc_crypto_path: Path = PROC_CRYPTO,
) -> AeadSession:
    """Bind an AEAD, set its key and tag length (``authsize`` bytes)."""
    session = AeadSession(
        alg, authsize=authsize, timeout=timeout, proc_crypto_path=proc_crypto_path
    )
    session._open(bytes(key))
    try:
        session._set_authsize()
    except BaseException:
        session.close()
        raise
    return session


def open_hash(
    alg: str,
    key: bytes | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    proc_crypto_path: Path = PROC_CRYPTO,
) -> HashSession:
    """Bind a hash; give ``key`` for keyed hashes such as ``hmac(sha256)``."""
    session = HashSession(alg, timeout=timeout, proc_crypto_path=proc_crypto_path)
    session._open(None if key is None else bytes(key))
    return session


def open_rng(
    alg: str,
    seed: bytes | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    proc_crypto_path: Path = PROC_CRYPTO,
) -> RngSession:
    """Bind an rng and seed it; without ``seed`` the kernel seeds it from its own entropy."""
    session = RngSession(alg, timeout=timeout, proc_crypto_path=proc_crypto_path)
    # An empty seed is a reset from kernel entropy: DRBGs refuse to generate before one.
    session._open(b"" if seed is None else bytes(seed))
    return session
