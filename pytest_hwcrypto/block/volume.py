"""A dm-crypt volume on its own loop device: made, reopened and torn down as one.

`VolumeMaker.open(driver, key_bits, sector_size, size)` attaches a loop device to a fresh
sparse file, generates a key in memory and opens a dm-crypt volume pinned to `driver` on
it (block/dmcrypt.py proves the driver). `reopen` closes the dm device and opens it again
with the same key -- a fresh open, so what is read back went through the cipher again and
not a cache. `close` removes the dm device first, then the loop device, then the file; it
is safe to call twice and after a failed open.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pytest_hwcrypto.block import dmcrypt, loop
from pytest_hwcrypto.block.crypt_table import CryptSpec
from pytest_hwcrypto.block.naming import next_name
from pytest_hwcrypto.block.tools import BlockError
from pytest_hwcrypto.ledger import Ledger, Undo
from pytest_hwcrypto.vocabulary import MIB, PROC_CRYPTO

DEFAULT_SIZE = 32 * MIB


@dataclass
class Volume:
    name: str
    loop: loop.LoopDevice
    crypt: dmcrypt.CryptDevice | None
    key: bytes = field(repr=False)  # in memory only; repr never shows it

    @property
    def path(self) -> str:
        return self._open().path

    @property
    def driver(self) -> str:
        return self._open().spec.driver

    @property
    def sector_size(self) -> int:
        return self._open().sector_size

    @property
    def evidence(self) -> str:
        return self._open().evidence

    @property
    def size(self) -> int:
        return self.loop.size

    def _open(self) -> dmcrypt.CryptDevice:
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
    ) -> Volume:
        if key_bits <= 0 or key_bits % 8:
            raise BlockError(f"key size {key_bits} bits is not a whole number of bytes")
        name = next_name()
        device = loop.attach(self.ledger, name, size, self.directory)
        volume = Volume(name, device, None, os.urandom(key_bits // 8))
        try:
            volume.crypt = self._crypt(volume, CryptSpec(driver, iv_mode), sector_size)
        except BaseException:
            self.close(volume)
            raise
        return volume

    def _crypt(self, volume: Volume, spec: CryptSpec, sector_size: int) -> dmcrypt.CryptDevice:
        return dmcrypt.create(
            self.ledger,
            f"{volume.name}-crypt",
            volume.loop,
            spec,
            volume.key,
            sector_size,
            self.proc_crypto,
        )

    def reopen(self, volume: Volume) -> Volume:
        """Close the dm device and open it again on the same loop device with the same key."""
        crypt = volume._open()
        dmcrypt.remove(self.ledger, crypt)
        volume.crypt = None
        volume.crypt = self._crypt(volume, crypt.spec, crypt.sector_size)
        return volume

    def close(self, volume: Volume) -> None:
        """dm device first (it holds the loop device), then the loop device and its file."""
        if volume.crypt is not None:
            dmcrypt.remove(self.ledger, volume.crypt)
            volume.crypt = None
        loop.detach(self.ledger, volume.loop)

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
    return {dmcrypt.LEDGER_KIND: dmcrypt.undo_dm, loop.LEDGER_KIND: loop.undo_loop}
