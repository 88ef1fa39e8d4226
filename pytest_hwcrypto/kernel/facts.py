# SPDX-License-Identifier: MIT
"""Facts about the running kernel that decide what the crypto suites can check.

Everything is read from files under a ``root`` directory (``/`` on a real system), so tests
build a fake tree in a temporary directory:

``proc/sys/kernel/osrelease``      kernel release (falls back to ``os.uname()``)
``proc/sys/crypto/fips_enabled``   FIPS mode (absent on kernels without CONFIG_CRYPTO_FIPS)
``proc/config.gz``, ``boot/config-<release>``, ``lib/modules/<release>/config``
``proc/modules``                   loaded modules
``proc/cmdline``                   ``modprobe.blacklist=`` / ``module_blacklist=``
``lib/modules/<release>/modules.builtin`` and ``modules.dep`` (or under ``usr/lib``)
``etc/modprobe.d`` ... ``usr/lib/modprobe.d``
``proc/cpuinfo``                   User-mode Linux, where tcrypt's timed loop never returns
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pytest_hwcrypto.kernel.classify import is_known_module
from pytest_hwcrypto.kernel.kconfig import (
    KernelConfig,
    extra_selftests_enabled,
    load_kernel_config,
    selftests_enabled,
    tcrypt_available,
    user_api_options,
)
from pytest_hwcrypto.kernel.modprobe import (
    DEFAULT_MODPROBE_DIRS,
    BlacklistEntry,
    entries_for,
    find_blacklisted_modules,
    normalize_module_name,
    parse_cmdline_blacklist,
)

USER_API_INTERFACES = ("skcipher", "hash", "aead", "rng")

# How an AF_ALG interface (its algif_* module) is available.
LOADED = "loaded"  # in /proc/modules now
BUILTIN = "builtin"  # compiled into the kernel
MODULE = "module"  # installed module, loaded on demand when a socket binds
BLACKLISTED = "blacklisted"  # installed, but modprobe config keeps it from loading on demand
MISSING = "missing"  # not built / not installed
UNKNOWN = "unknown"  # no module index and no config to tell
_AVAILABLE = (LOADED, BUILTIN, MODULE)

# Directories of modules.dep paths that hold crypto code.
_CRYPTO_MODULE_DIRS = ("kernel/crypto/", "kernel/drivers/crypto/", "kernel/lib/crypto/")
_MODULE_SUFFIXES = (".ko", ".ko.xz", ".ko.zst", ".ko.gz")


@dataclass(frozen=True)
class ModuleIndex:
    """What ``modules.builtin`` and ``modules.dep`` say about one kernel release."""

    builtin: frozenset[str] = frozenset()
    loadable: frozenset[str] = frozenset()
    crypto: frozenset[str] = frozenset()


@dataclass(frozen=True)
class KernelFacts:
    """The kernel's identity and its crypto-relevant configuration."""

    release: str
    machine: str
    config_source: str | None = None
    selftests_enabled: bool | None = None
    extra_selftests_enabled: bool | None = None
    fips_enabled: bool | None = None
    tcrypt_available: bool | None = None
    user_api: dict[str, str] = field(default_factory=dict, hash=False)
    blacklisted_crypto_modules: tuple[BlacklistEntry, ...] = ()
    # Every entry found, crypto or not (Debian alone blacklists dozens of fbdev drivers).
    blacklisted_modules: tuple[BlacklistEntry, ...] = ()

    def has_user_api(self, interface: str) -> bool | None:
        """Whether an AF_ALG socket of ``interface`` can be bound (None: cannot tell)."""
        status = self.user_api.get(interface, UNKNOWN)
        if status == UNKNOWN:
            return None
        return status in _AVAILABLE

    def to_json(self) -> dict[str, object]:
        return {
            "release": self.release,
            "machine": self.machine,
            "config_source": self.config_source,
            "selftests_enabled": self.selftests_enabled,
            "extra_selftests_enabled": self.extra_selftests_enabled,
            "fips_enabled": self.fips_enabled,
            "tcrypt_available": self.tcrypt_available,
            "user_api": dict(self.user_api),
            "blacklisted_crypto_modules": [
                {
                    "module": entry.module,
                    "file": entry.file,
                    "line": entry.line,
                    "kind": entry.kind,
                    "command": entry.command,
                }
                for entry in self.blacklisted_crypto_modules
            ],
        }


def gather_kernel_facts(root: Path = Path("/"), machine: str | None = None) -> KernelFacts:
    """Collect :class:`KernelFacts` from the files under ``root``.

    ``machine`` defaults to ``os.uname().machine``: procfs has no portable file for it.
    """
    release = read_release(root)
    cfg = load_kernel_config(release, root)
    index = read_module_index(root, release)
    blacklist = read_blacklist(root)
    loaded = read_loaded_modules(root)
    return KernelFacts(
        release=release,
        machine=machine or os.uname().machine,
        config_source=cfg.source if cfg else None,
        selftests_enabled=selftests_enabled(cfg) if cfg else None,
        extra_selftests_enabled=extra_selftests_enabled(cfg) if cfg else None,
        fips_enabled=read_fips_enabled(root),
        tcrypt_available=_tcrypt_usable(cfg, root),
        user_api=user_api_status(loaded, index, cfg, blacklist),
        blacklisted_crypto_modules=tuple(crypto_blacklist_entries(blacklist, index)),
        blacklisted_modules=tuple(blacklist),
    )


def is_user_mode_linux(cpuinfo: str) -> bool:
    """UML's /proc/cpuinfo says `vendor_id : User Mode Linux` and `model name : UML`."""
    return bool(
        re.search(r"^vendor_id\s*:\s*User Mode Linux", cpuinfo, re.MULTILINE)
        or re.search(r"^model name\s*:\s*UML\s*$", cpuinfo, re.MULTILINE)
    )


def _tcrypt_usable(cfg: KernelConfig | None, root: Path) -> bool | None:
    """Built, and on a kernel where it can run: UML builds it but never returns from it."""
    try:
        if is_user_mode_linux((root / "proc/cpuinfo").read_text(errors="replace")):
            return False
    except OSError:
        pass
    return tcrypt_available(cfg) if cfg else None


def read_release(root: Path = Path("/")) -> str:
    text = _read_text(root / "proc" / "sys" / "kernel" / "osrelease")
    return text.strip() if text else os.uname().release


def read_fips_enabled(root: Path = Path("/")) -> bool | None:
    """FIPS mode from procfs; None when the kernel has no FIPS support (file absent)."""
    text = _read_text(root / "proc" / "sys" / "crypto" / "fips_enabled")
    if text is None or not text.strip():
        return None
    return text.strip() != "0"


def read_loaded_modules(root: Path = Path("/")) -> frozenset[str] | None:
    """Names of loaded modules; None when /proc/modules is absent (no module support)."""
    text = _read_text(root / "proc" / "modules")
    return None if text is None else parse_proc_modules(text)


def parse_proc_modules(text: str) -> frozenset[str]:
    """Module names from /proc/modules text (first column of each line)."""
    names = (line.split()[0] for line in text.splitlines() if line.split())
    return frozenset(normalize_module_name(name) for name in names)


def read_module_index(root: Path, release: str) -> ModuleIndex | None:
    """modules.builtin and modules.dep of ``release``; None when neither exists."""
    for modules_dir in _module_dirs(root, release):
        builtin_text = _read_text(modules_dir / "modules.builtin")
        dep_text = _read_text(modules_dir / "modules.dep")
        if builtin_text is not None or dep_text is not None:
            return build_module_index(builtin_text or "", dep_text or "")
    return None


def _module_dirs(root: Path, release: str) -> list[Path]:
    # Merged-/usr systems have /lib -> /usr/lib; others keep only one of the two.
    return [root / "lib" / "modules" / release, root / "usr" / "lib" / "modules" / release]


def build_module_index(builtin_text: str, dep_text: str) -> ModuleIndex:
    """Index from the texts of modules.builtin (one path per line) and modules.dep."""
    builtin_paths = [line.strip() for line in builtin_text.splitlines() if line.strip()]
    dep_paths = [line.split(":", 1)[0].strip() for line in dep_text.splitlines() if ":" in line]
    crypto = {
        module_name_from_path(path)
        for path in builtin_paths + dep_paths
        if is_crypto_module_path(path)
    }
    return ModuleIndex(
        builtin=frozenset(module_name_from_path(path) for path in builtin_paths),
        loadable=frozenset(module_name_from_path(path) for path in dep_paths),
        crypto=frozenset(crypto),
    )


def module_name_from_path(path: str) -> str:
    """``kernel/arch/x86/crypto/aesni-intel.ko.xz`` -> ``aesni_intel``."""
    name = path.rsplit("/", 1)[-1]
    for suffix in sorted(_MODULE_SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return normalize_module_name(name)


def is_crypto_module_path(path: str) -> bool:
    """Modules under crypto/, drivers/crypto/, lib/crypto/ or arch/<arch>/crypto/."""
    if path.startswith(_CRYPTO_MODULE_DIRS):
        return True
    parts = path.split("/")
    return len(parts) > 3 and parts[:2] == ["kernel", "arch"] and parts[3] == "crypto"


def read_blacklist(root: Path = Path("/")) -> list[BlacklistEntry]:
    """Entries of the modprobe.d directories and the kernel command line under ``root``."""
    dirs = [root / directory.relative_to("/") for directory in DEFAULT_MODPROBE_DIRS]
    entries = find_blacklisted_modules(dirs)
    cmdline_path = root / "proc" / "cmdline"
    cmdline = _read_text(cmdline_path)
    if cmdline:
        entries.extend(parse_cmdline_blacklist(cmdline, str(cmdline_path)))
    return entries


def crypto_blacklist_entries(
    entries: Iterable[BlacklistEntry], index: ModuleIndex | None
) -> list[BlacklistEntry]:
    """The entries that disable crypto modules (by module location or known name)."""
    crypto = index.crypto if index else frozenset()
    return [entry for entry in entries if entry.module in crypto or _is_crypto_name(entry.module)]


def _is_crypto_name(module: str) -> bool:
    return module.startswith("algif_") or module == "af_alg" or is_known_module(module)


def user_api_status(
    loaded: frozenset[str] | None,
    index: ModuleIndex | None,
    cfg: KernelConfig | None,
    blacklist: Iterable[BlacklistEntry] = (),
) -> dict[str, str]:
    """AF_ALG interface -> how it is available (``loaded``, ``builtin``, ``module``...)."""
    entries = list(blacklist)
    configured = user_api_options(cfg) if cfg else {}
    return {
        interface: _interface_status(
            f"algif_{interface}", loaded, index, configured.get(interface), entries
        )
        for interface in USER_API_INTERFACES
    }


def _interface_status(
    module: str,
    loaded: frozenset[str] | None,
    index: ModuleIndex | None,
    config_value: str | None,
    blacklist: list[BlacklistEntry],
) -> str:
    if loaded is not None and module in loaded:
        return LOADED
    if index is not None:
        # The installed module tree is the truth: a config "=m" module may not be installed.
        status = _status_from_index(module, index)
    else:
        status = _status_from_config(config_value)
    if status == MODULE and entries_for(blacklist, module):
        return BLACKLISTED
    return status


def _status_from_index(module: str, index: ModuleIndex) -> str:
    if module in index.builtin:
        return BUILTIN
    if module in index.loadable:
        return MODULE
    return MISSING


def _status_from_config(value: str | None) -> str:
    return {"y": BUILTIN, "m": MODULE, "n": MISSING}.get(value or "", UNKNOWN)


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
