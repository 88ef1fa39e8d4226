# SPDX-License-Identifier: MIT
"""dm-crypt tables (pure): the line that pins a volume to one driver, and reading it back.

`capi:<driver>-<ivmode>` makes dm-crypt allocate exactly that kernel driver (it splits the
IV mode off at the last '-'), e.g. `capi:xts(ecb(aes-generic))-plain64` or
`capi:cbc-aes-aesni-plain64`. The table is

    0 <length in 512-byte sectors> crypt <cipher> <hex key> <iv offset> <device> <offset>
      [1 sector_size:<bytes>]

and `dmsetup table` prints it back with the key replaced by zeros (without --showkeys),
which is how a volume is checked to run the cipher it was asked for.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_hwcrypto.block.tools import BlockError

SECTOR = 512
SECTOR_SIZES = (512, 4096)
IV_MODES = ("plain64", "plain")
# essiv:<hash driver>: dm-crypt wraps the cipher as essiv(<driver>,<hash driver>) and asks
# for that by name, which only matches an instance's driver name when the hash is named
# by its driver too (essiv:sha256 gives ENOENT under capi:, essiv:sha256-generic works).
ESSIV = "essiv:"


# dm-crypt's optional table flags (5.9+) that take its own workqueues out of the path: a
# read is decrypted where the I/O completes, a write encrypted in the submitter's context.
# How many requests the cipher sees in flight depends on them, so the depth sweep runs with
# and without both (measure/dmcrypt_depth.py).
NO_READ_WORKQUEUE = "no_read_workqueue"
NO_WRITE_WORKQUEUE = "no_write_workqueue"
TABLE_FLAGS = (NO_READ_WORKQUEUE, NO_WRITE_WORKQUEUE)


@dataclass(frozen=True)
class CryptSpec:
    """One exact driver and IV mode, as dm-crypt's cipher field names it, and table flags."""

    driver: str  # e.g. xts(ecb(aes-generic)), cbc-aes-aesni
    iv_mode: str = "plain64"
    flags: tuple[str, ...] = ()  # of TABLE_FLAGS

    @property
    def cipher(self) -> str:
        return f"capi:{self.driver}-{self.iv_mode}"

    @property
    def serving_driver(self) -> str:
        """The driver whose refcnt proves the volume: the essiv instance around `driver`."""
        if self.iv_mode.startswith(ESSIV):
            return f"essiv({self.driver},{self.iv_mode[len(ESSIV) :]})"
        return self.driver


def valid_iv_mode(iv_mode: str) -> bool:
    return iv_mode in IV_MODES or (iv_mode.startswith(ESSIV) and len(iv_mode) > len(ESSIV))


@dataclass(frozen=True)
class TableLine:
    cipher: str
    device: str  # as dm prints it: MAJ:MIN
    sector_size: int
    flags: tuple[str, ...] = ()  # the TABLE_FLAGS it shows, sorted


def table_line(spec: CryptSpec, key: bytes, device: str, size: int, sector_size: int) -> bytes:
    """The table for a volume over all of `device` (`size` bytes), as bytes for stdin."""
    if sector_size not in SECTOR_SIZES:
        raise BlockError(f"sector size {sector_size} is not one of {SECTOR_SIZES}")
    if not valid_iv_mode(spec.iv_mode):
        raise BlockError(
            f"IV mode {spec.iv_mode!r} is not one of {', '.join(IV_MODES)} or essiv:<hash driver>"
        )
    if size <= 0 or size % sector_size:
        raise BlockError(f"volume size {size} is not a multiple of the sector size {sector_size}")
    if not key:
        raise BlockError("a dm-crypt volume needs a key")
    unknown = [flag for flag in spec.flags if flag not in TABLE_FLAGS]
    if unknown:
        raise BlockError(f"dm-crypt flag {unknown[0]!r} is not one of {', '.join(TABLE_FLAGS)}")
    words = [f"sector_size:{sector_size}"] if sector_size != SECTOR else []
    words += sorted(set(spec.flags))
    options = f" {len(words)} {' '.join(words)}" if words else ""
    line = f"0 {size // SECTOR} crypt {spec.cipher} {key.hex()} 0 {device} 0{options}\n"
    return line.encode()


def parse_table(text: str) -> TableLine:
    """What `dmsetup table NAME` says of a one-target crypt volume."""
    fields = text.split()
    if len(fields) < 8 or fields[2] != "crypt":
        raise BlockError(f"not a dm-crypt table: {' '.join(fields[:3]) or 'empty'}")
    sector_size = SECTOR
    for option in fields[8:]:
        if option.startswith("sector_size:"):
            sector_size = int(option.split(":", 1)[1])
    flags = tuple(sorted(option for option in fields[8:] if option in TABLE_FLAGS))
    # fields[4] is the key, zeros unless --showkeys: it is never kept.
    return TableLine(cipher=fields[3], device=fields[6], sector_size=sector_size, flags=flags)
