# SPDX-License-Identifier: MIT
"""What to measure (pure): the drivers of every algorithm the kernel serves with a choice.

Every algorithm the kernel can serve with two or more drivers is measured on all of them
(`discover_targets`). Block-cipher modes (ecb, cbc, ctr, xts) are measured over *every*
implementation of the cipher: on a kernel with `aes-generic` and `aes-fixed-time` the
names `cbc(aes-generic)` and `cbc(aes-fixed-time)` are template instances the kernel
creates when AF_ALG binds them by driver name, even if nothing registered them yet. (xts
is the odd one: on 6.1 only `xts(ecb(aes-generic))` instantiates; `xts(aes-generic)` gives
ENOENT.) A device or CPU-instruction driver that already registers the mode itself
(`cbc-aes-aesni`, `virtio_crypto_aes_cbc`) is measured as registered.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pytest_hwcrypto.kernel.inventory import InventoryEntry, type_family
from pytest_hwcrypto.vocabulary import AlgType, DriverClass

# Ranks: lower ranks are planned first and left out last when the budget is short.
RANK_CIPHER_MODES = 0  # what dm-crypt, cryptsetup and the AF_ALG users of a board run
RANK_OTHER_SKCIPHERS = 1  # chacha20 and friends
RANK_HASHES = 2

# The modes measured over every implementation of a block cipher.
MODE_TEMPLATES = ("ecb", "cbc", "ctr", "xts")

# Hashes that need a key; the throughput suite measures plain digests only.
KEYED_HASHES = frozenset({"ghash", "poly1305", "polyval", "nhpoly1305", "michael_mic"})
KEYED_HASH_TEMPLATES = ("hmac(", "cmac(", "xcbc(", "cbcmac(", "vmac", "essiv(")


class PlanError(ValueError):
    """A plan (or a target of it) cannot be made from these settings; the message says
    which one to change."""


@dataclass(frozen=True)
class Target:
    """One driver to bind AF_ALG to, with what the plan needs to know about it."""

    algorithm: str
    driver: str
    kind: str  # AlgType.SKCIPHER or AlgType.HASH
    key_bits: int | None
    rank: int
    driver_class: str | None = None
    registered: bool = True  # False: a template instance the kernel creates when bound
    block_multiple: int = 1  # request lengths must be multiples of this

    @property
    def key_bytes(self) -> int | None:
        return None if self.key_bits is None else self.key_bits // 8

    def accepts(self, block_size: int) -> bool:
        return block_size > 0 and block_size % max(self.block_multiple, 1) == 0


def instance_driver_name(mode: str, cipher_driver: str) -> str:
    """The driver name that makes the kernel instantiate `mode` over exactly that cipher."""
    if mode == "xts":
        return f"xts(ecb({cipher_driver}))"
    return f"{mode}({cipher_driver})"


def discover_targets(entries: Sequence[InventoryEntry], min_drivers: int = 2) -> list[Target]:
    """Every driver of every algorithm with `min_drivers` or more drivers, in rank order.

    Two by default: the suites compare the drivers of one kernel with each other. `hwcrypto
    ab` passes 1: it compares each driver with itself in another kernel, and a kernel with
    one driver for an algorithm (the engine alone, generic code alone) is the common case.
    """
    usable = [entry for entry in entries if _usable(entry)]
    mode_targets = _cipher_mode_targets(usable, min_drivers)
    covered = {target.algorithm for target in mode_targets}
    return (
        mode_targets
        + _other_skcipher_targets(usable, covered, min_drivers)
        + _hash_targets(usable, min_drivers)
    )


# What disks (dm-crypt, cryptsetup), networks (IPsec, kTLS) and file systems ask the kernel
# for by name: `hwcrypto ab` measures their winners when told nothing else. gcm(aes) is an
# AEAD, which the AF_ALG slice does not time yet: it is listed so that it is measured the
# day it can be, and skipped until then.
PATH_ALGORITHMS = ("xts(aes)", "cbc(aes)", "gcm(aes)", "sha256")


def winner_targets(
    entries: Sequence[InventoryEntry], names: Sequence[str] = PATH_ALGORITHMS
) -> list[Target]:
    """For each name that the kernel can serve, the one driver binding it by name gets.

    That is the highest-priority driver registered under the name; a mode nothing
    registers yet (cbc(aes) before anyone asked) is the template the kernel would build
    over the cipher that wins, e.g. cbc(aes-fixed-time).
    """
    candidates = discover_targets(entries, min_drivers=1)
    usable = [entry for entry in entries if _usable(entry)]
    chosen: list[Target] = []
    for name in names:
        offered = {t.driver: t for t in candidates if t.algorithm == name}
        winner = _winner_driver(usable, name)
        if winner in offered:
            chosen.append(offered[winner])
    return chosen


def _winner_driver(usable: Sequence[InventoryEntry], name: str) -> str | None:
    registered = [entry for entry in usable if entry.name == name]
    if registered:
        return max(registered, key=lambda e: (e.winner, e.priority or 0)).driver
    mode, bracket, rest = name.partition("(")
    if not bracket or mode not in MODE_TEMPLATES or not rest.endswith(")"):
        return None
    cipher = _winner_driver([e for e in usable if type_family(e.type) == "cipher"], rest[:-1])
    return None if cipher is None else instance_driver_name(mode, cipher)


def algorithms(targets: Iterable[Target]) -> list[str]:
    return list(dict.fromkeys(target.algorithm for target in targets))


def _usable(entry: InventoryEntry) -> bool:
    """Drivers AF_ALG hands out (not internal helpers, not failed or pending self-tests),
    other than the null algorithms, which do nothing worth timing."""
    return (
        not entry.alg.is_internal
        and entry.selftest in (None, "passed")
        and "_null" not in entry.name
    )


def _by_name(entries: Iterable[InventoryEntry], family: str) -> dict[str, list[InventoryEntry]]:
    grouped: dict[str, list[InventoryEntry]] = {}
    for entry in entries:
        if type_family(entry.type) == family:
            drivers = grouped.setdefault(entry.name, [])
            if entry.driver not in {known.driver for known in drivers}:
                drivers.append(entry)
    return grouped


def _cipher_mode_targets(usable: Sequence[InventoryEntry], min_drivers: int) -> list[Target]:
    ciphers = _by_name(usable, "cipher")
    skciphers = _by_name(usable, AlgType.SKCIPHER)
    targets: list[Target] = []
    for cipher_name, implementations in ciphers.items():
        for mode in MODE_TEMPLATES:
            algorithm = f"{mode}({cipher_name})"
            registered = skciphers.get(algorithm, [])
            if len(implementations) < min_drivers and not registered:
                continue  # one cipher, nothing registered: nothing to compare
            found = _mode_drivers(algorithm, mode, implementations, registered)
            if len(found) >= min_drivers:
                targets.extend(found)
    return targets


def _mode_drivers(
    algorithm: str,
    mode: str,
    implementations: Sequence[InventoryEntry],
    registered: Sequence[InventoryEntry],
) -> list[Target]:
    key_bits = _mode_key_bits(mode, implementations, registered)
    found = {
        entry.driver: _registered_target(entry, RANK_CIPHER_MODES, key_bits) for entry in registered
    }
    registered_classes = {entry.driver_class for entry in registered}
    for cipher in implementations:
        # Software is always measured over every implementation; an accelerated cipher
        # only when nothing of its class registers the mode itself (a template over
        # aes-aesni is not what anyone gets when cbc-aes-aesni exists).
        if cipher.driver_class != DriverClass.GENERIC and cipher.driver_class in registered_classes:
            continue
        driver = instance_driver_name(mode, cipher.driver)
        if driver in found:
            continue
        found[driver] = Target(
            algorithm=algorithm,
            driver=driver,
            kind=AlgType.SKCIPHER,
            key_bits=key_bits,
            rank=RANK_CIPHER_MODES,
            driver_class=cipher.driver_class,
            registered=False,
            block_multiple=1 if mode == "ctr" else (cipher.alg.blocksize or 1),
        )
    return list(found.values())


def _mode_key_bits(
    mode: str, implementations: Sequence[InventoryEntry], registered: Sequence[InventoryEntry]
) -> int | None:
    """One key size per algorithm, so every driver of it is measured alike.

    The smallest key a cipher takes with 16 bytes preferred (AES-128, as cryptsetup and
    openssl speed default to); xts takes two keys of that size.
    """
    key_bytes = _common_key_bytes(implementations)
    if key_bytes is not None:
        return 8 * key_bytes * (2 if mode == "xts" else 1)
    return _common_key_bits(registered)


def _common_key_bytes(entries: Sequence[InventoryEntry]) -> int | None:
    ranges = [
        (entry.alg.min_keysize, entry.alg.max_keysize)
        for entry in entries
        if entry.alg.min_keysize is not None
    ]
    if not ranges:
        return None
    low = max(minimum for minimum, _ in ranges)
    high = min(maximum if maximum is not None else minimum for minimum, maximum in ranges)
    if low <= 16 <= high:
        return 16
    return low


def _common_key_bits(entries: Sequence[InventoryEntry]) -> int | None:
    key_bytes = _common_key_bytes(entries)
    return None if key_bytes is None else 8 * key_bytes


def target_for_entry(
    entry: InventoryEntry, key_bits: int | None = None, rank: int = RANK_CIPHER_MODES
) -> Target:
    """A target for one registered driver (`hwcrypto bench`); the key size defaults to the
    one discover_targets would use (AES-128, two AES-128 keys for xts)."""
    family = type_family(entry.type)
    if family not in (AlgType.SKCIPHER, AlgType.HASH):
        raise PlanError(
            f"{entry.driver} is a {entry.type} driver: only skcipher and hash drivers "
            "can be timed through AF_ALG here"
        )
    if family == AlgType.SKCIPHER and key_bits is None:
        key_bits = _common_key_bits([entry])
        if key_bits is None:
            raise PlanError(f"{entry.driver}: /proc/crypto gives no key size; give one")
    return _registered_target(entry, rank, key_bits)


def _registered_target(entry: InventoryEntry, rank: int, key_bits: int | None) -> Target:
    kind = AlgType.HASH if type_family(entry.type) == AlgType.HASH else AlgType.SKCIPHER
    return Target(
        algorithm=entry.name,
        driver=entry.driver,
        kind=kind,
        key_bits=key_bits if kind == AlgType.SKCIPHER else None,
        rank=rank,
        driver_class=entry.driver_class,
        registered=True,
        block_multiple=(entry.alg.blocksize or 1) if kind == AlgType.SKCIPHER else 1,
    )


def _other_skcipher_targets(
    usable: Sequence[InventoryEntry], covered: set[str], min_drivers: int
) -> list[Target]:
    targets: list[Target] = []
    for name, entries in _by_name(usable, AlgType.SKCIPHER).items():
        if name in covered or len(entries) < min_drivers:
            continue
        key_bits = _common_key_bits(entries)
        targets.extend(_registered_target(e, RANK_OTHER_SKCIPHERS, key_bits) for e in entries)
    return targets


def _hash_targets(usable: Sequence[InventoryEntry], min_drivers: int) -> list[Target]:
    targets: list[Target] = []
    for name, entries in _by_name(usable, AlgType.HASH).items():
        if len(entries) < min_drivers or _is_keyed_hash(name):
            continue
        targets.extend(_registered_target(entry, RANK_HASHES, None) for entry in entries)
    return targets


def _is_keyed_hash(name: str) -> bool:
    return name in KEYED_HASHES or name.startswith(KEYED_HASH_TEMPLATES)
