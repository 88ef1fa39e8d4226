# SPDX-License-Identifier: MIT
"""Class every driver of a /proc/crypto listing from evidence, and say which evidence decided.

The name table (``classify.py``) knows names. A listing says more than names, and a live
kernel says more than a listing. Evidence is weighed in this order, the first that decides
wins, and its line is kept as the entry's ``class_evidence``:

1. ``profile:``     the board profile's ``[[classify]]`` entry matching the driver (a lab
                    knows its vendor kernel's names better than any table);
2. ``crypto_user:`` the kernel's own flag CRYPTO_ALG_KERN_DRIVER_ONLY (a driver for a
                    device userspace cannot reach directly) -> offload;
3. ``sysfs:``       the driver's module has a bus driver bound to a device (platform, PCI,
                    virtio...) -> offload: CPU-instruction modules bind no device;
4. ``name table:``  module and driver-name rules;
   ``kernel config + cpu:`` a crypto library driver (``aes-lib``...) from the kernel's
                    CONFIG_CRYPTO_LIB_*_ARCH and /proc/cpuinfo (``lib_classes.py``);
5. ``capture:``     what the listing carries: a vendor engine prefix next to
                    ``module : kernel`` (BSP engine drivers are built in), or another driver
                    of the same module already known to be hardware;
6. ``template:``    a template instance takes the class of what is inside it; a mix is
                    named part by part (``template: offload cbc-aes-caam + generic
                    sha256-generic``);
7. ``unknown:``     nothing decided; the line says what was looked at. Never a guess:
                    calling a hardware driver ``generic`` is the worst mistake here.

Pure: the live facts come in as a :class:`LiveFacts` gathered by ``evidence.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Protocol

from pytest_hwcrypto.kernel.class_rules_offload import ENGINE_HINTS
from pytest_hwcrypto.kernel.classify import (
    BUILTIN_MODULE,
    Classification,
    classify_by_name,
    classify_template,
    is_hardware,
    split_template,
    unknown_reason,
)
from pytest_hwcrypto.kernel.lib_classes import classify_library_driver
from pytest_hwcrypto.kernel.modprobe import normalize_module_name
from pytest_hwcrypto.kernel.procfs import CryptoAlg
from pytest_hwcrypto.vocabulary import DriverClass

# include/linux/crypto.h: "the algorithm's backing hardware is a device not directly
# accessible by userspace" -- set by drivers of devices, never by CPU code or templates.
CRYPTO_ALG_KERN_DRIVER_ONLY = 0x00001000


@dataclass(frozen=True)
class LibArchCode:
    """lib/crypto wrappers (``sha256-lib``) an architecture's lib/crypto code serves.

    ``markers`` are driver names that prove the CPU feature that code needs is there
    (the kernel registered drivers using it), so the library chose it at boot.
    """

    what: str
    markers: tuple[str, ...]
    wrappers: tuple[str, ...]


_SHA_WRAPPERS = ("sha1-lib", "sha224-lib", "sha256-lib", "sha384-lib", "sha512-lib")
_HMAC_WRAPPERS = tuple(f"hmac-{name}" for name in _SHA_WRAPPERS)
# lib/crypto/<arch>/ in 6.17-6.19: sha1, sha256, sha512 (and crc32c) have arch code on
# these; md5 only on powerpc and sparc, so md5-lib stays unknown here.
LIB_ARCH_CODE: tuple[LibArchCode, ...] = (
    LibArchCode(
        "s390 CPACF present; lib/crypto/s390 has SHA-1/SHA-2 code",
        ("*-s390",),
        (*_SHA_WRAPPERS, *_HMAC_WRAPPERS),
    ),
    LibArchCode(
        "x86 SIMD crypto present; lib/crypto/x86 has SHA-1/SHA-2 (SHA-NI, AVX2, SSSE3) and "
        "CRC32C (SSE4.2) code",
        ("*-aesni", "sha*-ni", "sha*-avx2", "sha*-ssse3", "crc32c-intel", "*-clmulni"),
        (*_SHA_WRAPPERS, *_HMAC_WRAPPERS, "crc32c-lib"),
    ),
    LibArchCode(
        "ARMv8 Crypto Extensions present; lib/crypto/arm64 has SHA-1/SHA-2 and CRC32C code",
        ("*-aes-ce", "sha*-ce", "*-arm64-ce"),
        (*_SHA_WRAPPERS, *_HMAC_WRAPPERS, "crc32c-lib"),
    ),
)

# Prefixes of an internal helper's name behind which its public twin's name follows.
_INTERNAL_PREFIXES = ("__driver-", "__")


class ClassOverride(Protocol):
    """A board profile's ``[[classify]]`` entry (``profile.ClassifyEntry`` is one)."""

    @property
    def driver(self) -> str: ...  # a shell-style glob on the driver name

    @property
    def driver_class(self) -> str: ...

    @property
    def module(self) -> str | None: ...

    @property
    def where(self) -> str: ...  # "board.toml:12: [classify #1]"


@dataclass(frozen=True)
class BoundDevice:
    """A device a module's bus driver is bound to (from sysfs)."""

    bus: str
    device: str
    bus_driver: str


@dataclass(frozen=True)
class LiveFacts:
    """What the running kernel says beyond /proc/crypto (gathered by ``evidence.py``)."""

    # normalised module name -> the devices its bus drivers are bound to
    module_devices: Mapping[str, tuple[BoundDevice, ...]] = field(default_factory=dict)
    # driver name -> crypto_user cru_flags
    flags: Mapping[str, int] = field(default_factory=dict)
    # compatible strings of device-tree nodes bound to a driver, with that driver's name
    bound_compatibles: Mapping[str, str] = field(default_factory=dict)
    # why some evidence could not be read (crypto_user missing...): one line each
    notes: tuple[str, ...] = ()
    # the kernel's build config (CONFIG_X -> y/m/n/text), None when none was found, and
    # where it was read or looked for; the machine and its /proc/cpuinfo feature flags
    kernel_config: Mapping[str, str] | None = None
    config_source: str = ""
    machine: str = ""
    cpu_flags: frozenset[str] = frozenset()


def override_matches(override: ClassOverride, driver: str, module: str) -> bool:
    if not fnmatchcase(driver, override.driver):
        return False
    wanted = override.module
    return wanted is None or normalize_module_name(wanted) == normalize_module_name(module)


def classify_all(
    algs: Sequence[CryptoAlg],
    overrides: Sequence[ClassOverride] = (),
    live: LiveFacts | None = None,
) -> list[Classification]:
    """One :class:`Classification` per record, in order (see the module docstring)."""
    by_driver = {alg.driver: alg for alg in algs}
    decider = _Decider(by_driver, tuple(overrides), live)
    first = [decider.decide(alg.driver, alg.module or "") for alg in algs]
    return _module_siblings(algs, first)


@dataclass
class _Decider:
    by_driver: Mapping[str, CryptoAlg]
    overrides: tuple[ClassOverride, ...]
    live: LiveFacts | None
    _memo: dict[tuple[str, str], Classification] = field(default_factory=dict)

    def decide(self, driver: str, module: str) -> Classification:
        key = (driver, module)
        if key not in self._memo:
            self._memo[key] = self._decide(driver, module)
        return self._memo[key]

    def _decide(self, driver: str, module: str) -> Classification:
        for step in (self._profile, self._crypto_user, self._sysfs):
            found = step(driver, module)
            if found is not None:
                return found
        if split_template(driver) is None:
            by_name = classify_by_name(driver, module)
            if by_name.driver_class != DriverClass.UNKNOWN:
                return self._with_device_tree(driver, by_name)
            library = self._library(driver)
            if library is not None and library.driver_class != DriverClass.UNKNOWN:
                return library
            hinted = self._engine_hint(driver, module) or self._lib_arch(driver)
            if hinted is not None:
                return hinted
            if library is not None:
                return library
            if by_name.evidence.startswith("unknown: lib/crypto"):
                return by_name
            return Classification(DriverClass.UNKNOWN, self._unknown(driver, module))
        template = classify_template(driver, self._leaf)
        assert template is not None  # split_template said it is one
        return template

    def _leaf(self, leaf: str) -> Classification:
        # A leaf listed in the capture brings its module (and live facts) along.
        alg = self.by_driver.get(leaf)
        return self.decide(leaf, (alg.module or "") if alg else "")

    def _profile(self, driver: str, module: str) -> Classification | None:
        for name in _name_variants(driver):
            for override in self.overrides:
                if override_matches(override, name, module):
                    return Classification(
                        override.driver_class,
                        f"profile: [[classify]] driver = {override.driver} ({override.where})",
                    )
        return None

    def _crypto_user(self, driver: str, _module: str) -> Classification | None:
        if self.live is None:
            return None
        flags = self.live.flags.get(driver)
        if flags is None or not flags & CRYPTO_ALG_KERN_DRIVER_ONLY:
            return None
        return Classification(
            DriverClass.OFFLOAD,
            f"crypto_user: KERN_DRIVER_ONLY (cru_flags 0x{flags:08x})",
        )

    def _sysfs(self, _driver: str, module: str) -> Classification | None:
        if self.live is None or not module:
            return None
        name = normalize_module_name(module)
        devices = self.live.module_devices.get(name, ())
        if name == BUILTIN_MODULE or not devices:
            return None
        device = devices[0]
        more = f" (+{len(devices) - 1} more)" if len(devices) > 1 else ""
        return Classification(
            DriverClass.OFFLOAD,
            f"sysfs: module {name} bound to {device.bus} device {device.device}{more}",
        )

    def _engine_hint(self, driver: str, module: str) -> Classification | None:
        for name in _name_variants(driver):
            for hint in ENGINE_HINTS:
                if hint.matches(name, module or BUILTIN_MODULE):
                    shown = normalize_module_name(module or BUILTIN_MODULE)
                    return Classification(
                        hint.driver_class,
                        f"capture: module {shown} + engine name {hint.prefix} ({hint.what})",
                    )
        return None

    def _library(self, driver: str) -> Classification | None:
        """A library driver classed from the kernel config and the CPU (live only)."""
        if self.live is None:
            return None
        live = self.live
        found = classify_library_driver(
            driver, live.kernel_config, live.config_source, live.machine, live.cpu_flags
        )
        return None if found is None else Classification(found.driver_class, found.evidence)

    def _lib_arch(self, driver: str) -> Classification | None:
        """A lib/crypto wrapper beside the CPU crypto drivers of an architecture whose
        lib/crypto has code for that algorithm: the library picked that code at boot."""
        for arch in LIB_ARCH_CODE:
            if not any(fnmatchcase(driver, pattern) for pattern in arch.wrappers):
                continue
            marker = next(
                (d for d in self.by_driver if any(fnmatchcase(d, p) for p in arch.markers)),
                None,
            )
            if marker is not None:
                return Classification(
                    DriverClass.CPU_ACCEL,
                    f"capture: {driver} beside {marker} ({arch.what})",
                )
        return None

    def _with_device_tree(self, driver: str, decided: Classification) -> Classification:
        """A built-in engine's name-table class, confirmed by a bound device-tree node."""
        if self.live is None or decided.driver_class != DriverClass.OFFLOAD:
            return decided
        for compatible, bus_driver in self.live.bound_compatibles.items():
            if _same_engine(compatible, bus_driver, driver):
                return Classification(
                    decided.driver_class,
                    f"device tree: {compatible} bound to {bus_driver}; {decided.evidence}",
                )
        return decided

    def _unknown(self, driver: str, module: str) -> str:
        reason = unknown_reason(driver, module)
        alg = self.by_driver.get(driver)
        said = []
        if alg is not None:
            if alg.is_async:
                said.append("async : yes (devices are async, but so are cryptd and SIMD wrappers)")
            if alg.internal:
                said.append("internal : yes")
        if self.live is not None and module and normalize_module_name(module) != BUILTIN_MODULE:
            said.append("its module binds no device in sysfs")
        return reason + ("; " + "; ".join(said) if said else "")


def _same_engine(compatible: str, bus_driver: str, driver: str) -> bool:
    """Whether a bound device-tree node is the engine behind ``driver``: its bus driver's
    name is part of the crypto driver's (``sun8i-ce`` in ``cbc-aes-sun8i-ce``)."""
    del compatible  # named in the evidence line; the bus driver is the link
    bus = bus_driver.replace("_", "-").lower()
    return len(bus) > 2 and bus in driver.replace("_", "-").lower()


def _name_variants(driver: str) -> list[str]:
    names = [driver]
    for prefix in _INTERNAL_PREFIXES:
        if driver.startswith(prefix) and len(driver) > len(prefix):
            names.append(driver[len(prefix) :])
            break
    return names


def _module_siblings(
    algs: Sequence[CryptoAlg], decided: list[Classification]
) -> list[Classification]:
    """Unknown drivers of a module whose other drivers are all one hardware class take it.

    Only hardware classes spread: a module of generic drivers may still carry an arch
    variant (aegis128 has aegis128-generic and aegis128-simd), and calling that generic is
    the mistake this classifier must not make.
    """
    classes: dict[str, set[str]] = {}
    example: dict[str, str] = {}
    for alg, found in zip(algs, decided):
        module = normalize_module_name(alg.module or "")
        if not module or module == BUILTIN_MODULE or found.driver_class == DriverClass.UNKNOWN:
            continue
        if split_template(alg.driver) is not None:
            continue
        classes.setdefault(module, set()).add(found.driver_class)
        example.setdefault(module, alg.driver)
    result = []
    for alg, found in zip(algs, decided):
        module = normalize_module_name(alg.module or "")
        kinds = classes.get(module, set())
        if found.driver_class == DriverClass.UNKNOWN and len(kinds) == 1:
            (kind,) = kinds
            if is_hardware(kind) and split_template(alg.driver) is None:
                found = Classification(
                    kind,
                    f"capture: module {module} also registers {example[module]} ({kind})",
                )
        result.append(found)
    return result


def evidence_counts(classifications: Iterable[Classification]) -> dict[str, int]:
    """How many classes each kind of evidence decided (``name table``, ``template``...)."""
    counts: dict[str, int] = {}
    for found in classifications:
        kind = found.evidence.split(":", 1)[0]
        counts[kind] = counts.get(kind, 0) + 1
    return counts
