# SPDX-License-Identifier: MIT
"""A kernel built with the change itself: AF_ALG refuses off-CPU drivers, and the run says so.

test_masked_afalg.py swaps a rebuilt af_alg.ko into Debian's kernel. This one boots a
kernel built from Debian's linux-source-6.1 with the same change made in the tree
(tests/data/masked_kernel: AF_ALG built into the image, the project's test drivers built
against that tree), as a kernel carrying upstream commit 7524070f26d8 is. With the
asynchronous test engine flagged as a real engine's driver (CRYPTO_ALG_ASYNC |
CRYPTO_ALG_KERN_DRIVER_ONLY) and made the cbc(aes) winner: AF_ALG refuses it by name while
software still binds, dm-crypt and tcrypt serve it, and one user session says so in its
header and as one afalg-masked finding, crediting no AF_ALG figure to a refused driver.

Not in CI (the kernel takes tens of minutes to build). By hand:
    nice -n 19 bash tests/data/masked_kernel/build.sh WORKDIR     # prints the two options
    pytest --hwcrypto-vm=qemu --hwcrypto-test-drivers \\
        --hwcrypto-kernel=WORKDIR/install/boot/vmlinuz-6.1.192-afalg-masked \\
        --hwcrypto-modules=WORKDIR/install/lib/modules/6.1.192-afalg-masked \\
        tests/board/test_masked_kernel.py
On any other kernel it skips, saying so.

Seen (2026-12-07, QEMU TCG, nice 19, host load 5-6): boot 21 s; AF_ALG refused 11 drivers
(the engine, virtio_crypto_aes_cbc, the AES-NI simd wrappers ...) while cbc(aes) and
cbc-aes-hwcrypto-test-a bound; the session (inventory, throughput, dmcrypt; cbc(aes), 4 KiB,
budget 6) said so in its header and as afalg-masked findings, AF_ALG measured
cbc(aes-fixed-time), cbc(aes-generic), test-a and test-b only, dm-crypt the engine (4 KiB
decrypt 1.15 MiB/s, 1 MiB 13.4) and tcrypt reached it: 2 passed in 290 s inside the board.
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_masked_afalg import (
    BUILT_MASKED_SUFFIX,
    ENGINE,
    VIRTIO,
    check_a_masked_session,
    reload_engine,
)

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.kernel import afalg_reach
from pytest_hwcrypto.kernel.facts import read_release
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.kernel.test_drivers import TestDriversControl as Control
from pytest_hwcrypto.run import run_of
from pytest_hwcrypto.vocabulary import PROC_CRYPTO

pytest_plugins = ["pytester"]

HOW_TO = (
    "boot the kernel built with the change: nice -n 19 bash tests/data/masked_kernel/build.sh "
    "WORKDIR, then pytest --hwcrypto-vm=qemu --hwcrypto-test-drivers with the "
    "--hwcrypto-kernel and --hwcrypto-modules it prints"
)


@pytest.fixture(scope="module")
def engine_as_real(pytestconfig: pytest.Config) -> Iterator[Control]:
    """On the built kernel only: the engine reloaded as an engine's driver, the winner."""
    release = read_release()
    if not release.endswith(BUILT_MASKED_SUFFIX):
        pytest.skip(f"this kernel is {release}, not the masked test kernel: {HOW_TO}")
    control = fixtures.test_drivers_or_skip(run_of(pytestconfig).options)
    if control.module_file is None:
        pytest.skip("the test drivers were not loaded by this board: add --hwcrypto-test-drivers")
    reload_engine(control, "async_driver_only=Y", "async_priority=1000")
    try:
        yield control
    finally:
        reload_engine(control)


def bind(name: str) -> int:
    """0 when AF_ALG binds skcipher `name`, else the errno."""
    with socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET, 0) as alg:
        try:
            alg.bind(("skcipher", name))
        except OSError as error:
            return error.errno or -1
    return 0


def test_the_kernel_itself_refuses_off_cpu_drivers(engine_as_real: Control) -> None:
    # the change is in the image: no af_alg module was swapped in
    assert "af_alg " not in Path("/proc/modules").read_text()
    assert bind(ENGINE) == errno.ENOENT
    assert bind(VIRTIO) == errno.ENOENT
    assert bind("cbc(aes)") == 0  # by name: software
    assert bind("cbc-aes-hwcrypto-test-a") == 0  # a synchronous driver, by its driver name
    reach = afalg_reach.probe(read_proc_crypto(PROC_CRYPTO))
    assert reach.masks_off_cpu, reach
    assert {ENGINE, VIRTIO} <= set(reach.refused), reach
    print(f"\n{reach.describe(first=(ENGINE, VIRTIO))}")


def test_the_run_says_so_and_measures_the_engine_through_dm_crypt_and_tcrypt(
    engine_as_real: Control, pytester: pytest.Pytester
) -> None:
    check_a_masked_session(pytester)
