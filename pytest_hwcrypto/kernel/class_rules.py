# SPDX-License-Identifier: MIT
"""The name table's building block, and its generic and deliberately-unknown rules.

A :class:`ClassRule` names the modules and driver-name patterns (shell-style, matched on the
whole name) of one kind of implementation. The device rules live in
``class_rules_offload.py``, the CPU rules in ``class_rules_cpu.py``; ``classify.py`` puts
them in order (devices, then CPUs, then portable C). The names were checked against the
kernel sources (``cra_driver_name`` strings, the ``snprintf`` that builds the composed ones,
and the module names of arch/*/crypto and drivers/crypto) and against vendor trees where
noted. The table is code, reviewed: nothing is generated from a kernel tree at run time.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from pytest_hwcrypto.kernel.modprobe import normalize_module_name
from pytest_hwcrypto.vocabulary import DriverClass


@dataclass(frozen=True)
class ClassRule:
    """Modules and driver-name patterns of one kind of implementation."""

    driver_class: str
    what: str
    modules: tuple[str, ...] = ()
    drivers: tuple[str, ...] = ()

    def matches_module(self, module: str) -> bool:
        return normalize_module_name(module) in self.modules

    def matches_driver(self, driver: str) -> bool:
        return any(fnmatchcase(driver, pattern) for pattern in self.drivers)

    def pattern_for(self, driver: str) -> str | None:
        """The first pattern matching ``driver`` (for the evidence line), or None."""
        return next((p for p in self.drivers if fnmatchcase(driver, p)), None)


def offload(what: str, modules: tuple[str, ...], drivers: tuple[str, ...]) -> ClassRule:
    return ClassRule(DriverClass.OFFLOAD, what, modules, drivers)


def cpu(what: str, modules: tuple[str, ...], drivers: tuple[str, ...]) -> ClassRule:
    return ClassRule(DriverClass.CPU_ACCEL, what, modules, drivers)


def generic(what: str, modules: tuple[str, ...], drivers: tuple[str, ...]) -> ClassRule:
    return ClassRule(DriverClass.GENERIC, what, modules, drivers)


GENERIC_RULES: tuple[ClassRule, ...] = (
    # Module names of -generic C code are not listed on purpose: some of those modules also
    # register SIMD variants (aegis128 has aegis128-simd), so their driver names decide.
    generic("portable C implementations (*-generic)", (), ("*-generic",)),
    generic("constant-time table-less AES in C (aes_ti)", ("aes_ti",), ("aes-fixed-time",)),
    generic(
        "software random number generators (DRBG, jitterentropy, ANSI X9.31, old krng)",
        ("drbg", "jitterentropy_rng", "ansi_cprng"),
        ("drbg_*", "jitterentropy_rng", "ansi_cprng", "krng"),
    ),
    generic("software compression behind the scomp interface", (), ("*-scomp",)),
    generic(
        "null cipher/digest/compression",
        ("crypto_null",),
        ("ecb-cipher_null", "cipher_null", "digest_null", "compress_null"),
    ),
)

# Wrappers around lib/crypto (sha256-lib, hmac-sha256-lib, crc32c-lib, and aes-lib which
# replaced aes-generic in 7.0): the library picks architecture code (SHA-NI, AES-NI, ARMv8
# CE...) at boot when CONFIG_CRYPTO_LIB_*_ARCH is set, portable C otherwise. The name alone
# does not tell which, so they are not called generic.
UNKNOWN_RULES: tuple[ClassRule, ...] = (
    ClassRule(
        DriverClass.UNKNOWN,
        "lib/crypto wrapper: portable C or arch code, chosen at boot",
        (),
        ("*-lib",),
    ),
)


@dataclass(frozen=True)
class EngineHint:
    """A driver-name prefix that names a device only next to what the capture says.

    Short vendor prefixes (``ss-`` of Allwinner's BSP) are too weak alone; with
    ``module : kernel`` (built in, as BSP engine drivers are) they decide, and the evidence
    says both.
    """

    prefix: str
    what: str
    driver_class: str = DriverClass.OFFLOAD
    modules: tuple[str, ...] = ("kernel",)

    def matches(self, driver: str, module: str) -> bool:
        return driver.startswith(self.prefix) and normalize_module_name(module) in self.modules
