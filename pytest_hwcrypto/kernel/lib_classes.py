# SPDX-License-Identifier: MIT
"""Class the crypto library's drivers (``aes-lib``, ``cbc-aes-lib``, ``sha256-lib``...) from
the kernel's own evidence: its build configuration and the CPU's features.

Since 6.17 (hashes) and 7.0 (AES and its modes) the crypto API registers thin drivers over
lib/crypto. Each library has architecture code only when ``CONFIG_CRYPTO_LIB_<X>_ARCH=y``
(never on UML), and that code picks CPU instructions at boot, falling back to portable C
when the CPU lacks them (lib/crypto/x86/aes.h enables AES-NI only if the CPU has ``aes``).
So the name alone cannot tell; the config and /proc/cpuinfo can:

* the config builds the library without an ``_ARCH`` option (md5 has none in 7.3), or sets
  it to ``n``: portable C -> ``generic``;
* ``_ARCH=y`` and the CPU has a feature that code uses -> ``cpu-accel``;
* ``_ARCH=y`` and the CPU has none of them -> ``generic`` (the library's fallback);
* no config, or a machine whose features this table does not know -> ``unknown``, with the
  reason.

The feature names were read in Linux 7.3's lib/crypto/{x86,arm64}/*.h and lib/crc/x86
(``boot_cpu_has``/``cpu_have_named_feature`` in each ``*_mod_init_arch``), spelled as
/proc/cpuinfo prints them. Pure: the config and the flags come in as arguments.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

from pytest_hwcrypto.vocabulary import DriverClass

X86_64 = "x86_64"
AARCH64 = "aarch64"


@dataclass(frozen=True)
class ArchCode:
    """One library's architecture code: its option and the CPU features it uses (any one
    of them makes the library run it), per machine."""

    option: str  # without CONFIG_
    features: Mapping[str, tuple[str, ...]]


_AES = ArchCode("CRYPTO_LIB_AES_ARCH", {X86_64: ("aes",), AARCH64: ("aes", "asimd")})
_GHASH = ArchCode(
    "CRYPTO_LIB_GF128HASH_ARCH", {X86_64: ("pclmulqdq",), AARCH64: ("pmull", "asimd")}
)
_SHA1 = ArchCode("CRYPTO_LIB_SHA1_ARCH", {X86_64: ("sha_ni", "avx", "ssse3"), AARCH64: ("sha1",)})
_SHA256 = ArchCode(
    "CRYPTO_LIB_SHA256_ARCH", {X86_64: ("sha_ni", "avx", "ssse3"), AARCH64: ("sha2", "asimd")}
)
_SHA512 = ArchCode("CRYPTO_LIB_SHA512_ARCH", {X86_64: ("avx", "ssse3"), AARCH64: ("sha512",)})
_CHACHA = ArchCode("CRYPTO_LIB_CHACHA_ARCH", {X86_64: ("ssse3",), AARCH64: ("asimd",)})
_SM3 = ArchCode("CRYPTO_LIB_SM3_ARCH", {X86_64: ("avx",), AARCH64: ("sm3", "asimd")})
_SHA3 = ArchCode("CRYPTO_LIB_SHA3_ARCH", {AARCH64: ("sha3",)})
_BLAKE2B = ArchCode("CRYPTO_LIB_BLAKE2B_ARCH", {AARCH64: ("asimd",)})
_CRC32C = ArchCode("CRC32_ARCH", {X86_64: ("sse4_2",), AARCH64: ("crc32",)})
_CRC32 = ArchCode("CRC32_ARCH", {X86_64: ("pclmulqdq",), AARCH64: ("crc32",)})


@dataclass(frozen=True)
class LibraryDrivers:
    """The crypto API drivers over one library, the option that builds it, and the
    architecture code behind them (none: the library is portable C everywhere)."""

    drivers: tuple[str, ...]  # shell-style globs on the driver name
    library: str  # the option that builds the library, without CONFIG_
    arch: tuple[ArchCode, ...] = ()


LIBRARY_DRIVERS: tuple[LibraryDrivers, ...] = (
    LibraryDrivers(("gcm-aes-lib", "rfc4106-gcm-aes-lib"), "CRYPTO_LIB_AES", (_AES, _GHASH)),
    LibraryDrivers(("aes-lib", "*-aes-lib"), "CRYPTO_LIB_AES", (_AES,)),
    LibraryDrivers(("md5-lib", "hmac-md5-lib"), "CRYPTO_LIB_MD5"),
    LibraryDrivers(("sha1-lib", "hmac-sha1-lib"), "CRYPTO_LIB_SHA1", (_SHA1,)),
    LibraryDrivers(
        ("sha224-lib", "sha256-lib", "hmac-sha224-lib", "hmac-sha256-lib"),
        "CRYPTO_LIB_SHA256",
        (_SHA256,),
    ),
    LibraryDrivers(
        ("sha384-lib", "sha512-lib", "hmac-sha384-lib", "hmac-sha512-lib"),
        "CRYPTO_LIB_SHA512",
        (_SHA512,),
    ),
    LibraryDrivers(("sha3-*-lib",), "CRYPTO_LIB_SHA3", (_SHA3,)),
    LibraryDrivers(("chacha20-lib", "xchacha*-lib"), "CRYPTO_LIB_CHACHA", (_CHACHA,)),
    LibraryDrivers(("sm3-lib",), "CRYPTO_LIB_SM3", (_SM3,)),
    LibraryDrivers(("blake2b-*-lib",), "CRYPTO_LIB_BLAKE2B", (_BLAKE2B,)),
    LibraryDrivers(("mldsa*-lib",), "CRYPTO_LIB_MLDSA"),
    LibraryDrivers(("crc32c-lib",), "CRC32", (_CRC32C,)),
    LibraryDrivers(("crc32-lib",), "CRC32", (_CRC32,)),
)


@dataclass(frozen=True)
class LibraryClass:
    driver_class: str
    evidence: str


def library_of(driver: str) -> LibraryDrivers | None:
    """The table entry whose drivers include ``driver`` (first match), or None."""
    return next(
        (e for e in LIBRARY_DRIVERS if any(fnmatchcase(driver, g) for g in e.drivers)), None
    )


def classify_library_driver(
    driver: str,
    config: Mapping[str, str] | None,
    config_source: str,
    machine: str,
    cpu_flags: Collection[str],
) -> LibraryClass | None:
    """The class of a library driver from the kernel config (option -> ``y``/``m``/``n``,
    names with ``CONFIG_``) and the CPU's features; None when ``driver`` is no library
    driver this table knows."""
    entry = library_of(driver)
    if entry is None:
        return None
    if config is None:
        return LibraryClass(
            DriverClass.UNKNOWN,
            f"unknown: {driver} runs lib/crypto code chosen at boot, and no kernel config "
            f"was found ({config_source}) to tell whether it has architecture code",
        )
    if not entry.arch:
        return LibraryClass(
            DriverClass.GENERIC,
            f"kernel config: {_shown(config, entry.library)}, and that library has no "
            f"architecture code: portable C ({config_source})",
        )
    parts = [_arch_part(code, config, machine, cpu_flags) for code in entry.arch]
    unknown = [why for used, why in parts if used is None]
    if unknown:
        return LibraryClass(DriverClass.UNKNOWN, f"unknown: {driver}: {'; '.join(unknown)}")
    said = "; ".join(why for _, why in parts)
    if any(used for used, _ in parts):
        return LibraryClass(DriverClass.CPU_ACCEL, f"kernel config + cpu: {said} ({config_source})")
    return LibraryClass(DriverClass.GENERIC, f"kernel config + cpu: {said} ({config_source})")


def _arch_part(
    code: ArchCode, config: Mapping[str, str], machine: str, cpu_flags: Collection[str]
) -> tuple[bool | None, str]:
    """Whether the library runs this architecture code (None: cannot tell) and why."""
    if config.get(f"CONFIG_{code.option}") != "y":
        return False, f"{_shown(config, code.option)}: portable C"
    features = code.features.get(machine)
    if features is None:
        if code.features:
            return None, (
                f"CONFIG_{code.option}=y, and this table does not know which {machine} CPU "
                "features that code needs"
            )
        return None, f"CONFIG_{code.option}=y on {machine}, a machine this table does not know"
    present = [flag for flag in features if flag in cpu_flags]
    if present:
        return True, f"CONFIG_{code.option}=y + cpu flag {present[0]}"
    return False, (
        f"CONFIG_{code.option}=y but the CPU has none of {', '.join(features)}: "
        "the library falls back to portable C"
    )


def _shown(config: Mapping[str, str], option: str) -> str:
    value = config.get(f"CONFIG_{option}")
    return f"CONFIG_{option} is not set" if value in (None, "n") else f"CONFIG_{option}={value}"
