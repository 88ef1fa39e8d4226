# SPDX-License-Identifier: MIT
"""The ARM boards' root filesystem: Debian with python3, the tools and the plugin as users
install it, in an ext4 image built once and cached.

Two layers, each cached under its own key:
- the base tree (boards/arm_base.py): bookworm's Essential set and `BASE_PACKAGES`
  resolved and downloaded by a private APT, extracted on the host, what the maintainer
  scripts that matter would do done by the host (no maintainer script emulated), the
  guest's static ldconfig run once through qemu-user, Python byte-compiled by the host.
  Once per package list, far faster than debootstrap's emulated second stage
  (benchmarks/arm-boards.md).
- the image: the base tree copied, the plugin's wheel (`python -m build` from this
  checkout, or `HWCRYPTO_WHEEL`) installed into a venv over Debian's python3-* packages
  (`venv --system-site-packages` + `pip install --no-deps`, the README's recipe for lab
  boards, with Debian's own pip staged and byte-compiled by the host instead of venv's
  ensurepip: `stage_pip`), run through qemu-user-static registered in a *private*
  binfmt_misc instance,
  inside a user, mount, PID and network namespace (`unshare`; host root mapped to
  itself, uid/gid 0-65535): the host's binfmt_misc and dpkg never change. Then
  `mkfs.ext4 -d` turns the tree into a sparse image. Keyed by the plugin's source digest:
  a change to the plugin rebuilds this layer only. Sizes and build times:
  benchmarks/arm-boards.md.

Boards boot the image with `snapshot=on`: it is never written.
"""

from __future__ import annotations

import compileall
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Callable

import pytest_hwcrypto
from pytest_hwcrypto.boards import arm_base
from pytest_hwcrypto.boards.arm_arch import ArmArch
from pytest_hwcrypto.boards.arm_base import base_key, base_tree
from pytest_hwcrypto.boards.arm_kernel import apt_for
from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.boards.kmod_build import _locked
from pytest_hwcrypto.boards.private_apt import SUITE

Progress = Callable[[str], None]

WHEEL_ENV = "HWCRYPTO_WHEEL"
GUEST_VENV = "/opt/pytest-hwcrypto"
HEADROOM_MB = 384  # free space in the image: the guest writes logs, LXC state ...
BUILD_TIMEOUT_SECONDS = 3600.0
# --kill-child: the namespace's processes die with unshare (SIGKILL from us on a failure,
# or our death), not only when their own PID 1 ends.
NAMESPACES = (
    "--user", "--mount", "--pid", "--fork", "--kill-child=SIGKILL", "--net", "--uts", "--ipc"
)  # fmt: skip
ID_MAP = "0 0 65536\n"


def plugin_digest() -> str:
    """The plugin as the image would carry it: its package and, in a checkout, pyproject."""
    package = Path(pytest_hwcrypto.__file__).resolve().parent
    digest = hashlib.sha256()
    wheel = os.environ.get(WHEEL_ENV)
    if wheel:
        digest.update(Path(wheel).read_bytes())
        return digest.hexdigest()[:12]
    for file in sorted(p for p in package.rglob("*") if p.is_file()):
        if "__pycache__" in file.parts or file.suffix in (".pyc", ".ko", ".o"):
            continue
        digest.update(str(file.relative_to(package)).encode() + b"\0" + file.read_bytes())
    pyproject = package.parent / "pyproject.toml"
    if pyproject.is_file():
        digest.update(pyproject.read_bytes())
    return digest.hexdigest()[:12]


def arch_cache(arch: ArmArch, cache: Path) -> Path:
    return cache / "arm" / arch.debian_arch


def image_path(arch: ArmArch, cache: Path) -> Path:
    return arch_cache(arch, cache) / f"rootfs-{base_key(arch)}-{plugin_digest()}.ext4"


def check_build_prerequisites(arch: ArmArch) -> None:
    """What building the image needs on the host; BoardError naming the package."""
    needed = {
        **dict(arm_base.check_prerequisites()),
        "unshare": "util-linux",
        "mkfs.ext4": "e2fsprogs",
        arch.qemu_user: "qemu-user-static",
    }
    for program, package in needed.items():
        if shutil.which(program) is None and not Path("/usr/bin", program).exists():
            raise BoardError(
                f"building the {arch.board} root filesystem needs {program}: "
                f"apt-get install {package}"
            )
    if os.geteuid() != 0:
        raise BoardError(
            f"building the {arch.board} root filesystem needs root once (the packages' files "
            "keep their owners, and the plugin layer maps uids 0-65535 into a user "
            "namespace): run it once with sudo; afterwards the cached image boots for any user"
        )


def ensure_image(arch: ArmArch, cache: Path, progress: Progress) -> Path:
    """The cached root filesystem image, built first when there is none for this plugin."""
    target = image_path(arch, cache)
    if target.is_file():
        return target
    check_build_prerequisites(arch)
    target.parent.mkdir(parents=True, exist_ok=True)
    with _locked(target.parent / ".lock"):
        if target.is_file():
            return target
        # work directories of a build killed with -9 (the lock says none is running)
        for stale in target.parent.glob("hwcrypto-rootfs-*"):
            shutil.rmtree(stale, ignore_errors=True)
        for stale in target.parent.glob(".rootfs-*.partial"):
            stale.unlink(missing_ok=True)
        began = time.monotonic()
        base = ensure_base_tree(arch, cache, progress)
        _build_image(arch, base, target, progress)
        size = target.stat().st_size / 1e6
        progress(
            f"{arch.board}: root filesystem {target.name} ({size:.0f} MB) built in "
            f"{time.monotonic() - began:.0f} s"
        )
        for old in target.parent.glob(f"rootfs-{base_key(arch)}-*.ext4"):
            if old != target:
                old.unlink(missing_ok=True)  # an earlier plugin's image
    return target


def ensure_base_tree(arch: ArmArch, cache: Path, progress: Progress) -> Path:
    tree = base_tree(arch, cache)
    if (tree / ".complete").is_file():
        return tree
    # A build killed half way leaves its .partial tree (its own, or an earlier recipe's):
    # the lock is held, so none of them is in use.
    for stale in tree.parent.glob("base-*.partial*"):
        shutil.rmtree(stale, ignore_errors=True)
    partial = tree.with_name(tree.name + ".partial")
    progress(
        f"{arch.board}: building the Debian {SUITE} {arch.debian_arch} base system on the "
        "host (packages extracted, no maintainer script emulated; once)"
    )
    arm_base.build_base_tree(
        arch,
        apt_for(arch.debian_arch, cache, progress),
        partial,
        lambda root, command: run_emulated(arch, root, command, progress),
        progress,
    )
    shutil.rmtree(tree, ignore_errors=True)
    partial.rename(tree)
    (tree / ".complete").touch()
    return tree


def run_emulated(arch: ArmArch, root: Path, command: str, progress: Progress) -> None:
    """Run `command` chrooted into `root` (an ARM tree) through qemu-user, registered in a
    binfmt_misc instance of a user namespace of our own."""
    with tempfile.TemporaryDirectory(prefix="hwcrypto-binfmt-") as private:
        register = arch.binfmt_register_line().decode()
        script = f"""set -e
mount -t binfmt_misc binfmt_misc {private}
printf '%s' {shlex.quote(register)} > {private}/register
export container=lxc LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
exec chroot {shlex.quote(str(root))} /bin/sh -c {shlex.quote(command)}
"""
        _run_in_namespaces(script, progress, arch.board)


def _run_in_namespaces(script: str, progress: Progress, board: str) -> None:
    """`script` as root of fresh namespaces whose uids/gids 0-65535 are the host's.

    The maps are written from outside (we are root here): unshare waits on stdin until
    they are in place.
    """
    child = subprocess.Popen(
        ["unshare", *NAMESPACES, "sh", "-c", 'read go; exec sh -c "$0"', script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        mine = os.readlink("/proc/self/ns/user")
        deadline = time.monotonic() + 10
        while os.readlink(f"/proc/{child.pid}/ns/user") == mine:
            if time.monotonic() > deadline or child.poll() is not None:
                raise BoardError("unshare --user did not start (user namespaces disabled?)")
            time.sleep(0.01)
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{child.pid}/{name}", "w") as handle:
                handle.write(ID_MAP)
        child.stdin.write("go\n")
        child.stdin.close()
        tail = _follow(child.stdout, progress, board)
        code = child.wait(timeout=BUILD_TIMEOUT_SECONDS)
    finally:
        if child.poll() is None:
            child.kill()  # our own child, by its PID
            child.wait()
    if code != 0:
        raise BoardError(
            f"building the {board} root filesystem failed (exit {code}):\n" + "\n".join(tail)
        )


TAIL_LINES = 15


def _follow(lines: Iterable[str], progress: Progress, board: str) -> list[str]:
    """Pass on an emulated step's output (pip's, a few lines) as progress; keep the last
    lines for an error."""
    tail: list[str] = []
    for raw in lines:
        line = raw.rstrip()
        tail = [*tail[-(TAIL_LINES - 1) :], line]
        progress(f"{board}: {line}")
    return tail


def build_wheel(work: Path, progress: Progress) -> Path:
    """The plugin's wheel: $HWCRYPTO_WHEEL, else built from this checkout."""
    given = os.environ.get(WHEEL_ENV)
    if given:
        return Path(given)
    checkout = Path(pytest_hwcrypto.__file__).resolve().parent.parent
    if not (checkout / "pyproject.toml").is_file():
        raise BoardError(
            "the ARM boards install the plugin into their image from a wheel: this is an "
            f"installed package, so set {WHEEL_ENV} to the pytest_hwcrypto-*.whl to install"
        )
    progress("building the plugin's wheel (python -m build)")
    out = work / "dist"
    done = subprocess.run(
        [sys.executable, "-m", "build", "-q", "--wheel", "--outdir", str(out), str(checkout)],
        capture_output=True,
        text=True,
        check=False,
    )
    wheels = sorted(out.glob("*.whl"))
    if done.returncode != 0 or not wheels:
        raise BoardError(
            "building the plugin's wheel failed (pip install build):\n"
            + "\n".join((done.stdout + done.stderr).strip().splitlines()[-8:])
        )
    return wheels[0]


def _build_image(arch: ArmArch, base: Path, target: Path, progress: Progress) -> None:
    with tempfile.TemporaryDirectory(prefix="hwcrypto-rootfs-", dir=target.parent) as work:
        work_dir = Path(work)
        wheel = build_wheel(work_dir, progress)
        tree = work_dir / "root"
        progress(f"{arch.board}: copying the base system")
        subprocess.run(["cp", "-a", str(base), str(tree)], check=True)
        shutil.copyfile(wheel, tree / "tmp" / wheel.name)
        progress(f"{arch.board}: installing {wheel.name} (pip --no-deps over Debian's python3-*)")
        began = time.monotonic()
        run_emulated(arch, tree, install_command(wheel.name, stage_pip(tree)), progress)
        progress(f"{arch.board}: plugin installed in {time.monotonic() - began:.0f} s")
        (tree / "etc" / "hostname").write_text(f"hwcrypto-{arch.debian_arch}\n")
        used_mb = _tree_mb(tree)
        size_mb = used_mb + used_mb // 5 + HEADROOM_MB
        progress(f"{arch.board}: mkfs.ext4 -d ({used_mb} MB of files, {size_mb} MB image)")
        partial = target.with_name(f".{target.name}.partial")
        done = subprocess.run(
            ["mkfs.ext4", "-q", "-F", "-L", "hwcrypto-root", "-d", str(tree), str(partial),
             f"{size_mb}M"],
            capture_output=True,
            text=True,
            check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise BoardError(f"mkfs.ext4 -d for {arch.board} failed: {done.stderr.strip()}")
        os.replace(partial, target)


STAGED_PIP = "/tmp/hwcrypto-pip"


def stage_pip(tree: Path) -> bool:
    """Debian's pip (python3-pip-whl's wheel) unpacked into the tree's /tmp and
    byte-compiled by the host when its Python is the tree's version; True when staged.

    Under qemu-user, `venv`'s ensurepip (installing and compiling pip and setuptools
    into the venv) took most of this layer's time; pip staged and compiled here runs the
    same install several times faster (benchmarks/arm-boards.md), and the venv keeps no
    pip of its own."""
    minor = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    wheels = sorted((tree / "usr" / "share" / "python-wheels").glob("pip-*.whl"))
    if not wheels or not (tree / "usr" / "lib" / minor).is_dir():
        return False
    staged = tree / STAGED_PIP.lstrip("/")
    with zipfile.ZipFile(wheels[-1]) as archive:
        archive.extractall(staged)
    compileall.compile_dir(str(staged), quiet=2, stripdir=str(tree), prependdir="/", workers=1)
    return True


def install_command(wheel_name: str, pip_staged: bool) -> str:
    """The shell command (run in the tree) installing the plugin's wheel into the venv."""
    pip_args = (
        f"-m pip install -q --no-deps --no-index --disable-pip-version-check /tmp/{wheel_name}"
    )
    if pip_staged:
        return (
            f"python3 -m venv --without-pip --system-site-packages {GUEST_VENV} && "
            f"PYTHONPATH={STAGED_PIP} {GUEST_VENV}/bin/python {pip_args} && "
            f"rm -r {STAGED_PIP} /tmp/{wheel_name}"
        )
    return (
        f"python3 -m venv --system-site-packages {GUEST_VENV} && "
        f"{GUEST_VENV}/bin/python {pip_args} && rm /tmp/{wheel_name}"
    )


def _tree_mb(tree: Path) -> int:
    done = subprocess.run(["du", "-sm", str(tree)], capture_output=True, text=True, check=True)
    return int(done.stdout.split()[0])
