# SPDX-License-Identifier: MIT
"""dm-crypt volumes made by `cryptsetup`: LUKS2 (optionally with dm-integrity) and plain.

The kernel sees the same dm-crypt target as with a raw table (block/dmcrypt.py); what
cryptsetup adds is the on-disk header (LUKS2), its key derivation and, with
`--integrity`, a dm-integrity device under the crypt device holding an authentication
tag per sector. The key -- a LUKS passphrase or a plain volume's raw key -- reaches
cryptsetup on stdin (`--key-file=-`) and is never in argv, a file or a message.

Naming and the ledger: cryptsetup gives its dm devices UUIDs made from what it is told,
so they are known before they exist -- `CRYPT-LUKS2-<LUKS UUID without dashes>-<name>`
(the LUKS UUID is chosen here with `--uuid`), `CRYPT-PLAIN-<name>`, and for the integrity
device `CRYPT-INTEGRITY-<same hex>-<name>_dif`. Each is recorded as a block/dmcrypt.py `dm`
entry before cryptsetup runs, so the ordinary dm undo (name *and* UUID must match)
removes exactly these devices after a killed run. The integrity device is recorded first:
the ledger undoes newest first, and the crypt device holds it.

Proof of the driver is as for raw tables: `dmsetup table` shows the cipher cryptsetup
loaded, and the refcnt of the driver that should serve rose. With a `capi:` cipher that
driver is the one named; without (`aes-xts-random` for integrity, where cryptsetup builds
`capi:authenc(hmac(sha256),xts(aes))-random` itself) the kernel picks the winner of the
name, so the caller names the driver it made the winner (kernel/rerank.py) and the
refcnt says whether it served.
"""

from __future__ import annotations

import contextlib
import uuid as uuids
from dataclasses import dataclass
from pathlib import Path

from pytest_hwcrypto.block import cryptsetup_temp, dmcrypt
from pytest_hwcrypto.block.crypt_table import parse_table
from pytest_hwcrypto.block.loop import LoopDevice
from pytest_hwcrypto.block.tools import BlockError, CommandFailed, run
from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.ledger import Entry, Ledger
from pytest_hwcrypto.vocabulary import PROC_CRYPTO

LUKS2 = "luks2"
PLAIN = "plain"
KINDS = (LUKS2, PLAIN)
# Key derivation kept cheap: the key is random, not a human passphrase, and a board has
# little memory (argon2 is accepted with --pbkdf-memory kept small: see PBKDF_ARGON2).
PBKDF_PBKDF2 = ("--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000")
PBKDF_ARGON2 = ("--pbkdf", "argon2id", "--pbkdf-memory", "1024", "--pbkdf-force-iterations", "4")
PASSPHRASE_BYTES = 32
# cryptsetup open's exit status for "No key available with this passphrase".
WRONG_PASSPHRASE_STATUS = 2
INTEGRITY_SUFFIX = "_dif"


class WrongKey(BlockError):
    """cryptsetup found no key slot the passphrase opens (LUKS detected a wrong key)."""


@dataclass(frozen=True)
class CryptsetupFormat:
    """What cryptsetup is asked to make. `cipher` is cryptsetup's --cipher text: a
    `capi:<driver>-<ivmode>` spec pins the driver; `driver` is the one to prove."""

    kind: str
    cipher: str
    key_bits: int
    driver: str
    sector_size: int = 512
    integrity: str | None = None  # e.g. hmac-sha256 (LUKS2 only)
    argon2: bool = False


@dataclass(frozen=True)
class LuksDevice:
    name: str
    uuid: str
    format: CryptsetupFormat
    shown_cipher: str
    sector_size: int
    refcnt_before: int
    refcnt_after: int
    subdevice: tuple[str, str] | None = None  # the integrity device: name, UUID

    @property
    def path(self) -> str:
        return f"/dev/mapper/{self.name}"

    @property
    def driver(self) -> str:
        return self.format.driver

    @property
    def evidence(self) -> str:
        under = f" over dm-integrity {self.subdevice[0]}" if self.subdevice else ""
        return (
            f"cryptsetup {self.format.kind}{under}; dmsetup table shows {self.shown_cipher}; "
            f"/proc/crypto refcnt of {self.driver} rose {self.refcnt_before} -> "
            f"{self.refcnt_after}"
        )


def luks_format(ledger: Ledger, loop: LoopDevice, spec: CryptsetupFormat, passphrase: bytes) -> str:
    """Write a LUKS2 header on `loop` (the plugin's own device); return the LUKS UUID.

    With `--integrity` cryptsetup wipes the volume through temporary dm devices of its
    own; what identifies them is recorded first (block/cryptsetup_temp.py)."""
    if spec.kind != LUKS2:
        raise BlockError(f"luksFormat makes LUKS2 volumes, not {spec.kind}")
    luks_uuid = str(uuids.uuid4())
    argv = ["cryptsetup", "luksFormat", "--batch-mode", "--type", "luks2"]
    argv += list(PBKDF_ARGON2 if spec.argon2 else PBKDF_PBKDF2)
    argv += ["--uuid", luks_uuid, "--sector-size", str(spec.sector_size)]
    argv += ["--cipher", spec.cipher, "--key-size", str(spec.key_bits)]
    if spec.integrity:
        argv += ["--integrity", spec.integrity]
    cryptsetup_temp.record(ledger, luks_uuid)
    try:
        run([*argv, "--key-file=-", loop.device], stdin=passphrase, secret=True)
    finally:
        cryptsetup_temp.settle(ledger, luks_uuid)
    return luks_uuid


def dm_uuids(spec: CryptsetupFormat, name: str, luks_uuid: str | None) -> tuple[str, str | None]:
    """The UUIDs cryptsetup will give the crypt device and its integrity device (or None)."""
    if spec.kind == PLAIN:
        return f"CRYPT-PLAIN-{name}", None
    if not luks_uuid:
        raise BlockError("a LUKS2 volume's dm UUID needs its LUKS UUID")
    hexed = luks_uuid.replace("-", "")
    sub = f"CRYPT-INTEGRITY-{hexed}-{name}{INTEGRITY_SUFFIX}" if spec.integrity else None
    return f"CRYPT-LUKS2-{hexed}-{name}", sub


def open_volume(
    ledger: Ledger,
    name: str,
    loop: LoopDevice,
    spec: CryptsetupFormat,
    key: bytes,
    luks_uuid: str | None = None,
    proc_crypto: Path = PROC_CRYPTO,
) -> LuksDevice:
    """`cryptsetup open` `loop` as `name`; a LUKS volume needs its UUID from luks_format."""
    why = dmcrypt.refusal(spec.driver)
    if why:
        raise dmcrypt.DriverRefused(f"cannot pin dm-crypt to {spec.cipher}: {why}")
    crypt_uuid, sub_uuid = dm_uuids(spec, name, luks_uuid)
    subdevice = (name + INTEGRITY_SUFFIX, sub_uuid) if sub_uuid else None
    if subdevice:
        ledger.record(Entry(dmcrypt.LEDGER_KIND, subdevice[0], _undo(*subdevice)))
    ledger.record(Entry(dmcrypt.LEDGER_KIND, name, _undo(name, crypt_uuid)))
    argv = ["cryptsetup", "open", "--type", spec.kind]
    if spec.kind == PLAIN:
        # `--hash plain`: the key is used as it is. Without it a key on stdin counts as a
        # passphrase and is hashed, and pyca could not recompute the on-disk format.
        argv += ["--hash", "plain", "--cipher", spec.cipher, "--key-size", str(spec.key_bits)]
        argv += ["--sector-size", str(spec.sector_size), "--batch-mode"]
    if spec.cipher.startswith("capi:"):
        _instantiate(spec.driver, proc_crypto)
    before = dmcrypt.refcnt(spec.driver, proc_crypto)
    try:
        run([*argv, "--key-file=-", loop.device, name], stdin=key, secret=True)
        device = _prove(name, crypt_uuid, spec, before, subdevice, proc_crypto)
    except CommandFailed as error:
        _forget(ledger, name, crypt_uuid, subdevice)
        if spec.kind == LUKS2 and error.returncode == WRONG_PASSPHRASE_STATUS:
            raise WrongKey(f"{loop.device}: LUKS2 header rejects the key ({error})") from None
        raise BlockError(f"cryptsetup refused {spec.cipher}: {error}") from None
    except BlockError:
        _forget(ledger, name, crypt_uuid, subdevice)
        raise
    return device


def _instantiate(driver: str, proc_crypto: Path) -> None:
    """Build a nested template instance before dm-crypt asks for it by driver name.

    Seen on UML 6.1: `capi:cbc(aes-fixed-time)-essiv:sha256-generic` failed with ENOENT
    the first time (no essiv(cbc(aes-fixed-time),sha256-generic) yet) and worked once an
    earlier request had built the instance; binding it through AF_ALG builds it. Best
    effort: without AF_ALG, dm-crypt's own answer decides.
    """
    if any(a.driver == driver for a in read_proc_crypto(proc_crypto)):
        return
    with contextlib.suppress(afalg.AfAlgError):
        afalg.instantiate_any(driver, key=bytes(32))


def _undo(name: str, uuid: str) -> dict[str, str]:
    return {"name": name, "uuid": uuid}


def _prove(
    name: str,
    crypt_uuid: str,
    spec: CryptsetupFormat,
    before: int,
    subdevice: tuple[str, str] | None,
    proc_crypto: Path,
) -> LuksDevice:
    found = dmcrypt.uuid_of(name)
    if found != crypt_uuid:
        raise BlockError(
            f"{name}: dm UUID is {found!r}, cryptsetup was expected to set {crypt_uuid}"
        )
    shown = parse_table(run(["dmsetup", "table", name]))
    if spec.cipher.startswith("capi:") and shown.cipher != spec.cipher:
        raise BlockError(f"{name}: asked for {spec.cipher}, dmsetup table shows {shown.cipher}")
    if shown.sector_size != spec.sector_size:
        raise BlockError(
            f"{name}: asked for {spec.sector_size}-byte sectors, the table has {shown.sector_size}"
        )
    after = dmcrypt.refcnt(spec.driver, proc_crypto)
    if after <= before:
        raise BlockError(
            f"{name}: {spec.driver}'s refcnt did not rise ({before} -> {after}): the volume "
            f"({shown.cipher}) is not running that driver"
        )
    return LuksDevice(
        name, crypt_uuid, spec, shown.cipher, shown.sector_size, before, after, subdevice
    )


def close(ledger: Ledger, device: LuksDevice) -> None:
    _forget(ledger, device.name, device.uuid, device.subdevice)


def _forget(ledger: Ledger, name: str, crypt_uuid: str, subdevice: tuple[str, str] | None) -> None:
    """The crypt device first (it holds the integrity device), each only if it is ours."""
    dmcrypt.undo_dm(_undo(name, crypt_uuid))
    ledger.strike(dmcrypt.LEDGER_KIND, name)
    if subdevice:
        dmcrypt.undo_dm(_undo(*subdevice))
        ledger.strike(dmcrypt.LEDGER_KIND, subdevice[0])
