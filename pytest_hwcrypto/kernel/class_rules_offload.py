# SPDX-License-Identifier: MIT
"""Name-table rules of devices the CPU hands requests to (drivers/crypto, vendor BSPs).

Offload rules come before the CPU rules, so that ``cbc-aes-sun8i-ce`` is the Allwinner
device and not an ARM ``*-ce`` driver. Composed names follow the drivers' ``snprintf``
(``"%s-caam"``, ``"%s-talitos"``, ``"%s-qce"``...). Where a driver's names look like generic
ones (hifn_795x and n2_crypto register ``cbc-aes``), only its module decides.
"""

from __future__ import annotations

from pytest_hwcrypto.kernel.class_rules import ClassRule, EngineHint, offload

OFFLOAD_RULES: tuple[ClassRule, ...] = (
    offload(
        "Allwinner Crypto Engine (H3/H5/H6/A64/H616 sun8i-ce)",
        ("sun8i_ce",),
        ("*-sun8i-ce", "sun8i-ce-*"),
    ),
    offload(
        "Allwinner Security System (A80/A83T sun8i-ss)", ("sun8i_ss",), ("*-sun8i-ss", "sun8i-ss-*")
    ),
    offload(
        "Allwinner Security System (A10/A20/A33 sun4i-ss)",
        ("sun4i_ss",),
        ("*-sun4i-ss", "sun4i_ss_*", "sun4i-ss-*"),
    ),
    offload(
        "Allwinner BSP Security System / Crypto Engine driver (sunxi_ss, ss-* names)",
        ("sunxi_ss", "sunxi_ce"),
        ("ss-*-sunxi", "sunxi-ss-*", "sunxi-ce-*"),
    ),
    offload(
        "Marvell CESA (Kirkwood/Dove/Armada 370/XP/38x; old mv_cesa driver too)",
        ("marvell_cesa", "mv_cesa"),
        ("mv-*",),
    ),
    offload(
        "NXP/Freescale CAAM (i.MX, QorIQ, Layerscape; job ring, QI, DPAA2)",
        (
            "caam",
            "caam_jr",
            "caamalg",
            "caamalg_qi",
            "caamalg_qi2",
            "caamhash",
            "caam_pkc",
            "caamrng",
            "dpaa2_caam",
        ),
        ("*-caam", "*-caam-qi", "*-caam-qi2", "caam-*"),
    ),
    offload(
        "Freescale SEC talitos (PowerQUICC, QorIQ)", ("talitos",), ("*-talitos", "*-talitos-hsna")
    ),
    offload(
        "Intel QuickAssist (QAT)",
        (
            "intel_qat",
            "qat_4xxx",
            "qat_420xx",
            "qat_6xxx",
            "qat_c3xxx",
            "qat_c3xxxvf",
            "qat_c62x",
            "qat_c62xvf",
            "qat_dh895xcc",
            "qat_dh895xccvf",
        ),
        ("qat_*", "qat-*"),
    ),
    offload("Intel In-Memory Analytics Accelerator (IAA)", ("iaa_crypto",), ("*-iaa", "*-iaa-*")),
    offload("AMD Cryptographic Coprocessor (CCP/PSP)", ("ccp", "ccp_crypto"), ("*-ccp",)),
    offload("Arm TrustZone CryptoCell (ccree)", ("ccree",), ("*-ccree",)),
    offload(
        "TI OMAP AES/DES/SHA accelerators",
        ("omap_aes_driver", "omap_aes", "omap_des", "omap_sham", "omap_crypto"),
        ("*-omap", "omap-*"),
    ),
    offload("TI K3 SA2UL", ("sa2ul",), ("*-sa2ul",)),
    offload("TI DTHE V2", ("dthev2",), ("*-dthev2",)),
    offload(
        "Microchip/Atmel AES/SHA/TDES/ECC engines",
        ("atmel_aes", "atmel_sha", "atmel_tdes", "atmel_ecc", "atmel_sha204a", "atmel_i2c"),
        ("atmel-*", "*-atmel"),
    ),
    offload(
        "STMicroelectronics STM32 CRYP/HASH/CRC",
        ("stm32_cryp", "stm32_hash", "stm32_crc32"),
        ("stm32-*", "*-stm32"),
    ),
    offload(
        "Rockchip crypto engine (rk3288/rk3399 and the rk3588 v2 engine)",
        ("rk_crypto", "rk_crypto2", "rockchip_crypto"),
        ("*-rk", "rk-*", "*-rk2", "rk2-*"),
    ),
    offload(
        "MediaTek crypto engine (mtk-crypto, EIP93 in MT7621/7981/7988)",
        ("mtk_crypto", "crypto_hw_eip93"),
        ("*-mtk", "mtk-*", "*-eip93", "eip93-*"),
    ),
    offload(
        "Inside Secure SafeXcel EIP97/EIP197 (Marvell Armada 7k/8k, MediaTek)",
        ("crypto_safexcel",),
        ("safexcel-*",),
    ),
    offload(
        "virtio-crypto device (QEMU cryptodev backend)",
        ("virtio_crypto",),
        ("virtio_crypto_*", "virtio-crypto-*", "virtio-pkcs1-*"),
    ),
    offload(
        "IBM POWER NX coprocessor",
        ("nx_crypto", "nx_compress", "nx_compress_pseries", "nx_compress_powernv"),
        ("nx-*", "*-nx"),
    ),
    offload(
        "IBM s390 CEX crypto cards (zcrypt)",
        ("zcrypt", "zcrypt_cex4"),
        ("*-zcrypt",),
    ),
    offload(
        "HiSilicon Kunpeng SEC/HPRE/ZIP/TRNG",
        ("hisi_sec", "hisi_sec2", "hisi_hpre", "hisi_zip", "hisi_trng_v2", "hisi_qm"),
        ("hisi_sec_*", "hisi-*", "hpre-*", "hisi_stdrng"),
    ),
    offload(
        "Intel Keem Bay Offload and Crypto Subsystem (OCS)",
        ("keembay_ocs_aes", "keembay_ocs_hcu", "keembay_ocs_ecc"),
        ("*-keembay-ocs", "keembay-ocs-*"),
    ),
    offload(
        "Amlogic crypto engine (mainline GXL; vendor aml-crypto)",
        ("amlogic_gxl_crypto", "aml_crypto_dma"),
        ("*-gxl", "aml-*", "*-aml"),
    ),
    offload("Chelsio T6 crypto (chcr)", ("chcr",), ("*-chcr",)),
    offload("Broadcom iProc SPU", ("bcm_crypto_spu",), ("*-iproc",)),
    offload(
        "Qualcomm Crypto Engine (QCE), vendor qcrypto and PRNG",
        ("qcrypto", "qcom_rng", "qcedev"),
        ("*-qce", "qcom-rng", "qcrypto-*", "*-qcrypto"),
    ),
    offload(
        "Samsung S5P/Exynos Security SubSystem",
        ("s5p_sss", "exynos_rng"),
        ("*-s5p", "exynos-*", "exynos_rng"),
    ),
    offload("NXP i.MX MXS DCP", ("dcp", "mxs_dcp"), ("*-dcp",)),
    offload("ST-Ericsson Ux500 CRYP/HASH", ("ux500_cryp", "ux500_hash"), ("*-ux500",)),
    offload("AMCC PPC4xx crypto", ("crypto4xx",), ("*-ppc4xx", "crypto4xx_rng")),
    offload("Intel IXP4xx NPE crypto", ("ixp4xx_crypto",), ("*-ixp4xx",)),
    offload("Sun Niagara2 SPU (its names look generic: module only)", ("n2_crypto",), ("*-n2",)),
    offload("Hifn 795x (its names look generic: module only)", ("hifn_795x",), ()),
    offload("AMD Geode LX security block", ("geode_aes",), ("geode-aes", "*-geode")),
    offload("Axis ARTPEC-6 crypto", ("artpec6_crypto",), ("artpec-*", "artpec6-*")),
    offload("Freescale SAHARA (i.MX27/i.MX53)", ("sahara",), ("sahara-*",)),
    offload("Imagination hash accelerator", ("img_hash",), ("img-*",)),
    offload("ASPEED HACE (AST2500/2600)", ("aspeed_crypto", "aspeed_hace"), ("aspeed-*",)),
    offload("StarFive JH7110 crypto", ("jh7110_crypto",), ("starfive-*", "*-starfive")),
    offload("NVIDIA Tegra security engine", ("tegra_se",), ("*-tegra", "tegra-se-*")),
    offload(
        "Cavium CPT / Marvell OcteonTX and OcteonTX2 CPT",
        ("cptvf", "cptpf", "octeontx_cptvf", "octeontx_cpt", "rvu_cptvf", "rvu_cptpf"),
        ("cavium-*", "cpt_*", "otx_*", "otx2_*"),
    ),
    offload("Cavium ThunderX ZIP", ("thunderx_zip",), ("*-cavium",)),
    offload("Cavium Nitrox CNN55XX", ("n5pf",), ("n5_*",)),
    offload(
        "Xilinx ZynqMP/Versal AES-GCM and SHA3",
        ("zynqmp_aes_gcm", "zynqmp_sha", "xilinx_trng"),
        ("xilinx-zynqmp-*", "zynqmp-*", "versal-*"),
    ),
    offload("Storlink SL3516 crypto engine", ("sl3516_ce",), ("*-sl3516",)),
    offload("Loongson security engine", ("loongson_rng", "loongson_se"), ("loongson-*",)),
    offload("Synopsys SPAcc", ("snps_spacc",), ("spacc-*", "*-spacc")),
)

# Prefixes that name a device only with `module : kernel` beside them (see EngineHint).
ENGINE_HINTS: tuple[EngineHint, ...] = (
    EngineHint(
        "ss-",
        "Allwinner BSP Security System / Crypto Engine (sunxi_ss.c: cra_driver_name 'ss-...')",
        modules=("kernel", "sunxi_ss", "sunxi_ce"),
    ),
)
