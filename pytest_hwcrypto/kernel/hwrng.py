# SPDX-License-Identifier: MIT
"""The kernel's hardware RNG sources (hw_random): which exist, which is current, its quality.

The hw_random core exposes its state in /sys/class/misc/hw_random/ (the same directory as
/sys/devices/virtual/misc/hw_random/): `rng_available` (every registered source, one
line, space separated), `rng_current` (the one /dev/hwrng reads, "none" without one) and,
since 5.18, `rng_quality` (the current source's entropy estimate per 1024 bits: what the
kernel credits to its pool for each 1024 bits the fill thread mixes in).

`parse_hw_random` is pure; `read_hw_random` reads sysfs; `CurrentSource` switches
`rng_current` with the change written to the run's ledger first, so a run killed while a
source is switched is put back by the next run's start or `hwcrypto sweep`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_hwcrypto.ledger import Entry, Ledger

HW_RANDOM = Path("/sys/class/misc/hw_random")
DEV_HWRNG = Path("/dev/hwrng")
NO_SOURCE = "none"  # what rng_current says when no source is registered or chosen
LEDGER_KIND = "hwrng-current"
# The kernel's quality scale: bits of entropy per 1024 bits read (drivers/char/hw_random).
FULL_QUALITY = 1024


class HwrngError(RuntimeError):
    """A hw_random attribute could not be read or written; the message names the file."""


@dataclass(frozen=True)
class HwrngInventory:
    """What hw_random reported at one moment."""

    available: tuple[str, ...]
    current: str | None  # None: no source is current ("none")
    quality: int | None  # of the current source; None: no rng_quality (before 5.18)

    def to_json(self) -> dict[str, Any]:
        return {"available": list(self.available), "current": self.current, "quality": self.quality}

    def describe(self) -> str:
        """One line for people: `virtio_rng.0 (current, quality 1000), hw_random`."""
        if not self.available:
            return "no hw_random source"
        words = []
        for name in self.available:
            if name != self.current:
                words.append(name)
                continue
            quality = "quality unknown" if self.quality is None else f"quality {self.quality}"
            words.append(f"{name} (current, {quality})")
        return ", ".join(words)


def parse_hw_random(available: str, current: str, quality: str | None) -> HwrngInventory:
    """The three attributes' text as the kernel writes them (trailing newline and all)."""
    names = tuple(available.split())
    chosen = current.strip()
    quality_text = (quality or "").strip()
    return HwrngInventory(
        available=names,
        current=None if chosen in ("", NO_SOURCE) else chosen,
        quality=int(quality_text) if quality_text.isdigit() else None,
    )


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except FileNotFoundError:
        return None
    except OSError as error:
        # rng_quality answers ENODEV when no source is current.
        if path.name == "rng_quality":
            return None
        raise HwrngError(f"cannot read {path}: {error}") from None


def read_hw_random(directory: Path = HW_RANDOM) -> HwrngInventory:
    """The live state; a kernel without the hw_random core has no source."""
    available = _read(directory / "rng_available")
    if available is None:
        return HwrngInventory((), None, None)
    return parse_hw_random(
        available, _read(directory / "rng_current") or "", _read(directory / "rng_quality")
    )


def write_current(name: str, directory: Path = HW_RANDOM) -> None:
    path = directory / "rng_current"
    try:
        # sysfs reads "" as "choose the best again"; a write of no bytes would not reach it.
        path.write_text(name + "\n")
    except OSError as error:
        raise HwrngError(f"cannot write {name!r} to {path}: {error}") from None


class CurrentSource:
    """Makes a source the one /dev/hwrng reads, and puts the original back."""

    def __init__(self, ledger: Ledger, directory: Path = HW_RANDOM) -> None:
        self.ledger = ledger
        self.directory = directory

    @contextmanager
    def switched_to(self, name: str) -> Iterator[HwrngInventory]:
        """`name` current for the block (its inventory then: its own rng_quality)."""
        before = read_hw_random(self.directory)
        if name not in before.available:
            raise HwrngError(f"{name} is not a hw_random source (available: {before.describe()})")
        if before.current == name:
            yield before
            return
        # A source the kernel chose is given back to the kernel's choice (""), so the
        # switch leaves no "set by user" mark (rng_selected) behind.
        chosen_by_user = (_read(self.directory / "rng_selected") or "0").strip() == "1"
        original = before.current if chosen_by_user and before.current else ""
        undo = {"current": original, "directory": str(self.directory)}
        self.ledger.record(Entry(LEDGER_KIND, str(self.directory), undo))
        try:
            write_current(name, self.directory)
            now = read_hw_random(self.directory)
            if now.current != name:
                raise HwrngError(f"wrote {name} to rng_current, but it reads {now.current}")
            yield now
        finally:
            restore_current(undo)
            self.ledger.strike(LEDGER_KIND, str(self.directory))


def restore_current(undo: Mapping[str, Any]) -> str:
    """Put a recorded rng_current back; the ledger's undo for LEDGER_KIND (also in sweeps).

    An empty name means no source was chosen: writing "" makes the kernel choose the best
    quality source again, as it does at boot (and clears its "set by user" mark)."""
    directory = Path(str(undo.get("directory") or HW_RANDOM))
    name = str(undo["current"])
    if name and name not in read_hw_random(directory).available:
        return f"hw_random source {name} is gone, nothing to restore"
    try:
        write_current(name, directory)
    except HwrngError as error:
        raise OSError(str(error)) from None
    return f"restored hw_random's current source to {name or 'the kernel choice'}"
