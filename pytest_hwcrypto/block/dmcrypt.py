# SPDX-License-Identifier: MIT
"""dm-crypt volumes through `dmsetup create` with raw tables, pinned to one driver and
proven to run it.

Before a volume exists its name and UUID are in the ledger (LEDGER_KIND); undoing removes
a dm device only when both match what was recorded, so a hand-made device -- even one
named `hwcrypto-...` -- is left alone. The key is generated in memory (os.urandom by the
caller) and reaches the kernel on dmsetup's stdin; it is never in argv, a file or a message.

Proof of the driver: `dmsetup table` must show the pinned `capi:` cipher, and the driver's
/proc/crypto refcnt must have risen while the volume was made. dm-crypt allocates its
ciphers with the mask CRYPTO_ALG_ALLOCATES_MEMORY, so a driver carrying that flag (many
offload drivers since 5.10; virtio_crypto_aes_cbc on the QEMU board) is refused with a raw
ENOENT: the flag is read through crypto_user first and reported by name instead.
"""

from __future__ import annotations

import errno
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_hwcrypto.block.crypt_table import CryptSpec, parse_table, table_line
from pytest_hwcrypto.block.loop import LoopDevice
from pytest_hwcrypto.block.tools import BlockError, run
from pytest_hwcrypto.kernel.crypto_user import CryptoUser, CryptoUserError
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.ledger import Entry, Ledger
from pytest_hwcrypto.vocabulary import PROC_CRYPTO

LEDGER_KIND = "dm"
UUID_PREFIX = "HWCRYPTO"
ALLOCATES_MEMORY = "CRYPTO_ALG_ALLOCATES_MEMORY"


class DriverRefused(BlockError):
    """dm-crypt will not use this driver; the message names the reason (a flag)."""


@dataclass(frozen=True)
class CryptDevice:
    name: str
    uuid: str
    spec: CryptSpec
    sector_size: int
    refcnt_before: int
    refcnt_after: int

    @property
    def path(self) -> str:
        return f"/dev/mapper/{self.name}"

    @property
    def driver(self) -> str:
        return self.spec.driver

    @property
    def evidence(self) -> str:
        flags = f" {' '.join(sorted(self.spec.flags))}" if self.spec.flags else ""
        return (
            f"dmsetup table shows {self.spec.cipher}{flags}; /proc/crypto refcnt of "
            f"{self.spec.serving_driver} rose {self.refcnt_before} -> {self.refcnt_after}"
        )


def refcnt(driver: str, proc_crypto: Path = PROC_CRYPTO) -> int:
    """The driver's refcnt in /proc/crypto; 0 for a template instance not built yet."""
    found = [a for a in read_proc_crypto(proc_crypto) if a.driver == driver and not a.is_internal]
    return sum(a.refcnt or 0 for a in found)


def refusal(driver: str) -> str | None:
    """Why dm-crypt refuses `driver` (its flags, through crypto_user), or None.

    None also when crypto_user cannot tell (module missing, an instance not built yet):
    then dm-crypt's own answer decides.
    """
    try:
        with CryptoUser() as netlink:
            report = netlink.report(driver)
    except CryptoUserError:
        return None
    if report.allocates_memory:
        return (
            f"{driver} carries {ALLOCATES_MEMORY} (crypto_user flags 0x{report.flags:08x}); "
            "dm-crypt allocates its cipher with that flag masked out, so it never uses this "
            "driver (the kernel answers ENOENT)"
        )
    return None


def create(
    ledger: Ledger,
    name: str,
    loop: LoopDevice,
    spec: CryptSpec,
    key: bytes,
    sector_size: int = 512,
    proc_crypto: Path = PROC_CRYPTO,
) -> CryptDevice:
    """A dm-crypt volume `name` over all of `loop`, running exactly `spec.driver`."""
    why = refusal(spec.driver)
    if why:
        raise DriverRefused(f"cannot pin dm-crypt to {spec.cipher}: {why}")
    table = table_line(spec, key, loop.device, loop.size, sector_size)
    uuid = f"{UUID_PREFIX}-{name}-{secrets.token_hex(4)}"
    before = refcnt(spec.serving_driver, proc_crypto)
    ledger.record(Entry(LEDGER_KIND, name, {"name": name, "uuid": uuid}))
    try:
        run(["dmsetup", "create", name, "--uuid", uuid], stdin=table, secret=True)
    except BlockError as error:
        _forget(ledger, name, uuid)
        hint = refusal(spec.driver) or (
            f"is {spec.driver} registered and a skcipher dm-crypt can use? (dmesg says more)"
        )
        raise BlockError(f"dm-crypt refused {spec.cipher}: {error}; {hint}") from None
    try:
        device = _prove(name, uuid, spec, sector_size, before, proc_crypto)
    except BlockError:
        _forget(ledger, name, uuid)
        raise
    return device


def _prove(
    name: str, uuid: str, spec: CryptSpec, sector_size: int, before: int, proc_crypto: Path
) -> CryptDevice:
    shown = parse_table(run(["dmsetup", "table", name]))
    if shown.cipher != spec.cipher or shown.sector_size != sector_size:
        raise BlockError(
            f"{name}: asked for {spec.cipher} with {sector_size}-byte sectors, but dmsetup "
            f"table shows {shown.cipher} with {shown.sector_size}-byte sectors"
        )
    if shown.flags != tuple(sorted(set(spec.flags))):
        raise BlockError(
            f"{name}: asked for flags {' '.join(spec.flags) or 'none'}, but dmsetup table "
            f"shows {' '.join(shown.flags) or 'none'} (this kernel's dm-crypt may not know them)"
        )
    after = refcnt(spec.serving_driver, proc_crypto)
    if after <= before:
        raise BlockError(
            f"{name}: {spec.serving_driver}'s refcnt did not rise ({before} -> {after}): "
            "the volume is not running that driver"
        )
    return CryptDevice(name, uuid, spec, sector_size, before, after)


def remove(ledger: Ledger, device: CryptDevice) -> None:
    _forget(ledger, device.name, device.uuid)


def _forget(ledger: Ledger, name: str, uuid: str) -> None:
    undo_dm({"name": name, "uuid": uuid})
    ledger.strike(LEDGER_KIND, name)


def uuid_of(name: str) -> str | None:
    """The UUID of dm device `name` ("" without one), or None when there is no such device.

    Read from the listing of every device: asking about one absent device fails with
    "Command failed", which says nothing a caller could tell from a real failure.
    """
    out = run(["dmsetup", "info", "-c", "--noheadings", "-o", "name,uuid", "--separator", " "])
    for line in out.splitlines():
        fields = line.split()
        if fields and fields[0] == name:
            return fields[1] if len(fields) > 1 else ""
    return None


def undo_dm(undo: Mapping[str, Any]) -> str:
    """Remove the recorded dm device if it is still the one recorded (name and UUID).

    The ledger's undo for LEDGER_KIND (also in sweeps).
    """
    name, uuid = str(undo["name"]), str(undo["uuid"])
    try:
        found = uuid_of(name)
        if found is None:
            return f"dm device {name}: already gone"
        if found != uuid:
            return f"left dm device {name} alone: its UUID {found!r} is not the one recorded"
        run(["dmsetup", "remove", "--retry", name])
    except BlockError as error:
        raise OSError(errno.EBUSY, str(error)) from None  # kept for the next sweep
    return f"removed dm device {name}"
