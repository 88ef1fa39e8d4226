# SPDX-License-Identifier: MIT
"""Read what the running kernel says about its crypto drivers beyond /proc/crypto.

* sysfs: ``/sys/module/<m>/drivers/<bus>:<name>`` links a module to the bus drivers it
  registered; each bus driver's directory holds links to the devices bound to it. A module
  with a bound device drives hardware outside the CPU (virtio_crypto -> virtio1; sun8i_ce
  -> 1c15000.crypto). CPU-instruction modules (aesni_intel, aes_ce_blk) bind no device.
* the device tree (``/sys/firmware/devicetree`` through each platform device's
  ``of_node``): the ``compatible`` strings of nodes bound to a driver, so a built-in
  engine (``module : kernel``, no /sys/module link) can still be named.
* the kernel's build config (/proc/config.gz, /boot/config-<release>, the modules
  directory's ``config``) and /proc/cpuinfo's flags: which library drivers run CPU code.
* crypto_user: each driver's ``cru_flags`` (CRYPTO_ALG_KERN_DRIVER_ONLY marks drivers of
  devices). Optional: without crypto_user.ko (or without permission) the note says so.

Every reader takes a root directory, so tests build a fake tree; nothing here judges.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Callable

from pytest_hwcrypto.kernel.classify_evidence import BoundDevice, LiveFacts
from pytest_hwcrypto.kernel.crypto_user import CryptoUser, CryptoUserError
from pytest_hwcrypto.kernel.kconfig import (
    KconfigError,
    find_kernel_config,
    kernel_config_candidates,
    read_kconfig,
)
from pytest_hwcrypto.kernel.modprobe import normalize_module_name
from pytest_hwcrypto.kernel.procfs import CryptoAlg

SYS = Path("/sys")
BUILTIN_MODULE = "kernel"
# Files every bus driver directory has; the rest are links to bound devices.
_DRIVER_DIR_FILES = frozenset({"bind", "unbind", "uevent", "module", "new_id", "remove_id"})

FlagReader = Callable[[Sequence[str]], "tuple[dict[str, int], tuple[str, ...]]"]


def gather_live_facts(
    algs: Iterable[CryptoAlg],
    sys_root: Path = SYS,
    read_flags: FlagReader | None = None,
    root: Path = Path("/"),
) -> LiveFacts:
    """sysfs, device-tree, crypto_user, kernel config and CPU facts for ``algs``'s drivers."""
    listed = list(algs)
    modules = {
        normalize_module_name(alg.module)
        for alg in listed
        if alg.module and normalize_module_name(alg.module) != BUILTIN_MODULE
    }
    devices = {module: bound_devices(module, sys_root) for module in sorted(modules)}
    reader = read_flags if read_flags is not None else read_crypto_user_flags
    flags, notes = reader([alg.driver for alg in listed])
    uname = os.uname()
    config, config_source = read_config_options(uname.release, root)
    return LiveFacts(
        module_devices={module: found for module, found in devices.items() if found},
        flags=flags,
        bound_compatibles=bound_compatibles(sys_root),
        notes=notes,
        kernel_config=config,
        config_source=config_source,
        machine=uname.machine,
        cpu_flags=read_cpu_flags(root),
    )


def read_config_options(release: str, root: Path = Path("/")) -> tuple[dict[str, str] | None, str]:
    """The running kernel's config options and where they were read; when none is found,
    None and the places looked at."""
    candidates = kernel_config_candidates(release, root)
    path = find_kernel_config(candidates)
    if path is not None:
        try:
            return dict(read_kconfig(path).options), str(path)
        except (OSError, KconfigError):
            pass
    return None, "looked for " + ", ".join(str(c) for c in candidates)


def read_cpu_flags(root: Path = Path("/")) -> frozenset[str]:
    """The CPU's feature flags from /proc/cpuinfo (x86 ``flags``, ARM ``Features``) of its
    first processor; empty when unreadable."""
    try:
        text = (root / "proc" / "cpuinfo").read_text(errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def bound_devices(module: str, sys_root: Path = SYS) -> tuple[BoundDevice, ...]:
    """Devices bound to the bus drivers of ``module`` (``[]`` when it registered none)."""
    drivers_dir = sys_root / "module" / normalize_module_name(module) / "drivers"
    found: list[BoundDevice] = []
    for link in _entries(drivers_dir):
        bus, _, bus_driver = link.name.partition(":")
        if not bus_driver:
            continue
        for entry in _entries(link):
            if entry.name in _DRIVER_DIR_FILES or not entry.is_symlink():
                continue
            found.append(BoundDevice(bus=bus, device=entry.name, bus_driver=bus_driver))
    return tuple(found)


def bound_compatibles(sys_root: Path = SYS) -> dict[str, str]:
    """First ``compatible`` string of each bound platform device with a device-tree node."""
    found: dict[str, str] = {}
    for device in _entries(sys_root / "bus" / "platform" / "devices"):
        driver = device / "driver"
        compatible = device / "of_node" / "compatible"
        if not driver.exists() or not compatible.exists():
            continue
        try:
            first = compatible.read_bytes().split(b"\0", 1)[0].decode(errors="replace")
            bus_driver = os.path.basename(os.readlink(driver))
        except OSError:
            continue
        if first:
            found.setdefault(first, bus_driver)
    return found


def read_crypto_user_flags(drivers: Sequence[str]) -> tuple[dict[str, int], tuple[str, ...]]:
    """``cru_flags`` per driver through crypto_user; unavailable -> ``{}`` and a note."""
    flags: dict[str, int] = {}
    try:
        with CryptoUser() as netlink:
            for driver in dict.fromkeys(drivers):
                try:
                    flags[driver] = netlink.report(driver).flags
                except (CryptoUserError, ValueError):
                    continue  # an unused template instance, a name too long: no flag
    except CryptoUserError as error:
        return flags, (f"crypto_user: no flags read ({error})",)
    return flags, ()


def _entries(directory: Path) -> list[Path]:
    try:
        return sorted(directory.iterdir())
    except OSError:
        return []
