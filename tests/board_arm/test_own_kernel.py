# SPDX-License-Identifier: MIT
"""qemu-arm64 with a developer's own kernel, not Debian's: the small arm64 kernel that
tests/data/own_arm64_kernel/build.py cross-builds from Debian's linux-source-6.1 (its boot
path built in; the CE/NEON drivers modules but aes-ce, sha256-ce and sha256-arm64) boots
through `--hwcrypto-kernel` + `--hwcrypto-modules`, the board cross-builds cryptodev and
the test drivers against its tree, and the suites run on it. Bad input is one line
before any boot.

Not in CI (the kernel build takes ~25-40 min on two busy cores). To run:

    nice -n 19 .venv/bin/python tests/data/own_arm64_kernel/build.py WORK
    HWCRYPTO_OWN_ARM64_KERNEL=WORK .venv/bin/pytest tests/board_arm/test_own_kernel.py
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.boards import arm_rootfs
from pytest_hwcrypto.boards.arm_arch import ARM64
from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.boards.helpers import cache_dir
from pytest_hwcrypto.boards.qemu_arm import QemuArmBoard

REPOSITORY = Path(__file__).resolve().parents[2]
WORK_ENV = "HWCRYPTO_OWN_ARM64_KERNEL"
BUILD = "tests/data/own_arm64_kernel/build.py"
AES_SHA = "cbc(aes),xts(aes),ctr(aes),gcm(aes),sha256,sha512"
# cpu-accel on this kernel: the built-in ones (module "kernel") and modules
CPU_DRIVERS = {
    "aes-ce": True,  # built in
    "sha256-ce": True,  # built in
    "cbc-aes-ce": False,
    "xts-aes-ce": False,
    "ctr-aes-ce": False,
    "ecb-aes-ce": False,
    "gcm-aes-ce": False,
    "cbc-aes-neonbs": False,
    "xts-aes-neonbs": False,
    "ctr-aes-neonbs": False,
    "sha512-ce": False,
    "sha256-arm64-neon": True,  # built in: sha256-ce selects it
}


@pytest.fixture(scope="module")
def own() -> dict[str, Any]:
    """build-info.json of the built kernel; skips with how to build it."""
    if "HWCRYPTO_BOARD_RUN_DIR" in os.environ:
        pytest.skip("already inside a virtual board: boards are booted from the host")
    work = os.environ.get(WORK_ENV)
    how = f"build it: nice -n 19 python {BUILD} WORK, then {WORK_ENV}=WORK"
    if not work:
        pytest.skip(f"no own arm64 kernel given ({WORK_ENV} unset): {how}")
    info_file = Path(work) / "build-info.json"
    if not info_file.is_file():
        pytest.skip(f"{info_file} missing (the build did not finish): {how}")
    info: dict[str, Any] = json.loads(info_file.read_text())
    try:
        QemuArmBoard(ARM64).check_prerequisites()
    except BoardError as error:
        pytest.skip(str(error))
    if not arm_rootfs.image_path(ARM64, cache_dir()).is_file():
        pytest.skip("qemu-arm64: no root filesystem built yet: hwcrypto vm qemu-arm64 --exec true")
    return info


def _hwcrypto(cwd: Path, *args: str, timeout: float = 1200) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "import sys; from pytest_hwcrypto.cli import main; "
         "sys.exit(main())", *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def _kernel_args(own: dict[str, Any], prefix: str = "--") -> list[str]:
    return [f"{prefix}kernel={own['image']}", f"{prefix}modules={own['modules']}"]


def test_inventory_on_the_own_kernel_lists_ce_neon_and_virtio(
    own: dict[str, Any], tmp_path: Path
) -> None:
    done = _hwcrypto(
        tmp_path, "vm", "qemu-arm64", *_kernel_args(own), "--exec", "hwcrypto inventory --json"
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    text = done.stdout
    document = json.loads(text[text.index("\n{") + 1 : text.rindex("\n}") + 2])
    assert document["kernel"]["release"] == own["release"]  # this kernel booted, not Debian's
    entries = {entry["driver"]: entry for entry in document["inventory"]}
    for driver, built_in in CPU_DRIVERS.items():
        assert driver in entries, f"{driver} not registered on {own['release']}"
        assert entries[driver]["class"] == "cpu-accel", entries[driver]
        assert (entries[driver]["module"] == "kernel") is built_in, entries[driver]
    assert entries["virtio_crypto_aes_cbc"]["class"] == "offload"


def test_cpu_drivers_dev_crypto_and_faulty_drivers_on_the_own_kernel(
    own: dict[str, Any],
) -> None:
    """cryptodev-linux and the test drivers cross-built against the kernel's own tree
    (its `build` link), loaded; test_arm_drivers and the faulty drivers caught."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "--hwcrypto-vm=qemu-arm64", *_kernel_args(own, "--hwcrypto-"),
         "--hwcrypto-cryptodev", "--hwcrypto-test-drivers",
         "-m", "not slow_board", "-k", "not lxc_suite and not cryptodev_suite",
         "tests/board/test_arm_drivers.py", "tests/board/test_faulty_drivers.py"],
        cwd=REPOSITORY, capture_output=True, text=True, timeout=2400, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    # the session's own summary (the board's line about boot and total time comes after)
    summary = [line for line in done.stdout.splitlines() if re.match(r"^\d+ passed", line)]
    assert summary and "skipped" not in summary[-1], done.stdout[-2000:]


def test_correctness_of_every_aes_and_sha_driver_on_the_own_kernel(
    own: dict[str, Any], tmp_path: Path
) -> None:
    results = tmp_path / "results.json"
    profile = REPOSITORY / "pytest_hwcrypto" / "boards" / "profiles" / "qemu-arm64.toml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider",
         "--hwcrypto", "--hwcrypto-vm=qemu-arm64", *_kernel_args(own, "--hwcrypto-"),
         "--hwcrypto-suite=inventory,correctness", f"--hwcrypto-algorithm={AES_SHA}",
         "--hwcrypto-fuzz-iterations=2", f"--hwcrypto-board={profile}",
         f"--hwcrypto-json={results}"],
        cwd=REPOSITORY, capture_output=True, text=True, timeout=2400, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    document = json.loads(results.read_text())
    assert document["kernel"]["release"] == own["release"]
    assert document["verdicts"] and all(verdict["passed"] for verdict in document["verdicts"])


def _one_line_refusal(done: subprocess.CompletedProcess[str], *expected: str) -> None:
    assert done.returncode != 0
    # refused before boot: the runner announces every board it boots (boards/runner.py)
    assert "hwcrypto: booting" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    message = done.stderr.strip()
    assert len(message.splitlines()) == 1, message
    for part in expected:
        assert part in message, message


def test_bad_kernel_input_is_one_line_before_boot(own: dict[str, Any], tmp_path: Path) -> None:
    modules = Path(own["modules"])
    # a kernel of another architecture: the host's own x86 kernel, or a bzImage header
    x86 = tmp_path / "bzImage"
    x86.write_bytes(b"\0" * 0x202 + b"HdrS" + b"\0" * 0x200)
    _one_line_refusal(
        _hwcrypto(tmp_path, "vm", "qemu-arm64", f"--kernel={x86}", f"--modules={modules}",
                  "--exec", "true"),
        "not an arm64 kernel (x86 bzImage)", "ARCH=arm64",
    )  # fmt: skip
    # modules of another release: a copy of the modules directory under another name
    other = tmp_path / "lib" / "modules" / "6.1.0-57-arm64"
    other.mkdir(parents=True)
    for name in ("modules.dep", "modules.builtin", "kernel"):
        (other / name).symlink_to(modules / name)
    _one_line_refusal(
        _hwcrypto(tmp_path, "vm", "qemu-arm64", f"--kernel={own['image']}", f"--modules={other}",
                  "--exec", "true"),
        f"is for release 6.1.0-57-arm64, but --hwcrypto-kernel {own['image']} is {own['release']}",
    )  # fmt: skip
    # the right release without its `build` link, when modules are to be built against it
    unlinked = tmp_path / "unlinked" / own["release"]
    unlinked.mkdir(parents=True)
    for name in ("modules.dep", "modules.builtin", "kernel"):
        (unlinked / name).symlink_to(modules / name)
    _one_line_refusal(
        _hwcrypto(tmp_path, "vm", "qemu-arm64", f"--kernel={own['image']}",
                  f"--modules={unlinked}", "--test-drivers", "--exec", "true"),
        "needs the kernel tree as", "build",
    )  # fmt: skip
