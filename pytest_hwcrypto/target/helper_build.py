# SPDX-License-Identifier: MIT
"""The board-side helper, built on the host for the board's architecture and cached.

The C source ships in the wheel (target/helper/). It is linked statically with the
distribution's cross compiler for the architecture `uname -m` reports on the board, so the
board needs no libc of a matching version, only a Linux kernel. Builds are kept under
~/.cache/pytest-hwcrypto/helper/<architecture>-<source hash>/ : a changed source or
compiler flags give a new hash, an unchanged one is never rebuilt.

To add an architecture, add its `uname -m` names and its compiler to COMPILERS and install
the compiler with its static libc (Debian: gcc-<triplet> and libc6-dev-<arch>-cross).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_hwcrypto.target.protocol import TargetError

SOURCE = Path(__file__).with_name("helper") / "hwcrypto-helper.c"
CFLAGS = ("-O2", "-Wall", "-static", "-s")
BUILD_SECONDS = 300.0


@dataclass(frozen=True)
class Compiler:
    architecture: str  # the cache's name for it
    program: str
    debian_packages: str


_X86_64 = Compiler("x86_64", "gcc", "gcc libc6-dev")
_ARM64 = Compiler("aarch64", "aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu libc6-dev-arm64-cross")
_ARMHF = Compiler(
    "armhf", "arm-linux-gnueabihf-gcc", "gcc-arm-linux-gnueabihf libc6-dev-armhf-cross"
)
# `uname -m` on the board -> the compiler for it.
COMPILERS: Mapping[str, Compiler] = {
    "x86_64": _X86_64,
    "aarch64": _ARM64,
    "arm64": _ARM64,
    "armv7l": _ARMHF,
    "armv8l": _ARMHF,
}


def compiler_for(machine: str) -> Compiler:
    """The cross compiler for a board whose `uname -m` is `machine`; one line if none."""
    found = COMPILERS.get(machine.strip())
    if found is None:
        known = ", ".join(sorted(COMPILERS))
        raise TargetError(
            f"no compiler for the board's architecture {machine.strip()!r} "
            f"(the helper builds for {known}; docs/targets.md says how to add one)"
        )
    return found


def cache_root(environ: Mapping[str, str] = os.environ) -> Path:
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "pytest-hwcrypto" / "helper"


def source_hash(source: Path = SOURCE) -> str:
    digest = hashlib.sha256(source.read_bytes())
    digest.update(" ".join(CFLAGS).encode())
    return digest.hexdigest()[:16]


def built_helper(
    machine: str, environ: Mapping[str, str] = os.environ, source: Path = SOURCE
) -> Path:
    """The static helper for `machine`, built now or taken from the cache."""
    compiler = compiler_for(machine)
    target = (
        cache_root(environ) / f"{compiler.architecture}-{source_hash(source)}" / "hwcrypto-helper"
    )
    if target.is_file():
        return target
    program = shutil.which(compiler.program)
    if program is None:
        raise TargetError(
            f"the helper for {machine} needs {compiler.program}: "
            f"apt-get install {compiler.debian_packages}"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"hwcrypto-helper.{os.getpid()}.partial")
    argv = [program, *CFLAGS, "-o", str(partial), str(source)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=BUILD_SECONDS, check=False)
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        said = lines[-1] if lines else f"exit status {done.returncode}"
        hint = ""
        if "cannot find -lc" in done.stderr:
            hint = f" (no static libc: apt-get install {compiler.debian_packages})"
        raise TargetError(f"building the helper with {compiler.program} failed: {said}{hint}")
    os.replace(partial, target)
    return target
