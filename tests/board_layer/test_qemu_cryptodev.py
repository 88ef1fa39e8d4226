# SPDX-License-Identifier: MIT
"""The QEMU board with /dev/crypto, from the host: build (or cache), boot, insmod, open.

One boot (~30-40 s under TCG, plus ~10 s for the first build of a kernel release, headers
included): the host builds cryptodev-linux for the board's kernel, the guest loads it, and
a session opened there names its driver. Marked `qemu`; skips where the QEMU board cannot
start, and inside a board, which never boots another.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_hwcrypto.boards import kmod_build
from pytest_hwcrypto.boards.base import BoardError, BoardResult, new_run_dir, passed_environment
from pytest_hwcrypto.boards.qemu import QemuBoard
from pytest_hwcrypto.run import CRYPTODEV_STATE_ENV, inside_board

BOOT_TIMEOUT = 300.0

PROBE = f"""
stat -c 'node: %F %t:%T %a' /dev/crypto
echo "state: ${CRYPTODEV_STATE_ENV}"
grep -o '^cryptodev [0-9]*' /proc/modules
{sys.executable} -c '
from pytest_hwcrypto.kernel import cryptodev
with cryptodev.CryptoDevice() as device:
    with cryptodev.open_session(device, "cbc(aes)", bytes(16)) as session:
        print("served by:", session.driver)
'
"""


@dataclass
class Boot:
    board: QemuBoard
    result: BoardResult
    output: str


@pytest.fixture(scope="module")
def boot() -> Iterator[Boot]:
    if inside_board():
        pytest.skip("inside a virtual board: boot the QEMU board from the host")
    board = QemuBoard(cryptodev=True)
    try:
        board.check_prerequisites()
    except BoardError as error:
        pytest.skip(str(error))
    run_dir = new_run_dir()
    output = io.StringIO()
    try:
        result = board.run(
            PROBE,
            cwd=Path.cwd(),
            env=passed_environment(os.environ),
            timeout=BOOT_TIMEOUT,
            stream=output,
            run_dir=run_dir,
        )
        yield Boot(board, result, output.getvalue())
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


@pytest.mark.qemu
def test_the_host_built_the_module_for_the_boards_kernel(boot: Boot) -> None:
    release = boot.board.release()
    progress = [line for line in boot.output.splitlines() if line.startswith("hwcrypto: ")]
    assert any(f"cryptodev for {release}: " in line for line in progress), boot.output[:2000]
    cached = re.search(r"(?:cached build|cached as) (\S+\.ko)", boot.output)
    assert cached, boot.output[:2000]
    magic = kmod_build.vermagic(Path(cached.group(1)).read_bytes())
    assert magic is not None and magic.split()[0] == release


@pytest.mark.qemu
def test_the_guest_loaded_it_and_has_dev_crypto(boot: Boot) -> None:
    assert boot.result.exit_code == 0, boot.result.console_log.read_text(errors="replace")[-3000:]
    release = boot.board.release()
    assert f"state: cryptodev.ko for {release} loaded" in boot.output
    # misc character device: major 10 (hex "a" in stat's %t), world read-write
    assert re.search(r"node: character special file a:[0-9a-f]+ 666", boot.output), boot.output
    assert re.search(r"^cryptodev \d+", boot.output, re.MULTILINE)


@pytest.mark.qemu
def test_a_session_there_names_the_driver_that_serves_it(boot: Boot) -> None:
    assert "served by: cbc-aes-aesni" in boot.output
    assert not [event for event in boot.result.kernel_events if event.kind == "oops"]
