# SPDX-License-Identifier: MIT
"""Whether AF_ALG of a type works here: probe binds, one modprobe of algif_<type>, and a cache.

A failed bind alone cannot tell "this algorithm is missing" from "AF_ALG for this type is
missing", so availability is probed by binding names the generic C code registers on
practically every kernel: if none of them binds, the algif_<type> module is what is missing.
The kernel loads algif modules on demand only through modprobe, which a minimal board may
lack on its usermode-helper path, so the probe runs ``modprobe algif_<type>`` itself once
before answering "no".

What a probe learnt is kept in a :class:`Probe` object rather than in module globals: the
process uses :data:`DEFAULT_PROBE`, and whoever needs a fresh view (a unit test with a
recording ``modprobe``) makes its own and passes it in.
"""

from __future__ import annotations

import socket
from functools import partial
from pathlib import Path
from typing import Callable

# The module, not the function: wire.new_alg_socket is the seam tests replace with a fake.
from pytest_hwcrypto.kernel.afalg import wire
from pytest_hwcrypto.kernel.afalg.deadline import Hung, call_with_deadline
from pytest_hwcrypto.kernel.afalg.errors import (
    algif_module,
    check_type,
    unavailable_message,
)
from pytest_hwcrypto.kernel.afalg.resolve import matches, registrations
from pytest_hwcrypto.kernel.modprobe import load_module_quietly
from pytest_hwcrypto.units import errno_name
from pytest_hwcrypto.vocabulary import DEFAULT_TIMEOUT_SECONDS, PROC_CRYPTO, AlgType

# Names the generic C code registers on practically every kernel: if none of them binds,
# the algif_<type> module is missing, not the algorithm.
PROBE_NAMES: dict[str, tuple[str, ...]] = {
    AlgType.SKCIPHER: ("ecb(aes)", "cbc(aes)", "ctr(aes)", "ecb(cipher_null)"),
    AlgType.HASH: ("sha256", "sha1", "md5", "crc32c"),
    AlgType.AEAD: ("gcm(aes)", "ccm(aes)", "authenc(hmac(sha256),cbc(aes))"),
    AlgType.RNG: ("stdrng", "jitterentropy_rng", "ansi_cprng"),
}


class Probe:
    """Availability of AF_ALG per type as this process found it.

    A type that bound once stays available (``known_available``: later checks cost
    nothing); ``modprobe`` runs at most once per type (``modprobe_tried``), since loading
    a module that failed to load will not succeed on a second try.
    """

    def __init__(self, modprobe: Callable[[str], None] = load_module_quietly) -> None:
        self.modprobe = modprobe
        self.modprobe_tried: set[str] = set()
        self.known_available: set[str] = set()

    def available(
        self, alg_type: str, *, proc_crypto_path: Path, timeout: float
    ) -> tuple[bool, str]:
        """Whether AF_ALG sessions of ``alg_type`` can be opened here, and why not."""
        check_type(alg_type)
        if alg_type in self.known_available:
            return True, f"AF_ALG {alg_type} is available"
        available, detail = _probe(alg_type, timeout)
        if not available and alg_type not in self.modprobe_tried:
            self.modprobe_tried.add(alg_type)
            self.modprobe(algif_module(alg_type))
            available, detail = _probe(alg_type, timeout)
        if available:
            self.known_available.add(alg_type)
            return True, f"AF_ALG {alg_type} is available"
        return False, unavailable_message(
            alg_type, _with_registered_hint(alg_type, detail, proc_crypto_path)
        )


# What the process knows; sessions use it unless given another.
DEFAULT_PROBE = Probe()


def afalg_available(
    alg_type: str,
    *,
    proc_crypto_path: Path = PROC_CRYPTO,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    probe: Probe = DEFAULT_PROBE,
) -> tuple[bool, str]:
    """Whether AF_ALG sessions of ``alg_type`` can be opened here, and why not.

    Probes by binding names the generic C code always registers. Before answering "no" it
    runs ``modprobe algif_<type>`` once per ``probe`` (once per process by default): the
    kernel loads algif modules on demand only through modprobe, which a minimal board may
    lack on its usermode-helper path.
    """
    return probe.available(alg_type, proc_crypto_path=proc_crypto_path, timeout=timeout)


def _probe(alg_type: str, timeout: float) -> tuple[bool, str]:
    try:
        sock = wire.new_alg_socket()
    except OSError as exc:
        return False, f"socket(AF_ALG) failed with {errno_name(exc.errno)}"
    with sock:
        for name in PROBE_NAMES[alg_type]:
            if _binds(sock, alg_type, name, timeout):
                return True, ""
    return False, f"none of {', '.join(PROBE_NAMES[alg_type])} could be bound"


def _binds(sock: socket.socket, alg_type: str, name: str, timeout: float) -> bool:
    try:
        call_with_deadline(partial(sock.bind, (alg_type, name)), timeout)
    except (OSError, Hung):
        return False
    return True


def _with_registered_hint(alg_type: str, detail: str, proc_crypto_path: Path) -> str:
    """Say so when /proc/crypto lists a probe name: then it is algif_<type> that is missing."""
    registered = registrations(proc_crypto_path)
    listed = [name for name in PROBE_NAMES[alg_type] if matches(registered, name)]
    if not listed or "socket(AF_ALG)" in detail:
        return detail
    return f"{detail}, though /proc/crypto lists {listed[0]}"
