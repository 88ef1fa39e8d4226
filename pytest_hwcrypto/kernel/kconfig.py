# SPDX-License-Identifier: MIT
"""Read the running kernel's build configuration and answer crypto questions about it.

Sources, in the order tried: ``/proc/config.gz`` (CONFIG_IKCONFIG_PROC),
``/boot/config-<release>`` (Debian, Ubuntu, Fedora) and ``/lib/modules/<release>/config``
(Arch, some Fedora builds). Every path is built from a ``root`` argument so tests can point
at a fake tree.

Only the text format matters here: ``CONFIG_X=y``, ``CONFIG_X=m``, ``CONFIG_X="text"``,
``CONFIG_X=123`` and ``# CONFIG_X is not set``. Values are kept as text; ``is not set``
is stored as ``n``.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

_SET_LINE = re.compile(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)$")
_UNSET_LINE = re.compile(r"^#\s*(CONFIG_[A-Za-z0-9_]+) is not set\s*$")
_GZIP_MAGIC = b"\x1f\x8b"

# AF_ALG interfaces and the options that build them.
USER_API_OPTIONS = {
    "skcipher": "CONFIG_CRYPTO_USER_API_SKCIPHER",
    "hash": "CONFIG_CRYPTO_USER_API_HASH",
    "aead": "CONFIG_CRYPTO_USER_API_AEAD",
    "rng": "CONFIG_CRYPTO_USER_API_RNG",
}

# tcrypt's option was renamed in 2025; the newer name is asked first.
TCRYPT_OPTIONS = ("CONFIG_CRYPTO_BENCHMARK", "CONFIG_CRYPTO_TEST")


class KconfigError(ValueError):
    """Kernel config text that cannot be parsed; the message names the source and line."""

    def __init__(self, source: str, line: int, problem: str) -> None:
        super().__init__(f"{source}:{line}: {problem}")
        self.source = source
        self.line = line


@dataclass(frozen=True)
class KernelConfig:
    """Options of one kernel config file. Names may be given with or without ``CONFIG_``."""

    source: str
    options: dict[str, str] = field(default_factory=dict, hash=False)

    def value(self, name: str) -> str | None:
        """``y``, ``m``, ``n`` (is not set), the unquoted text of a string, or None if absent."""
        return self.options.get(_option_name(name))

    def mentions(self, name: str) -> bool:
        """Whether the file has a line for the option at all (set or ``is not set``)."""
        return _option_name(name) in self.options

    def is_enabled(self, name: str) -> bool:
        """Built in or built as a module."""
        return self.value(name) in ("y", "m")

    def is_builtin(self, name: str) -> bool:
        return self.value(name) == "y"

    def is_module(self, name: str) -> bool:
        return self.value(name) == "m"


def parse_kconfig(text: str, source: str = "<config>") -> KernelConfig:
    """Parse the text of a kernel .config. Raises :class:`KconfigError` on a garbled line."""
    options: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        parsed = _parse_line(raw.strip(), source, number)
        if parsed is not None:
            name, value = parsed
            options[name] = value
    return KernelConfig(source=source, options=options)


def _parse_line(line: str, source: str, number: int) -> tuple[str, str] | None:
    unset = _UNSET_LINE.match(line)
    if unset:
        return unset.group(1), "n"
    if not line or line.startswith("#"):
        return None
    assignment = _SET_LINE.match(line)
    if assignment is None:
        raise KconfigError(source, number, f"not a config line: {line!r}")
    return assignment.group(1), _unquote(assignment.group(2).strip())


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return value


def _option_name(name: str) -> str:
    return name if name.startswith("CONFIG_") else f"CONFIG_{name}"


def read_kconfig(path: Path) -> KernelConfig:
    """Read a config file, gzip-compressed (``/proc/config.gz``) or plain."""
    data = path.read_bytes()
    if data.startswith(_GZIP_MAGIC):
        data = gzip.decompress(data)
    return parse_kconfig(data.decode("utf-8", errors="replace"), str(path))


def kernel_config_candidates(release: str, root: Path = Path("/")) -> list[Path]:
    """Where the config of kernel ``release`` may be, most authoritative first.

    /proc/config.gz describes the running kernel itself; the others are files installed
    next to a kernel of that release name.
    """
    return [
        root / "proc" / "config.gz",
        root / "boot" / f"config-{release}",
        root / "lib" / "modules" / release / "config",
    ]


def find_kernel_config(candidates: Iterable[Path]) -> Path | None:
    """The first candidate that exists and can be read, or None."""
    for candidate in candidates:
        try:
            if candidate.is_file():
                return candidate
        except OSError:
            continue
    return None


def load_kernel_config(release: str, root: Path = Path("/")) -> KernelConfig | None:
    """The config of kernel ``release`` under ``root``, or None when none is installed."""
    path = find_kernel_config(kernel_config_candidates(release, root))
    if path is None:
        return None
    try:
        return read_kconfig(path)
    except OSError:
        return None


def selftests_enabled(cfg: KernelConfig) -> bool | None:
    """Whether the crypto self-tests run when algorithms register.

    Kernels before 6.15 have ``CONFIG_CRYPTO_MANAGER_DISABLE_TESTS`` (set = tests off);
    newer ones have ``CONFIG_CRYPTO_SELFTESTS`` (set = on). The newer option hides behind
    EXPERT/DEBUG_KERNEL, and the older one is always written out when the crypto manager is
    built, so a config that builds the manager but names neither option runs no tests.
    None when the config says nothing about crypto at all. (The ``cryptomgr.notests`` boot
    option can still switch tests off at run time; ``fips=1`` forces them on.)
    """
    if cfg.mentions("CRYPTO_SELFTESTS"):
        return cfg.is_builtin("CRYPTO_SELFTESTS")
    if cfg.mentions("CRYPTO_MANAGER_DISABLE_TESTS"):
        return not cfg.is_builtin("CRYPTO_MANAGER_DISABLE_TESTS")
    if cfg.mentions("CRYPTO_MANAGER"):
        return False
    return None


def extra_selftests_enabled(cfg: KernelConfig) -> bool | None:
    """Whether the extra (fuzz/full) self-tests run.

    ``CONFIG_CRYPTO_MANAGER_EXTRA_TESTS`` on older kernels, ``CONFIG_CRYPTO_SELFTESTS_FULL``
    on newer ones. They only run when the self-tests run at all.
    """
    basic = selftests_enabled(cfg)
    if basic is False:
        return False
    for option in ("CRYPTO_SELFTESTS_FULL", "CRYPTO_MANAGER_EXTRA_TESTS"):
        if cfg.mentions(option):
            return cfg.is_builtin(option)
    return None if basic is None else False


def user_api_options(cfg: KernelConfig) -> dict[str, str | None]:
    """AF_ALG interface -> ``y``/``m``/``n`` from the config (None when not mentioned)."""
    return {interface: cfg.value(option) for interface, option in USER_API_OPTIONS.items()}


def tcrypt_option(cfg: KernelConfig) -> tuple[str, str] | None:
    """``(option, value)`` of the tcrypt module's option, or None when neither is mentioned."""
    for option in TCRYPT_OPTIONS:
        value = cfg.value(option)
        if value is not None:
            return option, value
    return None


def tcrypt_available(cfg: KernelConfig) -> bool:
    """Whether tcrypt was built (normally as a module: it refuses to stay loaded anyway)."""
    return any(cfg.is_enabled(option) for option in TCRYPT_OPTIONS)
