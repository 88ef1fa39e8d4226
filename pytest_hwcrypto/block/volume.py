# SPDX-License-Identifier: MIT
"""A dm-crypt volume on its own loop device: made, reopened and torn down as one.

`VolumeMaker.open(driver, key_bits, sector_size, size)` attaches a loop device to a fresh
sparse file, generates a key in memory and opens a dm-crypt volume pinned to `driver` on
it (block/dmcrypt.py proves the driver). `open_cryptsetup(format, size)` does the same through
`cryptsetup` (block/luks.py: LUKS2, with dm-integrity or not, or plain). `reopen` closes
the dm device and opens it again with the same key -- a fresh open, so what is read back
went through the cipher again and not a cache -- or with another key (`key=`: what a
wrong key does). `close` removes the dm device first, then the loop device, then the
file; it is safe to call twice and after a failed open.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pytest_hwcrypto.block import cryptsetup_temp, dmcrypt, loop, luks
from pytest_hwcrypto.block.crypt_table import CryptSpec
from pytest_hwcrypto.block.naming import next_name
from pytest_hwcrypto.block.tools import BlockError
from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.ledger import Ledger, Undo
from pytest_hwcrypto.vocabulary import MIB, PROC_CRYPTO

DEFAULT_SIZE = 32 * MIB
# LUKS2 with dm-integrity: cryptsetup builds capi:authenc(hmac(sha256),xts(aes))-random.
INTEGRITY_CIPHERS = {"xts(aes)": "aes-xts-random"}
INTEGRITY_MAC = "hmac-sha256"
INTEGRITY_OVERHEAD = 32 * MIB


def live_winner_driver(algorithm: str, proc_crypto: Path = PROC_CRYPTO) -> str | None:
    """The driver the kernel hands out for `algorithm` now; a template name (xts(aes)) is
    bound once through AF_ALG first, so its instance exists to be listed."""
    with contextlib.suppress(afalg.AfAlgError):
        afalg.instantiate_any(algorithm, key=bytes(64))
    found = [a for a in read_proc_crypto(proc_crypto) if a.name == algorithm and not a.is_internal]
    return max(found, key=lambda a: a.priority or 0).driver if found else None


@dataclass
class Volume:
    name: str
    loop: loop.LoopDevice
    crypt: dmcrypt.CryptDevice | luks.LuksDevice | None
    key: bytes = field(repr=False)  # in memory only; repr never shows it
    luks_uuid: str | None = None  # a LUKS2 volume's header UUID
    # The dm device as last opened, kept after close_crypt so open_crypt can make it again.
    last: dmcrypt.CryptDevice | luks.LuksDevice | None = None
    algorithm: str | None = None  # the kernel name the driver implements, when known

    @property
    def path(self) -> str:
        return self._open().path

    @property
    def driver(self) -> str:
        return self._open().driver

    @property
    def sector_size(self) -> int:
        return self._open().sector_size

    @property
    def evidence(self) -> str:
        return self._open().evidence

    @property
    def size(self) -> int:
        return self.loop.size

    def _open(self) -> dmcrypt.CryptDevice | luks.LuksDevice:
        if self.crypt is None:
            raise BlockError(f"volume {self.name} is closed")
        return self.crypt


class VolumeMaker:
    def __init__(
        self, ledger: Ledger, directory: Path | None = None, proc_crypto: Path = PROC_CRYPTO
    ) -> None:
        self.ledger = ledger
        self.directory = directory
        self.proc_crypto = proc_crypto

    def open(
        self,
        driver: str,
        key_bits: int,
        sector_size: int = 512,
        size: int = DEFAULT_SIZE,
        iv_mode: str = "plain64",
        flags: tuple[str, ...] = (),
    ) -> Volume:
        if key_bits <= 0 or key_bits % 8:
            raise BlockError(f"key size {key_bits} bits is not a whole number of bytes")
        name = next_name()
        device = loop.attach(self.ledger, name, size, self.directory)
        volume = Volume(name, device, None, os.urandom(key_bits // 8))
        try:
            volume.crypt = self._crypt(volume, CryptSpec(driver, iv_mode, flags), sector_size)
        except BaseException:
            self.close(volume)
            raise
        return volume

    def _crypt(
        self, volume: Volume, spec: CryptSpec, sector_size: int, key: bytes | None = None
    ) -> dmcrypt.CryptDevice:
        return dmcrypt.create(
            self.ledger,
            f"{volume.name}-crypt",
            volume.loop,
            spec,
            volume.key if key is None else key,
            sector_size,
            self.proc_crypto,
        )

    def open_cryptsetup(self, spec: luks.CryptsetupFormat, size: int = DEFAULT_SIZE) -> Volume:
        """A LUKS2 (formatted here) or plain volume made by cryptsetup on a new loop device."""
        if spec.kind not in luks.KINDS:
            raise BlockError(f"cryptsetup volume type {spec.kind!r} is not one of {luks.KINDS}")
        name = next_name()
        device = loop.attach(self.ledger, name, size, self.directory)
        secret = spec.key_bits // 8 if spec.kind == luks.PLAIN else luks.PASSPHRASE_BYTES
        volume = Volume(name, device, None, os.urandom(secret))
        try:
            if spec.kind == luks.LUKS2:
                volume.luks_uuid = luks.luks_format(self.ledger, device, spec, volume.key)
            volume.crypt = self._luks(volume, spec)
        except BaseException:
            self.close(volume)
            raise
        return volume

    def _luks(
        self, volume: Volume, spec: luks.CryptsetupFormat, key: bytes | None = None
    ) -> luks.LuksDevice:
        return luks.open_volume(
            self.ledger,
            f"{volume.name}-crypt",
            volume.loop,
            spec,
            volume.key if key is None else key,
            volume.luks_uuid,
            self.proc_crypto,
        )

    def reopen(self, volume: Volume, key: bytes | None = None) -> Volume:
        """Close the dm device and open it again on the same loop device: with the
        volume's key, or with `key` (the volume keeps its own key for the next reopen)."""
        self.close_crypt(volume)
        return self.open_crypt(volume, key)

    def close_crypt(self, volume: Volume) -> None:
        """Remove the dm device only: the loop device and its file stay, to be looked at."""
        if volume.crypt is not None:
            volume.last = volume.crypt
            self._remove(volume.crypt)
            volume.crypt = None

    def open_crypt(self, volume: Volume, key: bytes | None = None) -> Volume:
        """Open the dm device of a volume whose dm device was closed, as it was made."""
        if volume.crypt is not None:
            raise BlockError(f"volume {volume.name} is open already")
        last = volume.last
        if last is None:
            raise BlockError(f"volume {volume.name} was never opened")
        if isinstance(last, luks.LuksDevice):
            volume.crypt = self._luks(volume, last.format, key)
        else:
            volume.crypt = self._crypt(volume, last.spec, last.sector_size, key)
        return volume

    def _remove(self, crypt: dmcrypt.CryptDevice | luks.LuksDevice) -> None:
        if isinstance(crypt, luks.LuksDevice):
            luks.close(self.ledger, crypt)
        else:
            dmcrypt.remove(self.ledger, crypt)

    def close(self, volume: Volume) -> None:
        """dm device first (it holds the loop device), then the loop device and its file."""
        if volume.crypt is not None:
            self._remove(volume.crypt)
            volume.crypt = None
        loop.detach(self.ledger, volume.loop)

    def make(
        self,
        algorithm: str | None = None,
        driver: str | None = None,
        key_bits: int = 256,
        sector_size: int = 512,
        size: int = DEFAULT_SIZE,
        integrity: bool = False,
    ) -> Volume:
        """A volume of `algorithm` on `driver` (the name's winner when not given): a raw
        pinned table, or with `integrity` a LUKS2 volume with dm-integrity
        (INTEGRITY_CIPHERS), which runs the winner of its name."""
        if algorithm is None and driver is None:
            raise BlockError("a volume needs an algorithm (e.g. xts(aes)) or a driver")
        serving = driver or live_winner_driver(str(algorithm), self.proc_crypto)
        if serving is None:
            raise BlockError(f"no driver of {algorithm} is registered on this kernel")
        if not integrity:
            volume = self.open(serving, key_bits, sector_size, size)
        else:
            volume = self._integrity_volume(algorithm, serving, key_bits, sector_size, size)
        volume.algorithm = algorithm
        return volume

    def _integrity_volume(
        self, algorithm: str | None, driver: str, key_bits: int, sector_size: int, size: int
    ) -> Volume:
        cipher = INTEGRITY_CIPHERS.get(algorithm or "")
        if cipher is None:
            raise BlockError(
                f"integrity volumes are made for {', '.join(INTEGRITY_CIPHERS)}, not {algorithm}"
            )
        winner = live_winner_driver(str(algorithm), self.proc_crypto)
        if driver != winner:
            raise BlockError(
                f"an integrity volume runs the winner of {algorithm} ({winner}): cryptsetup "
                f"names the cipher ({cipher}), not the driver; make {driver} the winner "
                "first (hwcrypto_prefer)"
            )
        spec = luks.CryptsetupFormat(
            luks.LUKS2, cipher, key_bits, driver, sector_size, INTEGRITY_MAC
        )
        # The tags (48 bytes a sector), the journal and the LUKS2 header come on top.
        return self.open_cryptsetup(spec, size + size // 8 + INTEGRITY_OVERHEAD)

    @contextmanager
    def volume(
        self, driver: str, key_bits: int, sector_size: int = 512, size: int = DEFAULT_SIZE
    ) -> Iterator[Volume]:
        made = self.open(driver, key_bits, sector_size, size)
        try:
            yield made
        finally:
            self.close(made)


def undo_handlers() -> dict[str, Undo]:
    """Undo functions of the kinds this package records (run.undo_handlers wires them)."""
    return {
        dmcrypt.LEDGER_KIND: dmcrypt.undo_dm,
        loop.LEDGER_KIND: loop.undo_loop,
        cryptsetup_temp.LEDGER_KIND: cryptsetup_temp.undo_temporary,
    }
