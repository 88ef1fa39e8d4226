# SPDX-License-Identifier: MIT
"""The ARM boards' host-side logic without booting: binfmt entry, private APT, initramfs,
QEMU command line, guest environment, board selection. Booting is tests/board_arm."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_hwcrypto.boards import arm_initramfs, arm_rootfs, private_apt
from pytest_hwcrypto.boards.arm_arch import ARCHES, ARM64, ARMHF, ArmArch
from pytest_hwcrypto.boards.arm_kernel import ArmKernel
from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.boards.inner_pytest import pytest_command
from pytest_hwcrypto.boards.qemu_arm import QemuArmBoard
from pytest_hwcrypto.boards.registry import make_board
from pytest_hwcrypto.settings import parse_vm
from pytest_hwcrypto.vocabulary import BoardKind


def test_every_arm_board_is_a_board_kind_and_a_vm_choice() -> None:
    for name in ARCHES:
        assert BoardKind(name).value == name
        assert parse_vm(name) == BoardKind(name)
    assert parse_vm("uml") == BoardKind.UML and parse_vm("qemu") == BoardKind.QEMU


@pytest.mark.parametrize(("arch", "machine_byte"), [(ARM64, "\\xb7\\x00"), (ARMHF, "\\x28\\x00")])
def test_binfmt_line_matches_the_architectures_elf_header(arch: ArmArch, machine_byte: str) -> None:
    line = arch.binfmt_register_line().decode()
    name, kind, _, magic, mask, interpreter, flags = line.split(":")[1:]
    assert kind == "M" and flags == "F"
    assert name.startswith("hwcrypto-")
    assert magic.endswith(machine_byte)
    assert len(magic) == len(mask) == 20 * 4  # 20 bytes as \xNN
    assert interpreter == f"/usr/bin/{arch.qemu_user}"


def test_private_apt_keeps_every_directory_of_its_own(tmp_path: Path) -> None:
    apt = private_apt.PrivateApt("arm64", tmp_path, lambda line: None, environ={})
    options = apt.options()
    paths = [value.split("=", 1)[1] for value in options if value.startswith("Dir::")]
    assert paths and all(path.startswith(str(tmp_path)) for path in paths)
    assert "APT::Architecture=arm64" in options
    text = private_apt.sources_list("arm64", "http://mirror.example/debian")
    assert text.count("[arch=arm64 ") == 3 and "http://mirror.example/debian bookworm main" in text


def test_mirror_comes_from_the_environment() -> None:
    assert private_apt.mirror({}) == private_apt.DEFAULT_MIRROR
    assert private_apt.mirror({private_apt.MIRROR_ENV: "http://m/debian"}) == "http://m/debian"


def _modules_dir(tmp_path: Path) -> Path:
    modules = tmp_path / "lib" / "modules" / "6.1.0-57-arm64"
    entries = {
        "kernel/fs/ext4/ext4.ko": ["kernel/fs/jbd2/jbd2.ko", "kernel/lib/crc16.ko"],
        "kernel/fs/jbd2/jbd2.ko": [],
        "kernel/lib/crc16.ko": [],
        "kernel/drivers/virtio/virtio_pci.ko": ["kernel/drivers/virtio/virtio_pci_modern_dev.ko"],
        "kernel/drivers/virtio/virtio_pci_modern_dev.ko": [],
        "kernel/net/9p/9pnet_virtio.ko": ["kernel/net/9p/9pnet.ko"],
        "kernel/net/9p/9pnet.ko": [],
        "kernel/fs/9p/9p.ko": ["kernel/net/9p/9pnet.ko"],
        "kernel/crypto/aes_generic.ko": [],
    }
    for path in entries:
        (modules / path).parent.mkdir(parents=True, exist_ok=True)
        (modules / path).write_bytes(b"\x7fELF module " + path.encode())
    (modules / "modules.dep").write_text(
        "".join(f"{path}: {' '.join(deps)}\n" for path, deps in entries.items())
    )
    return modules


def test_boot_modules_come_dependencies_first_and_only_those_needed(tmp_path: Path) -> None:
    order = arm_initramfs.module_closure(_modules_dir(tmp_path), arm_initramfs.BOOT_MODULES)
    names = [Path(path).name for path in order]
    assert names.index("jbd2.ko") < names.index("ext4.ko")
    assert names.index("virtio_pci_modern_dev.ko") < names.index("virtio_pci.ko")
    assert names.index("9pnet.ko") < names.index("9pnet_virtio.ko") < names.index("9p.ko")
    assert names.count("9pnet.ko") == 1
    assert "aes_generic.ko" not in names  # not needed to reach the root filesystem
    assert "virtio_blk.ko" not in names  # built in (absent from modules.dep): left out


@pytest.mark.skipif(
    shutil.which("cpio") is None, reason="reads the archive back with cpio: apt-get install cpio"
)
def test_initramfs_is_a_newc_archive_the_cpio_tool_reads(tmp_path: Path) -> None:
    busybox = tmp_path / "busybox"
    busybox.write_bytes(b"\x7fELF busybox")
    target = tmp_path / "initramfs.cpio"
    order = arm_initramfs.write_initramfs(target, busybox, _modules_dir(tmp_path))
    out = tmp_path / "out"
    out.mkdir()
    subprocess.run(["cpio", "-idm", "--quiet"], input=target.read_bytes(), cwd=out, check=True)
    assert (out / "bin" / "busybox").read_bytes() == busybox.read_bytes()
    assert (out / "init").stat().st_mode & 0o111
    assert "switch_root" in (out / "init").read_text()
    assert (out / "modules.order").read_text().split() == order
    assert all((out / "modules" / name).is_file() for name in order)


def _board(tmp_path: Path, cryptodev: bool = False, test_drivers: bool = False) -> QemuArmBoard:
    board = QemuArmBoard(
        ARM64,
        cache=tmp_path / "cache",
        environ={},
        cryptodev=cryptodev,
        test_drivers=test_drivers,
    )
    board._kernel = ArmKernel(  # what arm_kernel.fetch_debian_kernel gives
        "6.1.0-57-arm64", tmp_path / "Image", tmp_path / "modules", tmp_path / "headers"
    )
    return board


def test_boot_argv_has_virtio_crypto_a_snapshot_disk_and_the_host_directories(
    tmp_path: Path,
) -> None:
    board = _board(tmp_path)
    board.guest_script("echo hi\n", tmp_path / "run", tmp_path / "work")
    argv = board.boot_argv(tmp_path / "run", tmp_path / "run" / "guest.sh")
    line = " ".join(argv)
    assert argv[argv.index("env") + 2] == "qemu-system-aarch64"
    assert "-cpu max" in line and "virtio-crypto-pci" in line
    assert "snapshot=on" in line  # the cached image is never written
    assert f"path={tmp_path / 'run'},security_model=none " in line + " "  # read-write
    assert f"path={tmp_path / 'work'},security_model=none,readonly=on" in line
    assert "panic=-1" in line and "-no-reboot" in line


def test_guest_script_sets_soft_lockup_panic_and_loads_the_cpu_drivers(tmp_path: Path) -> None:
    board = _board(tmp_path, cryptodev=True, test_drivers=True)
    script = board.guest_script("echo hi\n", tmp_path / "run", tmp_path / "work")
    assert "softlockup_panic" in script
    assert "aes_ce_blk" in script and "virtio_crypto" in script
    assert "cryptodev.ko" in script and "hwcrypto_test.ko" in script
    assert script.rstrip().endswith("poweroff -f")


def test_guest_environment_drops_the_hosts_python(tmp_path: Path) -> None:
    env = _board(tmp_path).guest_environment(
        {"PATH": "/work/.venv/bin:/usr/bin", "VIRTUAL_ENV": "/work/.venv", "HWCRYPTO_SEED": "1"}
    )
    assert "VIRTUAL_ENV" not in env and env["HWCRYPTO_SEED"] == "1"
    assert env["PATH"].split(":")[0] == f"{arm_rootfs.GUEST_VENV}/bin"
    assert pytest_command(["-q"], _board(tmp_path).guest_python).startswith(
        f"{arm_rootfs.GUEST_VENV}/bin/python -m pytest"
    )


def test_make_board_gives_the_arm_boards(tmp_path: Path) -> None:
    board = make_board("qemu-armhf", None, None)
    assert isinstance(board, QemuArmBoard) and board.arch is ARMHF and board.name == "qemu-armhf"


def test_custom_kernel_without_modules_says_which_option(tmp_path: Path) -> None:
    image = tmp_path / "Image"
    image.write_bytes(b"kernel")
    board = QemuArmBoard(ARM64, kernel=image, cache=tmp_path, environ={})
    with pytest.raises(BoardError, match="--hwcrypto-modules"):
        board.kernel()


def test_build_output_is_passed_on_and_its_end_kept_for_an_error() -> None:
    said: list[str] = []
    lines = [f"pip line {n}\n" for n in range(40)]
    tail = arm_rootfs._follow(lines, said.append, "qemu-arm64")
    assert said[0] == "qemu-arm64: pip line 0" and len(said) == 40
    assert tail == [f"pip line {n}" for n in range(40 - arm_rootfs.TAIL_LINES, 40)]


@pytest.mark.parametrize("arch", sorted(ARCHES))
def test_the_board_loads_the_driver_of_its_virtio_rng(arch: str) -> None:
    # QEMU gives each ARM board a virtio-rng-pci; without its driver loaded the rng
    # suite finds no hw_random source and skips
    assert "virtio_rng" in ARCHES[arch].guest_modules
