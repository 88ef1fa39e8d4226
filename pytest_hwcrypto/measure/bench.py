# SPDX-License-Identifier: MIT
"""One measurement of one driver: `hwcrypto bench afalg`, the same engine and loop as the suite."""

from __future__ import annotations

import dataclasses
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
    """The driver as /proc/crypto lists it (a template instance is created first), or an
    algorithm name bound by name, as cryptsetup and OpenSSL's afalg engine do: the kernel
    then picks the winner, and the measurement names the driver that served."""
    entry = _find(driver, by="driver")
    if entry is None:
        _instantiate(driver, key_bits)
        entry = _find(driver, by="driver")
    if entry is None:
        entry = _find(driver, by="name")
        if entry is not None:
            return dataclasses.replace(_target(entry, key_bits), driver=driver)
    if entry is None:
        raise BenchError(
            f"{driver} is neither a registered driver nor an algorithm name, and binding it "
            "created nothing: use a name /proc/crypto lists (driver or name), or a template "
            "over a driver, e.g. cbc(aes-generic)"
        )
    return _target(entry, key_bits)


def _target(entry: InventoryEntry, key_bits: int | None) -> Target:
    try:
        return target_for_entry(entry, key_bits)
    except PlanError as error:
        raise BenchError(str(error)) from None


def _find(wanted: str, by: str) -> InventoryEntry | None:
    """A non-internal entry whose driver (or name, then the priority winner) is `wanted`."""
    try:
        entries = build_inventory(read_proc_crypto())
    except (OSError, ValueError) as error:
        raise BenchError(f"cannot read /proc/crypto: {error}") from None
    found = [e for e in entries if getattr(e, by) == wanted and not e.alg.is_internal]
    if by == "name":
        found.sort(key=lambda e: not e.winner)
    return found[0] if found else None


def _instantiate(driver: str, key_bits: int | None) -> None:
    """Bind the name once so the kernel builds the template instance; errors tell why."""
    try:
        afalg.instantiate_any(driver, os.urandom((key_bits or 128) // 8))
    except afalg.AfAlgError as error:
        raise BenchError(str(error)) from None
