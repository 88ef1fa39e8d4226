# SPDX-License-Identifier: MIT
"""The words every layer shares: algorithm types, driver classes, sources, kinds, defaults.

The bottom layer (docs/architecture.md): it imports nothing of the project, and every
other module takes these names from here instead of spelling the strings again.

Each enum is a `str` whose value is the word used on the command line, in board profiles
and in the results JSON, so `AlgType.SKCIPHER == "skcipher"` and a member can be written
to JSON or compared with text read from a file as it is.
"""

from __future__ import annotations

import enum
from pathlib import Path


class Word(str, enum.Enum):
    """A str enum that formats as its value (f-strings, str(), JSON) on every Python."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

    @classmethod
    def values(cls) -> tuple[str, ...]:
        return tuple(str(member.value) for member in cls)


class AlgType(Word):
    """AF_ALG socket types, which are also the kinds of algorithm a path can move bytes of."""

    SKCIPHER = "skcipher"
    AEAD = "aead"
    HASH = "hash"
    RNG = "rng"


class Op(Word):
    """What one measurement or test did with the bytes."""

    ENCRYPT = "encrypt"
    DECRYPT = "decrypt"
    DIGEST = "digest"
    # random bytes taken from an RNG: an AF_ALG rng's output, /dev/hwrng's read
    GENERATE = "generate"


class RateUnit(Word):
    """What a measurement's rate counts (results JSON `measurements[].unit`)."""

    BYTES_PER_SECOND = "B/s"  # the default: a measurement without `unit` counts bytes
    OPERATIONS_PER_SECOND = "op/s"  # public-key operations (sign, verify, ...) per second


class DriverClass(Word):
    """Who does the work: portable C, CPU instructions, or a device (docs/results.md, Inventory)."""

    GENERIC = "generic"
    CPU_ACCEL = "cpu-accel"
    OFFLOAD = "offload"
    UNKNOWN = "unknown"


# The classes a board profile may name (`unknown` is what the classifier says, not a choice).
PROFILE_DRIVER_CLASSES: tuple[DriverClass, ...] = (
    DriverClass.GENERIC,
    DriverClass.CPU_ACCEL,
    DriverClass.OFFLOAD,
)
# Classes that count as hardware against `generic` software.
HARDWARE_CLASSES: tuple[DriverClass, ...] = (DriverClass.CPU_ACCEL, DriverClass.OFFLOAD)


class Source(Word):
    """The path a measurement went through (results JSON `source`)."""

    AFALG = "afalg"
    TCRYPT = "tcrypt"
    DMCRYPT = "dmcrypt"
    CRYPTSETUP = "cryptsetup"
    OPENSSL = "openssl"
    # openssl speed -async_jobs N: N ASYNC jobs of one process (the afalg engine's AIO)
    OPENSSL_ASYNC_JOBS = "openssl-async-jobs"
    CRYPTODEV = "cryptodev"
    FIO = "fio"
    DD = "dd"
    # keyctl pkey_* on an asymmetric key: the public-key path user space has (kernel/keyctl.py)
    KEYCTL = "keyctl"
    HWRNG = "hwrng"  # /dev/hwrng, one hw_random source current at a time


class FindingKind(Word):
    """What a finding reports (results JSON `findings[].kind`)."""

    HW_LOSES_TO_SW = "hw-loses-to-sw"
    WINNER_NOT_FASTEST = "winner-not-fastest"
    CROSSOVER = "crossover"
    REGRESSION = "regression"
    BELOW_FLOOR = "below-floor"
    DRIVER_MISSING = "driver-missing"
    MODULE_BLACKLISTED = "module-blacklisted"
    AFALG_MASKED = "afalg-masked"
    # A driver /proc/crypto lists as having failed its self-test.
    SELFTEST_FAILED = "selftest-failed"
    # Seen in a board's kernel log during the run.
    KERNEL_SELFTEST_FAILED = "kernel-selftest-failed"
    KERNEL_OOPS = "kernel-oops"
    KERNEL_WARNING = "kernel-warning"
    # Read from pasted tool output (parsers/findings.py).
    LEGACY_BYPASSES_ENGINE = "legacy-bypasses-engine"
    CPU_TIME_NOT_ELAPSED = "cpu-time-not-elapsed"
    STORAGE_BOUND = "storage-bound"
    # A hardware driver dm-crypt will not allocate (e.g. it carries CRYPTO_ALG_ALLOCATES_MEMORY).
    DMCRYPT_REFUSES_DRIVER = "dmcrypt-refuses-driver"
    # The dmcrypt suite checked less than --hwcrypto-dmcrypt-bytes to fit its budget.
    DMCRYPT_SHORTENED = "dmcrypt-shortened"
    # A hardware driver loses to software one request at a time, wins with N in flight.
    NEEDS_CONCURRENCY = "needs-concurrency"
    # openssl -async_jobs N gave one request's rate where -multi N gave more: the kernel
    # completed the afalg engine's AIO requests one at a time.
    ASYNC_JOBS_SERIALIZED = "async-jobs-serialized"
    # A container config with no device policy: the container gets every host device.
    CONTAINER_DEVICES_UNRESTRICTED = "container-devices-unrestricted"
    # The same driver slower inside a container than on the host by more than the bar.
    CONTAINER_OVERHEAD = "container-overhead"
    # An rng's output stuck, periodic, or the same in two sessions (verdict/rng_output.py).
    RNG_OUTPUT_REPEATS = "rng-output-repeats"
    # A hw_random source: missing though the profile expects it, failing rngtest's FIPS
    # 140-2 tests, stuck or repeating, or not credited by the kernel (rng_quality 0).
    HWRNG_MISSING = "hwrng-missing"
    HWRNG_UNHEALTHY = "hwrng-unhealthy"
    HWRNG_NOT_CREDITED = "hwrng-not-credited"


class RuleType(Word):
    """The `type` of a board profile `[[rule]]`."""

    HW_BEATS_SW = "hw-beats-sw"
    FLOOR = "floor"
    WINNER_FASTEST = "winner-fastest"
    NO_REGRESSION = "no-regression"


class Suite(Word):
    """The shipped suites that exist; `--hwcrypto-suite` accepts exactly these."""

    INVENTORY = "inventory"
    CORRECTNESS = "correctness"
    THROUGHPUT = "throughput"
    CRYPTSETUP = "cryptsetup"
    OPENSSL = "openssl"
    CRYPTODEV = "cryptodev"
    DMCRYPT = "dmcrypt"
    LXC = "lxc"
    # The kernel's rng algorithms through AF_ALG (suites/test_rngalg.py); "rngalg", not
    # "rng", which the hardware RNG suite (/dev/hwrng) is nearer to.
    RNG_ALGORITHMS = "rngalg"
    PKEY = "pkey"  # public keys through keyctl pkey_* (suites/test_pkey.py)
    RNG = "rng"

    @property
    def marker(self) -> str:
        return f"hwcrypto_{self.value}"


# Suites whose tests measure: under pytest-xdist they run in one worker, each alone in the
# run (xdist_exclusive.py). "lxc" by name: that suite measures too.
MEASURING_SUITES: frozenset[str] = frozenset(
    {
        "throughput",
        "cryptsetup",
        "openssl",
        "cryptodev",
        "dmcrypt",
        "lxc",
        "rngalg",
        "pkey",
        "rng",
    }
)
XDIST_MEASURING_GROUP = "hwcrypto-measuring"


class Place(Word):
    """Where a measurement was taken (`extra["where"]`) and where a `[[rule]]` looks."""

    HOST = "host"
    CONTAINER = "container"


class BoardKind(Word):
    """The virtual boards `--hwcrypto-vm` and `hwcrypto vm` boot."""

    UML = "uml"
    QEMU = "qemu"
    QEMU_ARM64 = "qemu-arm64"  # ARMv8 CE/NEON drivers (boards/qemu_arm.py)
    QEMU_ARMHF = "qemu-armhf"  # 32-bit ARM: NEON bit-sliced and scalar asm drivers


PROC_CRYPTO = Path("/proc/crypto")
RESULTS_SCHEMA = "pytest-hwcrypto/1"

# Defaults that more than one layer needs (the settings table uses them too).
DEFAULT_TIMEOUT_SECONDS = 10.0
DEFAULT_BLOCK_SIZES: tuple[int, ...] = (16, 64, 256, 1024, 4096, 16384, 65536)
DEFAULT_MAX_DROP = 0.10
DEFAULT_MIN_RATIO = 1.0
# Most samples per throughput series (--hwcrypto-max-samples; measure/plan.py says why 11).
DEFAULT_MAX_SAMPLES = 11
# Sessions per driver a throughput series is spread over (--hwcrypto-sessions;
# measure/plan.py says why).
DEFAULT_SESSIONS = 5
MAX_SESSIONS = 16
MIB = 1024 * 1024
# The most a driver may lose inside a container against the host before the lxc suite
# reports `container-overhead`.
DEFAULT_CONTAINER_OVERHEAD = 0.05

# Bytes of seeded pattern the dmcrypt suite writes through each volume and reads back.
DEFAULT_DMCRYPT_BYTES = 256 * MIB
