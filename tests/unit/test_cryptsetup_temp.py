# SPDX-License-Identifier: MIT
"""Which dm devices a sweep may take as cryptsetup's temporary devices of our LUKS volume:
only a `temporary-cryptsetup-*` name whose UUID carries the recorded LUKS UUID."""

from __future__ import annotations

from pytest_hwcrypto.block import volume
from pytest_hwcrypto.block.cryptsetup_temp import (
    LEDGER_KIND,
    entry,
    is_ours,
    removal_order,
)

LUKS = "11111111-2222-3333-4444-555555555555"
HEX = "11111111222233334444555555555555"
NAME = "temporary-cryptsetup-6775d2c3-bdcd-41d3-a67f-5b399af71db5"


def test_the_wipe_device_and_its_integrity_device_seen_on_the_board_are_ours() -> None:
    assert is_ours(NAME, f"CRYPT-LUKS2-{HEX}-{NAME}", LUKS)
    assert is_ours(f"{NAME}_dif", f"CRYPT-INTEGRITY-{HEX}-{NAME}_dif", LUKS)


def test_another_volumes_or_a_hand_made_device_is_not() -> None:
    other = "99999999222233334444555555555555"
    assert not is_ours(NAME, f"CRYPT-LUKS2-{other}-{NAME}", LUKS)  # another volume's
    assert not is_ours(NAME, "", LUKS)  # hand-made, no UUID
    assert not is_ours(NAME, f"CRYPT-LUKS2-{HEX}-{NAME}x", LUKS)  # UUID of another name
    assert not is_ours("hwcrypto-1-2-crypt", f"CRYPT-LUKS2-{HEX}-hwcrypto-1-2-crypt", LUKS)
    assert not is_ours(NAME, f"CRYPT-TEMP-{NAME}", LUKS)  # keyslot fallback: no LUKS UUID
    assert not is_ours(NAME, f"CRYPT-LUKS2--{NAME}", "")


def test_crypt_devices_go_before_the_integrity_devices_they_hold() -> None:
    assert removal_order([f"{NAME}_dif", NAME]) == [NAME, f"{NAME}_dif"]


def test_the_sweep_knows_how_to_undo_the_entry() -> None:
    made = entry(LUKS)
    assert made.kind == LEDGER_KIND and made.undo == {"luks_uuid": LUKS}
    assert LEDGER_KIND in volume.undo_handlers()
