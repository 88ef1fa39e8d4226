# SPDX-License-Identifier: MIT
"""What every AF_ALG session does, whatever its type: bind, identify the driver, guard calls.

A session binds one algorithm of one AF_ALG type either by algorithm name (``cbc(aes)``: the
kernel picks the driver) or by exact driver name (``cbc(aes-generic)``: that driver and no
other). The bound socket holds the kernel transform and the key; every operation runs on a
non-blocking *op socket* from ``accept()``, so no state leaks between operations.

Calls into a driver that may sleep where no timeout or signal reaches (async drivers, or one
not identified) run in a watched worker thread (deadline.py); synchronous drivers compute
inside the syscall and run in the caller's thread, because a thread per call costs ~3 ms on
UML. A call that times out in a stuck thread leaves the session unusable: the abandoned
thread may still own the transform.

A template name that does not round-trip (``gcm(aes-generic)``: the instance is called
``gcm_base(ctr(aes-generic),ghash-generic)``) is instantiated and then not found: bind by the
exact driver string /proc/crypto shows. The per-type sessions are in sessions.py.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Callable, TypeVar

# The module, not the function: wire.new_alg_socket is the seam tests replace with a fake.
from pytest_hwcrypto.kernel.afalg import wire
from pytest_hwcrypto.kernel.afalg.deadline import Hung, call_with_deadline, monotonic
from pytest_hwcrypto.kernel.afalg.errors import (
    AfAlgError,
    OperationFailed,
    OperationTimeout,
    alg_and_driver,
    check_type,
    explain_bind_error,
    explain_key_error,
    explain_op_error,
    read_policy,
)
from pytest_hwcrypto.kernel.afalg.probe import DEFAULT_PROBE, Probe, afalg_available
from pytest_hwcrypto.kernel.afalg.resolve import (
    SYNCHRONOUS_TYPES,
    of_type,
    registrations,
    resolve_driver,
)
from pytest_hwcrypto.kernel.afalg.wire import fit_buffers
from pytest_hwcrypto.kernel.procfs import CryptoAlg

_T = TypeVar("_T")
_S = TypeVar("_S", bound="AfAlgSession")


class AfAlgSession:
    """A bound AF_ALG transform: opening, driver discovery, guarded calls, closing."""

    alg_type: str = ""

    def __init__(
        self, alg: str, *, timeout: float, proc_crypto_path: Path, probe: Probe = DEFAULT_PROBE
    ) -> None:
        self.alg = alg
        self.timeout = timeout
        self.proc_crypto_path = proc_crypto_path
        # Asked why when a bind fails with ENOENT: is it the algorithm or AF_ALG itself?
        self.probe = probe
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
        check_type(self.alg_type)
        before = registrations(self.proc_crypto_path)
        try:
            self._tfm = wire.new_alg_socket()
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
            raise self._bind_error(exc.errno, registrations(self.proc_crypto_path)) from None

    def _bind_error(self, err: int | None, registered: Sequence[CryptoAlg]) -> AfAlgError:
        availability = (True, "")
        if err in (errno.ENOENT, errno.EAFNOSUPPORT):
            availability = afalg_available(
                self.alg_type,
                proc_crypto_path=self.proc_crypto_path,
                timeout=self.timeout,
                probe=self.probe,
            )
        return explain_bind_error(
            self.alg, self.alg_type, err, registered, availability, read_policy()
        )

    def _identify_driver(self, before: Sequence[CryptoAlg]) -> None:
        after = registrations(self.proc_crypto_path)
        self.driver, self.driver_evidence = resolve_driver(self.alg, self.alg_type, before, after)
        self.registration = next(
            (entry for entry in of_type(after, self.alg_type) if entry.driver == self.driver),
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
            return call_with_deadline(work, self.timeout, progress) if isolate else work()
        except Hung as hung:
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
        if entry.type in SYNCHRONOUS_TYPES:
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
                return self._guard(op, lambda: work(op_sock, monotonic() + self.timeout))
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
        fit_buffers(self._loop_sock, block_size)
        return self._loop_sock

    def _lane_socket(self, block_size: int) -> socket.socket:
        """A further op socket for a concurrent timing lane (closed with the session)."""
        op_sock = self._accept()
        fit_buffers(op_sock, block_size)
        return op_sock

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
        return alg_and_driver(self.alg, self.driver)
