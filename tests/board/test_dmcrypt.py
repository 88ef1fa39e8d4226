# SPDX-License-Identifier: MIT
"""dm-crypt throughput on a real kernel: every measurement names the driver it pinned.

UML: at least two xts(aes) drivers (xts(ecb(aes-generic)), xts(ecb(aes-fixed-time)))
measured through dm-crypt, each with its capi: table and refcnt as evidence, beside the
bare loop device. QEMU: cbc-aes-aesni and xts-aes-aesni against the generic drivers with
HW/SW ratios per I/O size (crossover findings), and virtio_crypto_aes_cbc refused by
dm-crypt, reported as dmcrypt-refuses-driver naming CRYPTO_ALG_ALLOCATES_MEMORY.
(`pytest --hwcrypto-vm=uml tests/board/test_dmcrypt.py`, `--hwcrypto-vm=qemu` likewise.)
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_hwcrypto.suites.test_dmcrypt import refused_findings

from pytest_hwcrypto import ledger
from pytest_hwcrypto.block import tools
from pytest_hwcrypto.block.volume import VolumeMaker
from pytest_hwcrypto.kernel.inventory import InventoryEntry, build_inventory
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.ledger import Ledger
from pytest_hwcrypto.measure.dmcrypt_engine import BARE, DmcryptEngine, dmcrypt_targets
from pytest_hwcrypto.measure.plan import Plan, cells_for
from pytest_hwcrypto.measure.runner import ThroughputRun, run_plan
from pytest_hwcrypto.model.results import Finding, inventory_items
from pytest_hwcrypto.verdict.rules import crossover_findings
from pytest_hwcrypto.vocabulary import MIB, AlgType, FindingKind, Op

SIZES = (4096, 65536, 1048576)


@pytest.fixture(scope="module")
def inventory(board_kind: str) -> list[InventoryEntry]:
    if board_kind == "host":
        pytest.skip("needs a board: pytest --hwcrypto-vm=uml tests/board")
    reason = tools.unavailable_reason()
    if reason:
        pytest.skip(reason)
    subprocess.run(["modprobe", "-q", "crypto_user"], check=False)
    return build_inventory(read_proc_crypto())


@pytest.fixture(scope="module")
def measured(
    inventory: list[InventoryEntry], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ThroughputRun]:
    state = tmp_path_factory.mktemp("state")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(ledger.STATE_DIR_ENV, str(state))
        targets = dmcrypt_targets(inventory)
        cells = tuple(cells_for(targets, SIZES, {AlgType.SKCIPHER: (Op.ENCRYPT, Op.DECRYPT)}))
        plan = Plan(cells, 3, 0.3, 0.1, 0.0, 60.0)
        run = run_plan(plan, DmcryptEngine(VolumeMaker(Ledger(state)), size=32 * MIB))
        assert not list(Path(state).rglob("*.img")), "every volume was removed"
        assert not list(Path(state).glob("run-*.json")), "and struck off the ledger"
        yield run


def _ratios(run: ThroughputRun, inventory: list[InventoryEntry]) -> list[Finding]:
    items = inventory_items([entry.to_json() for entry in inventory])
    volumes = [m for m in run.measurements() if m.driver != BARE]
    return crossover_findings(volumes, items)


def test_two_pinned_xts_drivers_measured_each_naming_its_driver(
    measured: ThroughputRun, board_kind: str
) -> None:
    xts = [m for m in measured.measurements() if m.algorithm == "xts(aes)"]
    drivers = {m.driver for m in xts}
    assert len(drivers) >= 2, f"only {drivers}"
    for m in xts:
        evidence = str(m.extra["evidence"])
        assert f"capi:{m.driver}-plain64" in evidence and "refcnt" in evidence, evidence
        assert m.source == "dmcrypt" and m.samples and len(m.samples) == 3
    bare = {(m.op, m.block_size) for m in measured.measurements() if m.driver == BARE}
    assert bare == {(op, size) for op in (Op.ENCRYPT, Op.DECRYPT) for size in SIZES}
    lines = [
        f"{m.driver} {m.op} {m.block_size}: {m.bytes_per_second / MIB:.1f} MiB/s"
        for m in measured.measurements()
    ]
    print(f"[{board_kind}] " + "; ".join(lines))


def test_qemu_aesni_against_generic_with_ratios_per_io_size(
    measured: ThroughputRun, inventory: list[InventoryEntry], board_kind: str
) -> None:
    drivers = {m.driver for m in measured.measurements()}
    if "cbc-aes-aesni" not in drivers:
        pytest.skip("aesni is on the QEMU board (-cpu max)")
    assert {"cbc(aes-generic)", "xts(ecb(aes-generic))", "xts-aes-aesni"} <= drivers
    found = {f.algorithm: f for f in _ratios(measured, inventory)}
    for algorithm in ("cbc(aes)", "xts(aes)"):
        ratios = found[algorithm].extra["ratios"]
        assert {size for size, _ratio in ratios} == set(SIZES), ratios
        print(f"[{board_kind}] {found[algorithm].detail} ratios {ratios}")


def test_qemu_virtio_crypto_is_refused_by_dmcrypt_naming_the_flag(
    measured: ThroughputRun, inventory: list[InventoryEntry]
) -> None:
    if not any(e.driver == "virtio_crypto_aes_cbc" for e in inventory):
        pytest.skip("virtio_crypto_aes_cbc is on the QEMU board (virtio-crypto)")
    refused = [
        f for f in refused_findings(inventory) if f.extra["driver"] == "virtio_crypto_aes_cbc"
    ]
    assert len(refused) == 1
    assert refused[0].kind == FindingKind.DMCRYPT_REFUSES_DRIVER
    assert "CRYPTO_ALG_ALLOCATES_MEMORY" in refused[0].detail, refused[0].detail
    failure = next(f for f in measured.failures if f.target.driver == "virtio_crypto_aes_cbc")
    assert failure.masked and "CRYPTO_ALG_ALLOCATES_MEMORY" in failure.message
    assert "virtio_crypto_aes_cbc" not in {m.driver for m in measured.measurements()}
