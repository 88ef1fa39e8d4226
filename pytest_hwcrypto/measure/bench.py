"""One measurement of one driver: `hwcrypto bench afalg`, the same engine and loop as the suite."""

from __future__ import annotations

import os

from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.inventory import InventoryEntry, build_inventory
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.measure.afalg_engine import AfAlgEngine
from pytest_hwcrypto.measure.load import BackgroundLoad
from pytest_hwcrypto.measure.plan import make_plan
from pytest_hwcrypto.measure.runner import run_plan
from pytest_hwcrypto.measure.targets import PlanError, Target, target_for_entry
from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.vocabulary import DEFAULT_TIMEOUT_SECONDS, AlgType, Op


class BenchError(RuntimeError):
    """One measurement could not be made; the message says why (one line)."""


def bench(
    driver: str,
    *,
    block_size: int,
    seconds: float,
    key_bits: int | None = None,
    op: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    load: BackgroundLoad | None = None,
) -> Measurement:
    """Measure one driver at one block size for `seconds`, as the throughput suite does."""
    target = bench_target(driver, key_bits)
    op = op or (Op.DIGEST if target.kind == AlgType.HASH else Op.ENCRYPT)
    if not target.accepts(block_size):
        raise BenchError(
            f"{driver}: {block_size} B is not a multiple of its {target.block_multiple}-byte "
            "block size"
        )
    try:
        plan = make_plan([target], [block_size], seconds, ops={target.kind: (op,)})
    except PlanError as error:
        raise BenchError(str(error)) from None
    run = run_plan(plan, AfAlgEngine(timeout), load=load)
    if run.failures:
        raise BenchError(run.failures[0].message)
    measurement = run.records[0].measurement(run.load) if run.records else None
    if run.records and run.records[0].error:
        raise BenchError(run.records[0].error or "")
    if measurement is None:
        raise BenchError(f"{driver}: no sample could be taken in {seconds:g} s")
    return measurement


def bench_target(driver: str, key_bits: int | None) -> Target:
    """The driver as /proc/crypto lists it; a template instance is created first."""
    entry = _find_driver(driver)
    if entry is None:
        _instantiate(driver, key_bits)
        entry = _find_driver(driver)
    if entry is None:
        raise BenchError(
            f"driver {driver} is not registered and binding it created nothing: use a driver "
            "name /proc/crypto lists, or a template over one, e.g. cbc(aes-generic)"
        )
    try:
        return target_for_entry(entry, key_bits)
    except PlanError as error:
        raise BenchError(str(error)) from None


def _find_driver(driver: str) -> InventoryEntry | None:
    try:
        entries = build_inventory(read_proc_crypto())
    except (OSError, ValueError) as error:
        raise BenchError(f"cannot read /proc/crypto: {error}") from None
    return next((e for e in entries if e.driver == driver and not e.alg.is_internal), None)


def _instantiate(driver: str, key_bits: int | None) -> None:
    """Bind the name once so the kernel builds the template instance; errors tell why."""
    try:
        afalg.instantiate_any(driver, os.urandom((key_bits or 128) // 8))
    except afalg.AfAlgError as error:
        raise BenchError(str(error)) from None
