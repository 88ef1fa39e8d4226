# SPDX-License-Identifier: MIT
"""QEMU ARM boards (`qemu-arm64`, `qemu-armhf`): the CPU crypto drivers ARM lab boards run.

Debian's kernel for the architecture (boards/arm_kernel.py, fetched with a private APT
configuration) boots under QEMU's TCG on the `virt` machine with `-cpu max`, which has
NEON and the ARMv8 crypto extensions: arm64 registers `*-aes-ce`, `*-aes-neonbs`,
`sha256-ce`, `sha512-ce` ...; armhf `aes-arm`, `*-aes-arm-bs`/neonbs, `sha256-neon` ....
A virtio-crypto device gives both the offload engine the x86 QEMU board has.

The host's Python cannot run in an ARM guest, so the board has its own root filesystem
(boards/arm_rootfs.py: Debian with python3, the tools, and the plugin installed from its
wheel, cached per plugin version) on a virtio disk booted with `snapshot=on`, and the
host directories it needs come over 9p at their host paths: the run directory
(read-write), the caller's working directory and the kernel's modules (read-only).
Commands run with the image's venv first on PATH; `python3` there is the one the pytest
session inside uses.

`cryptodev=True` / `test_drivers=True`: the modules are cross-built for the board's kernel
(boards/kmod_build.py with ARCH/CROSS_COMPILE and the headers fetched beside the kernel)
and insmod'ed before the command, as on the x86 QEMU board.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from pytest_hwcrypto.boards import (
    arm_base,
    arm_cache,
    arm_initramfs,
    arm_kernel,
    arm_own_kernel,
    arm_rootfs,
)
from pytest_hwcrypto.boards.arm_arch import ArmArch
from pytest_hwcrypto.boards.base import Board, BoardError
from pytest_hwcrypto.boards.helpers import cache_dir
from pytest_hwcrypto.run import (
    CRYPTODEV_STATE_ENV,
    TEST_DRIVERS_MODULE_ENV,
    TEST_DRIVERS_STATE_ENV,
)

CRYPTODEV_MODULE = "cryptodev.ko"
TEST_DRIVERS_MODULE = "hwcrypto_test.ko"
INITRAMFS = "initramfs.cpio"
CWD_TAG = "hwcrypto-cwd"
MODULES_TAG = "hwcrypto-modules"
GUEST_PATH = (
    f"{arm_rootfs.GUEST_VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)
# Host variables that mean nothing in the ARM guest (its Python is not the host's).
HOST_ONLY_ENV = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")


class QemuArmBoard(Board):
    """An ARM board: `arch` says which (boards/arm_arch.py)."""

    def __init__(
        self,
        arch: ArmArch,
        kernel: Path | None = None,
        modules_dir: Path | None = None,
        memory: str = "2G",
        cpus: int = 2,
        environ: Mapping[str, str] | None = None,
        cryptodev: bool = False,
        test_drivers: bool = False,
        cache: Path | None = None,
    ) -> None:
        self.arch = arch
        self.name = arch.board
        self._kernel_path = kernel
        self._modules_path = modules_dir
        self.memory = memory
        self.cpus = cpus
        self.cryptodev = cryptodev
        self.test_drivers = test_drivers
        self._environ: Mapping[str, str] = os.environ if environ is None else environ
        self._cache = cache or cache_dir(self._environ)
        self._kernel: arm_kernel.ArmKernel | None = None
        self._image: Path | None = None
        self._cwd: Path | None = None  # the caller's directory, shared over 9p
        self.guest_python = f"{arm_rootfs.GUEST_VENV}/bin/python"

    # -- what this board boots ------------------------------------------------------------

    def kernel(self, stream: TextIO | None = None) -> arm_kernel.ArmKernel:
        """The kernel: --hwcrypto-kernel/--hwcrypto-modules, else Debian's (fetched once)."""
        if self._kernel is None:
            if self._kernel_path is not None:
                self._kernel = self._custom_kernel(self._kernel_path)
            else:
                self._kernel = arm_kernel.fetch_debian_kernel(
                    self.arch, self._cache, _progress(stream)
                )
        return self._kernel

    def _custom_kernel(self, image: Path) -> arm_kernel.ArmKernel:
        """A developer's kernel, checked before boot (boards/arm_own_kernel.py)."""
        release, build = arm_own_kernel.check_own_kernel(
            self.arch, image, self._modules_path, needs_build=self.cryptodev or self.test_drivers
        )
        assert self._modules_path is not None  # checked above
        return arm_kernel.ArmKernel(
            release=release, image=image, modules_dir=self._modules_path, headers_dir=build
        )

    def kernel_description(self) -> str:
        if self._kernel is None:
            if self._kernel_path is not None:
                return f"{self._kernel_path} (QEMU {self.arch.debian_arch}, TCG)"
            return f"Debian's linux-image-{self.arch.kernel_flavour} (fetched before boot)"
        kernel = self._kernel
        return f"{kernel.image} (QEMU {self.arch.debian_arch} {kernel.release}, TCG)"

    # -- prerequisites --------------------------------------------------------------------

    def check_prerequisites(self) -> None:
        if shutil.which(self.arch.qemu_system) is None:
            raise BoardError(
                f"the {self.name} board needs {self.arch.qemu_system}: "
                f"apt-get install {self.arch.qemu_system_package}"
            )
        image = arm_rootfs.image_path(self.arch, self._cache)
        if not image.is_file():
            arm_rootfs.check_build_prerequisites(self.arch)
        if self._kernel_path is not None:
            self.kernel()
        if self.cryptodev or self.test_drivers:
            if shutil.which(self.arch.cross_compile + "gcc") is None:
                raise BoardError(
                    f"building modules for {self.name} needs {self.arch.cross_compile}gcc: "
                    f"apt-get install {self.arch.cross_package}"
                )
            from pytest_hwcrypto.boards import kmod_build

            if self.cryptodev:
                spec = kmod_build.CRYPTODEV
                kmod_build.find_source(spec, kmod_build.source_dir_of(spec, self._environ))

    # -- host side, before boot -----------------------------------------------------------

    def prepare(self, run_dir: Path, stream: TextIO | None) -> None:
        """Kernel, root filesystem (built when the plugin changed), initramfs, modules."""
        progress = _progress(stream)
        kernel = self.kernel(stream)
        self._image = arm_rootfs.ensure_image(self.arch, self._cache, progress)
        debian_release = kernel.release if self._kernel_path is None else None
        for name, size in arm_cache.prune(
            arm_rootfs.arch_cache(self.arch, self._cache),
            arm_base.base_key(self.arch),
            debian_release,
        ):
            progress(f"{self.name}: removed superseded {name} from the cache ({size / 1e6:.0f} MB)")
        busybox = arm_base.base_tree(self.arch, self._cache) / "bin" / "busybox"
        if not busybox.is_file():
            raise BoardError(f"{busybox} is missing: remove {self._image} to rebuild it")
        arm_initramfs.write_initramfs(run_dir / INITRAMFS, busybox, kernel.modules_dir)
        for wanted, spec_name, file_name in (
            (self.cryptodev, "CRYPTODEV", CRYPTODEV_MODULE),
            (self.test_drivers, "TEST_DRIVERS", TEST_DRIVERS_MODULE),
        ):
            if wanted:
                shutil.copyfile(
                    self._build_module(spec_name, kernel, progress), run_dir / file_name
                )

    def _build_module(
        self, spec_name: str, kernel: arm_kernel.ArmKernel, progress: arm_kernel.Progress
    ) -> Path:
        from pytest_hwcrypto.boards import kmod_build

        if kernel.headers_dir is None:
            raise BoardError(
                f"no headers for {kernel.release} to build {spec_name.lower()} against: "
                f"give --hwcrypto-modules a directory whose build/ link is the kernel tree"
            )
        spec = getattr(kmod_build, spec_name)
        return kmod_build.build_module(
            spec,
            kernel.release,
            progress,
            environ=self._environ,
            kernel_dir=kernel.headers_dir,
            make_vars=(f"ARCH={self.arch.kernel_arch}", f"CROSS_COMPILE={self.arch.cross_compile}"),
        )

    def guest_environment(self, env: dict[str, str]) -> dict[str, str]:
        """The caller's environment minus what points into the host's Python; the image's
        venv first on PATH."""
        kept = {name: value for name, value in env.items() if name not in HOST_ONLY_ENV}
        kept["PATH"] = GUEST_PATH
        return kept

    # -- booting --------------------------------------------------------------------------

    def boot_argv(self, run_dir: Path, guest_script: Path) -> list[str]:
        kernel = self.kernel()
        image = self._image or arm_rootfs.image_path(self.arch, self._cache)
        cwd = self._cwd or Path(os.getcwd())
        append = (
            "console=ttyAMA0 panic=-1 rdinit=/init loglevel=4 "
            # the modules come over 9p: no module signature policy is in the way, but say
            # nothing about taint for the unsigned out-of-tree ones
            "module.sig_enforce=0"
        )
        return [
            # snapshot=on keeps the disk's writes in a temporary file: in the run directory
            "env",
            f"TMPDIR={run_dir}",
            self.arch.qemu_system,
            *self.arch.machine,
            "-smp", str(self.cpus),
            "-m", self.memory,
            "-nodefaults",
            "-display", "none",
            "-serial", "stdio",
            "-monitor", "none",
            "-no-reboot",
            "-kernel", str(kernel.image),
            "-initrd", str(run_dir / INITRAMFS),
            "-append", append,
            "-drive", f"if=none,id=hwcrypto-root,file={image},format=raw,snapshot=on",
            "-device", "virtio-blk-pci,drive=hwcrypto-root",
            "-object", "cryptodev-backend-builtin,id=hwcrypto-cryptodev0",
            "-device", "virtio-crypto-pci,id=hwcrypto-crypto0,cryptodev=hwcrypto-cryptodev0",
            "-device", "virtio-rng-pci",
            *_ninep(arm_initramfs.RUN_TAG, run_dir, readonly=False),
            *_ninep(CWD_TAG, cwd, readonly=True),
            *_ninep(MODULES_TAG, kernel.modules_dir, readonly=True),
        ]  # fmt: skip

    def guest_script(self, command_script: str, run_dir: Path, cwd: Path) -> str:
        self._cwd = cwd
        release = shlex.quote(self.kernel().release)
        run = shlex.quote(str(run_dir))
        where = shlex.quote(str(cwd))
        ninep = arm_initramfs.NINEP_OPTIONS
        setup = f"""#!/bin/sh
export PATH={GUEST_PATH}
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs tmpfs /run/lock 2>/dev/null
for scratch in /var/tmp /var/lib/lxc /var/cache/lxc /var/log; do
    mkdir -p $scratch && mount -t tmpfs tmpfs $scratch
done
mkdir -p {run}
mount --bind {arm_initramfs.RUN_MOUNT} {run}
mkdir -p /lib/modules/{release}
mount -t 9p -o {ninep},ro {MODULES_TAG} /lib/modules/{release}
mkdir -p {where}
mount -t 9p -o {ninep},ro {CWD_TAG} {where}
dmesg -n 3 2>/dev/null
# A soft lockup (a CPU stuck 20 s in the kernel) panics the board, which ends it at once
# (panic=-1 with -no-reboot) with the stuck CPU's stack on the console.
echo 1 > /proc/sys/kernel/softlockup_panic
hostname hwcrypto-{self.arch.debian_arch}
modprobe -a -q {" ".join(self.arch.guest_modules)} 2>/dev/null
export DM_DISABLE_UDEV=1
"""
        # Runs as PID 1: power off at the end, else the kernel panics on our exit.
        return (
            setup
            + self._module_setup(run_dir, release)
            + command_script
            + "sync\nbusybox poweroff -f\n"
        )

    def _module_setup(self, run_dir: Path, release: str) -> str:
        script = ""
        if self.cryptodev:
            module = shlex.quote(str(run_dir / CRYPTODEV_MODULE))
            script += f"""
if insmod_said=$(insmod {module} 2>&1); then
    export {CRYPTODEV_STATE_ENV}="cryptodev.ko for "{release}" loaded"
else
    export {CRYPTODEV_STATE_ENV}="insmod cryptodev.ko failed: $insmod_said"
    echo "hwcrypto board: ${CRYPTODEV_STATE_ENV}"
fi
"""
        if self.test_drivers:
            module = shlex.quote(str(run_dir / TEST_DRIVERS_MODULE))
            script += f"""
export {TEST_DRIVERS_MODULE_ENV}={module}
if insmod_said=$(insmod {module} 2>&1); then
    export {TEST_DRIVERS_STATE_ENV}="{TEST_DRIVERS_MODULE} loaded"
else
    export {TEST_DRIVERS_STATE_ENV}="insmod {TEST_DRIVERS_MODULE} failed: $insmod_said"
    echo "hwcrypto board: ${TEST_DRIVERS_STATE_ENV}"
fi
"""
        return script


def _ninep(tag: str, path: Path, readonly: bool) -> list[str]:
    fsdev = f"local,id={tag},path={path},security_model=none"
    if readonly:
        fsdev += ",readonly=on"
    return ["-fsdev", fsdev, "-device", f"virtio-9p-pci,fsdev={tag},mount_tag={tag}"]


def _progress(stream: TextIO | None) -> arm_kernel.Progress:
    def say(line: str) -> None:
        if stream is not None:
            stream.write(f"hwcrypto: {line}\n")
            stream.flush()

    return say
