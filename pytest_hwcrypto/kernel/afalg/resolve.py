# SPDX-License-Identifier: MIT
"""Which driver a bind got: /proc/crypto read around the bind, and the kernel's lookup rule.

Binding by algorithm name (``cbc(aes)``) lets the kernel pick the driver, and AF_ALG does
not say which one it picked. The evidence is in /proc/crypto: the kernel takes a reference
on the driver it hands out, so the candidate whose ``refcnt`` rose across the bind is the
one. Without that evidence the kernel's own lookup rule is applied to the listing.

The helpers that look names up in a listing live here too, because the error explainers
(errors.py) ask the same questions of /proc/crypto when a bind fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pytest_hwcrypto.kernel.inventory import can_win, type_family
from pytest_hwcrypto.kernel.procfs import CryptoAlg, read_proc_crypto

# /proc/crypto types whose API has no asynchronous completion.
SYNCHRONOUS_TYPES = frozenset({"shash", "lskcipher", "rng", "cipher"})


def registrations(path: Path) -> list[CryptoAlg]:
    """/proc/crypto, or nothing when it cannot be read (errors then explain less)."""
    try:
        return read_proc_crypto(path)
    except (OSError, ValueError):
        return []


def matches(registered: Sequence[CryptoAlg], alg: str) -> list[CryptoAlg]:
    """The entries whose algorithm name or driver name is ``alg``."""
    return [entry for entry in registered if alg in (entry.name, entry.driver)]


def of_type(entries: Sequence[CryptoAlg], alg_type: str) -> list[CryptoAlg]:
    """The entries an AF_ALG socket of ``alg_type`` can bind."""
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
    candidates = of_type(matches(after, alg), alg_type)
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
