# SPDX-License-Identifier: MIT
"""Who competes with a driver for its name, and what priority makes it win (pure)."""

from __future__ import annotations

from pathlib import Path

from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.kernel.rerank import rivals_of, winning_priority

CAPTURES = Path(__file__).resolve().parent.parent / "data" / "proc_crypto"


def _qemu(driver: str):  # type: ignore[no-untyped-def]
    entries = read_proc_crypto(CAPTURES / "qemu-6.1.0-57-amd64.txt")
    return entries, next(e for e in entries if e.driver == driver)


def test_the_offload_engine_must_beat_aesni_to_win_cbc_aes() -> None:
    entries, virtio = _qemu("virtio_crypto_aes_cbc")
    rivals = rivals_of(entries, virtio)
    assert "cbc-aes-aesni" in {r.driver for r in rivals}
    assert all(r.name == "cbc(aes)" and not r.is_internal for r in rivals)
    best = max(r.priority or 0 for r in rivals)
    assert winning_priority(virtio, rivals) == best + 1 > (virtio.priority or 0)


def test_the_winner_keeps_its_priority() -> None:
    entries, aesni = _qemu("cbc-aes-aesni")
    assert winning_priority(aesni, rivals_of(entries, aesni)) == aesni.priority


def test_internal_helpers_never_compete() -> None:
    entries, aesni = _qemu("cbc-aes-aesni")
    assert "__cbc-aes-aesni" not in {r.driver for r in rivals_of(entries, aesni)}


def test_changed_priorities_names_only_drivers_that_moved() -> None:
    from pytest_hwcrypto.kernel.rerank import changed_priorities

    before = {"cbc(aes-generic)": 100, "cbc(aes-fixed-time)": 101, "gone": 5}
    now = {"cbc(aes-generic)": 300, "cbc(aes-fixed-time)": 101, "new": 1}
    assert changed_priorities(before, now) == {"cbc(aes-generic)": (100, 300)}
