# SPDX-License-Identifier: MIT
"""What differs between the ARM boards: Debian architecture, kernel flavour, QEMU machine,
qemu-user binfmt entry, cross compiler, and the CPU crypto drivers the kernel has.

Pure data: every other ARM module takes an `ArmArch` and does the same thing for both.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_hwcrypto.boards.base import CRYPTO_TEST_MODULES


@dataclass(frozen=True)
class ArmArch:
    board: str  # the BoardKind word
    debian_arch: str  # dpkg's name: arm64, armhf
    kernel_flavour: str  # linux-image-<abi>-<flavour>
    kernel_arch: str  # ARCH= for kbuild
    cross_compile: str  # CROSS_COMPILE= prefix (Debian's gcc-<triplet>)
    cross_package: str  # the Debian package of that compiler
    qemu_system: str  # the emulator
    qemu_system_package: str
    machine: tuple[str, ...]  # -M/-cpu arguments
    qemu_user: str  # the static qemu-user binary the image build runs ARM programs with
    binfmt_name: str
    binfmt_magic: bytes  # ELF header bytes binfmt_misc matches (with binfmt_mask)
    binfmt_mask: bytes
    cpu_modules: tuple[str, ...]  # the arch's CPU crypto drivers, loaded at boot

    def binfmt_register_line(self) -> bytes:
        """The line written to binfmt_misc's `register` (F: the interpreter is opened now,
        so it need not exist inside the chroot)."""

        def escaped(data: bytes) -> bytes:
            return b"".join(b"\\x%02x" % byte for byte in data)

        return (
            b":"
            + self.binfmt_name.encode()
            + b":M::"
            + escaped(self.binfmt_magic)
            + b":"
            + escaped(self.binfmt_mask)
            + b":/usr/bin/"
            + self.qemu_user.encode()
            + b":F"
        )

    @property
    def guest_modules(self) -> tuple[str, ...]:
        """Loaded before the command runs: the offload engine, the CPU drivers and what
        every board loads (boards/base.py)."""
        # crypto_user: driver flags (KERN_DRIVER_ONLY, ALLOCATES_MEMORY) and re-ranking;
        # configs: /proc/config.gz for the kernel facts the suites read
        # virtio_rng: the hw_random source of the virtio-rng-pci device, for the rng suite
        return (
            "virtio_crypto",
            "virtio_rng",
            "crypto_user",
            "configs",
            *self.cpu_modules,
            *CRYPTO_TEST_MODULES,
        )


_ELF_MASK = bytes.fromhex("ffffffffffffff00fffffffffffffffffeffffff")

ARM64 = ArmArch(
    board="qemu-arm64",
    debian_arch="arm64",
    kernel_flavour="arm64",
    kernel_arch="arm64",
    cross_compile="aarch64-linux-gnu-",
    cross_package="gcc-aarch64-linux-gnu",
    qemu_system="qemu-system-aarch64",
    qemu_system_package="qemu-system-arm",
    # -cpu max under TCG: ARMv8 with the crypto extensions (AES, PMULL, SHA1/2/3/512, SM3/4)
    machine=("-M", "virt", "-cpu", "max"),
    qemu_user="qemu-aarch64-static",
    binfmt_name="hwcrypto-aarch64",
    binfmt_magic=bytes.fromhex("7f454c460201010000000000000000000200b700"),
    binfmt_mask=_ELF_MASK,
    cpu_modules=(
        "aes_ce_blk",  # xts/cbc/ctr/ecb-aes-ce
        "aes_ce_cipher",  # aes-ce
        "aes_neon_blk",  # *-aes-neon
        "aes_neon_bs",  # *-aes-neonbs
        "ghash_ce",  # gcm-aes-ce, ghash-ce
        "sha1_ce",
        "sha2_ce",  # sha224/256-ce
        "sha256_arm64",  # sha256-arm64, sha256-arm64-neon
        "sha512_ce",
        "sha512_arm64",
        "sha3_ce",
        "chacha_neon",
        "poly1305_neon",
    ),
)

ARMHF = ArmArch(
    board="qemu-armhf",
    debian_arch="armhf",
    # LPAE: QEMU's virt machine puts RAM above 4 GiB's worth of address space only with it
    kernel_flavour="armmp-lpae",
    kernel_arch="arm",
    cross_compile="arm-linux-gnueabihf-",
    cross_package="gcc-arm-linux-gnueabihf",
    qemu_system="qemu-system-arm",
    qemu_system_package="qemu-system-arm",
    # Cortex-A15: ARMv7 with NEON and LPAE, no ARMv8 crypto extensions -- the CPU side of
    # the 32-bit lab boards (Armada 385's Cortex-A9, Kirkwood), where the bit-sliced NEON
    # and scalar asm drivers are the winners. (`-cpu max` would add the *-ce drivers,
    # priority 300, and they would win cbc/xts/ctr(aes) and sha256 instead.)
    machine=("-M", "virt", "-cpu", "cortex-a15"),
    qemu_user="qemu-arm-static",
    binfmt_name="hwcrypto-arm",
    binfmt_magic=bytes.fromhex("7f454c460101010000000000000000000200" + "2800"),
    binfmt_mask=_ELF_MASK,
    cpu_modules=(
        "aes_arm",  # aes-arm (scalar asm)
        "aes_arm_bs",  # *-aes-neonbs (bit-sliced NEON)
        "aes_arm_ce",  # *-aes-ce: ARMv8 CE in AArch32, refuses to load on a Cortex-A15
        "ghash_arm_ce",
        "sha1_arm",
        "sha1_arm_neon",
        "sha1_arm_ce",
        "sha2_arm_ce",
        "sha256_arm",  # sha256-asm, sha256-neon
        "sha512_arm",  # sha512-arm, sha512-neon
        "chacha_neon",
        "poly1305_arm",
        "blake2b_neon",
    ),
)

ARCHES = {arch.board: arch for arch in (ARM64, ARMHF)}
