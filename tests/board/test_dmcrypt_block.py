# SPDX-License-Identifier: MIT
"""Loop + dm-crypt on a real kernel: volumes pinned to one driver and proven, the plain
on-disk format recomputed with pyca, refusals named, and nothing left after kill -9.

Runs inside a board (`pytest --hwcrypto-vm=uml tests/board/test_dmcrypt_block.py`; the
QEMU board adds aesni and virtio-crypto). The kill -9 tests make a tagged loop + dm in a
child that SIGKILLs itself, with a private ledger directory, beside hand-made decoys --
a loop device on a file in the plugin's own block directory and a dm device named
`hwcrypto-...` -- which must survive the sweep.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_hwcrypto.block import dmcrypt, tools
from pytest_hwcrypto.block.loop import backing_dir
from pytest_hwcrypto.block.plain_format import decrypt_plain
from pytest_hwcrypto.block.volume import VolumeMaker
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.ledger import Ledger
from pytest_hwcrypto.vocabulary import MIB

XTS_DRIVERS = ("xts(ecb(aes-generic))", "xts(ecb(aes-fixed-time))", "xts-aes-aesni")
CBC_DRIVERS = ("cbc(aes-generic)", "cbc(aes-fixed-time)", "cbc-aes-aesni")
REFUSED = "virtio_crypto_aes_cbc"

KILLED_CHILD = """
import os, signal, sys
from pytest_hwcrypto.block import naming
from pytest_hwcrypto.block.volume import VolumeMaker
from pytest_hwcrypto.ledger import Ledger
volume = VolumeMaker(Ledger()).open("xts(ecb(aes-generic))", 256, size=4 * 1024 * 1024)
print(naming.run_id(), volume.path, volume.loop.device, volume.loop.backing, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def registered(driver: str) -> bool:
    return any(a.driver == driver for a in read_proc_crypto())


def base_cipher(driver: str) -> str:
    inner = driver.split("(")[-1].rstrip(")")
    return inner if "(" in driver else ""


def present(driver: str) -> bool:
    """Registered, or a template instance over a registered cipher (dm-crypt builds it)."""
    cipher = base_cipher(driver)
    return registered(driver) or (bool(cipher) and registered(cipher))


@pytest.fixture
def block(block_state_dir: Path) -> Path:
    subprocess.run(["modprobe", "-q", "crypto_user"], check=False)
    return block_state_dir


def _drop_caches() -> None:
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


@pytest.mark.parametrize("sector_size", [512, 4096])
@pytest.mark.parametrize("driver", XTS_DRIVERS + CBC_DRIVERS)
def test_volume_runs_the_pinned_driver_and_its_format_is_plain(
    block: Path, driver: str, sector_size: int
) -> None:
    if not present(driver):
        pytest.skip(f"{driver} is not on this board")
    algorithm = "xts(aes)" if driver.startswith("xts") else "cbc(aes)"
    key_bits = 256
    maker = VolumeMaker(Ledger(block))
    size = 4 * MIB
    plaintext = hashlib.shake_256(driver.encode()).digest(size)
    with maker.volume(driver, key_bits, sector_size, size) as volume:
        table = tools.run(["dmsetup", "table", volume.name + "-crypt"])
        assert f"capi:{driver}-plain64" in table
        assert volume.crypt is not None and volume.crypt.refcnt_after > volume.crypt.refcnt_before
        with open(volume.path, "r+b", buffering=0) as disk:
            disk.write(plaintext)
            os.fsync(disk.fileno())
        _drop_caches()
        maker.reopen(volume)
        with open(volume.path, "rb", buffering=0) as disk:
            back = disk.read(size)
        assert hashlib.sha256(back).digest() == hashlib.sha256(plaintext).digest()
        raw = volume.loop.backing.read_bytes()
        assert raw != plaintext
        assert decrypt_plain(algorithm, volume.key, raw, sector_size) == plaintext
    assert not volume.loop.backing.exists()
    assert Ledger(block).entries() == [], "everything made was struck off again"


def test_dmcrypt_refuses_allocates_memory_drivers_by_name(block: Path) -> None:
    if not registered(REFUSED):
        pytest.skip(f"{REFUSED} is only on the QEMU board (virtio-crypto)")
    maker = VolumeMaker(Ledger(block))
    with pytest.raises(dmcrypt.DriverRefused, match="CRYPTO_ALG_ALLOCATES_MEMORY"):
        maker.open(REFUSED, 128)
    assert not list(backing_dir().glob("*.img")), "a refused volume leaves no backing file"


# --- kill -9 -----------------------------------------------------------------------------


def _decoys(block: Path) -> Iterator[tuple[str, str]]:
    """A hand-made loop device (its file in the plugin's own directory) and a dm device
    named like the plugin's, neither recorded anywhere."""
    folder = backing_dir()
    folder.mkdir(parents=True, exist_ok=True)
    image = folder / "hwcrypto-decoy.img"
    with open(image, "wb") as handle:
        handle.truncate(MIB)
    device = tools.run(["losetup", "--find", "--show", str(image)]).strip()
    name = "hwcrypto-decoy-crypt"
    table = f"0 {MIB // 512} crypt aes-cbc-plain64 {'00' * 16} 0 {device} 0\n"
    tools.run(["dmsetup", "create", name], stdin=table.encode())
    try:
        yield device, name
    finally:
        tools.run(["dmsetup", "remove", name])
        tools.run(["losetup", "--detach", device])
        image.unlink()


@pytest.fixture
def decoys(block: Path) -> Iterator[tuple[str, str]]:
    yield from _decoys(block)


def _kill_while_open() -> list[str]:
    child = subprocess.run(
        [sys.executable, "-c", KILLED_CHILD], capture_output=True, text=True, check=False
    )
    assert child.returncode == -9, child.stderr
    run_id, dm_path, loop_device, backing = child.stdout.split()
    assert Path(dm_path).exists() and Path(backing).exists(), "the child died with them open"
    return [run_id, dm_path, loop_device, backing]


def _assert_swept(run_id: str, backing: str, decoys: tuple[str, str]) -> None:
    names = tools.run(["dmsetup", "ls"])
    assert f"hwcrypto-{run_id}-" not in names, names
    loops = tools.run(["losetup", "--list", "--noheadings", "-O", "NAME,BACK-FILE"])
    assert backing not in loops, loops
    assert not Path(backing).exists()
    decoy_loop, decoy_dm = decoys
    assert decoy_dm in names and decoy_loop in loops, "a hand-made device was touched"


def test_after_kill_9_hwcrypto_sweep_removes_the_volume_and_only_it(
    block: Path,
    decoys: tuple[str, str],
    hwcrypto_sweep: Callable[[], subprocess.CompletedProcess[str]],
) -> None:
    run_id, _dm, _loop, backing = _kill_while_open()
    done = hwcrypto_sweep()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "removed dm device" in done.stdout and f"removed {backing}" in done.stdout
    _assert_swept(run_id, backing, decoys)
    assert list(block.glob("run-*.json")) == []


def test_after_kill_9_the_next_run_removes_it_at_start(
    block: Path, decoys: tuple[str, str], pytester: pytest.Pytester
) -> None:
    run_id, _dm, _loop, backing = _kill_while_open()
    pytester.makepyfile(test_nothing="def test_nothing(): pass")
    result = pytester.runpytest_subprocess(
        "--hwcrypto", "-p", "no:cacheprovider", "test_nothing.py"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*swept a killed run's leftovers: removed dm device*"])
    _assert_swept(run_id, backing, decoys)


def test_a_driver_dmcrypt_cannot_allocate_is_one_clear_error_and_leaves_nothing(
    block: Path,
) -> None:
    maker = VolumeMaker(Ledger(block))
    with pytest.raises(tools.BlockError, match=r"dm-crypt refused capi:cbc\(no-such-aes\)"):
        maker.open("cbc(no-such-aes)", 128)
    assert "key withheld" in _last_refusal(maker)
    assert Ledger(block).entries() == []
    assert not list(backing_dir().glob("*.img"))
    assert "hwcrypto-" not in tools.run(["dmsetup", "ls"])


def _last_refusal(maker: VolumeMaker) -> str:
    try:
        maker.open("cbc(no-such-aes)", 128)
    except tools.BlockError as error:
        return str(error)
    raise AssertionError("opened a volume on a driver that does not exist")
