# SPDX-License-Identifier: MIT
"""Kernel calls under a deadline: a hung driver must become an error, not a hung test run.

Two kernel facts (seen on the UML board, kernel 6.1) make this necessary:

* ``SO_RCVTIMEO``/``SO_SNDTIMEO`` do nothing on AF_ALG sockets (af_alg waits with
  ``MAX_SCHEDULE_TIMEOUT``), so a wait in the socket layer is done here instead, by polling a
  non-blocking op socket with a deadline (:func:`wait_for`). That is cheaper than
  ``settimeout``, which polls before every syscall and tripled the cost of a 16-byte request
  on UML.
* A ``recvmsg`` on an async (offload) driver sleeps in ``crypto_wait_req``, which no signal or
  timeout interrupts. Such calls run in a daemon worker thread watched from the caller's
  thread (:func:`call_with_deadline`): when the worker stalls the caller stops waiting and the
  stuck thread is abandoned.

Both raise :class:`Hung`; the session layer turns it into ``OperationTimeout``. This module
knows nothing of AF_ALG beyond sockets, so every other module of the package may use it.
"""

from __future__ import annotations

import select
import socket
import threading
import time
from dataclasses import dataclass
from typing import Callable, Generic, TypeVar

_T = TypeVar("_T")


class Hung(Exception):
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


def call_with_deadline(
    work: Callable[[], _T], timeout: float, progress: Callable[[], int] | None = None
) -> _T:
    """Run ``work`` in a daemon thread; raise :class:`Hung` when it stalls for ``timeout`` s.

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
            raise Hung(stuck=True)
        seen = now
    if outcome.error is not None:
        raise outcome.error
    return outcome.value  # type: ignore[return-value]  # set whenever error is None


def wait_for(sock: socket.socket, events: int, deadline: float) -> None:
    """Poll a non-blocking op socket until ready; raise :class:`Hung` past the deadline."""
    remaining = deadline - monotonic()
    if remaining <= 0:
        raise Hung()
    poller = select.poll()
    poller.register(sock, events)
    if not poller.poll(remaining * 1000):
        raise Hung()


def monotonic() -> float:
    """The clock deadlines are measured on (``deadline = monotonic() + timeout``)."""
    return time.monotonic()
