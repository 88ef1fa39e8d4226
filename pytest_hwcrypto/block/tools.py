# SPDX-License-Identifier: MIT
"""Running losetup and dmsetup, and saying why block devices cannot be made here.

One concern: the external commands. Every failure becomes a BlockError whose message is
one line naming the command and the tool's last line of complaint, so a fixture can turn
it into a skip or a failure without a traceback. Secrets are passed on stdin only (never
argv, which /proc/<pid>/cmdline shows to every user) and never appear in a message.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from pytest_hwcrypto.kernel.modprobe import load_module_quietly

COMMAND_TIMEOUT = 60.0
DM_CONTROL = Path("/dev/mapper/control")


class BlockError(RuntimeError):
    """A loop or dm-crypt operation failed; the message says which and why."""


class CommandFailed(BlockError):
    """A command ran and exited non-zero; `returncode` tells which failure it reports."""

    def __init__(self, message: str, returncode: int) -> None:
        super().__init__(message)
        self.returncode = returncode


def run(argv: Sequence[str], stdin: bytes | None = None, *, secret: bool = False) -> str:
    """Run `argv` and return its stdout; `secret`: stdin holds a key, never echo it."""
    env = dict(os.environ)
    # Without udev (the boards, containers) dmsetup would wait for udev cookies forever.
    env.setdefault("DM_DISABLE_UDEV", "1")
    try:
        done = subprocess.run(
            list(argv),
            input=stdin,
            capture_output=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
            env=env,
        )
    except FileNotFoundError:
        raise BlockError(f"{argv[0]} is not installed ({install_hint(argv[0])})") from None
    except subprocess.TimeoutExpired:
        raise BlockError(f"{' '.join(argv)}: no answer after {COMMAND_TIMEOUT:g} s") from None
    if done.returncode != 0:
        complaint = done.stderr.decode(errors="replace").strip().splitlines()
        last = complaint[-1] if complaint else f"exit status {done.returncode}"
        shown = " ".join(argv) + (" (table on stdin, key withheld)" if secret else "")
        raise CommandFailed(f"{shown}: {last}", done.returncode)
    return done.stdout.decode(errors="replace")


def install_hint(program: str) -> str:
    package = {"losetup": "mount", "dmsetup": "dmsetup"}.get(program, program)
    return f"apt-get install {package}"


def unavailable_reason() -> str | None:
    """Why loop + dm-crypt volumes cannot be made here, with how to fix it; None if they can."""
    if os.geteuid() != 0:
        return "loop devices and dm-crypt volumes need root: run as root (or inside a board)"
    for program in ("losetup", "dmsetup"):
        if shutil.which(program) is None:
            return f"{program} is not installed: {install_hint(program)}"
    for module in ("loop", "dm_crypt"):
        load_module_quietly(module)
    if not DM_CONTROL.exists():
        return (
            f"{DM_CONTROL} is missing: this kernel has no device-mapper "
            "(CONFIG_BLK_DEV_DM; run inside a board: --hwcrypto-vm=uml)"
        )
    try:
        targets = run(["dmsetup", "targets"])
    except BlockError as error:
        return str(error)
    if not any(line.split()[:1] == ["crypt"] for line in targets.splitlines()):
        return "device-mapper has no crypt target: modprobe dm_crypt (CONFIG_DM_CRYPT)"
    return None
