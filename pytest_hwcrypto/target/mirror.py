# SPDX-License-Identifier: MIT
"""The board's own files that describe its kernel, copied to a directory on the host.

The kernel facts (release, config, self-tests, user API, blacklists) are read from files:
gather_kernel_facts reads them under a root directory. Copying the board's few files into
a directory laid out like its / lets the same code read a remote kernel, with one command
over the transport (a slow serial line included) instead of one per file.
"""

from __future__ import annotations

import base64
import shlex
from pathlib import Path

from pytest_hwcrypto.target.protocol import TargetError, Transport, checked

_BEGIN = "hwcrypto-file "
_FIXED = (
    "/proc/sys/kernel/osrelease",
    "/proc/sys/crypto/fips_enabled",
    "/proc/config.gz",
    "/proc/modules",
    "/proc/cpuinfo",
    "/proc/cmdline",
    "/proc/crypto",
)


def _per_release(release: str) -> tuple[str, ...]:
    return (
        f"/boot/config-{release}",
        f"/lib/modules/{release}/modules.builtin",
        f"/lib/modules/{release}/modules.dep",
        f"/lib/modules/{release}/config",
    )


def fetch_command(paths: tuple[str, ...]) -> str:
    """One shell command that prints each readable file as a header line and its base64."""
    quoted = " ".join(shlex.quote(path) for path in paths)
    modprobe = "/etc/modprobe.d/*.conf /lib/modprobe.d/*.conf /usr/lib/modprobe.d/*.conf"
    return (
        f"for f in {quoted} {modprobe}; do "
        f'[ -f "$f" ] && [ -r "$f" ] || continue; echo "{_BEGIN}$f"; base64 < "$f"; done'
    )


def parse_fetched(text: str) -> dict[str, bytes]:
    """The files `fetch_command` printed, by their board path (pure)."""
    files: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith(_BEGIN):
            current = files.setdefault(line[len(_BEGIN) :].strip(), [])
        elif current is not None:
            current.append(line.strip())
    return {path: base64.b64decode("".join(lines)) for path, lines in files.items()}


def mirror_board(transport: Transport, root: Path) -> dict[str, bytes]:
    """Copy the board's kernel-describing files under `root`; the files, by board path."""
    release = checked(transport, "cat /proc/sys/kernel/osrelease").strip()
    if not release:
        raise TargetError(f"{transport.describe()}: /proc/sys/kernel/osrelease is empty")
    fetched = parse_fetched(checked(transport, fetch_command(_FIXED + _per_release(release))))
    if "/proc/crypto" not in fetched:
        raise TargetError(
            f"{transport.describe()}: no /proc/crypto (a kernel without CONFIG_CRYPTO?)"
        )
    for path, data in fetched.items():
        local = root / path.lstrip("/")
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_bytes(data)
    return fetched
