# SPDX-License-Identifier: MIT
"""The four AF_ALG session types and the functions that open them.

One class per AF_ALG socket type, each with only the operations its type has: a skcipher
encrypts and decrypts (and runs throughput loops), an aead also takes AAD and a tag length,
a hash digests, an rng generates. Each knows how its type's requests are laid out on the
wire and what the kernel does that the caller must not notice:

* an AEAD request's output must arrive in one read (on a short read the kernel would split
  the request and authenticate the pieces separately);
* a hash read is sized for the largest digest, since a smaller buffer silently truncates;
* DRBGs (``stdrng``) refuse to generate until reset: an empty seed makes the kernel seed
  them from its own entropy, while ``ansi_cprng`` needs a real seed of ``seedsize`` bytes.

Opening, driver identification and the timeout guard are shared, in base.py.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Callable

from pytest_hwcrypto.kernel.afalg.base import AfAlgSession
from pytest_hwcrypto.kernel.afalg.deadline import monotonic
from pytest_hwcrypto.kernel.afalg.errors import AfAlgError, BadAuthSize
from pytest_hwcrypto.kernel.afalg.probe import DEFAULT_PROBE, Probe
from pytest_hwcrypto.kernel.afalg.wire import (
    Control,
    fit_buffers,
    opcode,
    recv_exact,
    recv_once,
    send,
    split,
    submit,
)
from pytest_hwcrypto.units import errno_name
from pytest_hwcrypto.vocabulary import DEFAULT_TIMEOUT_SECONDS, PROC_CRYPTO, AlgType, Op

# include/crypto/hash.h HASH_MAX_DIGESTSIZE: a read this large always gets the whole digest.
_HASH_MAX_DIGESTSIZE = 64


class SkcipherSession(AfAlgSession):
    """A symmetric cipher (``cbc(aes)``, ``xts(aes)``, ...) with its key set."""

    alg_type = AlgType.SKCIPHER

    def encrypt(
        self,
        data: bytes,
        iv: bytes | None = None,
        *,
        chunks: Sequence[int] | None = None,
        out_offset: int = 0,
    ) -> bytes:
        """Encrypt ``data`` in one request; ``chunks`` sends it in pieces with MSG_MORE;
        ``out_offset`` receives into a buffer that many bytes past an allocation, so the
        driver's destination scatterlist starts (and, across pages, splits) there."""
        return self._crypt(Op.ENCRYPT, data, iv, chunks, out_offset)

    def decrypt(
        self,
        data: bytes,
        iv: bytes | None = None,
        *,
        chunks: Sequence[int] | None = None,
        out_offset: int = 0,
    ) -> bytes:
        """Decrypt ``data`` in one request; ``chunks``, ``out_offset`` as for :meth:`encrypt`."""
        return self._crypt(Op.DECRYPT, data, iv, chunks, out_offset)

    def _crypt(
        self,
        op: str,
        data: bytes,
        iv: bytes | None,
        chunks: Sequence[int] | None,
        out_offset: int = 0,
    ) -> bytes:
        pieces = split(data, chunks)
        total = sum(len(piece) for piece in pieces)
        control = Control(opcode(op), None if iv is None else bytes(iv))

        def work(op_sock: socket.socket, deadline: float) -> bytes:
            fit_buffers(op_sock, total)
            submit(op_sock, deadline, pieces, control)
            out = bytearray(out_offset + total)
            if total:  # an empty request has nothing to read back
                recv_exact(op_sock, deadline, memoryview(out)[out_offset:])
            return bytes(out[out_offset:])

        return self._run_op(op, work, total, None if iv is None else len(iv))

    def encrypt_in_two_requests(self, data: bytes, iv: bytes, first: int) -> bytes:
        """Encrypt ``data`` as two requests of one stream: the first ``first`` bytes (a
        whole number of blocks), then the rest. The second request starts from the IV the
        driver handed back after the first (AF_ALG keeps it per operation socket, as a
        stream cipher user does), so a driver that does not return its chained IV gets
        the second part wrong."""
        head, rest = memoryview(data)[:first], memoryview(data)[first:]
        control = Control(opcode(Op.ENCRYPT), bytes(iv))

        def work(op_sock: socket.socket, deadline: float) -> bytes:
            fit_buffers(op_sock, len(data))
            out = bytearray(len(data))
            view = memoryview(out)
            # MSG_MORE: the kernel runs a request for what it has (whole blocks) when
            # asked to read it, and waits for the rest.
            send(op_sock, deadline, head, control, socket.MSG_MORE)
            recv_exact(op_sock, deadline, view[:first])
            submit(op_sock, deadline, [rest], None)
            recv_exact(op_sock, deadline, view[first:])
            return bytes(out)

        return self._run_op(Op.ENCRYPT, work, len(data), len(iv))

    def crypt_loop(self, block: bytes, iv: bytes | None, op: str, count: int) -> bytes:
        """Run ``count`` independent ``op`` requests on ``block``, for throughput timing.

        Per request: one ``sendmsg`` carrying op and IV (every request starts from ``iv``,
        like a dm-crypt sector) and one ``recv_into`` a reused buffer, on an op socket
        reused across calls. Returns the last request's output, unchecked, so that a test
        can prove the loop's prebuilt control messages ask for what :meth:`encrypt` does.
        """
        size, timeout = len(block), self.timeout
        op_sock = self._loop_socket(size)
        control = Control(opcode(op), None if iv is None else bytes(iv))
        # Everything but the two syscalls is bound once, outside the loop.
        send = partial(op_sock.sendmsg, [block], control.ancillary())
        recv_into = op_sock.recv_into
        out = memoryview(bytearray(size))

        def work(progress: list[int]) -> None:
            for done in range(count):
                send()
                got = recv_into(out)
                if got != size:  # rare: output larger than the receive buffer
                    recv_exact(op_sock, monotonic() + timeout, out[got:])
                progress[0] = done + 1

        self._run_loop(op, work, size, None if iv is None else len(iv))
        return bytes(out)

    def lane(
        self, block: bytes, iv: bytes | None, op: str, expected: bytes | None = None
    ) -> Callable[[int, list[int]], None]:
        """A timing loop on an op socket of its own, accepted from this session's transform,
        for one of several threads measuring the transform at once (measure/parallel.py).

        The loop is :meth:`crypt_loop`'s, without its guard: the caller runs several in
        threads and watches them together. ``run(count, progress)`` makes ``count``
        requests; a kernel error becomes this session's explained :class:`AfAlgError`.
        With ``expected`` (this lane's output for ``block``, one request alone) every
        request's output is compared with it -- a memcmp, cheap beside the syscalls --
        and one that differs (an engine that mixed up requests in flight) is an error.
        """
        size = len(block)
        op_sock = self._lane_socket(size)
        control = Control(opcode(op), None if iv is None else bytes(iv))
        send = partial(op_sock.sendmsg, [block], control.ancillary())
        recv_into = op_sock.recv_into
        buffer = bytearray(size)
        out = memoryview(buffer)
        timeout, iv_length = self.timeout, None if iv is None else len(iv)

        def run(count: int, progress: list[int]) -> None:
            try:
                for done in range(count):
                    send()
                    got = recv_into(out)
                    if got != size:
                        recv_exact(op_sock, monotonic() + timeout, out[got:])
                    if expected is not None and buffer != expected:
                        raise self._mixed_up(op, size, bytes(buffer), expected)
                    progress[0] = done + 1
            except OSError as exc:
                raise self._op_error(op, exc, size, iv_length) from None

        return run

    def _mixed_up(self, op: str, size: int, got: bytes, expected: bytes) -> AfAlgError:
        at = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
        return AfAlgError(
            f"{self.driver or self.alg}: with requests in flight, a {size}-byte {op} returned "
            f"output that is not its own input's (differs from byte {at}; alone, one request "
            "at a time, the same input gave the expected output): the driver mixed up "
            "requests in flight",
            alg=self.alg,
            driver=self.driver,
            alg_type=self.alg_type,
        )


class AeadSession(AfAlgSession):
    """An AEAD (``gcm(aes)``, ...) with key and tag length set."""

    alg_type = AlgType.AEAD

    def __init__(
        self,
        alg: str,
        *,
        authsize: int,
        timeout: float,
        proc_crypto_path: Path,
        probe: Probe = DEFAULT_PROBE,
    ) -> None:
        super().__init__(alg, timeout=timeout, proc_crypto_path=proc_crypto_path, probe=probe)
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
                f"{errno_name(exc.errno)}{limit}",
                alg=self.alg,
                driver=self.driver,
                alg_type=self.alg_type,
            ) from None

    def encrypt(
        self, plaintext: bytes, iv: bytes, aad: bytes = b"", *, out_offset: int = 0
    ) -> bytes:
        """Ciphertext followed by the tag; ``out_offset`` as for SkcipherSession.encrypt."""
        out = self._aead(
            Op.ENCRYPT,
            bytes(aad) + bytes(plaintext),
            iv,
            len(aad),
            len(aad) + len(plaintext) + self.authsize,
            out_offset,
        )
        return out[len(aad) :]

    def decrypt(
        self, ciphertext_with_tag: bytes, iv: bytes, aad: bytes = b"", *, out_offset: int = 0
    ) -> bytes:
        """The plaintext; :class:`AuthenticationFailed` when the tag does not match."""
        if len(ciphertext_with_tag) < self.authsize:
            raise ValueError(
                f"ciphertext of {len(ciphertext_with_tag)} bytes is shorter than "
                f"the {self.authsize}-byte tag"
            )
        out = self._aead(
            Op.DECRYPT,
            bytes(aad) + bytes(ciphertext_with_tag),
            iv,
            len(aad),
            len(aad) + len(ciphertext_with_tag) - self.authsize,
            out_offset,
        )
        return out[len(aad) :]

    def _aead(
        self,
        op: str,
        message: bytes,
        iv: bytes,
        assoclen: int,
        out_length: int,
        out_offset: int = 0,
    ) -> bytes:
        # The kernel takes AAD || text and gives back AAD || result.
        control = Control(opcode(op), bytes(iv), assoclen)

        def work(op_sock: socket.socket, deadline: float) -> bytes:
            fit_buffers(op_sock, max(len(message), out_length))
            submit(op_sock, deadline, [memoryview(message)], control)
            # At least one byte: a read into an empty buffer does not run the request at
            # all, so a forged tag-only message (no AAD, no text) would "decrypt" to b"".
            out = bytearray(out_offset + max(out_length, 1))
            # One read: on a short read the kernel would split the request and authenticate
            # the pieces separately, so the output must arrive whole.
            into = memoryview(out)[out_offset:]
            count = recv_once(op_sock, deadline, into, may_be_empty=out_length == 0)
            if count != out_length:
                raise OSError(errno.EMSGSIZE, f"short AEAD read {count}/{out_length}")
            return bytes(out[out_offset : out_offset + out_length])

        return self._run_op(op, work, len(message), len(iv))


class HashSession(AfAlgSession):
    """A hash (``sha256``) or keyed hash (``hmac(sha256)``, key set at open)."""

    alg_type = AlgType.HASH

    def __init__(
        self, alg: str, *, timeout: float, proc_crypto_path: Path, probe: Probe = DEFAULT_PROBE
    ) -> None:
        super().__init__(alg, timeout=timeout, proc_crypto_path=proc_crypto_path, probe=probe)
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
        pieces = split(data, chunks)

        def work(op_sock: socket.socket, deadline: float) -> bytes:
            submit(op_sock, deadline, pieces, None)
            # One read of the largest digest the kernel has gets the whole digest (a smaller
            # buffer would silently truncate it).
            out = bytearray(_HASH_MAX_DIGESTSIZE)
            count = recv_once(op_sock, deadline, memoryview(out))
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

    def lane(self, block: bytes, expected: bytes | None = None) -> Callable[[int, list[int]], None]:
        """:meth:`digest_loop` on an op socket of its own, unguarded, for one of several
        threads measuring the transform at once (see :meth:`SkcipherSession.lane`, also
        for ``expected``: this lane's digest of ``block``, checked on every request)."""
        op_sock = self._lane_socket(len(block))
        send, recv_into = op_sock.send, op_sock.recv_into
        buffer = bytearray(_HASH_MAX_DIGESTSIZE)
        out = memoryview(buffer)
        size = len(expected) if expected is not None else 0

        def run(count: int, progress: list[int]) -> None:
            try:
                for done in range(count):
                    send(block)
                    recv_into(out)
                    if expected is not None and out[:size] != expected:
                        raise AfAlgError(
                            f"{self.driver or self.alg}: with requests in flight, a digest of "
                            f"{len(block)} bytes is not its own input's (alone, one request at "
                            "a time, the same input gave the expected digest): the driver "
                            "mixed up requests in flight",
                            alg=self.alg,
                            driver=self.driver,
                            alg_type=self.alg_type,
                        )
                    progress[0] = done + 1
            except OSError as exc:
                raise self._op_error("digest", exc, len(block)) from None

        return run


class RngSession(AfAlgSession):
    """A random number generator (``stdrng``, ``jitterentropy_rng``, ...), seeded at open."""

    alg_type = AlgType.RNG
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
                got += recv_once(op_sock, deadline, out[got : got + self._READ_SIZE])
            return bytes(out)

        return self._run_op("generate", work, n)


# --- opening ----------------------------------------------------------------------------------


def open_skcipher(
    alg: str,
    key: bytes,
    *,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    proc_crypto_path: Path = PROC_CRYPTO,
    probe: Probe = DEFAULT_PROBE,
) -> SkcipherSession:
    """Bind a symmetric cipher by name or exact driver name and set its key."""
    session = SkcipherSession(alg, timeout=timeout, proc_crypto_path=proc_crypto_path, probe=probe)
    session._open(bytes(key))
    return session


def open_aead(
    alg: str,
    key: bytes,
    *,
    authsize: int,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    proc_crypto_path: Path = PROC_CRYPTO,
    probe: Probe = DEFAULT_PROBE,
) -> AeadSession:
    """Bind an AEAD, set its key and tag length (``authsize`` bytes)."""
    session = AeadSession(
        alg, authsize=authsize, timeout=timeout, proc_crypto_path=proc_crypto_path, probe=probe
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
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    proc_crypto_path: Path = PROC_CRYPTO,
    probe: Probe = DEFAULT_PROBE,
) -> HashSession:
    """Bind a hash; give ``key`` for keyed hashes such as ``hmac(sha256)``."""
    session = HashSession(alg, timeout=timeout, proc_crypto_path=proc_crypto_path, probe=probe)
    session._open(None if key is None else bytes(key))
    return session


def open_rng(
    alg: str,
    seed: bytes | None = None,
    *,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    proc_crypto_path: Path = PROC_CRYPTO,
    probe: Probe = DEFAULT_PROBE,
) -> RngSession:
    """Bind an rng and seed it; without ``seed`` the kernel seeds it from its own entropy."""
    session = RngSession(alg, timeout=timeout, proc_crypto_path=proc_crypto_path, probe=probe)
    # An empty seed is a reset from kernel entropy: DRBGs refuse to generate before one.
    session._open(b"" if seed is None else bytes(seed))
    return session
