# SPDX-License-Identifier: MIT
"""Loop devices on sparse backing files in the plugin's own directory.

The backing file is created (sparse: `truncate`, no bytes written) and recorded in the
ledger *before* it is attached, under LEDGER_KIND with its path as the key. A loop device
is then only ever found through that file (`losetup -j FILE`), so undoing detaches exactly
the loop devices backed by a file the plugin made -- never one made by hand, whatever its
name or number -- and deletes the file.

The directory defaults to `<ledger state dir>/block`, on /run: tmpfs, so nothing of a
volume (its ciphertext; keys never leave memory) outlives a reboot.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_hwcrypto.block.tools import BlockError, run
from pytest_hwcrypto.ledger import Entry, Ledger, state_dir

LEDGER_KIND = "loop"
BACKING_DIR_ENV = "HWCRYPTO_BLOCK_DIR"


def backing_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get(BACKING_DIR_ENV) or state_dir(env) / "block")


@dataclass(frozen=True)
class LoopDevice:
    device: str  # /dev/loopN
    backing: Path
    size: int  # bytes


def loops_backed_by(backing: Path) -> list[str]:
    """The loop devices attached to exactly this file (`losetup -j` prints `DEV: ...`)."""
    out = run(["losetup", "--associated", str(backing)])
    return [line.split(":", 1)[0] for line in out.splitlines() if ":" in line]


def attach(ledger: Ledger, name: str, size: int, directory: Path | None = None) -> LoopDevice:
    """A new sparse file `<dir>/<name>.img` of `size` bytes attached to a free loop device."""
    if size <= 0 or size % 4096:
        raise BlockError(f"loop size {size} must be a positive multiple of 4096 bytes")
    folder = directory or backing_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    backing = folder / f"{name}.img"
    # Recorded first: a kill between here and the attach leaves a file the sweep removes.
    ledger.record(Entry(LEDGER_KIND, str(backing), {"backing": str(backing)}))
    try:
        with open(backing, "xb") as handle:
            handle.truncate(size)
        device = run(["losetup", "--find", "--show", str(backing)]).strip()
        if not device.startswith("/dev/loop"):
            raise BlockError(f"losetup --find --show printed {device!r}, not a loop device")
    except (OSError, BlockError) as error:
        undo_loop({"backing": str(backing)})
        ledger.strike(LEDGER_KIND, str(backing))
        raise BlockError(f"cannot attach a loop device to {backing}: {error}") from None
    return LoopDevice(device, backing, size)


def detach(ledger: Ledger, loop: LoopDevice) -> None:
    undo_loop({"backing": str(loop.backing)})
    ledger.strike(LEDGER_KIND, str(loop.backing))


def undo_loop(undo: Mapping[str, Any]) -> str:
    """Detach every loop device on the recorded backing file, then delete the file.

    The ledger's undo for LEDGER_KIND (also in sweeps, after the dm devices on top are
    gone: the ledger undoes newest first).
    """
    backing = Path(str(undo["backing"]))
    if not backing.exists():
        return f"{backing}: already gone, no loop device to detach"
    try:
        devices = loops_backed_by(backing)
        for device in devices:
            run(["losetup", "--detach", device])
    except BlockError as error:
        raise OSError(str(error)) from None  # the sweep keeps the entry for the next try
    backing.unlink(missing_ok=True)
    detached = f"detached {', '.join(devices)} and " if devices else ""
    return f"{detached}removed {backing}"
