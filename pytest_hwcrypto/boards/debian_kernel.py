# SPDX-License-Identifier: MIT
"""Kernels given by Debian package: `--hwcrypto-kernel=debian:7.3.4+deb13-amd64`, or an
unpacked split kernel given as a path.

Since 2026 Debian splits a kernel into `linux-binary-unsigned-<ver>` (the image, inside
the modules directory as `/usr/lib/modules/<ver>/vmlinuz.unsigned`), `linux-modules-<ver>`
and `linux-base-<ver>` (System.map, modules.builtin and the build `config`);
`linux-image-<ver>` is a small meta package. Older kernels ship one `linux-image-<ver>`
(or `-unsigned`) with `/boot/vmlinuz-<ver>` and `/lib/modules/<ver>`.

A `debian:<ver>` kernel is fetched by a private APT (boards/private_apt.py: its own
sources, lists and cache; the host's APT and dpkg are never touched) from trixie,
trixie-backports and sid, where Debian's 7.x kernels are, downloaded with `apt-get
download` and unpacked with `dpkg -x` under `~/.cache/pytest-hwcrypto/debian-kernel/<ver>`,
once per version. The unpacked split layout can also be given as paths: the modules
directory itself (the image inside it), or its `vmlinuz.unsigned` alone.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.boards.helpers import cache_dir
from pytest_hwcrypto.boards.private_apt import PrivateApt, PrivateAptError, Progress, unpack

PREFIX = "debian:"
SPLIT_IMAGE = "vmlinuz.unsigned"
# Where Debian's kernels of this era are; sid last, so a version both have comes from trixie.
SUITES = ("trixie", "trixie-updates", "trixie-backports", "sid")
_VERSION = re.compile(r"^[0-9]+\.[0-9]+[0-9A-Za-z.+~-]*-[a-z0-9-]+$")
_DONE = ".unpacked"


def is_package_spec(kernel: str | None) -> bool:
    return bool(kernel) and str(kernel).startswith(PREFIX)


def resolve(
    kernel: str | None,
    modules: str | None,
    progress: Progress | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[str | None, str | None]:
    """`(kernel image, modules directory)` for what was given: a `debian:<ver>` fetched
    (cached), a split modules directory or its `vmlinuz.unsigned` completed, anything
    else unchanged. Raises BoardError with one line naming the option's value."""
    say = progress or _stderr
    if kernel is not None and is_package_spec(kernel):
        version = kernel[len(PREFIX) :]
        image, found = fetch(version, cache_dir(environ) / "debian-kernel", say, environ)
        if modules is not None and Path(modules).resolve() != found.resolve():
            raise BoardError(
                f"--hwcrypto-kernel {kernel} brings its own modules ({found}): "
                f"leave out --hwcrypto-modules {modules}"
            )
        return str(image), str(found)
    if kernel is None:
        return kernel, modules
    given = Path(kernel)
    if given.is_dir() and (given / SPLIT_IMAGE).is_file():
        return str(given / SPLIT_IMAGE), modules or str(given)
    if given.name == SPLIT_IMAGE and modules is None and (given.parent / "kernel").is_dir():
        return kernel, str(given.parent)
    return kernel, modules


def fetch(
    version: str, root: Path, progress: Progress, environ: Mapping[str, str] | None = None
) -> tuple[Path, Path]:
    """Debian's kernel `version` (`7.3.4+deb13-amd64`) unpacked under `root`/<version>:
    its image and modules directory. Cached: a complete unpack is used as it is."""
    if not _VERSION.match(version):
        raise BoardError(
            f"--hwcrypto-kernel debian:{version}: not a Debian kernel version "
            "(like debian:7.3.4+deb13-amd64, as in linux-modules-<version>)"
        )
    target = root / version
    if (target / _DONE).is_file():
        found = locate(target / "tree", version)
        if found is not None:
            return found
    apt = PrivateApt("amd64", root / "apt", progress, environ, suites=SUITES)
    try:
        packages = _packages(apt, version)
        if target.exists():
            shutil.rmtree(target)
        debs = apt.download(packages, target / "debs")
        progress(f"unpacking Debian's {version} ({', '.join(packages)})")
        unpack(debs, target / "tree")
    except PrivateAptError as error:
        first = str(error).splitlines()[0]
        raise BoardError(
            f"--hwcrypto-kernel debian:{version}: could not fetch it ({first}); "
            "check the network or the mirror (HWCRYPTO_DEBIAN_MIRROR)"
        ) from None
    shutil.rmtree(target / "debs", ignore_errors=True)  # the unpacked tree is what is kept
    found = locate(target / "tree", version)
    if found is None:
        raise BoardError(
            f"--hwcrypto-kernel debian:{version}: the packages hold no kernel image for it"
        )
    # The board reads the kernel config from the modules directory it mounts (an image
    # package of the old layout has it in /boot only).
    boot_config = target / "tree" / "boot" / f"config-{version}"
    if boot_config.is_file() and not (found[1] / "config").exists():
        shutil.copyfile(boot_config, found[1] / "config")
    (target / _DONE).touch()
    return found


def _packages(apt: PrivateApt, version: str) -> list[str]:
    """The split packages when Debian ships them for `version`, else the one image package."""
    split = [
        f"linux-binary-unsigned-{version}",
        f"linux-modules-{version}",
        f"linux-base-{version}",
    ]
    try:
        apt.version(split[0])
        return split
    except PrivateAptError:
        pass
    for single in (f"linux-image-{version}-unsigned", f"linux-image-{version}"):
        try:
            apt.version(single)
            return [single]
        except PrivateAptError:
            continue
    raise BoardError(
        f"--hwcrypto-kernel debian:{version}: Debian {', '.join(SUITES)} has no such kernel "
        f"(neither linux-binary-unsigned-{version} nor linux-image-{version}; "
        "apt-cache search linux-modules- in those suites lists what there is)"
    )


def locate(tree: Path, version: str) -> tuple[Path, Path] | None:
    """The image and modules directory of `version` in an unpacked tree (split or not)."""
    for modules in (tree / "usr" / "lib" / "modules" / version, tree / "lib" / "modules" / version):
        if not modules.is_dir():
            continue
        for image in (modules / SPLIT_IMAGE, tree / "boot" / f"vmlinuz-{version}"):
            if image.is_file():
                return image, modules
    return None


def _stderr(line: str) -> None:
    sys.stderr.write(f"hwcrypto: {line}\n")
    sys.stderr.flush()
