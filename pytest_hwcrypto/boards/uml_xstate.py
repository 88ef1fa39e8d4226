# SPDX-License-Identifier: MIT
"""Make Debian's UML kernel (6.1) run on hosts with more FPU state than AVX.

UML restores a guest process's FPU registers with PTRACE_SETREGSET and an XSAVE buffer
sized for x87+SSE+AVX (832 bytes). On a host CPU with AVX-512, AMX, PKRU or MPX the full
XSAVE area is larger, the host kernel refuses the short write with EFAULT, and the guest's
init dies at its first page fault ("userspace - ptrace set fp regs failed, errno = 14",
then "Attempted to kill init!"; seen on an AVX-512 + AMX Xeon, host kernel 6.18).

Forcing UML onto its x87/SSE fallback boots, but loses the AVX upper halves whenever UML
restores registers: glibc's AVX2/EVEX string functions then return wrong results in the
guest (printf printed its format unexpanded; Python died in getpath). So instead a small
preloaded library (uml_xstate.c) completes each short SETREGSET with the tracee's own
remaining state, and the guest is told not to use AVX-512 (glibc tunables, OpenSSL's
capability mask): UML keeps one register image per guest thread only for the first 832
bytes, so AVX-512 registers of two threads of one process could otherwise mix.

The library is built with the host's C compiler once per source version and cached.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.boards.helpers import cache_dir

CPUINFO = Path("/proc/cpuinfo")
# /proc/cpuinfo flags of user XSAVE components beyond AVX (XSAVE feature bits 3-9, 17-18).
BEYOND_AVX_FLAGS = ("mpx", "avx512f", "ospke", "amx_tile")
SOURCE_NAME = "uml_xstate.c"

# Exported in the guest when the library is in use (see the module docstring).
GUEST_ENVIRONMENT = {
    "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD",
    # CPUID leaf 7 EBX bits of AVX512F, DQ, IFMA, BW and VL, cleared.
    "OPENSSL_ia32cap": ":~0xc0230000",
}


def state_beyond_avx(cpuinfo: str) -> list[str]:
    """The flags of the first CPU in /proc/cpuinfo text that make XSAVE larger than AVX's."""
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "flags":
            flags = set(value.split())
            return [flag for flag in BEYOND_AVX_FLAGS if flag in flags]
    return []


def host_state_beyond_avx() -> list[str]:
    try:
        return state_beyond_avx(CPUINFO.read_text())
    except OSError:
        return []


def preload_library(cache: Path | None = None) -> Path:
    """The built library (built now if this source version has not been built yet)."""
    source = resources.files("pytest_hwcrypto.boards").joinpath(SOURCE_NAME).read_bytes()
    digest = hashlib.sha256(source).hexdigest()[:16]
    target = (cache or cache_dir()) / f"uml-xstate-{digest}.so"
    if target.is_file():
        return target
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise BoardError(
            "the UML board needs a C compiler on this CPU (its FPU state is larger than "
            "Debian's UML kernel can restore; see boards/uml_xstate.py): "
            "apt-get install gcc libc6-dev"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    # Built beside the cache: os.replace cannot cross file systems (a tmpfs /tmp and a home
    # on disk, as on a fresh machine), and there it would fail with EXDEV.
    with tempfile.TemporaryDirectory(prefix=".build-", dir=target.parent) as build_dir:
        source_path = Path(build_dir) / SOURCE_NAME
        source_path.write_bytes(source)
        built = Path(build_dir) / target.name
        done = subprocess.run(
            [compiler, "-O2", "-shared", "-fPIC", "-o", str(built), str(source_path)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            last_line = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            raise BoardError(
                f"building the UML board's ptrace shim with {compiler} failed: {last_line}"
            )
        # Atomic: a concurrent build of the same version just replaces it with its twin.
        os.replace(built, target)
    return target
