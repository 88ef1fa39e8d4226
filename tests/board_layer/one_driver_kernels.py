# SPDX-License-Identifier: MIT
"""Two UML kernels with one AES driver each, built once per machine and kept in the cache.

The recipe is the worked example's (benchmarks/ab_bisect_example.sh, DESIGN.md section 7):
Debian's linux-source-6.1, `make ARCH=um defconfig` plus the crypto user API, cbc, xts and
aes-fixed-time (CONFIG_CRYPTO_AES_TI) -- UML's defconfig leaves CONFIG_CRYPTO_AES off, so
aes-fixed-time is the only AES driver. The slow kernel adds a busy loop after every block
aes-fixed-time encrypts or decrypts.

Both images land in $XDG_CACHE_HOME/pytest-hwcrypto/uml-one-driver/<key>/, the key hashing
the source tarball's version, the configuration and the patch: only the first run on a
machine pays the build (216 s at -j2 on a quiet host, 34 min at load 10-15); a changed
patch rebuilds one file (~6 s, 1 min at load 10) in the tree kept beside.
`python tests/board_layer/one_driver_kernels.py` builds them and prints their paths.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from pytest_hwcrypto.boards.helpers import cache_dir

SOURCE = Path("/usr/src/linux-source-6.1.tar.xz")
PACKAGES = "linux-source-6.1 bc flex bison libelf-dev"
CONFIG = (
    "CRYPTO_USER_API_SKCIPHER",
    "CRYPTO_USER_API_HASH",
    "CRYPTO_USER",
    "CRYPTO_CBC",
    "CRYPTO_XTS",
    "CRYPTO_AES_TI",
)
# Busy-loop rounds after each 16-byte block. The drop must survive a boot that runs twice
# as fast as its neighbour (UML on a lightly loaded host: benchmarks/ab-bisect.md), or a
# pair lands the wrong way and 12 pairs cannot decide: 200 rounds (-27 to -34 %) left a
# 99.5 % interval reaching +4 % at load 1-5. 1200 rounds slow it about threefold, so even
# such a pair stays negative.
SLOW_ROUNDS = 1200
PATCHED_FILE = "crypto/aes_ti.c"


class KernelBuildError(RuntimeError):
    """The kernels cannot be built here; the message says what is missing or failed."""


def _spin(rounds: int) -> str:
    return (
        "\t{\n\t\tvolatile unsigned long sink = 0;\n\t\tunsigned long n;\n\n"
        f"\t\tfor (n = 0; n < {rounds}; n++)\n\t\t\tsink += n;\n\t}}\n"
    )


def slowed(source: str, rounds: int = SLOW_ROUNDS) -> str:
    """aes_ti.c with the busy loop after each block's encryption and decryption."""
    for call in ("\taes_encrypt(ctx, out, in);\n", "\taes_decrypt(ctx, out, in);\n"):
        if source.count(call) != 1:
            raise KernelBuildError(f"{PATCHED_FILE}: {call.strip()!r} not found once")
        source = source.replace(call, call + _spin(rounds))
    return source


def source_version() -> str:
    """The tarball's package version (or its size and mtime outside Debian)."""
    done = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Version}", "linux-source-6.1"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode == 0 and done.stdout.strip():
        return done.stdout.strip()
    status = SOURCE.stat()
    return f"{status.st_size}-{int(status.st_mtime)}"


def cache_key(rounds: int = SLOW_ROUNDS) -> str:
    text = "\n".join([source_version(), *CONFIG, _spin(rounds)])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _make(tree: Path, *targets: str, log: Path) -> None:
    jobs = str(min(2, os.cpu_count() or 1))
    with log.open("a") as out:
        done = subprocess.run(
            ["nice", "-n", "10", "make", "ARCH=um", f"-j{jobs}", *targets],
            cwd=tree,
            stdout=out,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if done.returncode != 0:
        raise KernelBuildError(f"make {' '.join(targets)} failed in {tree} (log {log})")


def _configured_tree(root: Path, log: Path) -> Path:
    """The source extracted and configured once per source version and configuration."""
    tree = (
        root
        / f"tree-{hashlib.sha256((source_version() + ''.join(CONFIG)).encode()).hexdigest()[:12]}"
    )
    if (tree / ".config-done").exists():
        return tree
    if not SOURCE.exists():
        raise KernelBuildError(f"{SOURCE} missing: apt-get install {PACKAGES}")
    for tool in ("make", "gcc", "bc", "flex", "bison"):
        if shutil.which(tool) is None:
            raise KernelBuildError(f"{tool} missing: apt-get install {PACKAGES}")
    shutil.rmtree(tree, ignore_errors=True)
    partial = root / f"{tree.name}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    with tarfile.open(SOURCE) as archive:
        archive.extractall(partial)  # Debian's own package: trusted
    (partial / "linux-source-6.1").rename(tree)
    partial.rmdir()
    _make(tree, "defconfig", log=log)
    enable = [word for name in CONFIG for word in ("--enable", name)]
    subprocess.run(["scripts/config", *enable], cwd=tree, check=True)
    _make(tree, "olddefconfig", log=log)
    (tree / ".config-done").write_text("")
    return tree


def one_driver_kernels(rounds: int = SLOW_ROUNDS) -> tuple[Path, Path]:
    """(good, slow): the images, built now if the cache does not hold them."""
    root = cache_dir() / "uml-one-driver"
    images = root / cache_key(rounds)
    good, slow = images / "good.uml", images / "slow.uml"
    if good.exists() and slow.exists():
        return good, slow
    root.mkdir(parents=True, exist_ok=True)
    log = root / "build.log"
    tree = _configured_tree(root, log)
    patched = tree / PATCHED_FILE
    original = tree / (PATCHED_FILE + ".orig")
    if not original.exists():
        shutil.copy2(patched, original)
    pristine = original.read_text()
    images.mkdir(parents=True, exist_ok=True)
    try:
        patched.write_text(pristine)
        _make(tree, "linux", log=log)
        shutil.copy2(tree / "linux", images / "good.partial")
        patched.write_text(slowed(pristine, rounds))
        _make(tree, "linux", log=log)
        shutil.copy2(tree / "linux", images / "slow.partial")
    finally:
        patched.write_text(pristine)
    os.replace(images / "good.partial", good)
    os.replace(images / "slow.partial", slow)
    return good, slow


if __name__ == "__main__":
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else SLOW_ROUNDS
    try:
        built = one_driver_kernels(rounds)
    except KernelBuildError as error:
        sys.exit(f"one_driver_kernels: {error}")
    print(*built)
