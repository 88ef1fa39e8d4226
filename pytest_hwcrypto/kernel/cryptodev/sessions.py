# SPDX-License-Identifier: MIT
"""cryptodev sessions: open one by algorithm name, run requests, prove which driver serves.

CIOCGSESSION allocates a tfm by *name*, so a session gets the name's highest-priority
driver and keeps it for life, even when priorities change afterwards. A session served by
a chosen driver is therefore one opened while that driver wins its name (`open_on_driver`,
with kernel/rerank.py's `prefer`); CIOCGSESSINFO, asked right after opening, is the proof.

A `Request` is one prepared ioctl (struct and buffers); the one-shot calls and the timing
loops of the measurement engine issue the same objects, so what is measured is what the
correctness checks looked at.
"""

from __future__ import annotations

import errno
import fcntl
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager

from pytest_hwcrypto.kernel.cryptodev import abi
from pytest_hwcrypto.kernel.cryptodev.abi import CryptodevAlgorithm, SessionInfo
from pytest_hwcrypto.kernel.cryptodev.device import Buffer, CryptodevError, CryptoDevice
from pytest_hwcrypto.vocabulary import AlgType, Op


class Session:
    """One cryptodev session, bound for life to the driver `info.driver` names."""

    def __init__(
        self, device: CryptoDevice, alg: CryptodevAlgorithm, ses: int, info: SessionInfo
    ) -> None:
        self.device = device
        self.algorithm = alg
        self.ses = ses
        self.info = info
        self.closed = False

    @property
    def driver(self) -> str:
        """The driver serving this session, as CIOCGSESSINFO reported it."""
        return self.info.driver

    def describe(self) -> str:
        return f"/dev/crypto {self.algorithm.name} session on {self.driver}"

    def ask_driver(self) -> str:
        """CIOCGSESSINFO again, now: the driver serving the session at this moment."""
        info = abi.SessionInfoOp(ses=self.ses)
        self.device.ioctl(abi.CIOCGSESSINFO, info, f"CIOCGSESSINFO of {self.describe()}")
        return abi.decode_session_info(info, self.algorithm).driver

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.device.finish_session(self.ses)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Request:
    """One prepared request, issued `count` times by `run`; `output()` reads its result."""

    def __init__(
        self,
        session: Session,
        ioctl_request: int,
        argument: abi.CryptOp | abi.CryptAuthOp,
        output: Buffer,
        output_length: int,
        what: str,
        keep: tuple[Buffer | None, ...],
    ) -> None:
        self.session = session
        self._request = ioctl_request
        self._argument = argument
        self._output = output
        self._output_length = output_length
        self._what = what
        self._keep = keep  # the buffers the struct points into live as long as it does
        self._length = int(argument.len)

    def run(self, count: int = 1, expected: bytes | None = None) -> None:
        """`count` requests back to back; the timeout holds while they keep completing.

        With `expected` (this request's output when it ran alone) every output is compared
        with it -- a read and a memcmp, cheap beside the ioctl -- and one that differs (a
        driver that gave this request another request's result) is a CryptodevError naming
        the driver: the check of each session's requests when several are in flight.
        """
        fd, request, argument = self.session.device.fd, self._request, self._argument
        length = self._length
        rewrite_length = isinstance(argument, abi.CryptAuthOp)
        done = [0]
        output, output_length = self._output, self._output_length
        differing: list[bytes] = []

        def work() -> None:
            ioctl = fcntl.ioctl
            for _ in range(count):
                if rewrite_length:
                    argument.len = length  # CIOCAUTHCRYPT writes the output length back
                ioctl(fd, request, argument)
                if expected is not None:
                    got = output.read(output_length)
                    if got != expected:
                        differing.append(got)
                        return
                done[0] += 1

        self.session.device.guarded(work, self._what, explain_request, lambda: done[0])
        if differing and expected is not None:
            at = next(i for i, (a, b) in enumerate(zip(differing[0], expected)) if a != b)
            raise CryptodevError(
                f"{self._what}: with requests in flight, a "
                f"{output_length}-byte request returned output that is not its own input's "
                f"(differs from byte {at}; alone, the same request gave the expected output): "
                "the driver mixed up requests in flight"
            )

    def output(self) -> bytes:
        return self._output.read(self._output_length)


def explain_request(number: int) -> str | None:
    if number == errno.EINVAL:
        return (
            "cryptodev refused the request: it takes whole cipher blocks only (no "
            "ciphertext stealing), an IV of the mode's size, and tags the driver supports"
        )
    if number == errno.EBADMSG:
        return "authentication failed: the tag does not match"
    return None


class CipherSession(Session):
    """An skcipher session: CIOCCRYPT with an IV, in either direction."""

    def request(self, op: str, data: bytes, iv: bytes | None, misalign: int = 0) -> Request:
        source = Buffer(len(data), data, misalign)
        destination = Buffer(len(data), misalign=misalign)
        iv_buffer = Buffer(len(iv), iv) if iv else None
        argument = abi.CryptOp(
            ses=self.ses,
            op=abi.COP_DECRYPT if op == Op.DECRYPT else abi.COP_ENCRYPT,
            len=len(data),
            src=source.address,
            dst=destination.address,
            iv=iv_buffer.address if iv_buffer else None,
        )
        what = f"CIOCCRYPT {op} {len(data)} B ({self.describe()})"
        keep = (source, iv_buffer)
        return Request(self, abi.CIOCCRYPT, argument, destination, len(data), what, keep)

    def encrypt(self, data: bytes, iv: bytes | None, misalign: int = 0) -> bytes:
        return _once(self.request(Op.ENCRYPT, data, iv, misalign))

    def decrypt(self, data: bytes, iv: bytes | None, misalign: int = 0) -> bytes:
        return _once(self.request(Op.DECRYPT, data, iv, misalign))


class HashSession(Session):
    """A hash or HMAC session: each CIOCCRYPT (flags 0) digests one whole message."""

    def request(self, data: bytes, misalign: int = 0) -> Request:
        source = Buffer(len(data), data, misalign)
        digest = Buffer(abi.AALG_MAX_RESULT_LEN)
        argument = abi.CryptOp(
            ses=self.ses, op=abi.COP_ENCRYPT, len=len(data), src=source.address, mac=digest.address
        )
        what = f"CIOCCRYPT digest {len(data)} B ({self.describe()})"
        size = self.algorithm.digest_size
        return Request(self, abi.CIOCCRYPT, argument, digest, size, what, (source,))

    def digest(self, data: bytes, misalign: int = 0) -> bytes:
        return _once(self.request(data, misalign))


class AeadSession(Session):
    """An AEAD session (gcm(aes)): CIOCAUTHCRYPT, the tag right after the ciphertext."""

    def request(
        self, op: str, data: bytes, iv: bytes, aad: bytes = b"", tag_length: int = 16
    ) -> Request:
        """`data` is the plaintext to seal, or ciphertext || tag to open."""
        decrypt = op == Op.DECRYPT
        out_length = len(data) - tag_length if decrypt else len(data) + tag_length
        if out_length < 0:
            raise CryptodevError(f"{len(data)} bytes are shorter than a {tag_length}-byte tag")
        source = Buffer(len(data), data)
        destination = Buffer(max(len(data), out_length))
        iv_buffer = Buffer(len(iv), iv)
        aad_buffer = Buffer(len(aad), aad) if aad else None
        argument = abi.CryptAuthOp(
            ses=self.ses,
            op=abi.COP_DECRYPT if decrypt else abi.COP_ENCRYPT,
            len=len(data),
            auth_len=len(aad),
            auth_src=aad_buffer.address if aad_buffer else None,
            src=source.address,
            dst=destination.address,
            tag_len=tag_length,
            iv=iv_buffer.address,
            iv_len=len(iv),
        )
        what = f"CIOCAUTHCRYPT {op} {len(data)} B, {len(aad)} B AAD ({self.describe()})"
        keep = (source, iv_buffer, aad_buffer)
        return Request(self, abi.CIOCAUTHCRYPT, argument, destination, out_length, what, keep)

    def encrypt(self, plaintext: bytes, iv: bytes, aad: bytes = b"", tag_length: int = 16) -> bytes:
        return _once(self.request(Op.ENCRYPT, plaintext, iv, aad, tag_length))

    def decrypt(self, sealed: bytes, iv: bytes, aad: bytes = b"", tag_length: int = 16) -> bytes:
        """The plaintext; a CryptodevError with `authentication_failed` for a wrong tag."""
        return _once(self.request(Op.DECRYPT, sealed, iv, aad, tag_length))


def _once(request: Request) -> bytes:
    request.run()
    return request.output()


_SESSION_TYPES: dict[str, type[Session]] = {
    AlgType.SKCIPHER: CipherSession,
    AlgType.AEAD: AeadSession,
    AlgType.HASH: HashSession,
}


def open_session(device: CryptoDevice, name: str, key: bytes = b"") -> Session:
    """A session of kernel algorithm `name` (`cbc(aes)`, `sha256`, `gcm(aes)`, ...).

    The kernel picks the driver -- the name's winner -- and `session.driver` says which.
    """
    alg = abi.algorithm(name)
    if alg is None:
        raise CryptodevError(
            f"cryptodev has no id for {name}: it opens {', '.join(abi.ALGORITHMS)}"
        )
    check_key(alg, key)
    key_buffer = Buffer(len(key), key) if key else None
    request = abi.session_request(alg, key_buffer.address if key_buffer else None, len(key))
    device.ioctl(
        abi.CIOCGSESSION,
        request,
        f"CIOCGSESSION {name} ({len(key)}-byte key)",
        lambda number: explain_session(number, alg, len(key)),
    )
    info_request = abi.SessionInfoOp(ses=request.ses)
    try:
        device.ioctl(abi.CIOCGSESSINFO, info_request, f"CIOCGSESSINFO of a {name} session")
    except CryptodevError:
        device.finish_session(int(request.ses))
        raise
    info = abi.decode_session_info(info_request, alg)
    return _SESSION_TYPES[alg.kind](device, alg, int(request.ses), info)


def check_key(alg: CryptodevAlgorithm, key: bytes) -> None:
    """Keys cryptodev would refuse with a bare EINVAL, refused here with the reason."""
    hashing = alg.kind == AlgType.HASH
    limit = abi.CRYPTO_HMAC_MAX_KEY_LEN if hashing else abi.CRYPTO_CIPHER_MAX_KEY_LEN
    if len(key) > limit:
        raise CryptodevError(f"{alg.name}: a {len(key)}-byte key is more than cryptodev's {limit}")
    if key and hashing and not alg.keyed:
        raise CryptodevError(f"{alg.name} is an unkeyed hash: give no key")


def explain_session(number: int, alg: CryptodevAlgorithm, key_length: int) -> str | None:
    if number == errno.EINVAL:
        return (
            f"cryptodev could not set up {alg.name} with a {key_length}-byte key: no driver "
            "of that name is registered or can be built here (see /proc/crypto; load the "
            "module that provides it), or the key length is wrong for it"
        )
    if number == errno.ENOTTY:
        return "this device does not answer cryptodev-linux's ioctls"
    return None


Prefer = Callable[[str], AbstractContextManager[object]]


def open_on_driver(
    device: CryptoDevice, name: str, key: bytes, driver: str, prefer: Prefer | None = None
) -> Session:
    """A session of `name` served by exactly `driver`, or a CryptodevError naming both.

    `prefer(driver)` makes `driver` the winner of `name` while the session is opened
    (kernel/rerank.py); the session keeps its driver once priorities are put back. Without
    `prefer` only the current winner can be had. CIOCGSESSINFO is checked either way.
    """
    opened = open_many_on_driver(device, name, [key], driver, prefer)[0]
    if isinstance(opened, CryptodevError):
        raise opened
    return opened


def open_many_on_driver(
    device: CryptoDevice,
    name: str,
    keys: Sequence[bytes],
    driver: str,
    prefer: Prefer | None = None,
) -> list[Session | CryptodevError]:
    """One session per key, all opened in one window while `driver` wins `name`.

    A preference costs two reads of /proc/crypto and two netlink calls (~0.2 s on the QEMU
    board under TCG), opening a session one ioctl; so callers that need many keys on one
    driver open them together. Each entry is the session, CIOCGSESSINFO-checked, or the
    error that key got (a mismatched driver among them).
    """
    opened: list[Session | CryptodevError] = []
    with prefer(driver) if prefer is not None else _as_it_is():
        for key in keys:
            try:
                opened.append(open_session(device, name, key))
            except CryptodevError as error:
                opened.append(error)
    for index, session in enumerate(opened):
        if isinstance(session, Session) and session.driver != driver:
            session.close()
            opened[index] = CryptodevError(
                f"asked /dev/crypto for {driver}, but CIOCGSESSINFO says the {name} session "
                f"is served by {session.driver}"
                + ("" if prefer else " (the winner of the name: no re-ranking here)")
            )
    return opened


@contextmanager
def _as_it_is() -> Iterator[None]:
    yield
