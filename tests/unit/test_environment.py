# SPDX-License-Identifier: MIT
"""The run's environment: CPU flags that matter, tool versions, the kernel config digest.

The tool lines below are what the tools printed on the UML board (Debian bookworm host
tools, `hwcrypto vm uml --exec '... --version'`, 2026-12-02); the cpuinfo lines are cut
from that board's and this host's /proc/cpuinfo the same day.
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

from pytest_hwcrypto.kernel.environment import (
    config_digest,
    gather_environment,
    parse_cpuinfo,
    tool_version,
    tool_versions,
)

UML_CPUINFO = (
    "processor\t: 0\n"
    "vendor_id\t: User Mode Linux\n"
    "model name\t: UML\n"
    "mode\t\t: skas\n"
    "flags\t\t: fpu vme de pse tsc msr sse sse2 pclmulqdq ssse3 fma aes xsave avx f16c avx2 "
    "sha_ni vaes vpclmulqdq avx512f\n"
)


def test_cpuinfo_keeps_model_and_the_crypto_flags() -> None:
    cpu = parse_cpuinfo(UML_CPUINFO)
    assert cpu == {
        "model": "UML",
        "flags": [
            "aes",
            "avx",
            "avx2",
            "avx512f",
            "pclmulqdq",
            "sha_ni",
            "ssse3",
            "vaes",
            "vpclmulqdq",
        ],
        "cpus": 1,
    }


def test_cpuinfo_of_this_host_has_a_model() -> None:
    cpu = gather_environment()["cpu"]
    assert cpu["model"]
    assert cpu["cpus"] >= 1


def test_tool_versions_from_their_version_lines() -> None:
    assert tool_version("cryptsetup 2.6.1 flags: UDEV BLKID KEYRING KERNEL_CAPI \n") == "2.6.1"
    assert (
        tool_version("OpenSSL 3.0.19 27 Jan 2026 (Library: OpenSSL 3.0.19 27 Jan 2026)\n")
        == "3.0.19"
    )
    assert tool_version("fio-3.33\n") == "3.33"
    assert tool_version("5.0.2\n") == "5.0.2"
    assert tool_version("") is None
    assert tool_version("usage: no version here") is None


def test_an_absent_tool_is_null() -> None:
    outputs = {"cryptsetup": "cryptsetup 2.6.1 flags: UDEV\n", "openssl": None}
    versions = tool_versions(lambda command: outputs.get(command[0]))
    assert versions == {"cryptsetup": "2.6.1", "openssl": None, "fio": None, "lxc": None}


def test_config_digest_of_plain_and_gzipped_config(tmp_path: Path) -> None:
    text = b"CONFIG_CRYPTO=y\nCONFIG_CRYPTO_USER_API_SKCIPHER=m\n"
    plain = tmp_path / "config-6.1"
    plain.write_bytes(text)
    packed = tmp_path / "config.gz"
    packed.write_bytes(gzip.compress(text))
    expected = hashlib.sha256(text).hexdigest()
    assert config_digest(str(plain)) == expected
    assert config_digest(str(packed)) == expected
    assert config_digest(None) is None
    assert config_digest(str(tmp_path / "missing")) is None
