"""Tell what kind of implementation a /proc/crypto driver is: generic, cpu-accel or offload.

``generic``   portable C in the crypto tree (``aes-generic``, ``sha256-generic``, templates
              built only on such drivers like ``xts(ecb(aes-generic))``) and software RNGs.
``cpu-accel`` CPU instructions or architecture-specific assembly (AES-NI, SHA-NI, ARMv8
              Crypto Extensions, NEON, s390 CPACF, VIA PadLock...).
``offload``   a device the CPU hands requests to (Allwinner CE, Marvell CESA, CAAM, QAT,
              CCP, virtio-crypto...).
``unknown``   anything the rules below do not recognise. Never guessed.

The knowledge is a data table (:data:`DRIVER_CLASS_RULES`): each rule names the modules and
driver-name patterns (shell-style, matched on the whole name) of one kind of hardware.
Driver and module names were checked against the kernel sources (``cra_driver_name``
strings and module names in arch/*/crypto and drivers/crypto).

Lookup order, and why:

1. the module (unless ``kernel``, i.e. built in): a device or CPU-feature module registers
   only implementations of that kind, whatever its driver names look like
   (``hisi_sec_cbc(aes)`` or ``n5_cts(cbc(aes))`` contain parentheses but are a device);
2. driver-name patterns, rule by rule (offload rules come first so that
   ``cbc-aes-sun8i-ce`` is the Allwinner device and not an ARM ``*-ce`` driver);
3. template instances (``xts(ecb(aes-generic))``, ``gcm_base(ctr(aes-aesni),ghash-clmulni)``):
   the class of the drivers inside. The template itself is generic C glue.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from pytest_hwcrypto.kernel.modprobe import normalize_module_name
from pytest_hwcrypto.vocabulary import DriverClass

DRIVER_CLASSES: tuple[DriverClass, ...] = tuple(DriverClass)

# /proc/crypto prints "kernel" as the module of built-in code: it says nothing about the kind.
BUILTIN_MODULE = "kernel"


@dataclass(frozen=True)
class ClassRule:
    """Modules and driver-name patterns of one kind of implementation."""

    driver_class: str
    what: str
    modules: tuple[str, ...] = ()
    drivers: tuple[str, ...] = ()

    def matches_module(self, module: str) -> bool:
        return normalize_module_name(module) in self.modules

    def matches_driver(self, driver: str) -> bool:
        return any(fnmatchcase(driver, pattern) for pattern in self.drivers)


def _offload(what: str, modules: tuple[str, ...], drivers: tuple[str, ...]) -> ClassRule:
    return ClassRule(DriverClass.OFFLOAD, what, modules, drivers)


def _cpu(what: str, modules: tuple[str, ...], drivers: tuple[str, ...]) -> ClassRule:
    return ClassRule(DriverClass.CPU_ACCEL, what, modules, drivers)


def _generic(what: str, modules: tuple[str, ...], drivers: tuple[str, ...]) -> ClassRule:
    return ClassRule(DriverClass.GENERIC, what, modules, drivers)


# Order matters for driver patterns: first match wins. Offload first, then CPU, then generic.
DRIVER_CLASS_RULES: tuple[ClassRule, ...] = (
    # --- offload: a device outside the CPU pipeline ------------------------------------
    _offload(
        "Allwinner Crypto Engine (H3/H5/H6/A64/H616 sun8i-ce)",
        ("sun8i_ce",),
        ("*-sun8i-ce", "sun8i-ce-*"),
    ),
    _offload(
        "Allwinner Security System (A80/A83T sun8i-ss)", ("sun8i_ss",), ("*-sun8i-ss", "sun8i-ss-*")
    ),
    _offload(
        "Allwinner Security System (A10/A20/A33 sun4i-ss)",
        ("sun4i_ss",),
        ("*-sun4i-ss", "sun4i_ss_*"),
    ),
    _offload(
        "Marvell CESA (Kirkwood/Dove/Armada 370/XP/38x; old mv_cesa driver too)",
        ("marvell_cesa", "mv_cesa"),
        ("mv-*",),
    ),
    _offload(
        "NXP/Freescale CAAM (i.MX, QorIQ, Layerscape; job ring, QI, DPAA2)",
        (
            "caam",
            "caam_jr",
            "caamalg",
            "caamalg_qi",
            "caamhash",
            "caam_pkc",
            "caamrng",
            "dpaa2_caam",
        ),
        ("*-caam", "*-caam-qi", "*-caam-qi2"),
    ),
    _offload(
        "Freescale SEC talitos (PowerQUICC, QorIQ)", ("talitos",), ("*-talitos", "*-talitos-hsna")
    ),
    _offload(
        "Intel QuickAssist (QAT)",
        (
            "intel_qat",
            "qat_4xxx",
            "qat_420xx",
            "qat_c3xxx",
            "qat_c3xxxvf",
            "qat_c62x",
            "qat_c62xvf",
            "qat_dh895xcc",
            "qat_dh895xccvf",
        ),
        ("qat_*", "qat-*"),
    ),
    _offload("AMD Cryptographic Coprocessor (CCP/PSP)", ("ccp", "ccp_crypto"), ("*-ccp",)),
    _offload("Arm TrustZone CryptoCell (ccree)", ("ccree",), ("*-ccree",)),
    _offload(
        "TI OMAP AES/DES/SHA accelerators",
        ("omap_aes_driver", "omap_aes", "omap_des", "omap_sham"),
        ("*-omap", "omap-*"),
    ),
    _offload(
        "Microchip/Atmel AES/SHA/TDES/ECC engines",
        ("atmel_aes", "atmel_sha", "atmel_tdes", "atmel_ecc", "atmel_sha204a"),
        ("atmel-*",),
    ),
    _offload(
        "STMicroelectronics STM32 CRYP/HASH/CRC",
        ("stm32_cryp", "stm32_hash", "stm32_crc32"),
        ("stm32-*",),
    ),
    _offload("Rockchip crypto engine", ("rk_crypto",), ("*-rk", "rk-*")),
    _offload(
        "Inside Secure SafeXcel EIP97/EIP197 (Marvell Armada 7k/8k, MediaTek)",
        ("crypto_safexcel",),
        ("safexcel-*",),
    ),
    _offload(
        "virtio-crypto device (QEMU cryptodev backend)",
        ("virtio_crypto",),
        ("virtio_crypto_*", "virtio-crypto-*", "virtio-pkcs1-*"),
    ),
    _offload(
        "IBM POWER NX coprocessor",
        ("nx_crypto", "nx_compress_pseries", "nx_compress_powernv"),
        ("nx-*", "*-nx"),
    ),
    _offload(
        "HiSilicon Kunpeng SEC/HPRE/ZIP/TRNG",
        ("hisi_sec", "hisi_sec2", "hisi_hpre", "hisi_zip", "hisi_trng_v2"),
        ("hisi_sec_*", "hisi-*", "hpre-*", "hisi_stdrng"),
    ),
    _offload(
        "Intel Keem Bay Offload and Crypto Subsystem (OCS)",
        ("keembay_ocs_aes", "keembay_ocs_hcu", "keembay_ocs_ecc"),
        ("*-keembay-ocs", "keembay-ocs-*"),
    ),
    _offload("Amlogic GXL crypto engine", ("amlogic_gxl_crypto",), ("*-gxl",)),
    _offload("Chelsio T6 crypto (chcr)", ("chcr",), ("*-chcr",)),
    _offload("Broadcom iProc SPU", ("bcm_crypto_spu",), ("*-iproc",)),
    _offload(
        "Qualcomm Crypto Engine (QCE) and PRNG", ("qcrypto", "qcom_rng"), ("*-qce", "qcom-rng")
    ),
    _offload(
        "Samsung S5P/Exynos Security SubSystem",
        ("s5p_sss", "exynos_rng"),
        ("*-s5p", "exynos-*", "exynos_rng"),
    ),
    _offload("TI K3 SA2UL", ("sa2ul",), ("*-sa2ul",)),
    _offload("NXP i.MX MXS DCP", ("dcp",), ("*-dcp",)),
    _offload("ST-Ericsson Ux500 CRYP/HASH", ("ux500_cryp", "ux500_hash"), ("*-ux500",)),
    _offload("AMCC PPC4xx crypto", ("crypto4xx",), ("*-ppc4xx", "crypto4xx_rng")),
    _offload("Intel IXP4xx NPE crypto", ("ixp4xx_crypto",), ("*-ixp4xx",)),
    _offload("Sun Niagara2 SPU", ("n2_crypto",), ("*-n2",)),
    _offload("AMD Geode LX security block", ("geode_aes",), ("geode-aes", "*-geode")),
    _offload("Axis ARTPEC-6 crypto", ("artpec6_crypto",), ("artpec-*", "artpec6-*")),
    _offload("Freescale SAHARA (i.MX27/i.MX53)", ("sahara",), ("sahara-*",)),
    _offload("Imagination hash accelerator", ("img_hash",), ("img-*",)),
    _offload(
        "Cavium CPT / Marvell OcteonTX and OcteonTX2 CPT",
        ("cptvf", "octeontx_cptvf", "rvu_cptvf"),
        ("cavium-*", "cpt_*"),
    ),
    _offload("Cavium Nitrox CNN55XX", ("n5pf",), ("n5_*",)),
    _offload("Xilinx ZynqMP AES-GCM", ("zynqmp_aes_gcm",), ("xilinx-zynqmp-*",)),
    _offload("Storlink SL3516 crypto engine", ("sl3516_ce",), ("*-sl3516",)),
    # --- cpu-accel: CPU instructions or arch-specific code -----------------------------
    _cpu(
        "VIA PadLock (CPU instructions on VIA/Zhaoxin)",
        ("padlock_aes", "padlock_sha"),
        ("*-padlock", "*-padlock-nano", "padlock-*"),
    ),
    _cpu(
        "x86 AES-NI / VAES (aesni_intel; __*-aesni are its internal helpers)",
        ("aesni_intel", "aegis128_aesni"),
        ("*-aesni", "*-aesni-*", "*-vaes-*"),
    ),
    _cpu(
        "x86 SHA with SSSE3/AVX/AVX2/SHA-NI",
        ("sha1_ssse3", "sha256_ssse3", "sha512_ssse3"),
        ("sha*-ssse3", "sha*-avx", "sha*-avx2", "sha*-ni"),
    ),
    _cpu(
        "x86 carry-less multiply (GHASH, POLYVAL, CRC32, CRC-T10DIF with PCLMULQDQ)",
        ("ghash_clmulni_intel", "polyval_clmulni", "crc32_pclmul", "crct10dif_pclmul"),
        ("*-clmulni", "*-pclmulqdqni", "*-pclmul"),
    ),
    _cpu("x86 SSE4.2 CRC32 instruction", ("crc32c_intel",), ("crc32c-intel",)),
    _cpu(
        "x86 SIMD ciphers (Serpent/Twofish/Camellia/CAST/ARIA/SM4 with SSE2/AVX/AVX2/"
        "AVX-512/GFNI, NHPoly1305)",
        (
            "serpent_sse2_x86_64",
            "serpent_sse2_i586",
            "serpent_avx_x86_64",
            "serpent_avx2",
            "twofish_avx_x86_64",
            "camellia_aesni_avx_x86_64",
            "camellia_aesni_avx2",
            "cast5_avx_x86_64",
            "cast6_avx_x86_64",
            "aria_aesni_avx_x86_64",
            "aria_aesni_avx2_x86_64",
            "aria_gfni_avx512_x86_64",
            "sm4_aesni_avx_x86_64",
            "sm4_aesni_avx2_x86_64",
            "nhpoly1305_sse2",
            "nhpoly1305_avx2",
        ),
        ("*-sse2", "*-avx", "*-avx2", "*-avx512", "*-gfni-*"),
    ),
    _cpu(
        "x86 ChaCha20/Poly1305/BLAKE2s/Curve25519 SIMD (also aegis128-simd on ARM NEON)",
        ("chacha_x86_64", "poly1305_x86_64", "blake2s_x86_64", "curve25519_x86_64"),
        ("*-simd", "blake2s-*-x86", "curve25519-x86"),
    ),
    _cpu(
        "x86 (and arm32 sha*-asm) scalar assembly: no crypto instructions, not portable C",
        (
            "aes_x86_64",
            "aes_i586",
            "twofish_x86_64",
            "twofish_x86_64_3way",
            "twofish_i586",
            "blowfish_x86_64",
            "camellia_x86_64",
            "des3_ede_x86_64",
            "salsa20_x86_64",
            "salsa20_i586",
        ),
        ("*-asm", "*-3way"),
    ),
    _cpu(
        "ARMv8 Crypto Extensions (AES, PMULL, SHA1/2/3/512, SM3/SM4, CRC) on arm/arm64",
        (
            "aes_ce_blk",
            "aes_ce_cipher",
            "aes_ce_ccm",
            "ghash_ce",
            "sha1_ce",
            "sha2_ce",
            "sha512_ce",
            "sha3_ce",
            "sm3_ce",
            "sm4_ce",
            "sm4_ce_cipher",
            "sm4_ce_gcm",
            "sm4_ce_ccm",
            "polyval_ce",
            "crct10dif_ce",
            "aes_arm_ce",
            "ghash_arm_ce",
            "sha1_arm_ce",
            "sha2_arm_ce",
            "crc32_arm_ce",
            "crct10dif_arm_ce",
        ),
        ("*-ce", "*-arm-ce", "*-arm64-ce"),
    ),
    _cpu(
        "ARM/arm64 NEON (bit-sliced AES, ChaCha, Poly1305, SHA, SM3/SM4, CRC)",
        (
            "aes_neon_blk",
            "aes_neon_bs",
            "aes_arm_bs",
            "chacha_neon",
            "poly1305_neon",
            "nhpoly1305_neon",
            "sha1_arm_neon",
            "sm3_neon",
            "sm4_neon",
            "blake2b_neon",
            "curve25519_neon",
        ),
        ("*-neon", "*-neonbs"),
    ),
    _cpu(
        "ARM/arm64 scalar assembly (aes-arm64, sha256-arm64, sha1-asm...)",
        (
            "aes_arm",
            "aes_arm64",
            "sha1_arm",
            "sha256_arm",
            "sha512_arm",
            "sha256_arm64",
            "sha512_arm64",
            "chacha_arm",
        ),
        ("*-arm", "*-arm64", "*-arm64-hw"),
    ),
    _cpu(
        "s390 CPACF instructions and vector CRC",
        (
            "aes_s390",
            "des_s390",
            "ghash_s390",
            "sha1_s390",
            "sha256_s390",
            "sha512_s390",
            "sha3_256_s390",
            "sha3_512_s390",
            "paes_s390",
            "hmac_s390",
            "chacha_s390",
            "crc32_vx",
        ),
        ("*-s390", "*-vx"),
    ),
    _cpu(
        "POWER vector crypto (VMX p8_*, vpmsum CRC) and e500 SPE",
        (
            "vmx_crypto",
            "crc32c_vpmsum",
            "crct10dif_vpmsum",
            "aes_ppc_spe",
            "sha1_ppc_spe",
            "sha256_ppc_spe",
        ),
        ("p8_*", "*-vpmsum", "*-ppc-spe"),
    ),
    _cpu(
        "SPARC64 crypto opcodes",
        (
            "aes_sparc64",
            "camellia_sparc64",
            "des_sparc64",
            "md5_sparc64",
            "sha1_sparc64",
            "sha256_sparc64",
            "sha512_sparc64",
            "crc32c_sparc64",
        ),
        ("*-sparc64",),
    ),
    _cpu(
        "Cavium Octeon COP2 hash instructions (MIPS)",
        ("octeon_md5", "octeon_sha1", "octeon_sha256", "octeon_sha512"),
        ("octeon-*",),
    ),
    _cpu(
        "RISC-V vector crypto extensions (Zvkned, Zvknh, Zvkg, Zvksed, Zvksh)",
        (
            "aes_riscv64",
            "chacha_riscv64",
            "ghash_riscv64",
            "sha256_riscv64",
            "sha512_riscv64",
            "sm3_riscv64",
            "sm4_riscv64",
        ),
        ("*-riscv64", "*-riscv64-*"),
    ),
    # --- generic: portable software ---------------------------------------------------
    # Module names of -generic C code are not listed on purpose: some of those modules also
    # register SIMD variants (aegis128 has aegis128-simd), so their driver names decide.
    _generic("portable C implementations (*-generic)", (), ("*-generic",)),
    _generic("constant-time table-less AES in C (aes_ti)", ("aes_ti",), ("aes-fixed-time",)),
    _generic(
        "software random number generators (DRBG, jitterentropy, ANSI X9.31)",
        ("drbg", "jitterentropy_rng", "ansi_cprng"),
        ("drbg_*", "jitterentropy_rng", "ansi_cprng", "krng"),
    ),
    _generic("software compression behind the scomp interface", (), ("*-scomp",)),
    _generic("null cipher/digest/compression", ("crypto_null",), ("ecb-cipher_null",)),
    # --- unknown on purpose -------------------------------------------------------------
    # Wrappers around lib/crypto (sha256-lib, hmac-sha256-lib, crc32c-lib, and aes-lib which
    # replaced aes-generic in 7.0): the library picks architecture code (SHA-NI, AES-NI,
    # ARMv8 CE...) at boot when CONFIG_CRYPTO_LIB_*_ARCH is set, portable C otherwise. The
    # name alone does not tell which, so they are not called generic.
    ClassRule(
        DriverClass.UNKNOWN,
        "lib/crypto wrapper: portable C or arch code, chosen at boot",
        (),
        ("*-lib",),
    ),
)

# Template arguments that are algorithm names, not drivers: pkcs1pad(rsa-generic,sha256)
# only uses the hash name to pick a DER prefix; no hash driver runs inside.
_NAME_ONLY_ARGUMENTS = {"pkcs1pad": (1,), "pkcs1": (1,)}


def classify_driver(driver: str, module: str) -> str:
    """Class of one /proc/crypto entry: ``generic``, ``cpu-accel``, ``offload`` or ``unknown``."""
    rule = matching_rule(driver, module)
    if rule is not None:
        return rule.driver_class
    return _classify_template(driver)


def matching_rule(driver: str, module: str = BUILTIN_MODULE) -> ClassRule | None:
    """The table rule that decides ``driver``/``module``, or None (template or unknown)."""
    if module and normalize_module_name(module) != BUILTIN_MODULE:
        for rule in DRIVER_CLASS_RULES:
            if rule.matches_module(module):
                return rule
    for rule in DRIVER_CLASS_RULES:
        if rule.matches_driver(driver):
            return rule
    return None


def is_known_module(module: str) -> bool:
    """Whether the rule table names ``module`` (a crypto driver module it knows)."""
    return any(rule.matches_module(module) for rule in DRIVER_CLASS_RULES)


def is_hardware(driver_class: str) -> bool:
    """True for classes that use hardware beyond plain C: CPU instructions or a device."""
    return driver_class in (DriverClass.CPU_ACCEL, DriverClass.OFFLOAD)


def is_offload(driver_class: str) -> bool:
    return driver_class == DriverClass.OFFLOAD


def inner_drivers(driver: str) -> list[str]:
    """Leaf drivers inside a template instance, left to right (``[]`` for a plain driver).

    ``gcm_base(ctr(aes-generic),ghash-generic)`` gives ``["aes-generic", "ghash-generic"]``.
    Arguments that are only algorithm names (the hash of ``pkcs1pad``) are left out.
    """
    parts = split_template(driver)
    if parts is None:
        return []
    template, arguments = parts
    skipped = _NAME_ONLY_ARGUMENTS.get(template, ())
    leaves: list[str] = []
    for index, argument in enumerate(arguments):
        if index in skipped:
            continue
        leaves.extend(inner_drivers(argument) or [argument])
    return leaves


def split_template(driver: str) -> tuple[str, list[str]] | None:
    """``"xts(ecb(aes-generic))"`` -> ``("xts", ["ecb(aes-generic)"])``; None if not a template.

    Only names of the form ``template(arg,...)`` with balanced parentheses qualify, so
    device names like ``cbc(aes)-ixp4xx`` are not taken apart.
    """
    opening = driver.find("(")
    if opening <= 0 or not driver.endswith(")"):
        return None
    arguments = split_top_level(driver[opening + 1 : -1])
    if arguments is None or not all(arguments):
        return None
    return driver[:opening], arguments


def split_top_level(inside: str) -> list[str] | None:
    """Split on top-level commas (``"hmac(sha256),cbc(aes)"`` -> two names, the comma inside
    ``authenc(hmac(sha256),cbc(aes))`` stays); None when the parentheses do not balance."""
    arguments: list[str] = []
    depth = 0
    start = 0
    for position, character in enumerate(inside):
        if character == "(":
            depth += 1
        elif character == ")":
            depth -= 1
            if depth < 0:
                return None
        elif character == "," and depth == 0:
            arguments.append(inside[start:position])
            start = position + 1
    if depth != 0:
        return None
    arguments.append(inside[start:])
    return arguments


def _classify_template(driver: str) -> str:
    leaves = inner_drivers(driver)
    if not leaves:
        return DriverClass.UNKNOWN
    return combine_classes(classify_driver(leaf, "") for leaf in leaves)


def combine_classes(classes: Iterable[str]) -> str:
    """Class of a template instance from the classes of the drivers inside it.

    Any device inside makes it offload. Otherwise an unknown part makes it unknown (that
    part could be a device). Otherwise any CPU-accelerated part makes it cpu-accel, and
    only all-generic parts make it generic.
    """
    seen = set(classes)
    for decisive in (
        DriverClass.OFFLOAD,
        DriverClass.UNKNOWN,
        DriverClass.CPU_ACCEL,
        DriverClass.GENERIC,
    ):
        if decisive in seen:
            return decisive
    return DriverClass.UNKNOWN
