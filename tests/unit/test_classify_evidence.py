# SPDX-License-Identifier: MIT
"""classify_evidence: which evidence decides a class, and the evidence line it leaves;
evidence.py: sysfs and device-tree facts read from a fake /sys tree."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pytest_hwcrypto.kernel.classify_evidence import (
    BoundDevice,
    LiveFacts,
    classify_all,
    evidence_counts,
)
from pytest_hwcrypto.kernel.evidence import bound_compatibles, bound_devices, gather_live_facts
from pytest_hwcrypto.kernel.procfs import CryptoAlg
from pytest_hwcrypto.profile import parse_profile


def alg(driver: str, module: str = "kernel", **extra: object) -> CryptoAlg:
    return CryptoAlg(name="x", driver=driver, module=module, **extra)  # type: ignore[arg-type]


def decide(*algs: CryptoAlg, **kwargs: object) -> list[tuple[str, str]]:
    found = classify_all(list(algs), **kwargs)  # type: ignore[arg-type]
    return [(c.driver_class, c.evidence) for c in found]


@dataclass(frozen=True)
class Override:
    driver: str
    driver_class: str
    where: str = "b.toml:4"
    module: str | None = None


def test_bsp_engine_prefix_with_module_kernel_is_offload_and_says_both() -> None:
    ((cls, why),) = decide(alg("ss-cbc-aes"))
    assert cls == "offload" and why.startswith("capture: module kernel + engine name ss-")
    # The same prefix from a module the hint does not name decides nothing.
    ((cls, why),) = decide(alg("ss-cbc-aes", module="vendor_thing"))
    assert cls == "unknown" and "module vendor_thing is not in the name table" in why


def test_profile_classify_wins_and_is_named_with_file_and_line() -> None:
    profile = parse_profile(
        '[board]\nname = "b"\n\n[[classify]]\ndriver = "hw-*"\nclass = "offload"\n',
        Path("b.toml"),
    )
    ((cls, why),) = decide(alg("hw-cbc-aes"), overrides=profile.classify)
    assert (cls, why) == ("offload", "profile: [[classify]] driver = hw-* (b.toml:5)")
    # It also overrides the name table (the lab knows its kernel).
    ((cls, _),) = decide(alg("aes-generic"), overrides=[Override("aes-*", "cpu-accel")])
    assert cls == "cpu-accel"


def test_kernel_driver_only_flag_makes_an_unknown_name_offload() -> None:
    live = LiveFacts(flags={"mystery-aes": 0x1485, "other-aes": 0x485})
    found = decide(alg("mystery-aes"), alg("other-aes"), live=live)
    assert found[0] == ("offload", "crypto_user: KERN_DRIVER_ONLY (cru_flags 0x00001485)")
    assert found[1][0] == "unknown"


def test_a_module_bound_to_a_device_is_offload_whatever_its_names() -> None:
    live = LiveFacts(
        module_devices={"virtio_crypto": (BoundDevice("virtio", "virtio1", "virtio_crypto"),)}
    )
    ((cls, why),) = decide(alg("virtio_crypto_aes_cbc", "virtio_crypto"), live=live)
    assert (cls, why) == ("offload", "sysfs: module virtio_crypto bound to virtio device virtio1")
    # Without live facts the name table decides the same class, saying so.
    ((cls, why),) = decide(alg("virtio_crypto_aes_cbc", "virtio_crypto"))
    assert cls == "offload" and why.startswith("name table: module virtio_crypto")


def test_generic_hash_around_an_offloaded_cipher_is_named_part_by_part() -> None:
    ((cls, why),) = decide(alg("authenc(hmac(sha256-generic),cbc-aes-caam)", "authenc"))
    assert (cls, why) == ("offload", "template: offload cbc-aes-caam + generic sha256-generic")
    ((cls, why),) = decide(alg("cryptd(__cbc-aes-ce)", "cryptd"))
    assert (cls, why) == ("cpu-accel", "template: inner __cbc-aes-ce (cpu-accel)")
    ((cls, why),) = decide(alg("cbc(mystery-aes)", "cbc"))
    assert cls == "unknown" and why.startswith("unknown: template over mystery-aes")


def test_template_leaves_listed_in_the_capture_bring_their_own_evidence() -> None:
    live = LiveFacts(flags={"vendor-aes": 0x1000})
    found = decide(alg("vendor-aes"), alg("cbc(vendor-aes)", "cbc"), live=live)
    assert found[1] == ("offload", "template: inner vendor-aes (offload)")


def test_lib_wrappers_take_the_class_of_the_arch_code_the_capture_proves() -> None:
    found = decide(alg("sha512-lib"), alg("sha256-s390"), alg("md5-lib"))
    assert found[0][0] == "cpu-accel" and "beside sha256-s390" in found[0][1]
    assert found[2][0] == "unknown"  # lib/crypto has no s390 MD5 code
    ((cls, _),) = decide(alg("sha512-lib"))
    assert cls == "unknown"


def test_hardware_classes_spread_to_unknown_siblings_of_one_module_generic_does_not() -> None:
    found = decide(alg("cbc-aes-caam", "vendor_caam"), alg("odd-name", "vendor_caam"))
    assert found[1] == (
        "offload",
        "capture: module vendor_caam also registers cbc-aes-caam (offload)",
    )
    found = decide(alg("aes-generic", "vendor_sw"), alg("odd-name", "vendor_sw"))
    assert found[1][0] == "unknown"


def test_evidence_counts_by_kind() -> None:
    found = classify_all([alg("aes-generic"), alg("ss-md5"), alg("cbc(aes-generic)", "cbc")])
    assert evidence_counts(found) == {"name table": 1, "capture": 1, "template": 1}


def _fake_sys(root: Path) -> None:
    bus_driver = root / "bus" / "virtio" / "drivers" / "virtio_crypto"
    device = root / "devices" / "pci0000:00" / "0000:00:04.0" / "virtio1"
    device.mkdir(parents=True)
    bus_driver.mkdir(parents=True)
    (bus_driver / "virtio1").symlink_to(device)
    (bus_driver / "bind").write_text("")
    (bus_driver / "module").symlink_to(root / "module" / "virtio_crypto")
    drivers = root / "module" / "virtio_crypto" / "drivers"
    drivers.mkdir(parents=True)
    (drivers / "virtio:virtio_crypto").symlink_to(bus_driver)
    (root / "module" / "aesni_intel").mkdir(parents=True)
    platform = root / "bus" / "platform" / "devices" / "1c15000.crypto"
    (platform / "of_node").mkdir(parents=True)
    (platform / "of_node" / "compatible").write_bytes(b"allwinner,sun50i-h6-crypto\0")
    (root / "bus" / "platform" / "drivers" / "sun8i-ce").mkdir(parents=True)
    (platform / "driver").symlink_to(root / "bus" / "platform" / "drivers" / "sun8i-ce")


def test_sysfs_bound_devices_and_device_tree_from_a_fake_tree(tmp_path: Path) -> None:
    _fake_sys(tmp_path)
    assert bound_devices("virtio-crypto", tmp_path) == (
        BoundDevice("virtio", "virtio1", "virtio_crypto"),
    )
    assert bound_devices("aesni_intel", tmp_path) == ()
    assert bound_compatibles(tmp_path) == {"allwinner,sun50i-h6-crypto": "sun8i-ce"}
    algs = [alg("virtio_crypto_aes_cbc", "virtio_crypto"), alg("cbc-aes-aesni", "aesni_intel")]
    live = gather_live_facts(algs, tmp_path, read_flags=lambda drivers: ({}, ("no netlink",)))
    found = decide(*algs, alg("cbc-aes-sun8i-ce"), live=live)
    assert found[0][1] == "sysfs: module virtio_crypto bound to virtio device virtio1"
    assert found[1][0] == "cpu-accel" and found[1][1].startswith("name table: module aesni_intel")
    assert found[2][0] == "offload"
    assert found[2][1].startswith("device tree: allwinner,sun50i-h6-crypto bound to sun8i-ce; ")
    assert live.notes == ("no netlink",)
