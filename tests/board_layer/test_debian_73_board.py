# SPDX-License-Identifier: MIT
"""Debian's Linux 7.3 by package on the QEMU board: the crypto library's drivers classed
from the kernel's own config, and the header line that says what its AF_ALG reaches.

One boot (60-90 s under TCG, more on a loaded machine) of `debian:7.3.4+deb13-amd64`,
fetched once into the cache (boards/debian_kernel.py); skipped with the reason where the
packages cannot be fetched or QEMU is missing, and inside a board.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.boards import debian_kernel
from pytest_hwcrypto.boards.base import BoardError, BoardResult, new_run_dir, passed_environment
from pytest_hwcrypto.boards.qemu import QemuBoard
from pytest_hwcrypto.run import inside_board

KERNEL = "debian:7.3.4+deb13-amd64"
BOOT_TIMEOUT = 900.0
# This interpreter (the board sees the host's root), activated or not.
COMMAND = f"""
PY="{sys.executable}"
"$PY" -m pytest_hwcrypto.cli inventory --json > "$HWCRYPTO_BOARD_RUN_DIR/inventory.json" || exit 1
# the header only (collection): its exit code says nothing the header does not
"$PY" -m pytest -p no:cacheprovider --hwcrypto --hwcrypto-suite=inventory --co \\
    > "$HWCRYPTO_BOARD_RUN_DIR/header.txt" 2>&1 || true
"""
LIBRARY_AES = ("aes-lib", "cbc-aes-lib", "xts-aes-lib", "gcm-aes-lib", "ctr-aes-lib")


@dataclass
class Boot:
    result: BoardResult
    inventory: list[dict[str, Any]]
    header: str


@pytest.fixture(scope="module")
def boot() -> Iterator[Boot]:
    if inside_board():
        pytest.skip("inside a virtual board: boards are booted from the host")
    try:
        kernel, modules = debian_kernel.resolve(KERNEL, None)
        assert kernel is not None and modules is not None
        board = QemuBoard(kernel=Path(kernel), modules_dir=Path(modules))
        board.check_prerequisites()
    except BoardError as error:
        pytest.skip(str(error))
    run_dir = new_run_dir()
    try:
        result = board.run(
            COMMAND,
            cwd=Path.cwd(),
            env=passed_environment(os.environ),
            timeout=BOOT_TIMEOUT,
            stream=io.StringIO(),
            run_dir=run_dir,
        )
        log = result.console_log.read_text(errors="replace")[-3000:]
        assert result.exit_code == 0, log
        document = json.loads((run_dir / "inventory.json").read_text())
        yield Boot(result, document["inventory"], (run_dir / "header.txt").read_text())
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _entry(boot: Boot, driver: str) -> dict[str, Any]:
    return next(e for e in boot.inventory if e["driver"] == driver)


@pytest.mark.qemu
def test_library_aes_drivers_are_cpu_accel_from_the_config_and_aesni(boot: Boot) -> None:
    for driver in LIBRARY_AES:
        entry = _entry(boot, driver)
        assert entry["class"] == "cpu-accel", entry
        assert "CONFIG_CRYPTO_LIB_AES_ARCH=y + cpu flag aes" in entry["class_evidence"]
        assert "/lib/modules/7.3.4+deb13-amd64/config" in entry["class_evidence"]


@pytest.mark.qemu
def test_md5_lib_is_generic_and_no_library_driver_is_unknown(boot: Boot) -> None:
    assert _entry(boot, "md5-lib")["class"] == "generic"
    unknown = [e["driver"] for e in boot.inventory if e["driver"].endswith("-lib")]
    unknown = [d for d in unknown if _entry(boot, d)["class"] == "unknown"]
    assert unknown == []


@pytest.mark.qemu
def test_header_says_what_af_alg_reaches_on_73(boot: Boot) -> None:
    lines = [line for line in boot.header.splitlines() if line.startswith("hwcrypto: AF_ALG")]
    assert len(lines) == 1, boot.header
    (line,) = lines
    assert "no driver by its driver name" in line
    assert "/proc/sys/crypto/af_alg_restrict = 1" in line
    assert "cbc(aes) -> cbc-aes-aesni" in line
    assert "virtio_crypto_aes_cbc" in line  # off-CPU: never, not even at 0
    assert "FIPS" not in boot.header
