# SPDX-License-Identifier: MIT
"""classify: driver class from the rule table, on real captures and on kernel driver names.

The hardware names below are cra_driver_name strings and module names of real kernels
(arch/*/crypto, drivers/crypto; x86 ones also seen in Debian's 6.1 modules), so a rule that
stops matching one of them is a regression.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.kernel.classify import (
    DRIVER_CLASS_RULES,
    DRIVER_CLASSES,
    classify_driver,
    combine_classes,
    inner_drivers,
    is_hardware,
    is_known_module,
    is_offload,
    matching_rule,
    split_template,
)
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.vocabulary import DriverClass

CAPTURES = Path(__file__).resolve().parent.parent / "data" / "proc_crypto"
UML = CAPTURES / "uml-6.1.176.txt"
UML_TEMPLATES = CAPTURES / "uml-6.1.176-templates.txt"
HOST = CAPTURES / "host-6.18.44-fc-v782.txt"


def class_in_capture(path: Path, driver: str) -> str:
    (alg,) = [alg for alg in read_proc_crypto(path) if alg.driver == driver]
    return classify_driver(alg.driver, alg.module or "")


# --- real captures ---------------------------------------------------------------------------


def test_uml_aes_generic_is_generic() -> None:
    assert class_in_capture(UML, "aes-generic") == DriverClass.GENERIC


def test_uml_aes_fixed_time_is_generic() -> None:
    assert class_in_capture(UML_TEMPLATES, "aes-fixed-time") == DriverClass.GENERIC


@pytest.mark.parametrize("path", [UML, UML_TEMPLATES], ids=lambda path: path.name)
def test_user_mode_linux_has_only_generic_software(path: Path) -> None:
    # UML has no crypto hardware and no arch-optimised crypto: everything must be generic.
    classes = {
        alg.driver: classify_driver(alg.driver, alg.module or "") for alg in read_proc_crypto(path)
    }
    assert {driver for driver, cls in classes.items() if cls != DriverClass.GENERIC} == set()


@pytest.mark.parametrize(
    "driver",
    [
        "xts(ecb(aes-generic))",
        "xts(ecb(aes-fixed-time))",
        "cryptd(cbc(aes-generic))",
        "authenc(hmac(sha256-generic),cryptd(cbc(aes-generic)))",
        "rfc7539(chacha20-generic,poly1305-generic)",
        "ccm_base(ctr(aes-fixed-time),cbcmac(aes-fixed-time))",
        "rfc4106(gcm_base(ctr(aes-fixed-time),ghash-generic))",
        "drbg_nopr_hmac_sha512",
        "jitterentropy_rng",
        "sha3-512-generic",
    ],
)
def test_uml_template_and_rng_drivers_are_generic(driver: str) -> None:
    assert class_in_capture(UML_TEMPLATES, driver) == DriverClass.GENERIC


def test_host_library_wrappers_are_unknown_not_generic() -> None:
    # sha256-lib runs SHA-NI on this host (CONFIG_CRYPTO_LIB_SHA256_ARCH=y): not portable C.
    unknown = {
        alg.driver
        for alg in read_proc_crypto(HOST)
        if classify_driver(alg.driver, alg.module or "") == DriverClass.UNKNOWN
    }
    assert unknown == {
        "crc32c-lib",
        "md5-lib",
        "sha1-lib",
        "sha224-lib",
        "sha256-lib",
        "sha384-lib",
        "sha512-lib",
        "hmac-md5-lib",
        "hmac-sha1-lib",
        "hmac-sha224-lib",
        "hmac-sha256-lib",
        "hmac-sha384-lib",
        "hmac-sha512-lib",
    }


def test_host_lskcipher_template_and_drbg_are_generic() -> None:
    assert class_in_capture(HOST, "cbc(ecb(aes-fixed-time))") == DriverClass.GENERIC
    assert class_in_capture(HOST, "drbg_pr_ctr_aes256") == DriverClass.GENERIC
    assert class_in_capture(HOST, "lzo-rle-scomp") == DriverClass.GENERIC
    assert class_in_capture(HOST, "ecb-cipher_null") == DriverClass.GENERIC


# --- kernel driver names -----------------------------------------------------------------------

KNOWN = [
    # generic C
    ("aes-generic", "kernel", DriverClass.GENERIC),
    ("sha256-generic", "kernel", DriverClass.GENERIC),
    ("aes-fixed-time", "aes_ti", DriverClass.GENERIC),
    ("cbc(aes-generic)", "cbc", DriverClass.GENERIC),
    ("hmac(sha256-generic)", "hmac", DriverClass.GENERIC),
    ("pkcs1pad(rsa-generic,sha256)", "kernel", DriverClass.GENERIC),
    ("ansi_cprng", "ansi_cprng", DriverClass.GENERIC),
    ("aegis128-generic", "aegis128", DriverClass.GENERIC),
    # x86
    ("xts-aes-aesni", "aesni_intel", DriverClass.CPU_ACCEL),
    ("__xts-aes-aesni", "aesni_intel", DriverClass.CPU_ACCEL),
    ("aes-aesni", "kernel", DriverClass.CPU_ACCEL),
    ("__generic-gcm-aesni", "aesni_intel", DriverClass.CPU_ACCEL),
    ("xts-aes-vaes-avx10_512", "kernel", DriverClass.CPU_ACCEL),
    ("sha256-avx2", "sha256_ssse3", DriverClass.CPU_ACCEL),
    ("sha256-ni", "kernel", DriverClass.CPU_ACCEL),
    ("sha1-ssse3", "sha1_ssse3", DriverClass.CPU_ACCEL),
    ("sha512-avx", "kernel", DriverClass.CPU_ACCEL),
    ("ghash-clmulni", "ghash_clmulni_intel", DriverClass.CPU_ACCEL),
    ("__ghash-pclmulqdqni", "kernel", DriverClass.CPU_ACCEL),
    ("polyval-clmulni", "kernel", DriverClass.CPU_ACCEL),
    ("crc32c-intel", "crc32c_intel", DriverClass.CPU_ACCEL),
    ("crc32-pclmul", "kernel", DriverClass.CPU_ACCEL),
    ("crct10dif-pclmul", "crct10dif_pclmul", DriverClass.CPU_ACCEL),
    ("chacha20-simd", "chacha_x86_64", DriverClass.CPU_ACCEL),
    ("poly1305-simd", "kernel", DriverClass.CPU_ACCEL),
    ("nhpoly1305-avx2", "kernel", DriverClass.CPU_ACCEL),
    ("__cbc-serpent-avx2", "serpent_avx2", DriverClass.CPU_ACCEL),
    ("__ecb-camellia-aesni-avx2", "kernel", DriverClass.CPU_ACCEL),
    ("__cbc-twofish-avx", "kernel", DriverClass.CPU_ACCEL),
    ("blake2s-256-x86", "kernel", DriverClass.CPU_ACCEL),
    ("curve25519-x86", "curve25519_x86_64", DriverClass.CPU_ACCEL),
    ("des3_ede-asm", "des3_ede_x86_64", DriverClass.CPU_ACCEL),
    ("aes-padlock", "padlock_aes", DriverClass.CPU_ACCEL),
    ("sha256-padlock-nano", "kernel", DriverClass.CPU_ACCEL),
    ("cryptd(__xts-aes-aesni)", "cryptd", DriverClass.CPU_ACCEL),
    ("gcm_base(ctr(aes-aesni),ghash-clmulni)", "gcm", DriverClass.CPU_ACCEL),
    # arm / arm64
    ("aes-ce", "aes_ce_cipher", DriverClass.CPU_ACCEL),
    ("xts-aes-ce", "kernel", DriverClass.CPU_ACCEL),
    ("cbc-aes-neonbs", "kernel", DriverClass.CPU_ACCEL),
    ("xts-aes-neon", "kernel", DriverClass.CPU_ACCEL),
    ("sha256-ce", "sha2_ce", DriverClass.CPU_ACCEL),
    ("sha512-ce", "kernel", DriverClass.CPU_ACCEL),
    ("sha256-arm64-neon", "kernel", DriverClass.CPU_ACCEL),
    ("sha256-arm64", "sha256_arm64", DriverClass.CPU_ACCEL),
    ("ghash-ce", "ghash_ce", DriverClass.CPU_ACCEL),
    ("gcm-aes-ce", "kernel", DriverClass.CPU_ACCEL),
    ("chacha20-neon", "chacha_neon", DriverClass.CPU_ACCEL),
    ("polyval-ce", "polyval_ce", DriverClass.CPU_ACCEL),
    ("sm3-ce", "kernel", DriverClass.CPU_ACCEL),
    ("cbc-sm4-ce", "sm4_ce", DriverClass.CPU_ACCEL),
    ("crct10dif-arm64-ce", "kernel", DriverClass.CPU_ACCEL),
    ("crc32c-arm64-ce", "kernel", DriverClass.CPU_ACCEL),
    ("aegis128-simd", "aegis128", DriverClass.CPU_ACCEL),
    ("xts(ecb(aes-ce))", "xts", DriverClass.CPU_ACCEL),
    # other CPUs
    ("cbc-aes-s390", "aes_s390", DriverClass.CPU_ACCEL),
    ("sha256-s390", "kernel", DriverClass.CPU_ACCEL),
    ("p8_aes_cbc", "vmx_crypto", DriverClass.CPU_ACCEL),
    ("xts-aes-riscv64-zvkned-zvbb-zvkg", "kernel", DriverClass.CPU_ACCEL),
    # offload engines
    ("cbc-aes-sun8i-ce", "sun8i_ce", DriverClass.OFFLOAD),
    ("cbc-aes-sun8i-ce", "kernel", DriverClass.OFFLOAD),
    ("sun8i-ce-prng", "kernel", DriverClass.OFFLOAD),
    ("ecb-aes-sun8i-ss", "kernel", DriverClass.OFFLOAD),
    ("cbc-aes-sun4i-ss", "sun4i_ss", DriverClass.OFFLOAD),
    ("mv-cbc-aes", "marvell_cesa", DriverClass.OFFLOAD),
    ("mv-hmac-sha1", "mv_cesa", DriverClass.OFFLOAD),
    ("cbc-aes-caam", "caam_jr", DriverClass.OFFLOAD),
    ("xts-aes-caam-qi2", "kernel", DriverClass.OFFLOAD),
    ("authenc-hmac-sha1-cbc-aes-talitos", "talitos", DriverClass.OFFLOAD),
    ("qat_aes_cbc", "intel_qat", DriverClass.OFFLOAD),
    ("qat-rsa", "kernel", DriverClass.OFFLOAD),
    ("cbc-aes-ccp", "ccp_crypto", DriverClass.OFFLOAD),
    ("xts-aes-ccree", "ccree", DriverClass.OFFLOAD),
    ("cbc-aes-omap", "omap_aes_driver", DriverClass.OFFLOAD),
    ("omap-sha256", "omap_sham", DriverClass.OFFLOAD),
    ("cbc-des3-omap", "kernel", DriverClass.OFFLOAD),
    ("atmel-cbc-aes", "atmel_aes", DriverClass.OFFLOAD),
    ("atmel-sha256", "kernel", DriverClass.OFFLOAD),
    ("atmel-cbc-tdes", "kernel", DriverClass.OFFLOAD),
    ("stm32-cbc-aes", "stm32_cryp", DriverClass.OFFLOAD),
    ("stm32-sha256", "kernel", DriverClass.OFFLOAD),
    ("ecb-aes-rk", "rk_crypto", DriverClass.OFFLOAD),
    ("rk-sha256", "kernel", DriverClass.OFFLOAD),
    ("safexcel-cbc-aes", "crypto_safexcel", DriverClass.OFFLOAD),
    ("virtio_crypto_aes_cbc", "virtio_crypto", DriverClass.OFFLOAD),
    ("virtio-crypto-rsa", "kernel", DriverClass.OFFLOAD),
    ("cbc-aes-nx", "nx_crypto", DriverClass.OFFLOAD),
    ("sha256-nx", "kernel", DriverClass.OFFLOAD),
    ("hisi_sec_cbc(aes)", "hisi_sec2", DriverClass.OFFLOAD),
    ("hisi_sec_cbc(aes)", "kernel", DriverClass.OFFLOAD),
    ("hpre-rsa", "kernel", DriverClass.OFFLOAD),
    ("cbc-aes-keembay-ocs", "kernel", DriverClass.OFFLOAD),
    ("cbc-aes-gxl", "amlogic_gxl_crypto", DriverClass.OFFLOAD),
    ("cbc(aes)-ixp4xx", "kernel", DriverClass.OFFLOAD),
    ("n5_cts(cbc(aes))", "kernel", DriverClass.OFFLOAD),
    ("authenc(hmac(sha1),cbc(aes))-sa2ul", "kernel", DriverClass.OFFLOAD),
    ("hmac(sha256-sun8i-ce)", "hmac", DriverClass.OFFLOAD),
    ("authenc(hmac(sha1-ce),cbc(aes-caam))", "authenc", DriverClass.OFFLOAD),
]


@pytest.mark.parametrize(
    ("driver", "module", "expected"),
    KNOWN,
    ids=[f"{driver}@{module}" for driver, module, _ in KNOWN],
)
def test_known_driver_names(driver: str, module: str, expected: str) -> None:
    assert classify_driver(driver, module) == expected


@pytest.mark.parametrize(
    ("driver", "module"),
    [
        ("mystery-aes", "kernel"),
        ("mystery-aes", "vendor_crypto"),
        ("sha256", "kernel"),
        ("sha256-lib", "kernel"),
        ("aes-lib", "kernel"),
        ("cbc(mystery-aes)", "cbc"),
        ("gcm_base(ctr(aes-generic),mystery-ghash)", "gcm"),
        ("x(aes-generic))", "kernel"),
        ("()", "kernel"),
        ("", ""),
    ],
)
def test_unknown_stays_unknown(driver: str, module: str) -> None:
    assert classify_driver(driver, module) == DriverClass.UNKNOWN


def test_module_decides_before_the_driver_name() -> None:
    # A device module registers only device implementations, whatever they are called.
    assert classify_driver("mystery-aes", "sun8i-ce") == DriverClass.OFFLOAD
    assert classify_driver("mystery-aes", "aesni-intel") == DriverClass.CPU_ACCEL


def test_template_modules_do_not_decide() -> None:
    assert classify_driver("xts(ecb(aes-aesni))", "xts") == DriverClass.CPU_ACCEL
    assert classify_driver("xts(ecb(aes-generic))", "xts") == DriverClass.GENERIC


# --- the pieces ---------------------------------------------------------------------------


def test_split_template() -> None:
    assert split_template("xts(ecb(aes-generic))") == ("xts", ["ecb(aes-generic)"])
    assert split_template("gcm_base(ctr(aes-generic),ghash-generic)") == (
        "gcm_base",
        ["ctr(aes-generic)", "ghash-generic"],
    )
    assert split_template("aes-generic") is None
    assert split_template("cbc(aes)-ixp4xx") is None
    assert split_template("(aes)") is None
    assert split_template("x(a,)") is None


def test_inner_drivers_flattens_nested_templates_left_to_right() -> None:
    assert inner_drivers("authenc(hmac(sha256-generic),cryptd(cbc(aes-generic)))") == [
        "sha256-generic",
        "aes-generic",
    ]
    assert inner_drivers("pkcs1pad(rsa-generic,sha256)") == ["rsa-generic"]
    assert inner_drivers("aes-generic") == []


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        ([DriverClass.GENERIC, DriverClass.GENERIC], DriverClass.GENERIC),
        ([DriverClass.GENERIC, DriverClass.CPU_ACCEL], DriverClass.CPU_ACCEL),
        ([DriverClass.CPU_ACCEL, DriverClass.OFFLOAD, DriverClass.GENERIC], DriverClass.OFFLOAD),
        ([DriverClass.CPU_ACCEL, DriverClass.UNKNOWN], DriverClass.UNKNOWN),
        ([DriverClass.OFFLOAD, DriverClass.UNKNOWN], DriverClass.OFFLOAD),
        ([], DriverClass.UNKNOWN),
    ],
)
def test_combine_classes(parts: list[str], expected: str) -> None:
    assert combine_classes(parts) == expected


def test_is_hardware_and_is_offload() -> None:
    assert [is_hardware(cls) for cls in DRIVER_CLASSES] == [False, True, True, False]
    assert [is_offload(cls) for cls in DRIVER_CLASSES] == [False, False, True, False]


def test_matching_rule_says_which_hardware() -> None:
    rule = matching_rule("cbc-aes-sun8i-ce", "kernel")
    assert rule is not None and "Allwinner" in rule.what
    assert matching_rule("xts(ecb(aes-generic))", "xts") is None


def test_is_known_module_accepts_either_spelling() -> None:
    assert is_known_module("aesni-intel") and is_known_module("marvell_cesa")
    assert not is_known_module("e1000e")


def test_rule_table_is_well_formed() -> None:
    for rule in DRIVER_CLASS_RULES:
        assert rule.driver_class in DRIVER_CLASSES, rule
        assert rule.what, rule
        assert rule.modules or rule.drivers, rule
        assert all("-" not in module for module in rule.modules), rule
    # Offload rules come first so a device suffix like "-sun8i-ce" beats the ARM "*-ce".
    classes = [rule.driver_class for rule in DRIVER_CLASS_RULES]
    assert classes.index(DriverClass.CPU_ACCEL) > max(
        i for i, c in enumerate(classes) if c == DriverClass.OFFLOAD
    )
