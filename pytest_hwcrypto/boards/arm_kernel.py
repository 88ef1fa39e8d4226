# SPDX-License-Identifier: MIT
"""Debian's kernel for an ARM board: image, modules and headers, fetched and cached.

The packages come through a private APT configuration (boards/private_apt.py), so the
host's dpkg never learns about arm64 or armhf. Unpacked into the user's cache under the
kernel release: `boot/vmlinuz-<release>`, `lib/modules/<release>` (with modules.dep made
by the host's depmod, which reads modules of any architecture) and the headers
(`usr/src/linux-headers-<release>` with its `-common` tree and the host-architecture
`linux-kbuild` of the same version, which the headers' `scripts` link points at), which
is what out-of-tree modules are cross-built against (boards/kmod_build.py).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from pytest_hwcrypto.boards.arm_arch import ArmArch
from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.boards.private_apt import PrivateApt, unpack

Progress = Callable[[str], None]
COMPLETE_MARKER = ".complete"


@dataclass(frozen=True)
class ArmKernel:
    release: str
    image: Path
    modules_dir: Path
    headers_dir: Path | None  # the kbuild directory modules are built against


def host_arch() -> str:
    done = subprocess.run(
        ["dpkg", "--print-architecture"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or "amd64"


def apt_for(arch: str, cache: Path, progress: Progress) -> PrivateApt:
    return PrivateApt(arch, cache / "arm" / f"apt-{arch}", progress)


def debian_release(arch: ArmArch, cache: Path, progress: Progress) -> str:
    """The ABI release of Debian's current kernel for `arch` (6.1.0-57-arm64)."""
    apt = apt_for(arch.debian_arch, cache, progress)
    meta = f"linux-image-{arch.kernel_flavour}"
    prefix = "linux-image-"
    for package in apt.dependencies(meta):
        if package.startswith(prefix) and package.endswith(arch.kernel_flavour):
            return package[len(prefix) :]
    raise BoardError(f"Debian's {meta} ({arch.debian_arch}) names no kernel package")


def kernel_tree(arch: ArmArch, release: str, cache: Path) -> Path:
    return cache / "arm" / arch.debian_arch / f"kernel-{release}"


def fetch_debian_kernel(arch: ArmArch, cache: Path, progress: Progress) -> ArmKernel:
    """Debian's current kernel for `arch`, fetched and unpacked once per release."""
    release = debian_release(arch, cache, progress)
    tree = kernel_tree(arch, release, cache)
    if not (tree / COMPLETE_MARKER).is_file():
        began = time.monotonic()
        _fetch(arch, release, tree, cache, progress)
        progress(f"{arch.board}: kernel {release} ready in {time.monotonic() - began:.1f} s")
    return kernel_in(tree, release)


def kernel_in(tree: Path, release: str) -> ArmKernel:
    headers = tree / "usr" / "src" / f"linux-headers-{release}"
    return ArmKernel(
        release=release,
        image=tree / "boot" / f"vmlinuz-{release}",
        modules_dir=tree / "lib" / "modules" / release,
        headers_dir=headers if (headers / "Makefile").is_file() else None,
    )


def _fetch(arch: ArmArch, release: str, tree: Path, cache: Path, progress: Progress) -> None:
    apt = apt_for(arch.debian_arch, cache, progress)
    image, headers = f"linux-image-{release}", f"linux-headers-{release}"
    needed = apt.dependencies(headers)
    common = [name for name in needed if name.startswith("linux-headers-")]
    kbuild = [name for name in needed if name.startswith("linux-kbuild-")]
    progress(f"{arch.board}: fetching {image} and {headers} ({arch.debian_arch})")
    partial = tree.with_name(tree.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    debs = apt.download([image, headers, *common], partial / "debs")
    if kbuild:
        # kbuild's programs (fixdep, modpost) run on the host: its architecture, the
        # version the ARM headers were made with.
        version = apt.version(kbuild[0])
        host = apt_for(host_arch(), cache, progress)
        debs += host.download([f"{kbuild[0]}={version}"], partial / "debs-host")
    progress(f"{arch.board}: unpacking {len(debs)} packages")
    unpack(debs, partial)
    shutil.rmtree(partial / "debs", ignore_errors=True)
    shutil.rmtree(partial / "debs-host", ignore_errors=True)
    _point_headers_at(partial, release)
    _depmod(partial, release)
    shutil.rmtree(tree, ignore_errors=True)
    partial.rename(tree)
    (tree / COMPLETE_MARKER).touch()


def _point_headers_at(tree: Path, release: str) -> None:
    """Debian's headers Makefile includes /usr/src/linux-headers-<abi>-common/Makefile by
    absolute path; make it the sibling directory, relative, which make (run in the headers
    directory) resolves wherever the cache is."""
    makefile = tree / "usr" / "src" / f"linux-headers-{release}" / "Makefile"
    if not makefile.is_file():
        return
    makefile.write_text(makefile.read_text().replace("/usr/src/", "../"))


def _depmod(tree: Path, release: str) -> None:
    done = subprocess.run(
        ["depmod", "-b", str(tree), release], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise BoardError(f"depmod for {release} failed (apt-get install kmod): {done.stderr}")
