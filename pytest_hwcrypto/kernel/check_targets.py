# SPDX-License-Identifier: MIT
"""Which drivers the correctness suite checks, and binding them so they exist.

/proc/crypto lists a template instance (cbc(aes-generic), xts(ecb(aes-fixed-time)), ...)
only after someone asked for it, and the kernel drops instances again when a
higher-priority implementation of their inner algorithm registers (crypto_alg_tested ->
crypto_remove_spawns). So the suite first asks for every algorithm by name (loading the
modules that provide it), then pins each mode template over every registered cipher
driver by exact driver string, inner templates before outer ones. The drivers checked
are the module-registered ones plus exactly the pinned instances that could be bound:
an instance someone else created (cryptd(...) for dm-crypt, say) comes and goes with its
user, and counting it would make pytest-xdist workers collect different tests.

`discover_check_targets` does the binding through AF_ALG and reads /proc/crypto again;
everything else here is pure and unit-tested against recorded /proc/crypto captures.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.classify import classify_driver
from pytest_hwcrypto.kernel.differential import HASHES, SPECS
from pytest_hwcrypto.kernel.inventory import InventoryEntry, build_inventory, type_family
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.kernel.vectors import CORE_ALGORITHMS
from pytest_hwcrypto.vocabulary import PROC_CRYPTO, AlgType, DriverClass


@dataclass(frozen=True)
class CheckTarget:
    """One driver of one algorithm, bound by its exact driver name."""

    algorithm: str  # kernel name: "cbc(aes)"
    driver: str  # exact driver string: "cbc(aes-generic)"
    kind: str  # AF_ALG type: skcipher, aead, hash
    driver_class: str  # generic, cpu-accel, offload

    @property
    def id(self) -> str:
        return f"{self.algorithm}:{self.driver}"


@dataclass(frozen=True)
class Registered:
    """The /proc/crypto facts the planning needs (a seam: no dependency on the parser)."""

    name: str
    driver: str
    family: str  # lookup family: skcipher, aead, hash, cipher, ...
    internal: bool
    driver_class: str


def registered_from(entries: Iterable[InventoryEntry]) -> list[Registered]:
    return [
        Registered(e.name, e.driver, type_family(e.type), bool(e.alg.is_internal), e.driver_class)
        for e in entries
    ]


def is_template_instance(driver: str) -> bool:
    return "(" in driver


# Mode templates pinned over each cipher driver D, in the order they must be created.
_INNER_MODES = {
    "aes": (("ecb(aes)", "ecb({})"), ("cbc(aes)", "cbc({})"), ("ctr(aes)", "ctr({})")),
    "des3_ede": (("ecb(des3_ede)", "ecb({})"), ("cbc(des3_ede)", "cbc({})")),
}
_OUTER_MODES = {"aes": (("xts(aes)", "xts(ecb({}))"), ("cmac(aes)", "cmac({})"))}


def by_name_bindings() -> list[tuple[str, str]]:
    """(algorithm, AF_ALG name) for every checked algorithm: loads modules, makes winners."""
    return [(name, name) for name in SPECS]


def pinned_bindings(registered: list[Registered]) -> list[tuple[str, str]]:
    """(algorithm, exact driver string) for each template over each registered driver."""

    def drivers(name: str, family: str) -> list[str]:
        return sorted(
            {
                r.driver
                for r in registered
                if r.name == name and r.family == family and not r.internal
            }
        )

    inner, outer = [], []
    for cipher, modes_of in _INNER_MODES.items():
        for driver in drivers(cipher, "cipher"):
            inner += [(alg, pattern.format(driver)) for alg, pattern in modes_of]
            outer += [
                (alg, pattern.format(driver)) for alg, pattern in _OUTER_MODES.get(cipher, ())
            ]
            if cipher == "aes":
                outer += [
                    ("gcm(aes)", f"gcm_base(ctr({driver}),{ghash})")
                    for ghash in drivers("ghash", "hash")
                ]
    for hash_name in HASHES:
        if not hash_name.startswith("sha3-"):
            outer += [
                (f"hmac({hash_name})", f"hmac({driver})") for driver in drivers(hash_name, "hash")
            ]
    for chacha in drivers("chacha20", "skcipher"):
        outer += [
            ("rfc7539(chacha20,poly1305)", f"rfc7539({chacha},{poly})")
            for poly in drivers("poly1305", "hash")
        ]
    return inner + outer


def select_targets(
    registered: list[Registered],
    pinned: Mapping[str, set[str]],
    core: tuple[str, ...],
    classify: Callable[[str], str],
) -> list[CheckTarget]:
    """The drivers to check, per algorithm, sorted so every xdist worker agrees.

    Core algorithms are checked on every driver, even a lone one; the others only where the
    kernel has two or more drivers, i.e. a choice that can go wrong.
    """
    targets: list[CheckTarget] = []
    for algorithm, spec in SPECS.items():
        found = {
            r.driver: CheckTarget(algorithm, r.driver, spec.kind, r.driver_class)
            for r in registered
            if r.name == algorithm
            and r.family == spec.kind
            and not r.internal
            and (not is_template_instance(r.driver) or r.driver in pinned.get(algorithm, ()))
        }
        for driver in pinned.get(algorithm, ()):
            found.setdefault(driver, CheckTarget(algorithm, driver, spec.kind, classify(driver)))
        if algorithm in core or len(found) >= 2:
            targets += sorted(found.values(), key=lambda target: target.driver)
    return targets


def reference_driver(targets: list[CheckTarget], algorithm: str) -> CheckTarget | None:
    """The generic C driver the others are compared with: one built on *-generic first."""
    generic = [
        t for t in targets if t.algorithm == algorithm and t.driver_class == DriverClass.GENERIC
    ]
    generic.sort(key=lambda t: ("generic" not in t.driver, t.driver))
    return generic[0] if generic else None


# --- binding through AF_ALG -------------------------------------------------------------


def discover_check_targets(timeout: float, proc_crypto: Path = PROC_CRYPTO) -> list[CheckTarget]:
    """Instantiate the templates (where AF_ALG exists), then read /proc/crypto once more."""
    if not proc_crypto.exists():
        return []
    pinned = instantiate_templates(timeout, proc_crypto) if afalg_present() else {}
    return select_targets(
        registered_now(proc_crypto),
        pinned,
        CORE_ALGORITHMS,
        lambda driver: classify_driver(driver, ""),
    )


def instantiate_templates(timeout: float, proc_crypto: Path = PROC_CRYPTO) -> dict[str, set[str]]:
    """Ask for every algorithm by name, then pin templates over every cipher driver.

    Returns, per algorithm, the pinned driver strings that could be bound. Order matters
    (module docstring): by-name binds load modules first, inner modes before outer.
    """
    for algorithm, name in by_name_bindings():
        bind(algorithm, name, timeout)
    pinned: dict[str, set[str]] = {}
    for algorithm, driver in pinned_bindings(registered_now(proc_crypto)):
        if bind(algorithm, driver, timeout):
            pinned.setdefault(algorithm, set()).add(driver)
    return pinned


def registered_now(proc_crypto: Path = PROC_CRYPTO) -> list[Registered]:
    return registered_from(build_inventory(read_proc_crypto(proc_crypto)))


def afalg_present() -> bool:
    return any(
        afalg.afalg_available(kind)[0] for kind in (AlgType.SKCIPHER, AlgType.AEAD, AlgType.HASH)
    )


def bind(algorithm: str, name: str, timeout: float) -> bool:
    """Open and close a session: binding is what makes the kernel build an instance."""
    spec = SPECS[algorithm]
    # bytes(range(n)): XTS halves differ and the three DES keys differ, so no weak-key refusal.
    key = bytes(range(spec.key_sizes[0])) if spec.key_sizes else b""
    if spec.kind == AlgType.HASH:
        key = b""  # no key needed to bind
    authsize = spec.authsizes[0] if spec.kind == AlgType.AEAD else None
    try:
        afalg.instantiate(name, spec.kind, key, authsize, timeout)
    except afalg.AfAlgError:
        return False
    return True
