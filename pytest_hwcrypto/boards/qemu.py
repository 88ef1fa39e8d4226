# SPDX-License-Identifier: MIT
"""QEMU board: a stock x86-64 kernel with AES-NI and a virtio-crypto offload engine.

This is the board for driver diversity. Under QEMU's TCG with `-cpu max` the guest CPU has
AES-NI, so `aesni_intel` registers the `cpu-accel` drivers (cbc-aes-aesni, xts-aes-aesni,
...); QEMU's virtio-crypto device with the builtin cryptodev backend gives the guest's
`virtio_crypto` module a real `offload` engine (virtio_crypto_aes_cbc, priority 150) and a
real broken one (virtio-crypto-rsa fails its self-test: the builtin backend has no RSA raw
padding).

With `cryptodev=True` the board also has a real /dev/crypto: cryptodev-linux is built on
the host for the kernel the board boots (boards/kmod_build.py, cached) and insmod'ed in
the guest before the command runs.

The board is booted with virtme-ng (`vng`, PyPI virtme-ng) on the host's root filesystem
over 9p, read-only; vng puts RAM-backed overlays on /etc, /usr, /var, /home, /tmp ... so
the guest can write there without touching the host, and exports the run directory
read-write. The default kernel is Debian's linux-image-amd64 (/boot/vmlinuz-<release>,
modules in /lib/modules/<release>); a custom bzImage and its modules directory work too.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from pytest_hwcrypto.boards.base import (
    CRYPTO_TEST_MODULES,
    Board,
    BoardError,
    host_dirs_to_keep,
)
from pytest_hwcrypto.boards.helpers import find_program, path_with_environment
from pytest_hwcrypto.boards.kernel_image import (
    HOST_MODULES_ROOT,
    bzimage_release,
    newest_debian_kernel,
    uncompressed_pvh_kernel,
)
from pytest_hwcrypto.run import (
    CRYPTODEV_STATE_ENV,
    TEST_DRIVERS_MODULE_ENV,
    TEST_DRIVERS_STATE_ENV,
)

QEMU_BINARY = "qemu-system-x86_64"
BUSYBOX_NAMES = ("busybox-static", "busybox.static", "busybox")  # what vng looks for
# virtme-ng's programs: vng, and virtme-run, which vng starts through PATH.
VIRTME_PROGRAMS = ("vng", "virtme-run")

# HWCRYPTO_KVM=1 forces KVM, 0 forces TCG; unset (or "auto") lets the probe below decide.
KVM_ENVIRONMENT_VARIABLE = "HWCRYPTO_KVM"
KVM_DEVICE = Path("/dev/kvm")
# PVM ("pagetable-based virtual machine") is a KVM flavour for running inside a cloud VM
# without nested hardware virtualisation. It only runs guest kernels built for PVM: a stock
# kernel hangs right after its real-mode setup code (seen here: "Probing EDD ... ok", then
# nothing), and QEMU's -cpu max/host abort on MSRs it cannot set.
PVM_MODULE = Path("/sys/module/kvm_pvm")
KVM_PROBE_SECONDS = 10.0

# What the guest's QEMU gets besides what vng sets up itself.
# -nodefaults: no CD-ROM, floppy or NIC; vng wires its console and 9p devices explicitly.
#   Without it udev loads the ATAPI/SCSI/CD-ROM drivers and probes the CD-ROM at every
#   boot, all slow under TCG and of no use to a crypto board.
# -cpu max: under TCG this emulates AES-NI, PCLMULQDQ, AVX2 ..., so the x86 accelerated
#   drivers register; under KVM it is the host CPU with everything KVM can pass through.
# virtio-crypto-pci with the builtin backend: the offload engine (see the module docstring).
QEMU_OPTIONS = (
    "-nodefaults",
    "-cpu",
    "max",
    "-object",
    "cryptodev-backend-builtin,id=hwcrypto-cryptodev0",
    "-device",
    "virtio-crypto-pci,id=hwcrypto-crypto0,cryptodev=hwcrypto-cryptodev0",
    # a hw_random source (virtio_rng.0) for the rng suite, fed by QEMU's builtin backend
    "-device",
    "virtio-rng-pci",
)

# Loaded up front so a test never depends on on-demand module loading inside the board:
# the offload and CPU drivers, the crypto user API, dm-crypt on loop, the templates and
# generic implementations the suites compare against. One modprobe call: every exec on the
# 9p root costs a noticeable fraction of a second under TCG. Missing ones are skipped.
GUEST_MODULES = (
    "virtio_crypto",
    "virtio_rng",
    "aesni_intel",
    "ghash_clmulni_intel",
    "sha512_ssse3",
    "chacha_x86_64",
    "poly1305_x86_64",
    *CRYPTO_TEST_MODULES,
)

# The cryptodev-linux module in the run directory: the guest loads it from there because
# the cache it was built into may sit under /tmp or $HOME overlays the guest does not see
# as the host does, while the run directory is the one host directory it always sees.
CRYPTODEV_MODULE = "cryptodev.ko"
TEST_DRIVERS_MODULE = "hwcrypto_test.ko"

# A 182-byte boot sector that does what a Linux kernel does first: real mode -> 32-bit
# protected mode -> PAE paging + EFER.LME -> 64-bit long mode, then writes 0x2a to QEMU's
# isa-debug-exit port (iobase 0xf4), which ends QEMU with status (0x2a << 1) | 1 = 85.
# A hypervisor that cannot run a stock kernel (PVM) hangs in it; real-mode-only code is not
# enough (PVM ran a real-mode-only sector fine). Assembled from (GNU as, .code16 at 0x7c00):
#   cli; xor ax,ax; mov ds/ss,ax; mov sp,0x7c00; lgdt [gdt_desc]; cr0.PE=1; ljmp 8:pm32
#   pm32 (.code32): ds/es/ss=0x10; zero 0x1000-0x3fff; PML4[0]=0x2003; PDPT[0]=0x3003;
#     PD[0]=0x83 (2 MiB identity page); cr3=0x1000; cr4.PAE=1; EFER.LME=1; cr0.PG=1;
#     ljmp 0x18:lm64
#   lm64 (.code64): mov al,0x2a; out 0xf4,al; hlt
#   gdt: null, code32 0x00cf9a000000ffff, data 0x00cf92000000ffff, code64 0x00af9a000000ffff
_LONG_MODE_PROBE = bytes.fromhex(
    "fa31c08ed88ed0bc007c660f0116b07c0f20c06683c8010f22c066ea227c0000"
    "080066b810008ed88ec08ed0bf0010000031c0b9000c0000f3abc70500100000"
    "03200000c7050020000003300000c7050030000083000000b8001000000f22d8"
    "0f20e083c8200f22e0b9800000c00f320d000100000f300f20c00d000000800f"
    "22c0ea897c00001800b02ae6f4f466900000000000000000ffff0000009acf00"
    "ffff00000092cf00ffff0000009aaf001f00907c0000"
)
_PROBE_EXIT_STATUS = (0x2A << 1) | 1


@dataclass(frozen=True)
class Accelerator:
    """How QEMU runs the guest, and why that was chosen (it goes into every report)."""

    kvm: bool
    reason: str

    @property
    def label(self) -> str:
        return "KVM" if self.kvm else "TCG"


def choose_accelerator(environ: Mapping[str, str], qemu: str) -> Accelerator:
    """KVM only when it is proven to run a stock kernel; TCG otherwise.

    TCG is the safe default: it is slow (~30-40 s to boot here) but always works, while a
    KVM that cannot run the kernel does not fail, it hangs until the board's timeout.
    """
    forced = environ.get(KVM_ENVIRONMENT_VARIABLE, "").strip().lower()
    if forced in ("0", "1"):
        return Accelerator(forced == "1", f"{KVM_ENVIRONMENT_VARIABLE}={forced}")
    if forced not in ("", "auto"):
        raise BoardError(f"{KVM_ENVIRONMENT_VARIABLE} must be 0, 1 or auto, not {forced!r}")
    if not KVM_DEVICE.exists() or not os.access(KVM_DEVICE, os.R_OK | os.W_OK):
        return Accelerator(False, f"{KVM_DEVICE} is missing or not accessible")
    if PVM_MODULE.exists():
        return Accelerator(False, "host KVM is PVM (kvm_pvm), which cannot run stock kernels")
    if not long_mode_probe_passes(qemu, "kvm"):
        return Accelerator(False, "KVM probe failed: a long-mode boot sector did not finish")
    return Accelerator(True, "KVM probe passed")


@functools.cache
def long_mode_probe_passes(qemu: str, accel: str) -> bool:
    """Boot the probe sector under `accel` (kvm or tcg); True when it reached long mode.

    Cached: the answer does not change within a process, and a failing KVM probe costs
    its full timeout.
    """
    with tempfile.TemporaryDirectory(prefix="hwcrypto-kvm-probe-") as probe_dir:
        image = Path(probe_dir) / "probe.img"
        image.write_bytes(_LONG_MODE_PROBE.ljust(510, b"\0") + b"\x55\xaa")
        argv = [
            qemu,
            "-accel",
            accel,
            "-cpu",
            "max",
            "-M",
            "pc",
            "-m",
            "16",
            "-nodefaults",
            "-no-user-config",
            "-display",
            "none",
            "-serial",
            "none",
            "-monitor",
            "none",
            "-device",
            "isa-debug-exit,iobase=0xf4,iosize=1",
            "-drive",
            f"file={image},format=raw,if=floppy",
        ]
        try:
            # subprocess.run kills exactly this child (by PID) when the timeout hits.
            done = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=KVM_PROBE_SECONDS,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return False
    return done.returncode == _PROBE_EXIT_STATUS


class QemuBoard(Board):
    """Debian's (or a custom) x86-64 kernel under QEMU, booted by virtme-ng.

    kernel: a bzImage (default: the newest /boot/vmlinuz-*-amd64 with modules installed);
    modules_dir: its .../lib/modules/<release> when not under /lib/modules; environ: where
    HWCRYPTO_KVM is read (default os.environ); cryptodev: build cryptodev-linux for the
    kernel and load it in the guest, so the board has /dev/crypto; test_drivers: build the
    test-only drivers of pytest_hwcrypto/kmod (wrong or slow on purpose) and load them.
    """

    name = "qemu"

    def __init__(
        self,
        kernel: Path | None = None,
        modules_dir: Path | None = None,
        memory: str = "2G",
        cpus: int = 2,
        environ: Mapping[str, str] | None = None,
        cryptodev: bool = False,
        test_drivers: bool = False,
    ) -> None:
        self._kernel = kernel
        self.cryptodev = cryptodev
        self.test_drivers = test_drivers
        self._modules_dir = modules_dir
        # The host's own /lib/modules/<release> (given by name, or through /lib's link to
        # /usr/lib) needs no staging: vng finds it there. Staged, it was linked onto itself
        # and the guest loaded no module at all.
        self._staged_modules = (
            None if modules_dir is None or is_host_modules_dir(modules_dir) else modules_dir
        )
        self.memory = memory
        self.cpus = cpus
        self._environ: Mapping[str, str] = os.environ if environ is None else environ
        self._accelerator: Accelerator | None = None

    # -- what this board boots ------------------------------------------------------------

    def kernel_image(self) -> Path:
        if self._kernel is not None:
            return self._kernel
        newest = newest_debian_kernel()
        if newest is None:
            raise BoardError(
                "no Debian x86-64 kernel with modules in /boot: apt-get install linux-image-amd64"
            )
        return newest

    def release(self) -> str:
        kernel = self.kernel_image()
        from_header = bzimage_release(kernel)
        if from_header:
            return from_header
        if kernel.name.startswith("vmlinuz-"):
            return kernel.name[len("vmlinuz-") :]
        return self._modules_dir.name if self._modules_dir is not None else "unknown"

    def modules_dir(self) -> Path | None:
        if self._modules_dir is not None:
            return self._modules_dir
        installed = HOST_MODULES_ROOT / self.release()
        return installed if installed.is_dir() else None

    def accelerator(self) -> Accelerator:
        if self._accelerator is None:
            self._accelerator = choose_accelerator(self._environ, self._qemu())
        return self._accelerator

    def kernel_description(self) -> str:
        accel = "TCG or KVM not decided yet"
        if self._accelerator is not None:
            accel = f"{self._accelerator.label}: {self._accelerator.reason}"
        return f"{self.kernel_image()} (QEMU x86_64 {self.release()}, {accel})"

    # -- prerequisites --------------------------------------------------------------------

    def check_prerequisites(self) -> None:
        if not shutil.which(QEMU_BINARY):
            raise BoardError(f"the QEMU board needs {QEMU_BINARY}: apt-get install qemu-system-x86")
        for program in VIRTME_PROGRAMS:
            if find_program(program) is None:
                raise BoardError(
                    f"the QEMU board needs virtme-ng's {program}, found neither beside "
                    f"{sys.executable} nor on PATH: pip install virtme-ng "
                    "(in this environment)"
                )
        if not any(shutil.which(name) for name in BUSYBOX_NAMES):
            raise BoardError(
                "the QEMU board needs busybox for virtme-ng's initramfs: "
                "apt-get install busybox-static"
            )
        self.check_kernel()
        self.accelerator()  # a bad HWCRYPTO_KVM value is reported before booting
        if self.cryptodev:
            # The module's source is a prerequisite like the kernel: say where it is missing
            # before anything is built or booted.
            from pytest_hwcrypto.boards import kmod_build

            spec = kmod_build.CRYPTODEV
            kmod_build.find_source(spec, kmod_build.source_dir_of(spec, self._environ))
        if self.test_drivers:
            from pytest_hwcrypto.boards import kmod_build

            spec = kmod_build.TEST_DRIVERS
            kmod_build.find_source(spec, kmod_build.source_dir_of(spec))

    def check_kernel(self) -> None:
        """The kernel image (and a custom modules directory) exist and belong together."""
        kernel = self.kernel_image()
        if not kernel.is_file():
            raise BoardError(f"QEMU kernel {kernel} not found: check --hwcrypto-kernel")
        if not os.access(kernel, os.R_OK):
            raise BoardError(f"QEMU kernel {kernel} is not readable by this user")
        if self._modules_dir is None:
            return
        if not self._modules_dir.is_dir():
            raise BoardError(f"modules directory {self._modules_dir} not found")
        release = self.release()
        if self._modules_dir.name != release:
            raise BoardError(
                f"modules directory {self._modules_dir} does not match kernel "
                f"{kernel} (release {release}); pass .../lib/modules/{release}"
            )

    # -- booting --------------------------------------------------------------------------

    def _qemu(self) -> str:
        return shutil.which(QEMU_BINARY) or QEMU_BINARY

    def boot_argv(self, run_dir: Path, guest_script: Path) -> list[str]:
        vng = find_program("vng") or "vng"
        argv = [
            # vng and virtme-run keep temporary files (the exit-code file, the initramfs)
            # in TMPDIR; in the run directory they go away with it, even when the board
            # is killed before vng can clean up.
            "env",
            f"TMPDIR={run_dir}",
            # vng starts virtme-run through PATH: the venv's bin directory goes first,
            # activated or not (helpers.py).
            f"PATH={path_with_environment()}",
            vng,
            "--run",
            str(self._kernel_for_vng(run_dir)),
            "--name",
            "hwcrypto-qemu",
            # Our guest script mounts and loads modules, whoever runs the board.
            "--user",
            "root",
            # Debian's qemu-system-common ships the old C virtiofsd at /usr/lib/qemu;
            # vng tries it, fails, waits ~3.5 s per export and falls back to 9p anyway.
            "--force-9p",
            # The kernel log on the console: a board that panics or hangs during boot
            # leaves the reason in the console log. The guest script quiets it again
            # before the command runs.
            "--verbose",
            "--memory",
            self.memory,
            "--cpus",
            str(self.cpus),
            "--rwdir",
            str(run_dir),
            # One word: argparse takes a separate value starting with "-" for an option.
            "--qemu-opts=" + " ".join(QEMU_OPTIONS),
            "--exec",
            f"/bin/sh {shlex.quote(str(guest_script))}",
        ]
        if not self.accelerator().kvm:
            argv.insert(argv.index("--name"), "--disable-kvm")
        for word in self.kernel_args:
            argv[argv.index("--exec") : argv.index("--exec")] = ["--append", word]
        return argv

    def _kernel_for_vng(self, run_dir: Path) -> Path:
        """The kernel image to hand vng, prepared in the run directory where that helps."""
        image = (
            uncompressed_pvh_kernel(self.kernel_image(), self.release(), run_dir)
            or self.kernel_image()
        )
        if self._staged_modules is None:
            return image
        return self._stage_with_modules(image, self._staged_modules, run_dir)

    def _stage_with_modules(self, image: Path, modules_dir: Path, run_dir: Path) -> Path:
        """Link a custom modules directory and the image into the layout vng expects.

        vng finds a kernel's modules at <root>/lib/modules/<release>, <root> being the
        nearest ancestor of the kernel image that has lib/modules (/ for /boot/vmlinuz-*),
        and puts the ones it needs to mount the root (virtio, 9p, overlay) in its
        initramfs; inside the guest it links /lib/modules/<release> to that directory.
        """
        stage = run_dir / "kernel"
        (stage / "lib" / "modules").mkdir(parents=True, exist_ok=True)
        (stage / "boot").mkdir(exist_ok=True)
        modules_link = stage / "lib" / "modules" / self.release()
        image_link = stage / "boot" / image.name
        for link, target in ((modules_link, modules_dir), (image_link, image)):
            if not link.is_symlink():
                link.symlink_to(target.resolve())
        return image_link

    def prepare(self, run_dir: Path, stream: TextIO | None) -> None:
        """With cryptodev (test_drivers): build cryptodev-linux (the test-only drivers) for
        this kernel, or take the cached build, and put it in the run directory, where the
        guest loads it from. Against the release's headers package, or, for a custom
        kernel whose modules directory links to its built tree, against that tree."""
        if not (self.cryptodev or self.test_drivers):
            return
        # Imported here: only a board that loads a module needs the build path.
        from pytest_hwcrypto.boards import kmod_build

        def progress(line: str) -> None:
            if stream is not None:
                stream.write(f"hwcrypto: {line}\n")
                stream.flush()

        wanted = [
            (kmod_build.CRYPTODEV, CRYPTODEV_MODULE, self.cryptodev),
            (kmod_build.TEST_DRIVERS, TEST_DRIVERS_MODULE, self.test_drivers),
        ]
        # A kernel built by hand: against its own tree (its modules' `build` link).
        tree = None
        if self._staged_modules is not None:
            tree = kmod_build.kernel_build_tree(self._staged_modules)
        for spec, file_name, asked in wanted:
            if asked:
                built = kmod_build.build_module(
                    spec,
                    self.release(),
                    progress,
                    environ=self._environ,
                    kernel_dir=tree,
                    own_tree=tree is not None,
                )
                shutil.copyfile(built, run_dir / file_name)

    def guest_script(self, command_script: str, run_dir: Path, cwd: Path) -> str:
        # No halt at the end: vng's init powers the guest off when the script returns.
        return "#!/bin/sh\n" + self._setup_script(run_dir, cwd) + command_script

    def _setup_script(self, run_dir: Path, cwd: Path) -> str:
        return (
            _BASE_SETUP
            + self._scratch_setup(run_dir, cwd)
            + self._modules_setup()
            + _MODULES_AND_UDEV_SETUP
            + self._cryptodev_setup(run_dir)
            + self._test_drivers_setup(run_dir)
        )

    def _test_drivers_setup(self, run_dir: Path) -> str:
        """insmod the test-only drivers with their defaults (all correct, priority below
        the generic code's, so nothing picks them by name until a test says so)."""
        if not self.test_drivers:
            return ""
        module = shlex.quote(str(run_dir / TEST_DRIVERS_MODULE))
        return f"""
export {TEST_DRIVERS_MODULE_ENV}={module}
if insmod_said=$(insmod {module} 2>&1); then
    export {TEST_DRIVERS_STATE_ENV}="{TEST_DRIVERS_MODULE} loaded"
else
    export {TEST_DRIVERS_STATE_ENV}="insmod {TEST_DRIVERS_MODULE} failed: $insmod_said"
    echo "hwcrypto board: ${TEST_DRIVERS_STATE_ENV}"
fi
"""

    def _cryptodev_setup(self, run_dir: Path) -> str:
        """insmod the module `prepare` put in the run directory; say how that went.

        The outcome goes into the command's environment, so a session inside that needs
        /dev/crypto can say why it is missing (insmod's own words) instead of just that.
        """
        if not self.cryptodev:
            return ""
        module = shlex.quote(str(run_dir / CRYPTODEV_MODULE))
        release = shlex.quote(self.release())
        return f"""
if insmod_said=$(insmod {module} 2>&1); then
    export {CRYPTODEV_STATE_ENV}="cryptodev.ko for "{release}" loaded"
else
    export {CRYPTODEV_STATE_ENV}="insmod cryptodev.ko failed: $insmod_said"
    echo "hwcrypto board: ${CRYPTODEV_STATE_ENV}"
fi
"""

    def _scratch_setup(self, run_dir: Path, cwd: Path) -> str:
        """A fresh tmpfs on /tmp, with the run directory (and custom modules) kept visible.

        vng's /tmp is an overlay on the host's /tmp: writes stay in RAM, but the host's
        files (other boards' run directories among them) show through and every lookup
        goes over 9p. The run directory, the one writable host directory, and a custom
        modules directory (which may well live under /tmp) are bound aside first and
        brought back on top -- the run directory last, so that a kept directory holding it
        (the caller working in /tmp itself) cannot cover it.
        """
        run = shlex.quote(str(run_dir))
        keep_modules = ""
        if self._staged_modules is not None:
            modules = shlex.quote(str(self._staged_modules.resolve()))
            keep_modules = (
                f"mkdir -p /run/hwcrypto-modules\nmount --bind {modules} /run/hwcrypto-modules\n"
            )
        keep_dirs = restore_dirs = ""
        # The caller's directory, venv or plugin source may live under /tmp: keep them too.
        for index, directory in enumerate(host_dirs_to_keep(cwd, ["/tmp"], run_dir)):
            where, aside = shlex.quote(str(directory)), f"/run/hwcrypto-keep-{index}"
            keep_dirs += f"mkdir -p {aside}\nmount --bind {where} {aside}\n"
            # read-only, as on the UML board: vng's overlay would take writes into RAM
            restore_dirs += (
                f"mkdir -p {where}\nmount --bind {aside} {where}\n"
                f"mount -o remount,bind,ro {where}\numount {aside}\n"
            )
        return f"""
mkdir -p /run/hwcrypto-run
mount --bind {run} /run/hwcrypto-run
{keep_modules}{keep_dirs}mount -t tmpfs -o mode=1777 tmpfs /tmp
{restore_dirs}mkdir -p {run}
mount --bind /run/hwcrypto-run {run}
umount /run/hwcrypto-run
"""

    def _modules_setup(self) -> str:
        """Custom modules under /lib/modules/<release>, as on the UML board.

        vng links /lib/modules/<release> to the staged directory, but the link's target
        may now be covered by the tmpfs on /tmp; a bind mount does not depend on it.
        """
        if self._staged_modules is None:
            return ""
        release = shlex.quote(self.release())
        return f"""
mount -t tmpfs tmpfs /lib/modules
mkdir -p /lib/modules/{release}
mount --bind /run/hwcrypto-modules /lib/modules/{release}
"""


_BASE_SETUP = """
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
unset TMPDIR
# Kernel messages stay in dmesg (saved to the run directory at the end). Only levels 0-2
# still reach the console: "Kernel panic", "BUG: unable to handle", "kernel BUG at" are
# then in the console log even if the guest dies before saving dmesg, and the command's
# streamed output is not interleaved with ordinary kernel chatter.
dmesg -n 3 2>/dev/null
# A CPU stuck in the kernel (a soft lockup: 20 s without scheduling) panics the board
# instead of leaving it hung until --hwcrypto-vm-timeout with one line on the console every
# half minute: the board ends at once (vng boots with panic=-1) and the panic prints the
# stuck CPU's stack to the console, whatever its level.
echo 1 > /proc/sys/kernel/softlockup_panic 2>/dev/null
# vng's init mounts most of this already; a different init or a newer vng may not.
mountpoint -q /dev/pts || { mkdir -p /dev/pts; mount -t devpts devpts /dev/pts; }
mountpoint -q /dev/shm || { mkdir -p /dev/shm; mount -t tmpfs tmpfs /dev/shm; }
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup 2>/dev/null
"""

_MODULES_AND_UDEV_SETUP = f"""
modprobe -a -q {" ".join(GUEST_MODULES)} 2>/dev/null
# vng's init ran udev to load device drivers. Stop it now, as on the UML board: dm-crypt
# setup must not race udev rules (DM_DISABLE_UDEV=1) and measurements must not compete
# with udev workers.
udevadm control --exit 2>/dev/null
export DM_DISABLE_UDEV=1
"""


def is_host_modules_dir(modules_dir: Path) -> bool:
    """Is this the host's installed /lib/modules/<release> (whatever links lead there)?"""
    return modules_dir.resolve() == (HOST_MODULES_ROOT / modules_dir.name).resolve()
