# SPDX-License-Identifier: MIT
"""The QEMU board boots, runs a command, and brings back output, exit code, files and events.

Each boot costs ~30-40 s under TCG on two cores, so the checks share three boots: one that
does everything a session needs, one that is killed by its timeout, one whose CPU a test
driver keeps in the kernel until the soft-lockup detector panics it. The tests that boot
are marked `qemu`; they skip (with the reason and the install hint) where QEMU, virtme-ng
or the kernel are missing, and inside a board, which never boots another.
"""

from __future__ import annotations

import io
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_hwcrypto.boards import qemu as qemu_board
from pytest_hwcrypto.boards.base import (
    BOARD_FAILED_EXIT_CODE,
    BoardError,
    BoardResult,
    new_run_dir,
    passed_environment,
)
from pytest_hwcrypto.boards.kernel_image import (
    bzimage_release,
    newest_debian_kernel,
    uncompressed_pvh_kernel,
)
from pytest_hwcrypto.boards.qemu import (
    QEMU_BINARY,
    QEMU_OPTIONS,
    QemuBoard,
    choose_accelerator,
    long_mode_probe_passes,
)
from pytest_hwcrypto.kernel import test_drivers
from pytest_hwcrypto.run import inside_board

BOOT_TIMEOUT = 300.0
KILLED_BOARD_TIMEOUT = 20.0  # long enough for QEMU to be running, short of a full boot

# One guest command for the shared boot: each line leaves evidence for one test.
SESSION_COMMAND = r"""
echo "hello from the qemu board"
echo "written in the guest" > "$HWCRYPTO_BOARD_RUN_DIR/from-guest.txt"
cat /proc/crypto > "$HWCRYPTO_BOARD_RUN_DIR/proc-crypto.txt"
echo "tcrypt module: $(modinfo -F filename tcrypt)"
if touch "$PWD/.hwcrypto-board-write-probe" 2>/dev/null; then
    echo "host root: writable"; rm -f "$PWD/.hwcrypto-board-write-probe"
else
    echo "host root: read-only"
fi
echo "scratch" > /tmp/hwcrypto-scratch && echo "tmp: writable"
exit 7
"""


@dataclass
class SessionBoot:
    board: QemuBoard
    result: BoardResult
    output: str
    run_dir: Path


def _ready_board(test_drivers: bool = False) -> QemuBoard:
    if inside_board():
        pytest.skip("inside a virtual board: the QEMU board tests boot one, run them on the host")
    board = QemuBoard(test_drivers=test_drivers)
    try:
        board.check_prerequisites()
    except BoardError as error:
        pytest.skip(str(error))
    return board


@pytest.fixture(scope="module")
def session_boot() -> Iterator[SessionBoot]:
    board = _ready_board()
    run_dir = new_run_dir()
    output = io.StringIO()
    try:
        result = board.run(
            SESSION_COMMAND,
            cwd=Path.cwd(),
            env=passed_environment(os.environ),
            timeout=BOOT_TIMEOUT,
            stream=output,
            run_dir=run_dir,
        )
        yield SessionBoot(board, result, output.getvalue(), run_dir)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _proc_crypto_drivers(text: str) -> set[str]:
    return {
        line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("driver")
    }


# -- one booted session ------------------------------------------------------------------


@pytest.mark.qemu
def test_exit_code_comes_back(session_boot: SessionBoot) -> None:
    result = session_boot.result
    assert not result.timed_out
    assert result.exit_code == 7, result.console_log.read_text(errors="replace")[-3000:]


@pytest.mark.qemu
def test_output_comes_back(
    session_boot: SessionBoot, record_property: Callable[[str, object], None]
) -> None:
    assert "hello from the qemu board" in session_boot.output
    # Only the command's output is streamed, not the boot log around it.
    assert "HWCRYPTO-BOARD" not in session_boot.output
    assert "Linux version" not in session_boot.output
    # Boot time is reported, not asserted: on shared CI machines it varies too much.
    assert session_boot.result.boot_seconds is not None
    record_property("boot_seconds", round(session_boot.result.boot_seconds, 1))


@pytest.mark.qemu
def test_file_written_in_run_dir_is_on_the_host(session_boot: SessionBoot) -> None:
    written = session_boot.run_dir / "from-guest.txt"
    assert written.read_text() == "written in the guest\n"


@pytest.mark.qemu
def test_guest_has_aesni_and_virtio_crypto(session_boot: SessionBoot) -> None:
    drivers = _proc_crypto_drivers((session_boot.run_dir / "proc-crypto.txt").read_text())
    assert "virtio_crypto_aes_cbc" in drivers
    assert "cbc-aes-aesni" in drivers
    assert {"xts-aes-aesni", "ctr-aes-aesni"} <= drivers


@pytest.mark.qemu
def test_broken_virtio_rsa_selftest_is_a_kernel_event(session_boot: SessionBoot) -> None:
    failed = [
        event.line for event in session_boot.result.kernel_events if event.kind == "selftest-failed"
    ]
    assert any("virtio-crypto-rsa" in line for line in failed), failed


@pytest.mark.qemu
def test_tcrypt_module_is_there(session_boot: SessionBoot) -> None:
    assert "/tcrypt.ko" in session_boot.output


@pytest.mark.qemu
def test_host_root_read_only_scratch_writable(session_boot: SessionBoot) -> None:
    assert "host root: read-only" in session_boot.output
    assert "tmp: writable" in session_boot.output
    assert not Path("/tmp/hwcrypto-scratch").exists(), "guest /tmp must not reach the host"


@pytest.mark.qemu
def test_kernel_description_names_release_and_accelerator(session_boot: SessionBoot) -> None:
    description = session_boot.result.kernel
    assert session_boot.board.release() in description
    assert ("TCG" in description) or ("KVM" in description)


# -- a board killed by its timeout -------------------------------------------------------


def _qemu_pids_for(run_dir: Path) -> set[int]:
    """QEMU processes whose command line names this run dir (vng exports it over 9p)."""
    pids = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if (
            argv
            and argv[0].endswith(QEMU_BINARY.encode())
            and any(str(run_dir).encode() in arg for arg in argv)
        ):
            pids.add(int(proc.name))
    return pids


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.qemu
def test_timeout_kills_the_board_and_its_qemu() -> None:
    board = _ready_board()
    run_dir = new_run_dir()
    seen: set[int] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.update(_qemu_pids_for(run_dir))
            time.sleep(0.2)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        result = board.run(
            "sleep 600",
            cwd=Path.cwd(),
            env=passed_environment(os.environ),
            timeout=KILLED_BOARD_TIMEOUT,
            stream=None,
            run_dir=run_dir,
        )
    finally:
        done.set()
        watcher.join()
        shutil.rmtree(run_dir, ignore_errors=True)
    assert result.timed_out
    assert result.exit_code == BOARD_FAILED_EXIT_CODE
    assert seen, "QEMU never showed up: the board did not start"
    deadline = time.monotonic() + 5.0  # an orphan is reaped by init, not by us
    while any(_running(pid) for pid in seen) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in seen if _running(pid)]


# One AF_ALG request to a test driver told to busy-wait this long keeps its CPU in the
# kernel throughout (the kernel is PREEMPT_VOLUNTARY and the wait never yields): far past
# the soft-lockup detector's 20 s (twice kernel.watchdog_thresh).
STUCK_SECONDS = 150
LOCKUP_COMMAND = f"""
{sys.executable} -c '
import socket
from pytest_hwcrypto.kernel import test_drivers as drivers
control = drivers.TestDriversControl(None)
delays = control.read("delay_us")
control.write("delay_us", drivers.with_value(delays, drivers.CBC_A, {STUCK_SECONDS * 1_000_000}))
tfm = socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET, 0)
tfm.bind(("skcipher", drivers.CBC_A))
tfm.setsockopt(socket.SOL_ALG, socket.ALG_SET_KEY, bytes(16))
request, _ = tfm.accept()
print("request sent", flush=True)
request.sendmsg_afalg([bytes(16)], op=socket.ALG_OP_ENCRYPT, iv=bytes(16))
request.recv(16)
print("the request came back")
'
"""


@pytest.mark.qemu
def test_a_cpu_stuck_in_the_kernel_ends_the_board_with_its_stack(tmp_path: Path) -> None:
    """A soft lockup panics the board rather than hanging it until the timeout, and the
    console log holds the stuck CPU's stack, naming the module that spun."""
    board = _ready_board(test_drivers=True)
    output = io.StringIO()
    # The board makes and removes its own run directory; the console log is kept here.
    result = board.run(
        LOCKUP_COMMAND,
        cwd=Path.cwd(),
        env=passed_environment(os.environ),
        timeout=BOOT_TIMEOUT + STUCK_SECONDS,
        stream=output,
        artifacts_dir=tmp_path,
    )
    console = result.console_log.read_text(errors="replace")
    assert "request sent" in output.getvalue(), console[-3000:]
    assert "the request came back" not in output.getvalue()
    assert not result.timed_out
    assert result.exit_code == BOARD_FAILED_EXIT_CODE
    lockups = [e.line for e in result.kernel_events if e.kind == "oops" and "soft lockup" in e.line]
    assert lockups, result.kernel_events
    panic = console[console.index("Kernel panic") :]
    assert f"[{test_drivers.MODULE_NAME}]" in panic, panic[:3000]


# -- without booting ---------------------------------------------------------------------


@pytest.mark.qemu
def test_long_mode_probe_passes_under_tcg() -> None:
    """The KVM probe's boot sector is right: under TCG it reaches long mode and exits."""
    if inside_board():
        pytest.skip("needs QEMU on the host")
    qemu = shutil.which(QEMU_BINARY)
    if qemu is None:
        pytest.skip(f"{QEMU_BINARY} missing: apt-get install qemu-system-x86")
    assert long_mode_probe_passes(qemu, "tcg")


@pytest.mark.parametrize(("value", "kvm"), [("0", False), ("1", True)])
def test_kvm_can_be_forced(value: str, kvm: bool) -> None:
    accelerator = choose_accelerator({"HWCRYPTO_KVM": value}, QEMU_BINARY)
    assert accelerator.kvm is kvm
    assert "HWCRYPTO_KVM" in accelerator.reason


def test_bad_kvm_setting_is_one_clear_error() -> None:
    with pytest.raises(BoardError, match="HWCRYPTO_KVM must be 0, 1 or auto"):
        choose_accelerator({"HWCRYPTO_KVM": "yes please"}, QEMU_BINARY)


def _debian_kernel() -> Path:
    """A Debian image, whether or not its modules are visible (a board hides /lib/modules)."""
    images = sorted(Path("/boot").glob("vmlinuz-*-amd64"))
    if not images:
        pytest.skip("no Debian kernel: apt-get install linux-image-amd64")
    return images[-1]


def test_newest_debian_kernel_with_modules_is_the_default(tmp_path: Path) -> None:
    boot, modules = tmp_path / "boot", tmp_path / "modules"
    for release in ("6.1.0-9-amd64", "6.1.0-57-amd64", "6.1.0-60-amd64"):
        (boot / f"vmlinuz-{release}").parent.mkdir(exist_ok=True)
        (boot / f"vmlinuz-{release}").write_bytes(b"")
    for release in ("6.1.0-9-amd64", "6.1.0-57-amd64"):  # 6.1.0-60: image without modules
        (modules / release).mkdir(parents=True)
    assert newest_debian_kernel(boot, modules) == boot / "vmlinuz-6.1.0-57-amd64"
    assert newest_debian_kernel(boot, tmp_path / "nothing") is None


def test_release_read_from_the_bzimage_header() -> None:
    kernel = _debian_kernel()
    assert bzimage_release(kernel) == kernel.name[len("vmlinuz-") :]


def test_debian_kernel_unpacked_for_a_direct_pvh_boot(tmp_path: Path) -> None:
    kernel = _debian_kernel()
    release = kernel.name[len("vmlinuz-") :]
    vmlinux = uncompressed_pvh_kernel(kernel, release, tmp_path)
    if vmlinux is None:
        pytest.skip(f"{kernel} is not an xz bzImage with CONFIG_PVH=y")
    assert vmlinux.read_bytes()[:4] == b"\x7fELF"
    assert bzimage_release(vmlinux) is None  # an ELF, not a bzImage


def test_a_bzimage_without_pvh_is_booted_as_is(tmp_path: Path) -> None:
    kernel = _debian_kernel()
    assert uncompressed_pvh_kernel(kernel, "no-such-release", tmp_path) is None


@pytest.fixture
def no_unpacking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Boot the bzImage as it is: these tests look at the command line, not the image."""
    monkeypatch.setattr(qemu_board, "uncompressed_pvh_kernel", lambda *args: None)


@pytest.mark.usefixtures("no_unpacking")
def test_boot_argv_under_forced_tcg(tmp_path: Path) -> None:
    board = QemuBoard(kernel=_debian_kernel(), environ={"HWCRYPTO_KVM": "0"})
    argv = board.boot_argv(tmp_path, tmp_path / "guest.sh")
    assert "--disable-kvm" in argv
    assert argv[argv.index("--rwdir") + 1] == str(tmp_path)
    assert "--qemu-opts=" + " ".join(QEMU_OPTIONS) in argv
    assert argv[argv.index("--exec") + 1] == f"/bin/sh {tmp_path / 'guest.sh'}"


@pytest.mark.usefixtures("no_unpacking")
def test_custom_modules_are_staged_where_vng_looks(tmp_path: Path) -> None:
    kernel = _debian_kernel()
    modules = tmp_path / "modules" / kernel.name[len("vmlinuz-") :]
    modules.mkdir(parents=True)
    board = QemuBoard(kernel=kernel, modules_dir=modules, environ={"HWCRYPTO_KVM": "0"})
    argv = board.boot_argv(tmp_path, tmp_path / "guest.sh")
    staged = Path(argv[argv.index("--run") + 1])
    assert staged.resolve() == kernel.resolve()
    assert (staged.parent.parent / "lib" / "modules" / modules.name).resolve() == modules


def test_modules_of_another_release_are_refused(tmp_path: Path) -> None:
    kernel = _debian_kernel()
    modules = tmp_path / "9.9.9-other"
    modules.mkdir()
    board = QemuBoard(kernel=kernel, modules_dir=modules, environ={"HWCRYPTO_KVM": "0"})
    with pytest.raises(BoardError, match="does not match kernel"):
        board.check_kernel()
