# SPDX-License-Identifier: MIT
"""Inside the ARM boards (`pytest --hwcrypto-vm=qemu-arm64 [--hwcrypto-cryptodev]
tests/board/test_arm_drivers.py`, and qemu-armhf): the CPU drivers ARM lab boards run are
registered and classed cpu-accel, virtio-crypto is the offload engine, and /dev/crypto
names the driver behind a session (CIOCGSESSINFO). Elsewhere these tests skip."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from pytest_hwcrypto.cli import main
from pytest_hwcrypto.kernel import cryptodev
from pytest_hwcrypto.run import CRYPTODEV_STATE_ENV

pytestmark = pytest.mark.board

# Per board: drivers that must be there, each cpu-accel (what `-cpu max` gives under TCG
# and Debian's kernel builds as modules the board loads).
EXPECTED_CPU_DRIVERS = {
    "qemu-arm64": (
        "cbc-aes-ce",
        "xts-aes-ce",
        "ctr-aes-ce",
        "ecb-aes-ce",
        "aes-ce",
        "gcm-aes-ce",
        "cbc-aes-neonbs",
        "xts-aes-neonbs",
        "ctr-aes-neonbs",
        "sha256-ce",
        "sha512-ce",
        "sha256-arm64-neon",
    ),
    "qemu-armhf": (
        "aes-arm",
        "cbc-aes-neonbs",
        "xts-aes-neonbs",
        "ctr-aes-neonbs",
        "sha256-neon",
        "sha256-asm",
        "sha512-neon",
    ),
}


@pytest.fixture(scope="module")
def arm_board() -> str:
    kind = os.environ.get("HWCRYPTO_BOARD_KIND", "host")
    if kind not in EXPECTED_CPU_DRIVERS:
        pytest.skip("ARM boards only: pytest --hwcrypto-vm=qemu-arm64 (or qemu-armhf)")
    return kind


def _inventory(capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, object]]:
    assert main(["inventory", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kernel"]["machine"] == os.uname().machine
    return {str(entry["driver"]): entry for entry in data["inventory"]}


def test_the_arm_cpu_drivers_are_registered_as_cpu_accel(
    arm_board: str, capsys: pytest.CaptureFixture[str]
) -> None:
    drivers = _inventory(capsys)
    missing = [name for name in EXPECTED_CPU_DRIVERS[arm_board] if name not in drivers]
    assert not missing, f"{arm_board}: not registered: {missing}"
    classes = {name: drivers[name]["class"] for name in EXPECTED_CPU_DRIVERS[arm_board]}
    assert set(classes.values()) == {"cpu-accel"}, classes
    assert drivers["aes-generic"]["class"] == "generic"


def test_virtio_crypto_is_the_offload_engine(
    arm_board: str, capsys: pytest.CaptureFixture[str]
) -> None:
    virtio = _inventory(capsys)["virtio_crypto_aes_cbc"]
    assert virtio["class"] == "offload"
    assert str(virtio["class_evidence"]).startswith(("sysfs: ", "crypto_user: "))


@pytest.fixture
def device(arm_board: str) -> Iterator[cryptodev.CryptoDevice]:
    reason = cryptodev.unavailable_reason()
    if reason is not None:
        said = os.environ.get(CRYPTODEV_STATE_ENV)
        pytest.skip(f"{reason} (the board says: {said}; run with --hwcrypto-cryptodev)")
    with cryptodev.CryptoDevice() as opened:
        yield opened


def test_dev_crypto_names_the_winning_arm_driver(
    device: cryptodev.CryptoDevice, capsys: pytest.CaptureFixture[str]
) -> None:
    winner = next(
        entry["driver"]
        for entry in _inventory(capsys).values()
        if entry["name"] == "cbc(aes)" and entry["winner"]
    )
    key, iv, data = os.urandom(16), os.urandom(16), os.urandom(4096)
    with cryptodev.open_session(device, "cbc(aes)", key) as session:
        assert session.driver == winner  # CIOCGSESSINFO's answer
        assert isinstance(session, cryptodev.CipherSession)
        encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
        assert session.encrypt(data, iv) == encryptor.update(data) + encryptor.finalize()
