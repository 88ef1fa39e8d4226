# SPDX-License-Identifier: MIT
"""kconfig: kernel config parsing and crypto answers; facts: KernelFacts from a fake root.

The config excerpts are real lines: DEBIAN_61 from Debian bookworm's
/boot/config-6.1.0-57-amd64, HOST_618 from this host's 6.18 /proc/config.gz (where
CRYPTO_SELFTESTS exists but hides behind EXPERT, so it is not written at all).
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from pytest_hwcrypto.kernel import facts
from pytest_hwcrypto.kernel.facts import (
    BLACKLISTED,
    BUILTIN,
    LOADED,
    MISSING,
    MODULE,
    UNKNOWN,
    KernelFacts,
    ModuleIndex,
    build_module_index,
    gather_kernel_facts,
    is_crypto_module_path,
    is_user_mode_linux,
    module_name_from_path,
    parse_proc_modules,
    user_api_status,
)
from pytest_hwcrypto.kernel.kconfig import (
    KconfigError,
    extra_selftests_enabled,
    find_kernel_config,
    kernel_config_candidates,
    load_kernel_config,
    parse_kconfig,
    read_kconfig,
    selftests_enabled,
    tcrypt_available,
    tcrypt_option,
    user_api_options,
)
from pytest_hwcrypto.kernel.modprobe import parse_modprobe_conf

DEBIAN_61 = """\
#
# Automatically generated file; DO NOT EDIT.
# Linux/x86 6.1.192 Kernel Configuration
#
CONFIG_CC_VERSION_TEXT="gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0"
CONFIG_LOCALVERSION=""
CONFIG_CRYPTO_FIPS=y
CONFIG_CRYPTO_FIPS_NAME="Linux Kernel Cryptographic API"
CONFIG_CRYPTO_MANAGER=y
CONFIG_CRYPTO_MANAGER2=y
CONFIG_CRYPTO_USER=m
# CONFIG_CRYPTO_MANAGER_DISABLE_TESTS is not set
# CONFIG_CRYPTO_MANAGER_EXTRA_TESTS is not set
CONFIG_CRYPTO_TEST=m
CONFIG_CRYPTO_AES=y
CONFIG_CRYPTO_AES_TI=m
CONFIG_CRYPTO_USER_API=m
CONFIG_CRYPTO_USER_API_HASH=m
CONFIG_CRYPTO_USER_API_SKCIPHER=m
CONFIG_CRYPTO_USER_API_RNG=m
CONFIG_CRYPTO_USER_API_AEAD=m
CONFIG_CRYPTO_AES_NI_INTEL=m
"""

HOST_618 = """\
CONFIG_CC_VERSION_TEXT="gcc (GCC) 15.3.0"
# CONFIG_EXPERT is not set
CONFIG_CRYPTO_MANAGER=y
CONFIG_CRYPTO_MANAGER2=y
# CONFIG_CRYPTO_USER is not set
CONFIG_CRYPTO_AES=y
CONFIG_CRYPTO_AES_TI=y
# CONFIG_CRYPTO_USER_API_HASH is not set
# CONFIG_CRYPTO_USER_API_SKCIPHER is not set
# CONFIG_CRYPTO_USER_API_RNG is not set
# CONFIG_CRYPTO_USER_API_AEAD is not set
CONFIG_CRYPTO_LIB_SHA256_ARCH=y
CONFIG_DEBUG_KERNEL=y
"""

NEW_WITH_TESTS = """\
CONFIG_EXPERT=y
CONFIG_CRYPTO_MANAGER=y
CONFIG_CRYPTO_SELFTESTS=y
CONFIG_CRYPTO_SELFTESTS_FULL=y
CONFIG_CRYPTO_BENCHMARK=m
CONFIG_CRYPTO_USER_API_SKCIPHER=y
"""


# --- parsing -----------------------------------------------------------------------------------


def test_values_of_a_real_debian_config() -> None:
    cfg = parse_kconfig(DEBIAN_61, "config-6.1")
    assert cfg.value("CONFIG_CRYPTO_AES_NI_INTEL") == "m"
    assert cfg.value("CRYPTO_AES") == "y"
    assert cfg.value("CRYPTO_MANAGER_DISABLE_TESTS") == "n"
    assert cfg.value("CC_VERSION_TEXT") == "gcc-12 (Debian 12.2.0-14+deb12u1) 12.2.0"
    assert cfg.value("LOCALVERSION") == ""
    assert cfg.value("CRYPTO_SELFTESTS") is None
    assert cfg.is_module("CRYPTO_AES_TI") and not cfg.is_builtin("CRYPTO_AES_TI")
    assert cfg.is_enabled("CRYPTO_AES") and not cfg.is_enabled("CRYPTO_MANAGER_EXTRA_TESTS")
    assert cfg.mentions("CRYPTO_MANAGER_EXTRA_TESTS") and not cfg.mentions("CRYPTO_SELFTESTS")
    assert cfg.source == "config-6.1"


def test_numbers_escaped_quotes_and_crlf() -> None:
    cfg = parse_kconfig('CONFIG_NR_CPUS=64\r\nCONFIG_CMDLINE="a \\"b\\" c"\r\n')
    assert cfg.value("NR_CPUS") == "64"
    assert cfg.value("CMDLINE") == 'a "b" c'


def test_garbled_line_names_source_and_line() -> None:
    with pytest.raises(KconfigError, match=r"^cfg:3: not a config line: 'CRYPTO_AES=y'"):
        parse_kconfig("# c\nCONFIG_A=y\nCRYPTO_AES=y\n", "cfg")


def test_read_plain_and_gzip(tmp_path: Path) -> None:
    plain = tmp_path / "config-6.1"
    plain.write_text(DEBIAN_61)
    packed = tmp_path / "config.gz"
    packed.write_bytes(gzip.compress(DEBIAN_61.encode()))
    assert read_kconfig(plain).options == read_kconfig(packed).options
    assert read_kconfig(packed).source == str(packed)


@pytest.mark.skipif(not Path("/proc/config.gz").exists(), reason="no /proc/config.gz")
def test_this_kernels_config_parses() -> None:
    cfg = read_kconfig(Path("/proc/config.gz"))
    assert cfg.is_enabled("CRYPTO")


# --- crypto answers ---------------------------------------------------------------------------


def test_selftests_old_option() -> None:
    assert selftests_enabled(parse_kconfig(DEBIAN_61)) is True
    off = parse_kconfig("CONFIG_CRYPTO_MANAGER=y\nCONFIG_CRYPTO_MANAGER_DISABLE_TESTS=y\n")
    assert selftests_enabled(off) is False
    assert extra_selftests_enabled(off) is False


def test_selftests_new_option() -> None:
    cfg = parse_kconfig(NEW_WITH_TESTS)
    assert selftests_enabled(cfg) is True and extra_selftests_enabled(cfg) is True
    off = parse_kconfig("CONFIG_CRYPTO_MANAGER=y\n# CONFIG_CRYPTO_SELFTESTS is not set\n")
    assert selftests_enabled(off) is False


def test_selftests_hidden_new_option_means_off() -> None:
    cfg = parse_kconfig(HOST_618)
    assert selftests_enabled(cfg) is False
    assert extra_selftests_enabled(cfg) is False


def test_selftests_unknown_without_crypto_in_config() -> None:
    cfg = parse_kconfig("CONFIG_NR_CPUS=4\n")
    assert selftests_enabled(cfg) is None and extra_selftests_enabled(cfg) is None


def test_extra_tests_old_option_and_absent() -> None:
    cfg = parse_kconfig(
        DEBIAN_61.replace(
            "# CONFIG_CRYPTO_MANAGER_EXTRA_TESTS is not set", "CONFIG_CRYPTO_MANAGER_EXTRA_TESTS=y"
        )
    )
    assert extra_selftests_enabled(cfg) is True
    tests_on_no_extra = parse_kconfig("CONFIG_CRYPTO_SELFTESTS=y\n")
    assert extra_selftests_enabled(tests_on_no_extra) is False


def test_user_api_and_tcrypt_options() -> None:
    assert user_api_options(parse_kconfig(DEBIAN_61)) == {
        "skcipher": "m",
        "hash": "m",
        "aead": "m",
        "rng": "m",
    }
    assert user_api_options(parse_kconfig(HOST_618)) == {
        "skcipher": "n",
        "hash": "n",
        "aead": "n",
        "rng": "n",
    }
    assert user_api_options(parse_kconfig(NEW_WITH_TESTS))["skcipher"] == "y"
    assert user_api_options(parse_kconfig(NEW_WITH_TESTS))["hash"] is None
    assert tcrypt_option(parse_kconfig(DEBIAN_61)) == ("CONFIG_CRYPTO_TEST", "m")
    assert tcrypt_option(parse_kconfig(NEW_WITH_TESTS)) == ("CONFIG_CRYPTO_BENCHMARK", "m")
    assert tcrypt_option(parse_kconfig(HOST_618)) is None
    assert tcrypt_available(parse_kconfig(DEBIAN_61)) and not tcrypt_available(
        parse_kconfig(HOST_618)
    )


# --- locating the config -------------------------------------------------------------------


def test_candidates_and_first_existing(tmp_path: Path) -> None:
    candidates = kernel_config_candidates("6.1.0-57-amd64", tmp_path)
    assert candidates == [
        tmp_path / "proc/config.gz",
        tmp_path / "boot/config-6.1.0-57-amd64",
        tmp_path / "lib/modules/6.1.0-57-amd64/config",
    ]
    assert find_kernel_config(candidates) is None
    (tmp_path / "boot").mkdir()
    (tmp_path / "boot/config-6.1.0-57-amd64").write_text(DEBIAN_61)
    assert find_kernel_config(candidates) == tmp_path / "boot/config-6.1.0-57-amd64"
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/config.gz").write_bytes(gzip.compress(HOST_618.encode()))
    assert find_kernel_config(candidates) == tmp_path / "proc/config.gz"
    cfg = load_kernel_config("6.1.0-57-amd64", tmp_path)
    assert cfg is not None and cfg.value("CRYPTO_AES_TI") == "y"


def test_load_kernel_config_absent(tmp_path: Path) -> None:
    assert load_kernel_config("6.1.0", tmp_path) is None


# --- facts.py: KernelFacts from a fake root ---------------------------------------------------

# Real lines of Debian 6.1's and UML 6.1.176's module index files.
MODULES_DEP = """\
kernel/arch/x86/crypto/aesni-intel.ko: kernel/crypto/crypto_simd.ko kernel/crypto/cryptd.ko
kernel/crypto/aes_ti.ko:
kernel/crypto/af_alg.ko:
kernel/crypto/algif_hash.ko: kernel/crypto/af_alg.ko
kernel/crypto/algif_skcipher.ko: kernel/crypto/af_alg.ko
kernel/crypto/algif_rng.ko: kernel/crypto/af_alg.ko
kernel/crypto/algif_aead.ko: kernel/crypto/af_alg.ko
kernel/drivers/net/ethernet/intel/e1000e/e1000e.ko.xz:
"""
MODULES_BUILTIN = """\
kernel/crypto/crypto.ko
kernel/crypto/aes_generic.ko
kernel/lib/crypto/libaes.ko
"""
# /proc/modules lines as UML printed them after the capture's modprobes.
PROC_MODULES = """\
algif_skcipher 4567 0 - Live 0x00000000c2dc6000
af_alg 12483 4 algif_rng,algif_aead,algif_hash,algif_skcipher, Live 0x00000000c2dd2000
"""


def fake_root(
    tmp_path: Path,
    *,
    release: str = "6.1.176",
    config: str | None = DEBIAN_61,
    dep: str | None = MODULES_DEP,
    builtin: str | None = MODULES_BUILTIN,
    loaded: str | None = PROC_MODULES,
    fips: str | None = "0\n",
    modprobe: str | None = None,
    cmdline: str = "console=ttyS0\n",
) -> Path:
    def put(relative: str, text: str) -> None:
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    put("proc/sys/kernel/osrelease", release + "\n")
    put("proc/cmdline", cmdline)
    if config is not None:
        put(f"boot/config-{release}", config)
    if dep is not None:
        put(f"lib/modules/{release}/modules.dep", dep)
    if builtin is not None:
        put(f"lib/modules/{release}/modules.builtin", builtin)
    if loaded is not None:
        put("proc/modules", loaded)
    if fips is not None:
        put("proc/sys/crypto/fips_enabled", fips)
    if modprobe is not None:
        put("etc/modprobe.d/crypto.conf", modprobe)
    return tmp_path


def test_gather_kernel_facts_from_a_fake_root(tmp_path: Path) -> None:
    root = fake_root(
        tmp_path,
        modprobe="blacklist aesni-intel\nblacklist e1000e\ninstall algif_aead /bin/false\n",
        cmdline="quiet modprobe.blacklist=algif_rng\n",
    )
    found = gather_kernel_facts(root, machine="x86_64")
    assert (found.release, found.machine) == ("6.1.176", "x86_64")
    assert found.config_source == str(root / "boot/config-6.1.176")
    assert (found.selftests_enabled, found.extra_selftests_enabled) == (True, False)
    assert found.fips_enabled is False and found.tcrypt_available is True
    assert found.user_api == {
        "skcipher": LOADED,
        "hash": MODULE,
        "aead": BLACKLISTED,
        "rng": BLACKLISTED,
    }
    assert [entry.module for entry in found.blacklisted_crypto_modules] == [
        "aesni_intel",
        "algif_aead",
        "algif_rng",
    ]
    assert [entry.module for entry in found.blacklisted_modules] == [
        "aesni_intel",
        "e1000e",
        "algif_aead",
        "algif_rng",
    ]
    assert found.blacklisted_crypto_modules[2].file == str(root / "proc/cmdline")
    assert [found.has_user_api(kind) for kind in ("skcipher", "hash", "aead", "rng")] == [
        True,
        True,
        False,
        False,
    ]


UML_CPUINFO = "processor\t: 0\nvendor_id\t: User Mode Linux\nmodel name\t: UML\nmode\t\t: skas\n"


def test_user_mode_linux_is_recognised_from_cpuinfo() -> None:
    assert is_user_mode_linux(UML_CPUINFO)
    assert not is_user_mode_linux("vendor_id\t: GenuineIntel\nmodel name\t: Xeon\n")


def test_tcrypt_is_not_available_on_user_mode_linux_even_when_built(tmp_path: Path) -> None:
    root = fake_root(tmp_path)
    (root / "proc/cpuinfo").write_text(UML_CPUINFO)
    assert gather_kernel_facts(root).tcrypt_available is False


def test_to_json(tmp_path: Path) -> None:
    found = gather_kernel_facts(
        fake_root(tmp_path, modprobe="blacklist aesni_intel\n"), machine="x86_64"
    )
    item = found.to_json()
    assert list(item)[:2] == ["release", "machine"]
    assert item["release"] == "6.1.176" and item["machine"] == "x86_64"
    assert item["user_api"] == {"skcipher": LOADED, "hash": MODULE, "aead": MODULE, "rng": MODULE}
    assert item["blacklisted_crypto_modules"] == [
        {
            "module": "aesni_intel",
            "file": str(tmp_path / "etc/modprobe.d/crypto.conf"),
            "line": 1,
            "kind": "blacklist",
            "command": None,
        }
    ]
    assert item["selftests_enabled"] is True and item["fips_enabled"] is False


def test_bare_root_gives_unknowns_not_errors(tmp_path: Path) -> None:
    found = gather_kernel_facts(tmp_path)
    assert found.release == os.uname().release
    assert found.machine == os.uname().machine
    assert found.config_source is None and found.selftests_enabled is None
    assert found.fips_enabled is None and found.tcrypt_available is None
    assert set(found.user_api.values()) == {UNKNOWN}
    assert found.has_user_api("skcipher") is None
    assert found.blacklisted_crypto_modules == ()


def test_host_like_root_without_af_alg(tmp_path: Path) -> None:
    # Like this host: 6.18, user API not built, self-tests hidden, no FIPS file.
    root = fake_root(
        tmp_path, release="6.18.44", config=HOST_618, dep=None, builtin=None, loaded="", fips=None
    )
    found = gather_kernel_facts(root)
    assert found.selftests_enabled is False and found.fips_enabled is None
    assert set(found.user_api.values()) == {MISSING}
    assert found.has_user_api("hash") is False


def test_fips_enabled_one(tmp_path: Path) -> None:
    assert gather_kernel_facts(fake_root(tmp_path, fips="1\n")).fips_enabled is True


def test_module_index_under_usr_lib(tmp_path: Path) -> None:
    root = fake_root(tmp_path, dep=None, builtin=None, loaded=None, config=None)
    (root / "usr/lib/modules/6.1.176").mkdir(parents=True)
    (root / "usr/lib/modules/6.1.176/modules.builtin").write_text("kernel/crypto/algif_hash.ko\n")
    assert gather_kernel_facts(root).user_api["hash"] == BUILTIN
    assert gather_kernel_facts(root).user_api["skcipher"] == MISSING


def test_index_beats_config_which_may_name_an_uninstalled_module(tmp_path: Path) -> None:
    root = fake_root(tmp_path, dep="kernel/crypto/algif_hash.ko:\n", builtin="", loaded="")
    status = gather_kernel_facts(root).user_api
    assert status == {"skcipher": MISSING, "hash": MODULE, "aead": MISSING, "rng": MISSING}


def test_user_api_status_from_config_alone() -> None:
    cfg = parse_kconfig(
        "CONFIG_CRYPTO_USER_API_SKCIPHER=y\nCONFIG_CRYPTO_USER_API_HASH=m\n"
        "# CONFIG_CRYPTO_USER_API_AEAD is not set\n"
    )
    blacklist = parse_modprobe_conf("blacklist algif-hash\n")
    assert user_api_status(None, None, cfg) == {
        "skcipher": BUILTIN,
        "hash": MODULE,
        "aead": MISSING,
        "rng": UNKNOWN,
    }
    assert user_api_status(None, None, cfg, blacklist)["hash"] == BLACKLISTED


def test_module_index_and_names() -> None:
    index = build_module_index(MODULES_BUILTIN, MODULES_DEP)
    assert "aes_generic" in index.builtin and "aesni_intel" in index.loadable
    assert "e1000e" in index.loadable and "e1000e" not in index.crypto
    assert {"aesni_intel", "aes_ti", "algif_aead", "libaes", "crypto"} <= index.crypto
    assert module_name_from_path("kernel/arch/x86/crypto/aesni-intel.ko.xz") == "aesni_intel"
    assert module_name_from_path("kernel/crypto/af_alg.ko.zst") == "af_alg"
    assert is_crypto_module_path("kernel/arch/arm64/crypto/aes-ce-blk.ko")
    assert is_crypto_module_path("kernel/drivers/crypto/allwinner/sun8i-ce/sun8i-ce.ko")
    assert not is_crypto_module_path("kernel/arch/x86/kvm/kvm.ko")
    assert ModuleIndex().crypto == frozenset()


def test_parse_proc_modules() -> None:
    assert parse_proc_modules(PROC_MODULES + "\n") == {"algif_skcipher", "af_alg"}


def test_crypto_blacklist_without_index_uses_known_names() -> None:
    entries = parse_modprobe_conf("blacklist sun8i-ce\nblacklist nouveau\nblacklist af_alg\n")
    assert [entry.module for entry in facts.crypto_blacklist_entries(entries, None)] == [
        "sun8i_ce",
        "af_alg",
    ]


def test_kernel_facts_defaults() -> None:
    bare = KernelFacts(release="6.1.176", machine="um")
    assert bare.to_json()["user_api"] == {} and bare.has_user_api("rng") is None
