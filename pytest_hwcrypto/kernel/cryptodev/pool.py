# SPDX-License-Identifier: MIT
"""Sessions for many checks of one subject (an algorithm by name, or one exact driver).

A correctness check needs a session per key, and a session of a chosen driver can only be
opened while that driver wins its name; one preference costs ~0.2 s on the QEMU board
(two /proc/crypto reads, two netlink calls), an open ~15 ms. So the pool opens every key
a run of checks on one driver will use in one preference window, and hands the sessions
out as the checks come. Sessions keep their driver once priorities are back, so checks by
name that run afterwards get the kernel's own winner.

One subject at a time: asking for another closes the sessions of the previous one. And at
most MAX_OPEN sessions at once: an offload engine may hold a device session per tfm (QEMU's
builtin virtio-crypto backend has a fixed table of them), so a long run of vectors is
opened in windows of that size.

`discover_subjects` says what the cryptodev suite checks: every algorithm cryptodev offers
by name that the kernel can serve, and every driver of the algorithms with a choice.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from pytest_hwcrypto.kernel.cryptodev.abi import ALGORITHMS
from pytest_hwcrypto.kernel.cryptodev.device import CryptodevError
from pytest_hwcrypto.kernel.cryptodev.sessions import Session

MAX_OPEN = 64

ByName = Callable[[str, bytes], Session]
OnDriver = Callable[[str, str, Sequence[bytes]], "list[Session | CryptodevError]"]


@dataclass(frozen=True)
class Subject:
    """What a check runs on: `algorithm` by name (driver None: the winner) or one driver."""

    algorithm: str
    driver: str | None = None
    key_bytes: int = 0  # the key size random inputs use (0: an unkeyed hash)

    @property
    def id(self) -> str:
        return self.algorithm if self.driver is None else f"{self.algorithm}@{self.driver}"

    def describe(self) -> str:
        if self.driver is None:
            return f"{self.algorithm} by name"
        return f"{self.algorithm} on {self.driver} (re-ranked to win while opened)"


class SessionPool:
    """Sessions by (subject, key), opened through `by_name` or `on_driver` (see the module)."""

    def __init__(self, by_name: ByName, on_driver: OnDriver, max_open: int = MAX_OPEN) -> None:
        self._by_name = by_name
        self._on_driver = on_driver
        self.max_open = max(1, max_open)
        self._subject: Subject | None = None
        self._sessions: dict[bytes, Session | CryptodevError] = {}

    def get(self, subject: Subject, key: bytes, batch: Iterable[bytes] = ()) -> Session:
        """The session of `subject` with `key`; `batch`: the other keys to open meanwhile.

        Raises the CryptodevError opening it gave (a mismatched driver included).
        """
        if subject != self._subject:
            self.close()
            self._subject = subject
        if key not in self._sessions:
            missing = [key] if subject.driver is None else self._ahead(key, batch)
            if len(self._sessions) + len(missing) > self.max_open:
                self._close_sessions()
            self._sessions.update(zip(missing, self._open(subject, missing)))
        found = self._sessions[key]
        if isinstance(found, CryptodevError):
            raise found
        return found

    def _ahead(self, key: bytes, batch: Iterable[bytes]) -> list[bytes]:
        """`key` and the batch's keys after it not open yet: checks come in batch order."""
        keys = list(batch)
        ahead = keys[keys.index(key) :] if key in keys else [key, *keys]
        return [k for k in dict.fromkeys(ahead) if k not in self._sessions][: self.max_open]

    def _open(self, subject: Subject, keys: list[bytes]) -> list[Session | CryptodevError]:
        if subject.driver is not None:
            return self._on_driver(subject.algorithm, subject.driver, keys)
        opened: list[Session | CryptodevError] = []
        for key in keys:
            try:
                opened.append(self._by_name(subject.algorithm, key))
            except CryptodevError as error:
                opened.append(error)
        return opened

    def close(self) -> None:
        self._close_sessions()
        self._subject = None

    def _close_sessions(self) -> None:
        for session in self._sessions.values():
            if isinstance(session, Session):
                session.close()
        self._sessions.clear()


class KeySizes(Protocol):
    """What discover_subjects needs of an algorithm's spec (kernel/differential.py's)."""

    @property
    def key_sizes(self) -> tuple[int, ...]: ...


class DriverTarget(Protocol):
    """What discover_subjects needs of a measurement target (measure/targets.py's)."""

    @property
    def algorithm(self) -> str: ...

    @property
    def driver(self) -> str: ...

    @property
    def key_bytes(self) -> int | None: ...


def discover_subjects(
    registered: Collection[str], specs: Mapping[str, KeySizes], targets: Iterable[DriverTarget]
) -> list[Subject]:
    """Algorithms by name (those with `specs`, servable here), then one subject per target.

    `registered`: the names in /proc/crypto; a name counts as servable when it or the
    algorithm inside its template is registered (cbc(aes) over aes), since cryptodev's
    allocation builds the instance. By-name subjects use the spec's first key size.
    """
    by_name = [
        Subject(name, None, specs[name].key_sizes[0] if specs[name].key_sizes else 0)
        for name in ALGORITHMS
        if name in specs and _servable(name, registered)
    ]
    per_driver = [Subject(t.algorithm, t.driver, t.key_bytes or 0) for t in targets]
    return by_name + per_driver


def _servable(name: str, registered: Collection[str]) -> bool:
    inner = name[name.find("(") + 1 : -1] if name.endswith(")") else name
    return name in registered or inner in registered
