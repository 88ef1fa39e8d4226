# SPDX-License-Identifier: MIT
"""kernel/afalg_reach.py: telling a kernel whose AF_ALG refuses off-CPU drivers, on fakes.

The listing is the QEMU board's real /proc/crypto (6.1.0-57: aesni's asynchronous wrappers
and virtio_crypto_aes_cbc); the binders stand in for AF_ALG on a stock kernel, on a kernel
with the off-CPU mask, and on broken or partial ones.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pytest_hwcrypto.kernel import afalg, afalg_reach
from pytest_hwcrypto.kernel.afalg_reach import BOUND, FAILED, NO_AFALG, REFUSED
from pytest_hwcrypto.kernel.inventory import build_inventory
from pytest_hwcrypto.kernel.procfs import CryptoAlg, read_proc_crypto

QEMU = Path(__file__).parent.parent / "data" / "proc_crypto" / "qemu-6.1.0-57-amd64.txt"


@pytest.fixture
def listing() -> list[CryptoAlg]:
    return read_proc_crypto(QEMU)


def driver_names(entries: list[CryptoAlg]) -> set[str]:
    return {alg.driver for alg in entries}


def masking_kernel(what: str, alg: CryptoAlg) -> str:
    """AF_ALG with the mask: a driver name of an asynchronous driver is refused; by name
    the kernel hands out software."""
    return REFUSED if what == alg.driver and alg.is_async else BOUND


def stock_kernel(what: str, alg: CryptoAlg) -> str:
    return BOUND


def test_a_masking_kernel_is_told_from_its_refusals_and_a_name_that_still_binds(
    listing: list[CryptoAlg],
) -> None:
    reach = afalg_reach.probe(listing, masking_kernel)
    assert reach.masks_off_cpu
    assert {"virtio_crypto_aes_cbc", "cbc-aes-aesni", "xts-aes-aesni"} <= set(reach.refused)
    assert not reach.reached
    assert "cbc(aes)" in reach.controls
    assert reach.refuses("virtio_crypto_aes_cbc")
    assert not reach.refuses("cbc(aes-generic)")
    line = reach.header_line(first={"virtio_crypto_aes_cbc"})
    assert line is not None and "ENOENT" in line
    assert line.index("virtio_crypto_aes_cbc") < line.index("aesni"), "the engine comes first"
    assert "and 4 more" in line  # 10 refused, 6 named
    assert "dm-crypt" in line and "7524070f26d8" in line


def test_a_stock_kernel_reaches_its_async_drivers_and_says_nothing(
    listing: list[CryptoAlg],
) -> None:
    reach = afalg_reach.probe(listing, stock_kernel)
    assert not reach.masks_off_cpu
    assert "virtio_crypto_aes_cbc" in reach.reached
    assert reach.header_line() is None
    assert not reach.refuses("virtio_crypto_aes_cbc")


def test_one_refused_driver_among_reached_ones_is_not_the_mask(listing: list[CryptoAlg]) -> None:
    def one_refused(what: str, alg: CryptoAlg) -> str:
        return REFUSED if what == "virtio_crypto_aes_cbc" else BOUND

    reach = afalg_reach.probe(listing, one_refused)
    assert reach.refused == ("virtio_crypto_aes_cbc",)
    assert not reach.masks_off_cpu and reach.header_line() is None


def test_refusals_are_not_the_mask_when_the_names_do_not_bind_either(
    listing: list[CryptoAlg],
) -> None:
    """FIPS mode or a broken AF_ALG refuses by name too: no control, no verdict."""

    def everything_refused(what: str, alg: CryptoAlg) -> str:
        return REFUSED

    reach = afalg_reach.probe(listing, everything_refused)
    assert reach.refused and not reach.controls
    assert not reach.masks_off_cpu


def test_without_af_alg_nothing_more_is_bound_and_nothing_is_claimed(
    listing: list[CryptoAlg],
) -> None:
    asked: list[str] = []

    def no_afalg(what: str, alg: CryptoAlg) -> str:
        asked.append(what)
        return NO_AFALG

    reach = afalg_reach.probe(listing, no_afalg)
    assert len(asked) == 1
    assert reach.why_unknown and not reach.masks_off_cpu


def test_internal_untested_and_synchronous_drivers_are_not_asked(
    listing: list[CryptoAlg],
) -> None:
    internal = [alg for alg in listing if alg.is_internal and alg.is_async is not None]
    untested = replace(next(a for a in listing if a.driver == "virtio_crypto_aes_cbc"))
    untested = replace(untested, selftest="unknown", driver="virtio_untested")
    asked: set[str] = set()

    def record(what: str, alg: CryptoAlg) -> str:
        asked.add(what)
        return BOUND

    afalg_reach.probe([*listing, untested], record)
    assert internal and not asked & driver_names(internal)
    assert "virtio_untested" not in asked
    assert "cbc(aes-generic)" not in asked and "aes-generic" not in asked
    # Synchronous drivers: only the few bound by driver name to see a name restriction.
    sync_asked = {alg.driver for alg in listing if alg.is_async is False and alg.driver in asked}
    assert len(sync_asked) <= 3


def linux_73(what: str, alg: CryptoAlg) -> str:
    """Linux 7.3 at af_alg_restrict = 1: every driver name refused, the names bind."""
    return REFUSED if what == alg.driver and what != alg.name else BOUND


def test_linux_73_refuses_driver_names_of_synchronous_drivers_too(
    listing: list[CryptoAlg],
) -> None:
    def served(name: str, alg: CryptoAlg) -> str:
        return {"cbc(aes)": "cbc-aes-aesni"}.get(name, f"{name}-sync")

    reach = afalg_reach.probe(listing, linux_73, served, afalg.AfalgPolicy(restrict=1))
    assert reach.restrict == 1
    assert reach.sync_refused and not reach.sync_reached and reach.refuses_driver_names
    name, driver = reach.served[0]
    assert reach.serving(name) == driver == served(name, listing[0])
    line = reach.reach_line()
    assert "no driver by its driver name" in line and "af_alg_restrict = 1" in line
    assert f"{name} -> {driver}" in line
    assert "FIPS" not in line and "FIPS" not in reach.describe()
    assert "af_alg_restrict = 1 refuses synchronous" in reach.describe()


def test_every_kernel_gets_a_reach_line(listing: list[CryptoAlg]) -> None:
    stock = afalg_reach.probe(listing, stock_kernel, lambda n, a: None, afalg.AfalgPolicy())
    assert stock.reach_line() == (
        "hwcrypto: AF_ALG reaches every listed driver by driver name "
        "(no af_alg_restrict (before Linux 7.3))"
    )
    masked = afalg_reach.probe(listing, masking_kernel, lambda n, a: None, afalg.AfalgPolicy())
    assert "synchronous drivers by driver name" in masked.reach_line()
    assert "asynchronous (off-CPU) drivers never" in masked.reach_line()
    off = afalg_reach.probe(listing, stock_kernel, lambda n, a: None, afalg.AfalgPolicy(2))
    assert "af_alg_restrict = 2" in off.reach_line()


def test_a_kernel_with_no_async_driver_gives_an_empty_answer(listing: list[CryptoAlg]) -> None:
    synchronous = [alg for alg in listing if not alg.is_async]
    reach = afalg_reach.probe(synchronous, masking_kernel, lambda n, a: None, afalg.AfalgPolicy())
    assert not reach.refused and not reach.reached and not reach.masks_off_cpu
    assert reach.sync_reached and not reach.refuses_driver_names


def test_a_by_name_bind_on_a_masking_kernel_is_credited_to_software(
    listing: list[CryptoAlg],
) -> None:
    generic = replace(
        next(a for a in listing if a.driver == "virtio_crypto_aes_cbc"),
        driver="cbc(aes-generic)",
        module="kernel",
        priority=100,
        is_async=False,
    )
    inventory = build_inventory([*listing, generic])
    winner = next(e for e in inventory if e.name == "cbc(aes)" and e.winner)
    assert winner.alg.is_async  # an asynchronous winner is the case that matters
    masked = afalg_reach.probe(listing, masking_kernel)
    served = afalg_reach.afalg_serves("cbc(aes)", inventory, masked)
    assert served is not None and served.driver == "cbc(aes-generic)"
    stock = afalg_reach.probe(listing, stock_kernel)
    assert afalg_reach.afalg_serves("cbc(aes)", inventory, stock) == winner
    # No synchronous driver listed yet: unknown, never the engine.
    assert afalg_reach.afalg_serves("cbc(aes)", build_inventory(listing), masked) is None


@pytest.mark.parametrize(
    ("raised", "outcome"),
    [
        (None, BOUND),
        (afalg.BadKeyLength("k", key_length=3), BOUND),
        (afalg.AfAlgMasked("m"), REFUSED),
        (afalg.AfAlgUnavailable("u"), NO_AFALG),
        (afalg.SelfTestFailed("s"), FAILED),
        (OSError(5, "EIO"), FAILED),
    ],
)
def test_bind_outcomes_come_from_what_af_alg_raised(
    monkeypatch: pytest.MonkeyPatch,
    listing: list[CryptoAlg],
    raised: Exception | None,
    outcome: str,
) -> None:
    calls: list[tuple[object, ...]] = []

    def instantiate(*args: object) -> None:
        calls.append(args)
        if raised is not None:
            raise raised

    monkeypatch.setattr(afalg, "instantiate", instantiate)
    xts = next(a for a in listing if a.driver == "xts-aes-aesni")
    assert afalg_reach.bind_afalg(xts.driver, xts) == outcome
    assert calls[0][:3] == ("xts-aes-aesni", "skcipher", bytes(32))
