# SPDX-License-Identifier: MIT
"""What else a run's numbers depend on: the CPU, the kernel config, the tools, the plugin.

Written into the results file (`environment`, `kernel.config_sha256`) so two result files
can be told apart before their numbers are compared: another CPU (AES instructions or not),
another kernel config, another cryptsetup. Parsing is pure (`parse_cpuinfo`,
`tool_version`); `gather_environment` reads /proc/cpuinfo and asks each tool its version.
"""

from __future__ import annotations

import gzip
import hashlib
import platform
import shutil
import subprocess
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

# CPU flags that decide which crypto drivers a kernel can register, as /proc/cpuinfo names
# them: x86 `flags` (AES-NI, carry-less multiply, SHA, the vector widths drivers need) and
# arm64 `Features` (the ARMv8 crypto extensions, NEON as asimd).
CRYPTO_CPU_FLAGS = frozenset(
    {
        # x86
        "aes",
        "vaes",
        "pclmulqdq",
        "vpclmulqdq",
        "sha_ni",
        "ssse3",
        "avx",
        "avx2",
        "avx512f",
        "avx512vl",
        "gfni",
        "rdrand",
        "rdseed",
        # arm64 (aes shared with x86)
        "pmull",
        "sha1",
        "sha2",
        "sha3",
        "sha512",
        "sm3",
        "sm4",
        "asimd",
        "neon",
        "crc32",
    }
)

# tool -> the command that prints its version (first line holds it)
TOOL_VERSION_COMMANDS: Mapping[str, tuple[str, ...]] = {
    "cryptsetup": ("cryptsetup", "--version"),
    "openssl": ("openssl", "version"),
    "fio": ("fio", "--version"),
    "lxc": ("lxc-start", "--version"),
}
_VERSION_TIMEOUT = 10.0
PLUGIN_DISTRIBUTION = "pytest-hwcrypto"


def parse_cpuinfo(text: str) -> dict[str, Any]:
    """`{"model": ..., "flags": [crypto-relevant flags, sorted], "cpus": N}` from /proc/cpuinfo."""
    model: str | None = None
    flags: set[str] = set()
    cpus = 0
    for line in text.splitlines():
        key, separator, value = line.partition(":")
        if not separator:
            continue
        key = key.strip().lower()
        if key == "processor":
            cpus += 1
        elif key in ("model name", "cpu model", "hardware") and model is None:
            model = value.strip() or None
        elif key in ("flags", "features"):
            flags.update(value.split())
    return {"model": model, "flags": sorted(flags & CRYPTO_CPU_FLAGS), "cpus": cpus or None}


def tool_version(output: str) -> str | None:
    """The version in a tool's version line: `cryptsetup 2.6.1 flags: ...` -> 2.6.1,
    `OpenSSL 3.0.19 27 Jan 2026 ...` -> 3.0.19, `fio-3.33` -> 3.33, `5.0.2` -> 5.0.2."""
    first = output.strip().splitlines()[0] if output.strip() else ""
    for word in first.replace("-", " ").split():
        word = word.lstrip("v")
        if word[:1].isdigit() and "." in word:
            return word
    return None


def config_digest(config_source: str | None) -> str | None:
    """SHA-256 of the kernel config text (decompressed: /proc/config.gz), or None."""
    if not config_source:
        return None
    path = Path(config_source)
    try:
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
    except (OSError, EOFError, gzip.BadGzipFile):
        return None
    return hashlib.sha256(data).hexdigest()


Runner = Callable[[tuple[str, ...]], str | None]


def _run_version(command: tuple[str, ...]) -> str | None:
    if shutil.which(command[0]) is None:
        return None
    try:
        completed = subprocess.run(
            command, capture_output=True, text=True, timeout=_VERSION_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return completed.stdout or completed.stderr


def tool_versions(run: Runner = _run_version) -> dict[str, str | None]:
    """Each tool's version; None when it is not installed (or says nothing we can read)."""
    versions: dict[str, str | None] = {}
    for tool, command in TOOL_VERSION_COMMANDS.items():
        output = run(command)
        versions[tool] = tool_version(output) if output else None
    return versions


def plugin_version() -> str | None:
    return _distribution_version(PLUGIN_DISTRIBUTION)


def plugin_path() -> str:
    """The directory this package was imported from: a checkout or site-packages -- which
    install a run used (a board runs the caller's interpreter, so it says the same)."""
    return str(Path(__file__).resolve().parents[1])


def gather_environment(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict[str, Any]:
    """CPU, tool and plugin versions of this machine, where the plugin was imported from,
    and the Python and pytest it ran on (board and seed are the run's: the caller adds
    them)."""
    try:
        cpu = parse_cpuinfo(cpuinfo.read_text(errors="replace"))
    except OSError:
        cpu = {"model": None, "flags": [], "cpus": None}
    return {
        "cpu": cpu,
        "tools": tool_versions(),
        "plugin_version": plugin_version(),
        "plugin_path": plugin_path(),
        "python_version": platform.python_version(),
        "pytest_version": _distribution_version("pytest"),
    }


def _distribution_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
