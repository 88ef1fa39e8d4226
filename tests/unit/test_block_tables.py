# SPDX-License-Identifier: MIT
"""Pure parts of block/: crypt tables, the plain on-disk format, and undo order."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from pytest_hwcrypto import ledger
from pytest_hwcrypto.block.crypt_table import CryptSpec, parse_table, table_line
from pytest_hwcrypto.block.plain_format import decrypt_plain, plain64_iv
from pytest_hwcrypto.block.tools import BlockError


def test_table_pins_the_driver_and_carries_the_sector_size() -> None:
    spec = CryptSpec("xts(ecb(aes-generic))")
    line = table_line(spec, bytes(range(32)), "/dev/loop3", 8192, 4096).decode()
    assert line == (
        f"0 16 crypt capi:xts(ecb(aes-generic))-plain64 {bytes(range(32)).hex()} "
        "0 /dev/loop3 0 1 sector_size:4096\n"
    )
    assert "sector_size" not in table_line(spec, b"k" * 32, "/dev/loop3", 4096, 512).decode()


@pytest.mark.parametrize(
    ("size", "sector", "problem"),
    [(4096, 1024, "sector size"), (6144, 4096, "multiple"), (0, 512, "multiple")],
)
def test_bad_tables_are_refused_with_the_reason(size: int, sector: int, problem: str) -> None:
    with pytest.raises(BlockError, match=problem):
        table_line(CryptSpec("cbc(aes-generic)"), b"k" * 16, "/dev/loop0", size, sector)


def test_dmsetup_table_is_read_without_keeping_the_key() -> None:
    shown = parse_table(
        "0 65536 crypt capi:cbc-aes-aesni-plain64 " + "0" * 32 + " 0 7:0 0 1 sector_size:4096\n"
    )
    assert (shown.cipher, shown.device, shown.sector_size) == (
        "capi:cbc-aes-aesni-plain64",
        "7:0",
        4096,
    )
    with pytest.raises(BlockError, match="not a dm-crypt table"):
        parse_table("0 2048 linear 7:0 0")


def _encrypt(algorithm: str, key: bytes, plain: bytes, sector_size: int) -> bytes:
    out = b""
    for offset in range(0, len(plain), sector_size):
        iv = plain64_iv(offset // 512)
        mode = modes.XTS(iv) if algorithm == "xts(aes)" else modes.CBC(iv)
        enc = Cipher(algorithms.AES(key), mode).encryptor()
        out += enc.update(plain[offset : offset + sector_size]) + enc.finalize()
    return out


@pytest.mark.parametrize("algorithm", ["xts(aes)", "cbc(aes)"])
@pytest.mark.parametrize("sector_size", [512, 4096])
def test_plain_format_round_trips(algorithm: str, sector_size: int) -> None:
    key = bytes(range(32)) if algorithm == "xts(aes)" else bytes(range(16))
    plain = bytes(i % 251 for i in range(3 * 4096))
    raw = _encrypt(algorithm, key, plain, sector_size)
    assert decrypt_plain(algorithm, key, raw, sector_size) == plain
    assert plain64_iv(9) == b"\x09" + bytes(15)


def test_sweep_undoes_newest_first(tmp_path: Path) -> None:
    """A dm volume is removed before the loop device under it."""
    entries = [
        {"kind": "loop", "key": "/x.img", "undo": {"n": 1}},
        {"kind": "dm", "key": "v", "undo": {"n": 2}},
    ]
    data = {"pid": 999999999, "started": "1", "boot": ledger.boot_id(), "entries": entries}
    (tmp_path / "run-999999999-x.json").write_text(json.dumps(data))
    order: list[Any] = []

    def undo(data: Any) -> str:
        order.append(data["n"])
        return ""

    ledger.sweep({"loop": undo, "dm": undo}, tmp_path)
    assert order == [2, 1]
