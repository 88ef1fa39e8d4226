# SPDX-License-Identifier: MIT
"""The cryptsetup suite: `cryptsetup benchmark` as users run it, and once per kernel driver.

The whole benchmark once, as it stands (every cipher row is the current winner of its
kernel name); then `cryptsetup benchmark -c CIPHER -s BITS` for aes-cbc and aes-xts on
every kernel driver of cbc(aes) and xts(aes), each run with its driver re-ranked to the
winner (measure/cryptsetup_bench.py), rounds interleaved. Findings: `winner-not-fastest`
when the driver cryptsetup (and dm-crypt without capi:) gets by default is clearly slower
than another, and `afalg-masked` for offload drivers the kernel keeps from AF_ALG, which
cryptsetup benchmark therefore never measures (dm-crypt still reaches them).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import pytest

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.afalg_reach import AfalgReach, afalg_serves
from pytest_hwcrypto.kernel.inventory import InventoryEntry, build_inventory
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.kernel.rerank import Reranker, changed_priorities, priorities
from pytest_hwcrypto.measure import cryptsetup_bench as cs
from pytest_hwcrypto.measure.targets import discover_targets
from pytest_hwcrypto.model.results import Finding, InventoryItem, Measurement, inventory_items
from pytest_hwcrypto.report.recorder import ResultsRecorder
from pytest_hwcrypto.run import HwcryptoRun
from pytest_hwcrypto.verdict.rules import hw_loses_to_sw_findings, winner_not_fastest_findings
from pytest_hwcrypto.vocabulary import AlgType, DriverClass, FindingKind

pytestmark = pytest.mark.hwcrypto_cryptsetup

# Per driver: the two AES modes disks use, at the key sizes LUKS defaults to and below.
CASES = (("aes-cbc", 128), ("aes-xts", 256))
ROUNDS = 3


@dataclass
class CryptsetupRun:
    whole: list[Measurement]
    per_driver: list[cs.CaseSamples]
    measurements: list[Measurement]
    priorities_before: dict[str, int | None]
    rerank_skipped: str | None


def _inventory() -> list[InventoryEntry]:
    return build_inventory(read_proc_crypto(fixtures.PROC_CRYPTO))


def _cases(inventory: Sequence[InventoryEntry], reach: AfalgReach) -> list[cs.CipherCase]:
    # A driver AF_ALG refuses cannot be measured through cryptsetup, winner or not: the
    # kernel would hand cryptsetup software while /proc/crypto said the engine won.
    targets = [t for t in discover_targets(inventory) if not reach.refuses(t.driver)]
    cases = []
    for cipher, bits in CASES:
        name = cs.KERNEL_NAMES[cipher]
        for target in sorted((t for t in targets if t.algorithm == name), key=lambda t: t.driver):
            if not target.registered:
                afalg.instantiate_any(target.driver, bytes(bits // 8))
            cases.append(cs.CipherCase(cipher, bits, target.driver))
    return cases


@pytest.fixture(scope="module")
def cryptsetup_run(
    pytestconfig: pytest.Config, hwcrypto_run: HwcryptoRun, hwcrypto_results: ResultsRecorder
) -> Iterator[CryptsetupRun]:
    reason = fixtures.concurrent_measuring_reason(pytestconfig, "cryptsetup")
    if reason:
        pytest.skip(reason)
    if cs.cryptsetup_path() is None:
        pytest.skip("cryptsetup is not installed: apt-get install cryptsetup-bin")
    for name in dict.fromkeys(cs.KERNEL_NAMES.values()):
        try:
            afalg.instantiate_any(name)  # loads algif_skcipher and the cipher modules
        except afalg.AfAlgError:
            continue  # a cipher this kernel lacks: cryptsetup prints N/A for it
    try:
        whole = cs.run_benchmark()
    except cs.CryptsetupError as error:
        pytest.fail(str(error), pytrace=False)
    inventory = _inventory()
    reach = fixtures.afalg_reach(hwcrypto_run)
    for measurement in whole:
        # The driver AF_ALG hands out by name: the winner, unless this kernel keeps it from
        # AF_ALG -- then software, never the engine /proc/crypto calls the winner.
        served = afalg_serves(cs.KERNEL_NAMES.get(measurement.algorithm, ""), inventory, reach)
        measurement.driver = served.driver if served else None
        measurement.driver_class = served.driver_class if served else None
        measurement.extra["evidence"] = (
            "the winner of its kernel name (no re-ranking)"
            if served is None or served.winner
            else "the best synchronous driver of its kernel name: this kernel's AF_ALG "
            "refuses the winner"
        )
    before = priorities(fixtures.PROC_CRYPTO)
    rerank_skipped = fixtures.rerank_unavailable_reason()
    per_driver: list[cs.CaseSamples] = []
    if rerank_skipped is None:
        reranker = Reranker(fixtures.run_ledger(hwcrypto_run), afalg.instantiate_any)
        per_driver = cs.measure_cases(_cases(inventory, reach), reranker, ROUNDS)
    classes = {e.driver: e.driver_class for e in _inventory()}
    measured = [m for s in per_driver for m in cs.measurements_of(s, classes.get(s.case.driver))]
    result = CryptsetupRun(whole, per_driver, measured, before, rerank_skipped)
    after = _inventory()
    hwcrypto_results.update_inventory([entry.to_json() for entry in after])
    for measurement in whole + measured:
        hwcrypto_results.add_measurement(measurement)
    items = inventory_items([entry.to_json() for entry in after])
    for finding in winner_findings(measured, items) + masked_findings(after):
        hwcrypto_results.add_finding(finding)
    yield result


def winner_findings(
    measured: Sequence[Measurement], inventory: Sequence[InventoryItem]
) -> list[Finding]:
    """winner-not-fastest and hw-loses-to-sw per cipher, judged under the kernel names the
    winners are of."""
    renamed = [replace(m, algorithm=str(m.extra["kernel_name"])) for m in measured]
    found = winner_not_fastest_findings(renamed, inventory) + hw_loses_to_sw_findings(
        renamed, inventory
    )
    return [replace(f, detail=f"[cryptsetup benchmark] {f.detail}") for f in found]


def masked_findings(inventory: Sequence[InventoryEntry]) -> list[Finding]:
    """Offload drivers of the names cryptsetup measures that AF_ALG refuses to bind."""
    names = set(cs.KERNEL_NAMES.values())
    findings = []
    for entry in inventory:
        if entry.name not in names or entry.driver_class != DriverClass.OFFLOAD:
            continue
        try:
            afalg.instantiate(entry.driver, AlgType.SKCIPHER, bytes(32))
        except afalg.AfAlgMasked as error:
            findings.append(
                Finding(
                    FindingKind.AFALG_MASKED,
                    entry.name,
                    f"{entry.driver} is registered but kept from AF_ALG, so cryptsetup "
                    f"benchmark (and OpenSSL's afalg engine) cannot measure it; dm-crypt still "
                    f"reaches it: {error}",
                    {"driver": entry.driver, "source": "cryptsetup"},
                )
            )
        except afalg.AfAlgError:
            continue  # another refusal (bad key size, self-test): the inventory reports it
    return findings


def test_whole_benchmark_parsed(cryptsetup_run: CryptsetupRun) -> None:
    """`cryptsetup benchmark` as users run it: every cipher row read, each named after the
    driver that served it."""
    rows = cryptsetup_run.whole
    assert rows, "cryptsetup benchmark printed no cipher row"
    aes = [m for m in rows if m.algorithm in ("aes-cbc", "aes-xts")]
    assert aes and all(m.driver for m in aes), [m.algorithm for m in aes if not m.driver]


def test_every_driver_measured_with_its_evidence(cryptsetup_run: CryptsetupRun) -> None:
    if cryptsetup_run.rerank_skipped:
        pytest.skip(f"per-driver runs need re-ranking: {cryptsetup_run.rerank_skipped}")
    broken = [
        f"{s.case.driver} {s.case.cipher}: {s.error}" for s in cryptsetup_run.per_driver if s.error
    ]
    if broken:
        pytest.fail("; ".join(broken), pytrace=False)
    for samples in cryptsetup_run.per_driver:
        assert len(samples.encrypt) == len(samples.decrypt) == ROUNDS, samples.case
    drivers = {m.driver for m in cryptsetup_run.measurements}
    assert len(drivers) >= 2, f"only {drivers}: nothing to compare"


def test_priorities_are_back_to_their_boot_values(cryptsetup_run: CryptsetupRun) -> None:
    now = priorities(fixtures.PROC_CRYPTO)
    before = cryptsetup_run.priorities_before
    changed = changed_priorities(before, now)
    assert not changed, f"priorities left changed (before, now): {changed}"
