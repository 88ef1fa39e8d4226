# SPDX-License-Identifier: MIT
"""A board without Python: the QEMU board's kernel with a busybox initramfs and dropbear.

What kernel CI's baseline ramdisks and small lab boards have, built from Debian packages on
the host: busybox-static for the shell and every tool, dropbear for SSH (Debian builds it
dynamically: the binary goes in with the shared libraries ldd names and the loader), the
kernel modules the crypto suites need with their dependencies, and the kernel's config and
module lists, so the host can read the board's kernel facts as on any other kernel.

The board is reached the two ways a lab board is:
- its serial console (ttyS0, kernel messages included) on a pseudo-terminal, where busybox
  getty asks for a login (root, no password);
- SSH to dropbear, through QEMU's user-mode network with a host port forwarded to port 22,
  with a key pair made for this board (its private half stays in the board's directory).

It runs until `stop`; `hwcrypto vm qemu --busybox --serve` keeps one up for a person.
"""

from __future__ import annotations

import re
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from pytest_hwcrypto.boards.arm_initramfs import _Cpio, _module_bytes, module_closure
from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.boards.kernel_image import HOST_MODULES_ROOT, newest_debian_kernel
from pytest_hwcrypto.boards.qemu import BUSYBOX_NAMES, QEMU_BINARY, QEMU_OPTIONS

DROPBEAR = Path("/usr/sbin/dropbear")
# What the crypto suites reach through AF_ALG, the engines worth comparing, and the NIC.
BOARD_MODULES = (
    "virtio_pci",
    "virtio_net",
    "virtio_crypto",
    "aesni_intel",
    "sha256_ssse3",
    "sha512_ssse3",
    "ghash_clmulni_intel",
    "af_alg",
    "algif_hash",
    "algif_skcipher",
    "algif_aead",
    "algif_rng",
    "cbc",
    "ctr",
    "xts",
    "gcm",
    "cryptd",
)
BOOT_SECONDS = 240.0
GUEST_ADDRESS = "10.0.2.15/24"  # QEMU user-mode networking's guest address and gateway
GATEWAY = "10.0.2.2"

INITTAB = """::sysinit:/etc/rcS
ttyS0::respawn:/sbin/getty -L 115200 ttyS0 vt100
::ctrlaltdel:/sbin/poweroff -f
::shutdown:/bin/true
"""

RCS = f"""#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm /tmp /run /var/run /etc/dropbear
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /tmp
hostname hwcrypto-busybox
for module in $(cat /etc/modules.order); do insmod "$module" 2>/dev/null; done
ip link set lo up
ip link set eth0 up
ip addr add {GUEST_ADDRESS} dev eth0
ip route add default via {GATEWAY}
/usr/sbin/dropbear -R -p 22
echo "hwcrypto busybox board: ready"
"""


@dataclass(frozen=True)
class BusyboxImage:
    kernel: Path
    initramfs: Path
    release: str
    private_key: Path


def _shared_libraries(program: Path) -> list[Path]:
    """The libraries (and loader) `program` needs, as ldd resolves them on this host."""
    done = subprocess.run(["ldd", str(program)], capture_output=True, text=True, check=False)
    found = []
    for line in done.stdout.splitlines():
        match = re.search(r"(/\S+)", line.split("=>")[-1])
        if match:
            found.append(Path(match.group(1)))
    return found


def _busybox() -> Path:
    for name in BUSYBOX_NAMES:
        found = shutil.which(name)
        if found:
            return Path(found)
    raise BoardError("the busybox board needs busybox: apt-get install busybox-static")


def build_image(directory: Path, kernel: Path | None = None) -> BusyboxImage:
    """Write the initramfs and a fresh key pair for it under `directory`."""
    image = kernel or newest_debian_kernel()
    if image is None:
        raise BoardError("no Debian x86-64 kernel in /boot: apt-get install linux-image-amd64")
    release = image.name.removeprefix("vmlinuz-")
    modules_dir = HOST_MODULES_ROOT / release
    if not modules_dir.is_dir():
        raise BoardError(f"no modules for {image} in {modules_dir}")
    if not DROPBEAR.is_file():
        raise BoardError("the busybox board needs dropbear: apt-get install dropbear-bin")
    directory.mkdir(parents=True, exist_ok=True)
    key = directory / "id_ed25519"
    if not key.exists():
        subprocess.run(
            [
                "ssh-keygen",
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-C",
                "hwcrypto-busybox",
                "-f",
                str(key),
            ],
            check=True,
        )
    archive = _Cpio()
    for name in (
        "bin", "sbin", "usr", "usr/bin", "usr/sbin", "etc", "etc/dropbear", "proc", "sys",
        "dev", "tmp", "run", "var", "var/run", "root", "root/.ssh", "lib", "lib64", "boot",
    ):  # fmt: skip
        archive.directory(name)
    archive.file("bin/busybox", _busybox().read_bytes(), executable=True)
    archive.file("init", b"#!/bin/busybox sh\n/bin/busybox --install -s\nexec /sbin/init\n", True)
    archive.add("sbin/init", 0o120777, b"/bin/busybox")
    archive.file("etc/inittab", INITTAB.encode())
    archive.file("etc/rcS", RCS.encode(), executable=True)
    archive.file("etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n")
    archive.file("etc/shadow", b"root::19000:0:99999:7:::\n")
    archive.file("etc/group", b"root:x:0:\n")
    archive.file("etc/shells", b"/bin/sh\n")
    archive.file("root/.ssh/authorized_keys", (directory / "id_ed25519.pub").read_bytes())
    archive.file("usr/sbin/dropbear", DROPBEAR.read_bytes(), executable=True)
    directories = {"lib", "lib64"}
    for library in _shared_libraries(DROPBEAR):
        parent = str(library.parent).lstrip("/")
        for depth in range(1, len(Path(parent).parts) + 1):
            part = str(Path(*Path(parent).parts[:depth]))
            if part not in directories:
                archive.directory(part)
                directories.add(part)
        archive.file(str(library).lstrip("/"), library.resolve().read_bytes(), executable=True)
    order = []
    module_root = f"lib/modules/{release}"
    for part in ("lib/modules", module_root):
        archive.directory(part)
    wanted = module_closure(modules_dir, BOARD_MODULES)
    dep_lines = []
    for relative in wanted:
        for depth in range(1, len(Path(relative).parts)):
            part = f"{module_root}/{Path(*Path(relative).parts[:depth])}"
            if part not in directories:
                archive.directory(part)
                directories.add(part)
        name = relative.removesuffix(".xz")
        archive.file(f"{module_root}/{name}", _module_bytes(modules_dir / relative))
        order.append(f"/{module_root}/{name}")
    wanted_set = set(wanted)
    for line in (modules_dir / "modules.dep").read_text().splitlines():
        if line.partition(":")[0] in wanted_set:
            dep_lines.append(line)
    archive.file(f"{module_root}/modules.dep", ("\n".join(dep_lines) + "\n").encode())
    archive.file(f"{module_root}/modules.builtin", (modules_dir / "modules.builtin").read_bytes())
    config = image.parent / f"config-{release}"
    if config.is_file():
        archive.file(f"boot/config-{release}", config.read_bytes())
    archive.file("etc/modules.order", ("\n".join(order) + "\n").encode())
    initramfs = directory / "initramfs.cpio"
    initramfs.write_bytes(archive.bytes())
    return BusyboxImage(image, initramfs, release, key)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class BusyboxBoard:
    """The busybox board, started by `start` and ended by `stop` (by QEMU's PID)."""

    def __init__(self, directory: Path, kernel: Path | None = None, memory: str = "512M") -> None:
        self.directory = directory
        self._kernel = kernel
        self.memory = memory
        self.ssh_port = 0
        self.console = ""
        self.image: BusyboxImage | None = None
        self._qemu: subprocess.Popen[bytes] | None = None

    @property
    def ssh_target(self) -> str:
        return f"ssh://root@127.0.0.1:{self.ssh_port}"

    @property
    def serial_target(self) -> str:
        return f"serial:{self.console}"

    @property
    def console_log(self) -> Path:
        return self.directory / "console.log"

    def argv(self, image: BusyboxImage) -> list[str]:
        # TCG: the host this is developed on cannot run a stock kernel under KVM; a host
        # that can only loses time, never correctness.
        return [
            shutil.which(QEMU_BINARY) or QEMU_BINARY,
            "-accel",
            "tcg",
            "-m",
            self.memory,
            "-smp",
            "2",
            *QEMU_OPTIONS,
            "-display",
            "none",
            "-no-reboot",
            "-kernel",
            str(image.kernel),
            "-initrd",
            str(image.initramfs),
            "-append",
            "console=ttyS0,115200 panic=-1 loglevel=4",
            "-chardev",
            f"pty,id=console0,logfile={self.console_log}",
            "-serial",
            "chardev:console0",
            "-netdev",
            f"user,id=net0,hostfwd=tcp:127.0.0.1:{self.ssh_port}-:22",
            "-device",
            "virtio-net-pci,netdev=net0",
        ]

    def start(self, timeout: float = BOOT_SECONDS) -> None:
        """Boot, and return when dropbear answers and the console is known."""
        self.image = build_image(self.directory, self._kernel)
        self.ssh_port = free_port()
        # QEMU 7.2 names the console's pty on stdout, its errors on stderr: one file for both.
        stderr_path = self.directory / "qemu.output"
        with stderr_path.open("wb") as stderr:
            self._qemu = subprocess.Popen(
                self.argv(self.image),
                stdin=subprocess.DEVNULL,
                stdout=stderr,
                stderr=stderr,
                start_new_session=True,
            )
        try:
            self._wait_until_up(stderr_path, time.monotonic() + timeout, timeout)
        except BaseException:
            # Interrupted or failed: no QEMU is left behind.
            self.stop()
            raise

    def _wait_until_up(self, stderr_path: Path, deadline: float, timeout: float) -> None:
        while not self.console:
            self._check_alive(stderr_path)
            match = re.search(r"char device redirected to (/dev/pts/\d+)", stderr_path.read_text())
            if match:
                self.console = match.group(1)
            elif time.monotonic() > deadline:
                raise BoardError("QEMU named no console pty")
            time.sleep(0.1)
        while not self._ready():
            self._check_alive(stderr_path)
            if time.monotonic() > deadline:
                raise BoardError(
                    f"the busybox board did not come up in {timeout:.0f} s "
                    f"(console log: {self.console_log})"
                )
            time.sleep(1.0)

    def _ready(self) -> bool:
        """dropbear sends its banner as soon as a connection is accepted."""
        if "hwcrypto busybox board: ready" not in self._console_text():
            return False
        try:
            with socket.create_connection(("127.0.0.1", self.ssh_port), timeout=5) as link:
                return link.recv(64).startswith(b"SSH-")
        except OSError:
            return False

    def _console_text(self) -> str:
        try:
            return self.console_log.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def _check_alive(self, stderr_path: Path) -> None:
        if self._qemu is not None and self._qemu.poll() is not None:
            said = stderr_path.read_text(errors="replace").strip().splitlines()
            raise BoardError(
                f"QEMU ended with status {self._qemu.returncode}: {said[-1] if said else ''}"
            )

    def stop(self) -> None:
        """End QEMU (SIGTERM, then SIGKILL), by its own PID."""
        if self._qemu is None:
            return
        if self._qemu.poll() is None:
            self._qemu.send_signal(signal.SIGTERM)
            try:
                self._qemu.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._qemu.kill()
                self._qemu.wait()
        self._qemu = None

    def __enter__(self) -> BusyboxBoard:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
