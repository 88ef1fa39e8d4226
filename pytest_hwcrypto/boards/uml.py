# SPDX-License-Identifier: MIT
"""User-mode Linux board: a real kernel crypto API at native speed, booted in seconds.

Debian's user-mode-linux ships /usr/bin/linux.uml and its modules under
/usr/lib/uml/modules/<release>. The guest mounts the host root through hostfs (read-only),
binds the modules into /lib/modules, and puts tmpfs wherever it must write.

The board's processes are kept on one host CPU (`board_cpu`). UML runs every guest
process as a host process traced by the UML kernel's own process, so each guest system
call is a hand-over between two host processes; let the host scheduler spread them over
CPUs and each hand-over wakes another CPU. On the 2-vCPU EPYC VM this project is developed
on, pinning made five guest `python -c pass` 3.1-3.5x faster (3.5-3.7 s -> 1.07-1.14 s),
200 guest `/bin/true` 3.1-4.5x faster and the boot 2x (2026-12-03, host load 0.4-0.7).
The guest is uniprocessor, so one host CPU is all it can use anyway.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Collection
from pathlib import Path

from pytest_hwcrypto.boards import uml_xstate
from pytest_hwcrypto.boards.base import (
    CRYPTO_TEST_MODULES,
    Board,
    BoardError,
    host_dirs_to_keep,
)

DEBIAN_UML_KERNEL = Path("/usr/bin/linux.uml")
DEBIAN_UML_MODULES = Path("/usr/lib/uml/modules")
# Host directories the guest covers with tmpfs: the host root is read-only in the board.
SCRATCH_DIRS = ("/tmp", "/var/tmp", "/run", "/var/lib/lxc", "/var/cache/lxc", "/var/log")

# The shared test modules plus what the UML kernel needs besides.
GUEST_MODULES = (
    "configs",  # /proc/config.gz: the kernel facts read self-test and user-API options
    "aes_ti",  # aes-fixed-time: a second software AES beside aes-generic
    "ansi_cprng",  # a second stdrng beside the DRBGs
    *CRYPTO_TEST_MODULES,
)


def board_cpu(allowed: Collection[int]) -> int | None:
    """The host CPU the board is pinned to, from those this process may run on; None when
    there is only one (nothing to choose: a caller's own `taskset -c N` is kept).

    The highest-numbered: CPU 0 tends to take more of the host's interrupts.
    """
    return max(allowed) if len(allowed) > 1 else None


class UmlBoard(Board):
    name = "uml"

    def __init__(
        self, kernel: Path | None = None, modules_dir: Path | None = None, memory: str = "1G"
    ) -> None:
        self.kernel = kernel or DEBIAN_UML_KERNEL
        self.memory = memory
        self._modules_dir = modules_dir
        # CPU flags that make the host's FPU state too large for UML (uml_xstate.py).
        self.state_beyond_avx = uml_xstate.host_state_beyond_avx()
        self._preload: Path | None = None

    def check_prerequisites(self) -> None:
        if not self.kernel.exists():
            hint = (
                "install Debian's user-mode-linux package (apt-get install user-mode-linux)"
                if self.kernel == DEBIAN_UML_KERNEL
                else "check --hwcrypto-kernel"
            )
            raise BoardError(f"UML kernel {self.kernel} not found: {hint}")
        if not shutil.which("halt") and not Path("/sbin/halt").exists():
            raise BoardError("the UML board needs halt from systemd-sysv or sysvinit-core")
        if self.state_beyond_avx:
            self._preload = uml_xstate.preload_library()

    def release(self) -> str:
        """The kernel release the board runs, from the modules shipped with it."""
        modules = self.modules_dir()
        if modules is not None:
            return modules.name
        return self._release_from_binary()

    def _release_from_binary(self) -> str:
        try:
            out = subprocess.run(
                [str(self.kernel), "--version"],
                capture_output=True,
                text=True,
                timeout=20,
                check=False,
            ).stdout.strip()
        except OSError as error:
            raise BoardError(f"cannot run UML kernel {self.kernel}: {error}") from error
        return out.splitlines()[0] if out else "unknown"

    def modules_dir(self) -> Path | None:
        if self._modules_dir is not None:
            return self._modules_dir
        if self.kernel != DEBIAN_UML_KERNEL or not DEBIAN_UML_MODULES.is_dir():
            return None
        releases = sorted(p for p in DEBIAN_UML_MODULES.iterdir() if p.is_dir())
        return releases[-1] if releases else None

    def kernel_description(self) -> str:
        shim = ""
        if self.state_beyond_avx:
            shim = f", FPU state shim for {'/'.join(self.state_beyond_avx)}, no AVX-512 inside"
        return f"{self.kernel} (UML {self.release()}{shim})"

    def boot_argv(self, run_dir: Path, guest_script: Path) -> list[str]:
        if self.state_beyond_avx and self._preload is None:
            self._preload = uml_xstate.preload_library()
        preload = ["env", f"LD_PRELOAD={self._preload}"] if self._preload else []
        cpu = board_cpu(os.sched_getaffinity(0))
        taskset = shutil.which("taskset")
        pin = [taskset, "--cpu-list", str(cpu)] if cpu is not None and taskset else []
        return [
            *pin,
            *preload,
            str(self.kernel),
            # the caller's words first: the board's own below could not be overridden
            # anyway (kernel_args_from refuses them), but the order keeps that true
            *self.kernel_args,
            f"mem={self.memory}",
            "rootfstype=hostfs",
            "rootflags=/",
            "ro",
            f"init={guest_script}",
            "con0=null,fd:1",
            "con=null",
            "quiet",
        ]

    def guest_script(self, command_script: str, run_dir: Path, cwd: Path) -> str:
        return (
            "#!/bin/sh\n"
            + self._setup_script(run_dir)
            + self._keep_visible(cwd, run_dir)
            + command_script
            + "halt -f\n"
        )

    @staticmethod
    def _keep_visible(cwd: Path, run_dir: Path) -> str:
        """Mount host directories back, read-only, where a scratch tmpfs covers them."""
        script = ""
        kept = host_dirs_to_keep(cwd, SCRATCH_DIRS, run_dir)
        for directory in kept:
            where = shlex.quote(str(directory))
            script += f"mkdir -p {where}\nmount -r -t hostfs none {where} -o {where}\n"
        if any(directory in run_dir.parents for directory in kept):
            # Run from /tmp itself: the read-only /tmp just mounted covers the run
            # directory, the one place the board writes its results -- mount it again on top.
            run = shlex.quote(str(run_dir))
            script += f"mount -t hostfs none {run} -o {run}\n"
        return script

    def _setup_script(self, run_dir: Path) -> str:
        run = shlex.quote(str(run_dir))
        modules = self.modules_dir()
        release = shlex.quote(self.release())
        module_setup = ""
        if modules is not None:
            # /lib/modules on the host belongs to the host's kernel: cover it with tmpfs
            # and bind the board kernel's modules in under its release name.
            module_setup = f"""
mount -t tmpfs tmpfs /lib/modules
mkdir -p /lib/modules/{release}
mount --bind {shlex.quote(str(modules))} /lib/modules/{release}
modprobe -a -q {" ".join(GUEST_MODULES)} 2>/dev/null
"""
        no_avx512 = "".join(
            f"export {name}={shlex.quote(value)}\n"
            for name, value in uml_xstate.GUEST_ENVIRONMENT.items()
            if self.state_beyond_avx
        )
        return f"""
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
{no_avx512}mount -t proc proc /proc
mount -t sysfs sysfs /sys
# As on the QEMU board: kernel messages stay in dmesg (saved at the end, and scanned),
# only levels 0-2 (panics, BUGs) still reach the console, so pytest's output streamed from
# the board is not interleaved with device-mapper's or the block layer's error lines.
dmesg -n 3 2>/dev/null
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null
{module_setup}
# Scratch space: everything the board writes outside the run directory stays in tmpfs.
for d in {" ".join(SCRATCH_DIRS)}; do
    [ -d $d ] && mount -t tmpfs tmpfs $d
done
# The run directory is the one writable host directory; mount it after the tmpfs above,
# which may cover its parent.
mkdir -p {run}
mount -t hostfs none {run} -o {run}
export DM_DISABLE_UDEV=1
"""
