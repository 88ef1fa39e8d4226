# SPDX-License-Identifier: MIT
"""Make one driver the winner of its algorithm name for a while, and put priorities back.

cryptodev, OpenSSL's afalg engine, `cryptsetup benchmark` and dm-crypt without `capi:`
ask the kernel for a name (`cbc(aes)`) and get its highest-priority driver, so they only
ever measure the winner. `prefer(driver)` raises `driver` just above every other driver
of its name through crypto_user netlink, proves it by reading /proc/crypto again, and on
leaving the block restores the priority it changed -- after a failing test too. The
change is written to the run's ledger before it is made, so a run killed in between leaves
the kernel re-ranked only until the next run's start or `hwcrypto sweep` (ledger.py).

A template instance such as `cbc(aes-generic)` exists only once something bound it
(crypto_user answers ENOENT before), so the caller passes `instantiate`, which binds the
name once (AF_ALG does that; fixtures.py wires it).
"""

from __future__ import annotations

import errno
import fcntl
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_hwcrypto.kernel.crypto_user import CryptoUser, CryptoUserError
from pytest_hwcrypto.kernel.inventory import can_win, type_family
from pytest_hwcrypto.kernel.procfs import CryptoAlg, read_proc_crypto
from pytest_hwcrypto.ledger import Entry, Ledger, state_dir
from pytest_hwcrypto.vocabulary import PROC_CRYPTO

LEDGER_KIND = "priority"


class RerankError(RuntimeError):
    """A driver could not be made the winner (or put back); the message says why."""


@dataclass(frozen=True)
class Preference:
    """`driver` wins `name` now; `original` is the priority it had before, `rivals` the rest."""

    driver: str
    name: str
    original: int
    priority: int
    rivals: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return self.priority != self.original


def _registered(entries: Sequence[CryptoAlg], driver: str) -> CryptoAlg | None:
    return next((e for e in entries if e.driver == driver and not e.is_internal), None)


def priorities(proc_crypto: Path = PROC_CRYPTO) -> dict[str, int | None]:
    """Driver -> priority now: what a suite compares before and after it re-ranked."""
    return {alg.driver: alg.priority for alg in read_proc_crypto(proc_crypto)}


def changed_priorities(
    before: Mapping[str, int | None], now: Mapping[str, int | None]
) -> dict[str, tuple[int | None, int | None]]:
    """(before, now) of every driver still registered whose priority is not what it was."""
    return {d: (p, now[d]) for d, p in before.items() if d in now and now[d] != p}


def rivals_of(entries: Sequence[CryptoAlg], chosen: CryptoAlg) -> list[CryptoAlg]:
    """Drivers that compete with `chosen` for its name (same name and type family)."""
    family = type_family(chosen.type)
    return [
        entry
        for entry in entries
        if entry.name == chosen.name
        and entry.driver != chosen.driver
        and type_family(entry.type) == family
        and can_win(entry)
    ]


def winning_priority(chosen: CryptoAlg, rivals: Sequence[CryptoAlg]) -> int:
    """The lowest priority that makes `chosen` the strict winner (its own if it already is)."""
    own = chosen.priority or 0
    highest_rival = max((rival.priority or 0 for rival in rivals), default=-1)
    return own if own > highest_rival else highest_rival + 1


class Reranker:
    """Changes priorities through crypto_user and records each change in `ledger`."""

    def __init__(
        self,
        ledger: Ledger,
        instantiate: Callable[[str], object],
        proc_crypto: Path = PROC_CRYPTO,
    ) -> None:
        self.ledger = ledger
        self.instantiate = instantiate
        self.proc_crypto = proc_crypto

    def _read(self) -> list[CryptoAlg]:
        return read_proc_crypto(self.proc_crypto)

    @contextmanager
    def prefer(self, driver: str) -> Iterator[Preference]:
        entries = self._read()
        chosen = _registered(entries, driver)
        if chosen is None:
            self.instantiate(driver)
            entries = self._read()
            chosen = _registered(entries, driver)
        if chosen is None:
            raise RerankError(f"{driver} is not registered, and binding it created nothing")
        rivals = rivals_of(entries, chosen)
        preference = Preference(
            driver,
            chosen.name,
            chosen.priority or 0,
            winning_priority(chosen, rivals),
            tuple(rival.driver for rival in rivals),
        )
        if not preference.changed:
            yield preference
            return
        self.ledger.record(
            Entry(LEDGER_KIND, driver, {"driver": driver, "priority": preference.original})
        )
        try:
            with CryptoUser() as netlink:
                netlink.set_priority(driver, preference.priority)
            self._prove(preference)
            yield preference
        finally:
            restore_priority({"driver": driver, "priority": preference.original})
            self.ledger.strike(LEDGER_KIND, driver)

    def _prove(self, preference: Preference) -> None:
        """/proc/crypto must now show the new priority and no rival at or above it."""
        entries = self._read()
        chosen = _registered(entries, preference.driver)
        if chosen is None or chosen.priority != preference.priority:
            raise RerankError(
                f"{preference.driver}: crypto_user accepted priority {preference.priority}, "
                f"but /proc/crypto shows {chosen.priority if chosen else 'no such driver'}"
            )
        beaten = [r for r in rivals_of(entries, chosen) if (r.priority or 0) >= preference.priority]
        if beaten:
            raise RerankError(
                f"{preference.driver} at priority {preference.priority} does not win "
                f"{preference.name}: {', '.join(r.driver for r in beaten)} still as high"
            )


def restore_priority(undo: Mapping[str, Any]) -> str:
    """Put a recorded priority back; the ledger's undo for LEDGER_KIND (also in sweeps)."""
    driver, priority = str(undo["driver"]), int(undo["priority"])
    try:
        with CryptoUser() as netlink:
            netlink.set_priority(driver, priority)
    except CryptoUserError as error:
        if error.errno == errno.ENOENT:
            # The instance is gone (module removed, instance torn down): when it comes
            # back it has its default priority again, so there is nothing to restore.
            return f"{driver}: no longer registered, nothing to restore"
        raise
    return f"restored the priority of {driver} to {priority}"


LOCK_NAME = "rerank.lock"


@contextmanager
def reranking_lock(directory: Path | None = None, *, shared: bool = False) -> Iterator[None]:
    """Across processes (pytest-xdist workers): nobody re-ranks while this is held.

    A by-name user that must get the current winner takes it shared; a holder of a
    preference takes it exclusive for as long as it relies on the preference. Exclusive is
    not re-entrant within a process: take it once around a whole block. Where the state
    directory cannot be written (not root), this process cannot re-rank either, and the
    block runs unlocked.
    """
    folder = directory or state_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle = open(folder / LOCK_NAME, "a")  # noqa: SIM115 - held across the yield
    except OSError:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
