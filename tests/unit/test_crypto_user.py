# SPDX-License-Identifier: MIT
"""crypto_user netlink messages, byte for byte against the uapi layout."""

from __future__ import annotations

import errno
import struct

import pytest

from pytest_hwcrypto.kernel import crypto_user as cu


def test_updatealg_carries_the_driver_and_a_priority_attribute() -> None:
    message = cu.encode_request(cu.CRYPTO_MSG_UPDATEALG, "cbc(aes-generic)", seq=7, priority=300)
    length, kind, flags, seq, pid = struct.unpack_from("=IHHII", message)
    assert (length, kind, seq, pid) == (len(message), 0x12, 7, 0)
    assert flags == cu.NLM_F_REQUEST | cu.NLM_F_ACK
    body = message[16:]
    # struct crypto_user_alg: cru_name[64], cru_driver_name[64], cru_module_name[64], 4 x u32
    assert body[64:80].rstrip(b"\0") == b"cbc(aes-generic)"
    assert body[:64] == bytes(64) and body[128:208] == bytes(80)
    assert struct.unpack_from("=HHI", body, 208) == (8, cu.CRYPTOCFGA_PRIORITY_VAL, 300)
    assert len(message) == 16 + 208 + 8


def test_getalg_has_no_attribute_and_asks_no_ack() -> None:
    message = cu.encode_request(cu.CRYPTO_MSG_GETALG, "cbc-aes-aesni", seq=1)
    assert len(message) == 16 + 208
    assert struct.unpack_from("=H", message, 6)[0] == cu.NLM_F_REQUEST


def test_names_that_do_not_fit_are_refused() -> None:
    with pytest.raises(ValueError, match=r"1\.\.63 bytes"):
        cu.encode_request(cu.CRYPTO_MSG_GETALG, "x" * 64, seq=1)


def _report(flags: int) -> bytes:
    body = struct.pack(
        "=64s64s64sIIII", b"cbc(aes)", b"virtio_crypto_aes_cbc", b"virtio", 5, 0, 2, flags
    )
    return struct.pack("=IHHII", 16 + len(body), cu.CRYPTO_MSG_GETALG, 0, 1, 0) + body


def test_report_decodes_flags_and_allocates_memory() -> None:
    report = cu.decode_reply(_report(0x00010485), "virtio_crypto_aes_cbc")
    assert report is not None
    assert (report.name, report.driver, report.module, report.refcnt) == (
        "cbc(aes)",
        "virtio_crypto_aes_cbc",
        "virtio",
        2,
    )
    assert report.allocates_memory
    assert not cu.decode_reply(_report(0x00000485), "cbc-aes-aesni").allocates_memory  # type: ignore[union-attr]


def _nlmsgerr(code: int) -> bytes:
    return struct.pack("=IHHIIi", 20, cu.NLMSG_ERROR, 0, 1, 0, code)


def test_ack_is_none_and_errors_say_what_to_do() -> None:
    assert cu.decode_reply(_nlmsgerr(0), "d") is None
    with pytest.raises(cu.CryptoUserError, match="bind it once") as missing:
        cu.decode_reply(_nlmsgerr(-errno.ENOENT), "cbc(aes-generic)")
    assert missing.value.errno == errno.ENOENT
    with pytest.raises(cu.CryptoUserError, match="CAP_NET_ADMIN"):
        cu.decode_reply(_nlmsgerr(-errno.EPERM), "d")
