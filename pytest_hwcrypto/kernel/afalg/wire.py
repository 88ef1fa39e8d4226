# SPDX-License-Identifier: MIT
"""What goes over an AF_ALG op socket: control messages, sends that must be taken whole, reads.

Every request is a ``sendmsg`` whose first piece carries a control message (operation, IV,
AEAD assoclen) and whose later pieces follow with ``MSG_MORE``, then reads until the output
is complete. Op sockets are non-blocking (see deadline.py), so each send and read here waits
for readiness against the request's deadline. Two kernel facts shape the buffer handling:

* a send larger than the socket's send buffer (~208 KiB by default) blocks until someone
  reads, so buffers are raised to fit the request first (:func:`fit_buffers`);
* output larger than the receive buffer comes back in several reads, so reads loop until all
  bytes are there (:func:`recv_exact`).

Nothing here knows about drivers, sessions or errors beyond ``OSError``; the session layer
explains the errno.
"""

from __future__ import annotations

import contextlib
import errno
import os
import platform
import select
import socket
import struct
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_hwcrypto.kernel.afalg.deadline import wait_for
from pytest_hwcrypto.vocabulary import Op

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
# asm-generic SO_SNDBUFFORCE/SO_RCVBUFFORCE (Python does not export them); alpha, mips,
# parisc and sparc number them differently, so forcing is skipped there.
_SO_SNDBUFFORCE = 32
_SO_RCVBUFFORCE = 33
_ODD_SOCKOPT_ARCHES = ("alpha", "mips", "parisc", "sparc")

_OP_CODES: dict[str, int] = {Op.ENCRYPT: socket.ALG_OP_ENCRYPT, Op.DECRYPT: socket.ALG_OP_DECRYPT}


def new_alg_socket() -> socket.socket:
    """A fresh AF_ALG socket.

    The one seam for a fake kernel: the probe and the sessions look this function up on
    this module at call time, so unit tests replace it here with a fake socket factory.
    """
    try:
        family = socket.AF_ALG
    except AttributeError:  # a Python built without AF_ALG support
        raise OSError(errno.EAFNOSUPPORT, "Python has no socket.AF_ALG") from None
    return socket.socket(family, socket.SOCK_SEQPACKET, 0)


def opcode(op: str) -> int:
    """ALG_OP_ENCRYPT or ALG_OP_DECRYPT for ``encrypt``/``decrypt``; ValueError otherwise."""
    try:
        return _OP_CODES[op]
    except KeyError:
        raise ValueError(
            f"op must be {Op.ENCRYPT.value!r} or {Op.DECRYPT.value!r}, not {op!r}"
        ) from None


@dataclass(frozen=True)
class Control:
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


def send(
    sock: socket.socket, deadline: float, data: memoryview, control: Control | None, flags: int
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
            wait_for(sock, select.POLLOUT, deadline)
    if sent != len(data):
        raise OSError(errno.EMSGSIZE, f"kernel took {sent} of {len(data)} bytes")


def submit(
    sock: socket.socket, deadline: float, pieces: Sequence[memoryview], control: Control | None
) -> None:
    """Send pieces, all but the last with MSG_MORE; the first carries the control message."""
    for index, piece in enumerate(pieces):
        flags = socket.MSG_MORE if index < len(pieces) - 1 else 0
        send(sock, deadline, piece, control if index == 0 else None, flags)


def recv_once(
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
            wait_for(sock, select.POLLIN, deadline)
            continue
        if count == 0 and len(out) and not may_be_empty:
            raise OSError(errno.EIO, "the kernel returned no data")
        return count


def recv_exact(sock: socket.socket, deadline: float, out: memoryview) -> None:
    """Fill ``out``: the kernel may return less than asked per read (receive buffer)."""
    got = 0
    while got < len(out):
        got += recv_once(sock, deadline, out[got:])


def split(data: bytes, chunks: Sequence[int] | None) -> list[memoryview]:
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


def fit_buffers(sock: socket.socket, nbytes: int) -> None:
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
