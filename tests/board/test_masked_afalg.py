# SPDX-License-Identifier: MIT
"""A kernel whose AF_ALG refuses off-CPU drivers: told from the kernel, said, and worked around.

Kernels with crypto commit 7524070f26d8 (v7.2, and distributions' backports) keep every
asynchronous driver from AF_ALG. The QEMU board's Debian 6.1 does not, so this test makes
it: af_alg.ko rebuilt from Debian's linux-source-6.1 with tests/data/masked_afalg's patch
(every bind asks for a synchronous, non-allocating, non-driver-only implementation) is
loaded in place of the stock one, and the asynchronous test engine is reloaded flagged as
a real engine's driver is (CRYPTO_ALG_ASYNC | CRYPTO_ALG_KERN_DRIVER_ONLY) and made the
winner of cbc(aes). Then one session of the shipped suites, as a user runs it, must: say
so in its header and as one afalg-masked finding, naming the engine and virtio-crypto;
credit no AF_ALG figure to a driver AF_ALG refuses; and still measure the engine through
dm-crypt (capi:) and tcrypt. On the stock af_alg first, the same question must find
nothing masked and the engine reachable.

Needs the QEMU board with the test drivers, and the patched module built on the host first
(it reads Debian's source package, which the board's emulated CPU would take minutes to
unpack):
    .venv/bin/python tests/data/masked_afalg/build.py
    pytest --hwcrypto-vm=qemu --hwcrypto-test-drivers tests/board/test_masked_afalg.py
Elsewhere it skips, saying which of the two is missing.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.boards.helpers import cache_dir
from pytest_hwcrypto.kernel import afalg_reach
from pytest_hwcrypto.kernel.facts import read_release
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.kernel.test_drivers import MODULE_NAME
from pytest_hwcrypto.kernel.test_drivers import TestDriversControl as Control
from pytest_hwcrypto.run import run_of
from pytest_hwcrypto.vocabulary import PROC_CRYPTO

pytest_plugins = ["pytester"]

ENGINE = "cbc-aes-hwcrypto-test-async"
VIRTIO = "virtio_crypto_aes_cbc"
# Every AF_ALG module that holds af_alg: they go before it, and come back after it.
ALGIF = ("algif_aead", "algif_hash", "algif_skcipher", "algif_rng")
MASKED_DIR = "af_alg-offcpu-masked"  # tests/data/masked_afalg/build.py's cache prefix
SESSION_ARGS = ("--hwcrypto", "-p", "no:cacheprovider", "--junitxml=junit.xml")


def masked_module(release: str) -> Path:
    built = sorted(
        (cache_dir() / "kmod").glob(f"{MASKED_DIR}-{release}-*/af_alg.ko"),
        key=lambda path: path.stat().st_mtime,
    )
    if not built:
        pytest.skip(
            f"no af_alg.ko with the off-CPU mask for {release}: build it on the host first "
            f"(.venv/bin/python tests/data/masked_afalg/build.py {release})"
        )
    return built[-1]


def run(*argv: str) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def loaded(module: str) -> bool:
    return Path("/sys/module", module).is_dir()


def swap_af_alg(module: Path | None) -> None:
    """Unload AF_ALG and load `module` as af_alg (None: the kernel's own); the algif
    modules come back on top of it."""
    for name in (*ALGIF, "af_alg"):
        if loaded(name):
            run("rmmod", name)
    if module is None:
        run("modprobe", "af_alg")
    else:
        run("insmod", str(module))
    for name in ALGIF:
        run("modprobe", name)


def reload_engine(control: Control, *arguments: str) -> None:
    assert control.module_file is not None, "the board did not load the test drivers"
    if control.loaded():
        run("rmmod", MODULE_NAME)
    run("insmod", str(control.module_file), *arguments)


# The release suffix of the kernel built with the change (tests/data/masked_kernel): its
# AF_ALG is built in and masks already, so nothing here applies to it.
BUILT_MASKED_SUFFIX = "-afalg-masked"


def skip_on_the_built_masked_kernel() -> None:
    if read_release().endswith(BUILT_MASKED_SUFFIX):
        pytest.skip("this is the kernel built with the change: tests/board/test_masked_kernel.py")


@pytest.fixture
def masking_kernel(pytestconfig: pytest.Config) -> Iterator[Path]:
    """This board's kernel with the masked af_alg and the engine flagged as real engines
    are and made the cbc(aes) winner; both put back after."""
    control = fixtures.test_drivers_or_skip(run_of(pytestconfig).options)
    skip_on_the_built_masked_kernel()
    if control.module_file is None:
        pytest.skip("the test drivers were not loaded by this board: they cannot be reloaded")
    module = masked_module(read_release())
    reload_engine(control, "async_driver_only=Y", "async_priority=1000")
    try:
        swap_af_alg(module)
        try:
            yield module
        finally:
            swap_af_alg(None)
    finally:
        reload_engine(control)


def test_the_stock_kernel_reaches_its_asynchronous_drivers(pytestconfig: pytest.Config) -> None:
    fixtures.test_drivers_or_skip(run_of(pytestconfig).options)
    skip_on_the_built_masked_kernel()
    reach = afalg_reach.probe(read_proc_crypto(PROC_CRYPTO))
    assert not reach.masks_off_cpu, reach
    assert ENGINE in reach.reached and not reach.refused, reach


def measurements(results: dict[str, Any], source: str) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for m in results["measurements"]:
        if m["source"] == source:
            found.setdefault(str(m["driver"]), []).append(m)
    return found


@pytest.mark.slow_board
def test_a_masking_kernel_is_said_and_its_engine_measured_around_af_alg(
    masking_kernel: Path, pytester: pytest.Pytester
) -> None:
    check_a_masked_session(pytester)


def check_a_masked_session(pytester: pytest.Pytester) -> None:
    """One user session on a kernel whose AF_ALG refuses the engine (also used by
    test_masked_kernel.py, on a kernel built with the change)."""
    outcome = pytester.runpytest_subprocess(
        *SESSION_ARGS,
        "--hwcrypto-suite=inventory,throughput,dmcrypt",
        "--hwcrypto-algorithm=cbc(aes)",
        "--hwcrypto-block-sizes=4096",
        "--hwcrypto-budget=6",
        "--hwcrypto-json=results.json",
        "-k",
        "afalg_reaches or measured_on_every_driver or tcrypt or every_reachable_driver",
    )
    header = [
        line
        for line in outcome.outlines
        if line.startswith("hwcrypto: ") and "refuses its asynchronous" in line
    ]
    assert len(header) == 1, "\n".join(outcome.outlines[:30])
    # the offload engines first, before the drivers the names of six would leave out
    assert ENGINE in header[0] and VIRTIO in header[0], header[0]
    print(f"\n{header[0]}")
    results = json.loads((pytester.path / "results.json").read_text())
    # the finding's extra fields are written beside its kind, algorithm and detail
    masked = [f for f in results["findings"] if f["kind"] == "afalg-masked" and "drivers" in f]
    assert len(masked) == 1, results["findings"]
    assert {ENGINE, VIRTIO} <= set(masked[0]["drivers"]), masked[0]
    refused = set(masked[0]["drivers"])
    through_afalg = measurements(results, "afalg")
    assert through_afalg, "AF_ALG measured nothing: the synchronous drivers must still be there"
    assert not refused & set(through_afalg), sorted(refused & set(through_afalg))
    assert ENGINE in measurements(results, "dmcrypt"), sorted(measurements(results, "dmcrypt"))
    assert ENGINE in measurements(results, "tcrypt"), sorted(measurements(results, "tcrypt"))
    assert outcome.ret == 0, outcome.outlines[-1]
