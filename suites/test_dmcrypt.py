# SPDX-License-Identifier: MIT
"""The dmcrypt suite: dm-crypt volumes pinned to each kernel driver of xts(aes) and
cbc(aes), checked for integrity and measured, beside the bare device under them.

* integrity, one volume per driver: a seeded pattern (--hwcrypto-dmcrypt-bytes, 256 MiB
  by default, at most: the check is first timed on a small probe and covers what the
  volume's share of --hwcrypto-budget affords, with a `dmcrypt-shortened` finding when
  that is less; measure/dmcrypt_sizing.py) written, caches dropped, read back through a
  fresh open (the dm device closed and opened again with the same key) and the digests
  compared; the raw loop contents differ from the plaintext and decrypt with pyca
  `cryptography` to it (the plain on-disk format is what dm-crypt says it is); opened with
  a wrong key the volume reads as garbage and the backing file is unchanged (LUKS2,
  dm-integrity: test_dmcrypt_luks.py);
* throughput per driver: O_DIRECT sequential writes (encrypt) and reads (decrypt) through
  measure/dmcrypt_engine.py, and the same I/O on a bare loop device in the same boot:
  `storage-bound` when a volume runs within noise of the bare device; `hw-loses-to-sw`,
  `crossover` (the HW/SW ratio per I/O size) and `winner-not-fastest` as for AF_ALG;
* `dmcrypt-refuses-driver` for every hardware driver of these names that dm-crypt will not
  allocate (CRYPTO_ALG_ALLOCATES_MEMORY, read through crypto_user).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.block import dmcrypt, pattern_io, tools
from pytest_hwcrypto.block.volume import Volume, VolumeMaker
from pytest_hwcrypto.kernel.inventory import InventoryEntry
from pytest_hwcrypto.kernel.modprobe import load_module_quietly
from pytest_hwcrypto.measure.dmcrypt_engine import (
    BARE,
    KEY_BITS,
    SECTOR_SIZE,
    DmcryptEngine,
    dmcrypt_targets,
)
from pytest_hwcrypto.measure.dmcrypt_sizing import PROBE_BYTES, allowance, size_check
from pytest_hwcrypto.measure.plan import Plan, cells_for
from pytest_hwcrypto.measure.runner import ThroughputRun, run_plan
from pytest_hwcrypto.measure.targets import Target
from pytest_hwcrypto.model.results import Finding, Measurement, inventory_items
from pytest_hwcrypto.report.recorder import ResultsRecorder
from pytest_hwcrypto.run import HwcryptoRun, run_of
from pytest_hwcrypto.verdict.dmcrypt_usable import dmcrypt_usable_verdicts, mark_waived
from pytest_hwcrypto.verdict.rules import (
    crossover_findings,
    hw_loses_to_sw_findings,
    winner_not_fastest_findings,
)
from pytest_hwcrypto.verdict.storage_bound import storage_bound_findings
from pytest_hwcrypto.vocabulary import HARDWARE_CLASSES, MIB, AlgType, FindingKind, Op

pytestmark = pytest.mark.hwcrypto_dmcrypt

# Multiples of the 4096-byte encryption sector: a page, a large request, a stripe.
BLOCK_SIZES = (4096, 65536, 1048576)
SAMPLES = 5
DEFAULT_SEED = 13  # without --hwcrypto-seed the pattern is still reproducible


def _disk_targets(config: pytest.Config) -> list[Target]:
    state = run_of(config)
    targets = dmcrypt_targets(fixtures.inventory(state))
    return [t for t in targets if t.driver != BARE and state.options.chooses(t.algorithm)]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "disk_target" in metafunc.fixturenames:
        targets = _disk_targets(metafunc.config)
        metafunc.parametrize(
            "disk_target", targets, ids=[f"{t.algorithm}:{t.driver}" for t in targets]
        )


@pytest.fixture(scope="module")
def block_ready() -> None:
    reason = tools.unavailable_reason()
    if reason:
        pytest.skip(reason)
    load_module_quietly("crypto_user")


def _drop_caches() -> None:
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


WRONG_KEY_READ = 4 * MIB


@pytest.mark.usefixtures("block_ready")
def test_integrity(
    disk_target: Target,
    hwcrypto_run: HwcryptoRun,
    hwcrypto_results: ResultsRecorder,
    pytestconfig: pytest.Config,
) -> None:
    """What was written reads back through a fresh open, the disk holds ciphertext that
    pyca decrypts to it, and a wrong key reads garbage without writing anything. The check
    is timed on a probe first and covers what the budget affords (at most the option)."""
    refused = dmcrypt.refusal(disk_target.driver)
    if refused:
        pytest.skip(f"dm-crypt refuses it (reported as dmcrypt-refuses-driver): {refused}")
    seed = hwcrypto_run.options.seed if hwcrypto_run.options.seed is not None else DEFAULT_SEED
    pattern = f"{seed}:{disk_target.driver}"
    upper = hwcrypto_run.options.dmcrypt_bytes
    maker = VolumeMaker(fixtures.run_ledger(hwcrypto_run))
    bits = KEY_BITS[disk_target.algorithm]
    try:
        volume = maker.open(disk_target.driver, bits, SECTOR_SIZE, upper)
    except tools.BlockError as error:
        pytest.fail(str(error), pytrace=False)
    try:
        probe = min(PROBE_BYTES, upper)
        started = time.monotonic()
        fixed = _check_pattern(maker, volume, disk_target.algorithm, pattern, probe)
        seconds = allowance(hwcrypto_run.options.budget, len(_disk_targets(pytestconfig)))
        sizing = size_check(upper, probe, time.monotonic() - started, seconds, fixed)
        if sizing.bytes > probe:
            _check_pattern(maker, volume, disk_target.algorithm, pattern, sizing.bytes)
        if sizing.shortened:
            extra = {"driver": volume.driver, "source": "dmcrypt", "checked_bytes": sizing.bytes}
            extra |= {"upper_bytes": upper, "check_bytes_per_second": round(sizing.rate)}
            detail = sizing.detail(volume.driver)
            finding = Finding(FindingKind.DMCRYPT_SHORTENED, disk_target.algorithm, detail, extra)
            hwcrypto_results.add_finding(finding)
        _wrong_key_reads_garbage(maker, volume, pattern)
    finally:
        maker.close(volume)


def _check_pattern(
    maker: VolumeMaker, volume: Volume, algorithm: str, pattern: str, total: int
) -> float:
    """Check `total` bytes; return the seconds spent on what does not grow with them (the
    cache drop and the fresh open)."""
    wanted = pattern_io.write_pattern(volume.path, pattern, total)
    started = time.monotonic()
    _drop_caches()
    maker.reopen(volume)
    fixed = time.monotonic() - started
    back = pattern_io.read_digest(volume.path, total)
    if back.digest != wanted:
        # where, and whether blocks hold each other's data (an engine that mixed up the
        # requests dm-crypt keeps in flight), read again block by block
        wrong = None if back.io_error_at is not None else _wrong_blocks(volume, pattern, total)
        assert back.digest == wanted, (
            f"{volume.driver}: read back {back.digest[:16]}… ({back.size} bytes), "
            f"wrote {wanted[:16]}… ({total} bytes)" + (f": {wrong.describe()}" if wrong else "")
        )
    mismatch = pattern_io.first_plain_mismatch(
        volume.loop.backing, algorithm, volume.key, SECTOR_SIZE, pattern, total
    )
    assert mismatch is None, (
        f"{volume.driver}: the raw sectors from byte {mismatch} are not "
        f"{algorithm} plain64 ciphertext of what was written"
    )
    return fixed


def _wrong_blocks(volume: Volume, pattern: str, total: int) -> pattern_io.WrongBlocks | None:
    try:
        return pattern_io.wrong_blocks(volume.path, pattern, total)
    except OSError:
        return None


def _wrong_key_reads_garbage(maker: VolumeMaker, volume: Volume, pattern: str) -> None:
    """A plain volume cannot tell a wrong key: it must read garbage and write nothing."""
    backing_before = pattern_io.file_digest(volume.loop.backing)
    maker.reopen(volume, key=os.urandom(len(volume.key)))
    garbage = pattern_io.read_digest(volume.path, WRONG_KEY_READ)
    maker.close_crypt(volume)
    assert garbage.digest != pattern_io.pattern_digest(pattern, WRONG_KEY_READ), (
        f"{volume.driver}: a wrong key read back the plaintext"
    )
    assert pattern_io.file_digest(volume.loop.backing) == backing_before, (
        f"{volume.driver}: opening and reading with a wrong key changed the backing file"
    )


@dataclass
class DmcryptRun:
    run: ThroughputRun
    findings: list[Finding]


def dmcrypt_plan(targets: Sequence[Target], budget: float) -> Plan:
    cells = tuple(cells_for(targets, BLOCK_SIZES, {AlgType.SKCIPHER: (Op.ENCRYPT, Op.DECRYPT)}))
    warm_up = 0.1
    sample = min(1.0, max(0.2, budget / max(len(cells), 1) / SAMPLES - warm_up))
    return Plan(cells, SAMPLES, sample, warm_up, 0.0, budget)


def refused_findings(inventory: Sequence[InventoryEntry]) -> list[Finding]:
    """Hardware drivers of the disk ciphers that dm-crypt will not allocate."""
    findings = []
    for entry in inventory:
        if entry.name not in KEY_BITS or entry.driver_class not in HARDWARE_CLASSES:
            continue
        why = dmcrypt.refusal(entry.driver)
        if why:
            extra = {"driver": entry.driver, "source": "dmcrypt", "flag": dmcrypt.ALLOCATES_MEMORY}
            detail = f"dm-crypt never uses {entry.driver} for {entry.name}: {why}"
            findings.append(Finding(FindingKind.DMCRYPT_REFUSES_DRIVER, entry.name, detail, extra))
    return findings


@pytest.fixture(scope="module")
def dmcrypt_run(
    pytestconfig: pytest.Config,
    block_ready: None,
    hwcrypto_run: HwcryptoRun,
    hwcrypto_inventory: list[InventoryEntry],
    hwcrypto_results: ResultsRecorder,
) -> Iterator[DmcryptRun]:
    reason = fixtures.concurrent_measuring_reason(pytestconfig, "dmcrypt")
    if reason:
        pytest.skip(reason)
    chooses = hwcrypto_run.options.chooses
    targets = [
        t for t in dmcrypt_targets(hwcrypto_inventory) if t.driver == BARE or chooses(t.algorithm)
    ]
    engine = DmcryptEngine(VolumeMaker(fixtures.run_ledger(hwcrypto_run)))
    run = run_plan(dmcrypt_plan(targets, hwcrypto_run.options.budget), engine)
    measured = run.measurements()
    volumes = [m for m in measured if m.driver != BARE]
    bare = [m for m in measured if m.driver == BARE]
    items = inventory_items([entry.to_json() for entry in hwcrypto_inventory])
    refused = mark_waived(refused_findings(hwcrypto_inventory), hwcrypto_run.profile)
    findings = storage_bound_findings(volumes, bare) + refused
    findings += winner_not_fastest_findings(volumes, items)
    findings += hw_loses_to_sw_findings(volumes, items) + crossover_findings(volumes, items)
    for measurement in measured:
        hwcrypto_results.add_measurement(measurement)
    for finding in findings:
        hwcrypto_results.add_finding(finding)
    yield DmcryptRun(run, findings)


def _by_driver(measured: Sequence[Measurement]) -> dict[str, list[Measurement]]:
    out: dict[str, list[Measurement]] = {}
    for m in measured:
        out.setdefault(str(m.driver), []).append(m)
    return out


def test_every_reachable_driver_is_measured_with_its_evidence(dmcrypt_run: DmcryptRun) -> None:
    broken = [f"{f.target.driver}: {f.message}" for f in dmcrypt_run.run.failures if not f.masked]
    assert not broken, "; ".join(broken)
    measured = _by_driver(dmcrypt_run.run.measurements())
    assert BARE in measured, "the bare loop device was not measured"
    for driver, series in measured.items():
        assert all(m.extra.get("evidence") for m in series), driver
        if driver != BARE:
            assert all(f"capi:{driver}-plain64" in str(m.extra["evidence"]) for m in series)
    errors = [r.error for r in dmcrypt_run.run.records if r.error]
    assert not errors, errors


def test_drivers_dmcrypt_refuses_are_reported_not_measured(dmcrypt_run: DmcryptRun) -> None:
    """A driver dm-crypt will not allocate is a finding naming the flag, never a number."""
    refused = {f.target.driver for f in dmcrypt_run.run.failures if f.masked}
    reported = {
        str(f.extra["driver"])
        for f in dmcrypt_run.findings
        if f.kind == FindingKind.DMCRYPT_REFUSES_DRIVER
    }
    hardware_refused = {
        f.target.driver
        for f in dmcrypt_run.run.failures
        if f.masked and f.target.driver_class in HARDWARE_CLASSES
    }
    assert hardware_refused <= reported, hardware_refused - reported
    measured = {m.driver for m in dmcrypt_run.run.measurements()}
    assert not refused & measured
    for finding in dmcrypt_run.findings:
        if finding.kind == FindingKind.DMCRYPT_REFUSES_DRIVER:
            assert dmcrypt.ALLOCATES_MEMORY in finding.detail, finding.detail


def test_board_profile_drivers_dmcrypt_must_use(
    dmcrypt_run: DmcryptRun, hwcrypto_run: HwcryptoRun, hwcrypto_results: ResultsRecorder
) -> None:
    """`[[expect]] driver = D, dmcrypt = true`: a refusal of D fails, unless waived."""
    verdicts = dmcrypt_usable_verdicts(dmcrypt_run.findings, hwcrypto_run.profile)
    if not verdicts:
        pytest.skip(
            "no driver to judge: no board profile (--hwcrypto-board), or none of its "
            "[[expect]] has dmcrypt = true; add it to the [[expect]] of a driver dm-crypt "
            "must be able to use, so that a refusal fails"
        )
    for verdict in verdicts:
        hwcrypto_results.add_verdict(verdict)
    failed = [v.message for v in verdicts if not v.passed]
    if failed:
        pytest.fail("; ".join(failed), pytrace=False)
