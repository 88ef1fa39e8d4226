# SPDX-License-Identifier: MIT
"""Library drivers (aes-lib, md5-lib...) classed from the kernel config and the CPU flags."""

from __future__ import annotations

from pathlib import Path

from pytest_hwcrypto.kernel.classify_evidence import LiveFacts, classify_all
from pytest_hwcrypto.kernel.evidence import read_config_options, read_cpu_flags
from pytest_hwcrypto.kernel.lib_classes import classify_library_driver
from pytest_hwcrypto.kernel.procfs import CryptoAlg

# The lines of Debian's 7.3.4+deb13-amd64 config these drivers depend on.
DEBIAN_73 = {
    "CONFIG_CRYPTO_LIB_AES": "y",
    "CONFIG_CRYPTO_LIB_AES_ARCH": "y",
    "CONFIG_CRYPTO_LIB_GF128HASH": "y",
    "CONFIG_CRYPTO_LIB_GF128HASH_ARCH": "y",
    "CONFIG_CRYPTO_LIB_MD5": "y",
    "CONFIG_CRYPTO_LIB_SHA256": "y",
    "CONFIG_CRYPTO_LIB_SHA256_ARCH": "y",
}
AESNI_CPU = frozenset({"sse2", "ssse3", "aes", "pclmulqdq", "avx"})


def decide(
    driver: str,
    config: dict[str, str] | None = DEBIAN_73,
    flags: frozenset[str] = AESNI_CPU,
    machine: str = "x86_64",
) -> tuple[str, str]:
    found = classify_library_driver(driver, config, "/lib/modules/7.3.4/config", machine, flags)
    assert found is not None
    return found.driver_class, found.evidence


def test_aes_modes_with_arch_code_and_aesni_are_cpu_accel_and_say_both() -> None:
    for driver in ("aes-lib", "cbc-aes-lib", "xts-aes-lib", "cmac-aes-lib", "cts-cbc-aes-lib"):
        cls, evidence = decide(driver)
        assert cls == "cpu-accel"
        assert "CONFIG_CRYPTO_LIB_AES_ARCH=y + cpu flag aes" in evidence
        assert "/lib/modules/7.3.4/config" in evidence


def test_gcm_names_the_aes_and_ghash_arch_code() -> None:
    cls, evidence = decide("gcm-aes-lib")
    assert cls == "cpu-accel"
    assert "cpu flag aes" in evidence and "cpu flag pclmulqdq" in evidence


def test_md5_has_no_arch_code_so_it_is_generic() -> None:
    for driver in ("md5-lib", "hmac-md5-lib"):
        cls, evidence = decide(driver)
        assert cls == "generic"
        assert "CONFIG_CRYPTO_LIB_MD5=y" in evidence and "portable C" in evidence


def test_arch_code_without_the_cpu_feature_falls_back_to_generic() -> None:
    cls, evidence = decide("cbc-aes-lib", flags=frozenset({"sse2"}))
    assert cls == "generic"
    assert "none of aes" in evidence


def test_arch_option_unset_is_generic_whatever_the_cpu() -> None:
    config = {**DEBIAN_73, "CONFIG_CRYPTO_LIB_AES_ARCH": "n"}
    cls, evidence = decide("aes-lib", config=config)
    assert cls == "generic"
    assert "CONFIG_CRYPTO_LIB_AES_ARCH is not set" in evidence


def test_no_config_or_unknown_machine_stays_unknown_with_the_reason() -> None:
    cls, evidence = decide("aes-lib", config=None)
    assert cls == "unknown" and "no kernel config was found" in evidence
    cls, evidence = decide("aes-lib", machine="riscv64")
    assert cls == "unknown" and "riscv64" in evidence


def test_arm64_features_decide() -> None:
    cls, evidence = decide(
        "sha256-lib", flags=frozenset({"fp", "asimd", "sha2"}), machine="aarch64"
    )
    assert cls == "cpu-accel" and "cpu flag sha2" in evidence


def test_not_a_library_driver() -> None:
    assert classify_library_driver("cbc-aes-aesni", DEBIAN_73, "c", "x86_64", AESNI_CPU) is None


def test_classify_all_uses_the_config_before_the_capture_and_only_live() -> None:
    algs = [CryptoAlg(name="md5", driver="md5-lib", module="kernel")]
    live = LiveFacts(
        kernel_config=DEBIAN_73, config_source="/proc/config.gz", machine="x86_64",
        cpu_flags=AESNI_CPU,
    )  # fmt: skip
    (found,) = classify_all(algs, live=live)
    assert found.driver_class == "generic"
    assert found.evidence.startswith("kernel config:")
    (offline,) = classify_all(algs)
    assert offline.driver_class == "unknown"


def test_config_and_flags_are_read_from_the_tree(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "cpuinfo").write_text(
        "processor\t: 0\nflags\t\t: fpu sse2 aes pclmulqdq\n\nprocessor\t: 1\nflags\t: fpu\n"
    )
    modules = tmp_path / "lib" / "modules" / "7.3.4"
    modules.mkdir(parents=True)
    (modules / "config").write_text("CONFIG_CRYPTO_LIB_AES_ARCH=y\n# CONFIG_X is not set\n")
    assert read_cpu_flags(tmp_path) == {"fpu", "sse2", "aes", "pclmulqdq"}
    options, source = read_config_options("7.3.4", tmp_path)
    assert options == {"CONFIG_CRYPTO_LIB_AES_ARCH": "y", "CONFIG_X": "n"}
    assert source == str(modules / "config")
    missing, looked = read_config_options("6.1.0", tmp_path)
    assert missing is None and "config-6.1.0" in looked
