# SPDX-License-Identifier: MIT
"""The transient dm devices cryptsetup makes while it runs, known before it runs.

`cryptsetup luksFormat --integrity` wipes the new volume through a temporary device it
opens itself: `temporary-cryptsetup-<random UUID>` over `temporary-cryptsetup-<...>_dif`
(its dm-integrity device), removed again when cryptsetup exits. A run killed while
cryptsetup runs (its process group killed, or cryptsetup killed by a timeout) leaves both.
Their names are random, but their dm UUIDs are made from the LUKS UUID this plugin chose
(`--uuid`, block/luks.py): seen on the UML board with cryptsetup 2.6.1,

    temporary-cryptsetup-6775d2c3-...        CRYPT-LUKS2-<LUKS UUID hex>-<that name>
    temporary-cryptsetup-6775d2c3-..._dif    CRYPT-INTEGRITY-<LUKS UUID hex>-<that name>

So the LUKS UUID is recorded (LEDGER_KIND) before cryptsetup runs, and undoing removes a dm
device only when its name starts `temporary-cryptsetup-` *and* its UUID is exactly one of
those two forms with the recorded hex: no other device -- another cryptsetup's, a
hand-made one -- can carry a random UUID this plugin picked.

Not covered: cryptsetup's keyslot fallback device `temporary-cryptsetup-<pid>`
(`CRYPT-TEMP-...`, used only when AF_ALG lacks the keyslot cipher), whose UUID holds no
LUKS UUID; the boards' kernels serve keyslots through AF_ALG.
"""

from __future__ import annotations

import errno
from collections.abc import Mapping
from typing import Any

from pytest_hwcrypto.block.tools import BlockError, run
from pytest_hwcrypto.ledger import Entry, Ledger

LEDGER_KIND = "cryptsetup-temporary"
NAME_PREFIX = "temporary-cryptsetup-"
# dm types cryptsetup puts in the UUIDs of the temporary crypt device and its
# integrity device.
UUID_TYPES = ("LUKS2", "INTEGRITY")
INTEGRITY_SUFFIX = "_dif"


def entry(luks_uuid: str) -> Entry:
    """The ledger entry for a cryptsetup run on the LUKS volume `luks_uuid`."""
    return Entry(LEDGER_KIND, luks_uuid, {"luks_uuid": luks_uuid})


def record(ledger: Ledger, luks_uuid: str) -> None:
    ledger.record(entry(luks_uuid))


def settle(ledger: Ledger, luks_uuid: str) -> None:
    """cryptsetup has exited: remove what it left (it normally leaves nothing) and strike
    the entry; one that cannot be removed stays on record for the sweep."""
    try:
        undo_temporary(entry(luks_uuid).undo)
    except OSError:
        return
    ledger.strike(LEDGER_KIND, luks_uuid)


def is_ours(name: str, uuid: str, luks_uuid: str) -> bool:
    """Whether dm device `name` with `uuid` is a temporary device cryptsetup made for the
    LUKS volume `luks_uuid` (pure)."""
    if not name.startswith(NAME_PREFIX):
        return False
    hexed = luks_uuid.replace("-", "").lower()
    if len(hexed) != 32:
        return False
    return any(uuid == f"CRYPT-{kind}-{hexed}-{name}" for kind in UUID_TYPES)


def removal_order(names: list[str]) -> list[str]:
    """The crypt devices before the integrity devices under them (pure)."""
    return sorted(names, key=lambda n: (n.endswith(INTEGRITY_SUFFIX), n))


def _devices() -> list[tuple[str, str]]:
    out = run(["dmsetup", "info", "-c", "--noheadings", "-o", "name,uuid", "--separator", " "])
    found = []
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 2:
            found.append((fields[0], fields[1]))
    return found


def undo_temporary(undo: Mapping[str, Any]) -> str:
    """Remove the temporary dm devices of the recorded LUKS volume, and nothing else.

    The ledger's undo for LEDGER_KIND (also in sweeps). A device still busy (cryptsetup
    still running) raises OSError: the entry stays for the next sweep.
    """
    luks_uuid = str(undo["luks_uuid"])
    try:
        ours = [name for name, uuid in _devices() if is_ours(name, uuid, luks_uuid)]
        for name in removal_order(ours):
            run(["dmsetup", "remove", "--retry", name])
    except BlockError as error:
        raise OSError(errno.EBUSY, str(error)) from None
    if not ours:
        return f"cryptsetup temporary devices of LUKS {luks_uuid}: none left"
    return f"removed cryptsetup's temporary dm devices {', '.join(removal_order(ours))}"
