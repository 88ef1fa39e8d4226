# SPDX-License-Identifier: MIT
"""`hwcrypto inventory --json` against the board's real /proc/crypto."""

from __future__ import annotations

import json
import os

import pytest

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.cli import main
from pytest_hwcrypto.run import build_run

pytestmark = pytest.mark.board


def _inventory(capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    assert main(["inventory", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kernel"]["release"] == os.uname().release
    entries: list[dict[str, object]] = data["inventory"]
    return entries


def _by_driver(entries: list[dict[str, object]]) -> dict[object, dict[str, object]]:
    return {entry["driver"]: entry for entry in entries}


def test_uml_board_has_two_software_aes(
    board_kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if board_kind != "uml":
        pytest.skip("UML board only")
    drivers = _by_driver(_inventory(capsys))
    assert drivers["aes-generic"]["class"] == "generic"
    assert drivers["aes-fixed-time"]["class"] == "generic"
    aes = [e for e in drivers.values() if e["name"] == "aes" and e["winner"]]
    assert [e["driver"] for e in aes] == ["aes-fixed-time"], "priority 101 beats 100"


def test_qemu_board_has_aesni_and_virtio_crypto(
    board_kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if board_kind != "qemu":
        pytest.skip("QEMU board only")
    drivers = _by_driver(_inventory(capsys))
    virtio = drivers["virtio_crypto_aes_cbc"]
    assert virtio["class"] == "offload"
    # The live kernel decides, not the name table: the module's bus driver is bound to the
    # virtio-crypto PCI function's virtio device (or crypto_user flags it KERN_DRIVER_ONLY).
    evidence = str(virtio["class_evidence"])
    assert evidence.startswith(
        (
            "sysfs: module virtio_crypto bound to virtio device virtio",
            "crypto_user: KERN_DRIVER_ONLY",
        )
    ), evidence
    aesni = [d for d in drivers if isinstance(d, str) and d.endswith("-aesni")]
    assert "cbc-aes-aesni" in aesni
    assert {drivers[d]["class"] for d in aesni} == {"cpu-accel"}
    # aesni_intel binds no device: its class comes from the name table.
    assert str(drivers["cbc-aes-aesni"]["class_evidence"]).startswith("name table: ")


def test_every_class_says_which_evidence_decided_it(capsys: pytest.CaptureFixture[str]) -> None:
    entries = _inventory(capsys)
    kinds = {str(entry["class_evidence"]).split(":", 1)[0] for entry in entries}
    assert kinds <= {
        "crypto_user",
        "sysfs",
        "device tree",
        "name table",
        "capture",
        "template",
        "unknown",
    }, kinds
    assert all(
        entry["class"] != "generic"
        or not str(entry["class_evidence"]).startswith(("sysfs", "crypto_user"))
        for entry in entries
    )


def test_the_runs_own_inventory_uses_the_live_evidence_too(board_kind: str) -> None:
    """The inventory every suite and the results file see (fixtures.inventory, behind the
    hwcrypto_inventory fixture) classes drivers as `hwcrypto inventory` does: on QEMU,
    virtio-crypto by its bound device, not by its name."""
    if board_kind != "qemu":
        pytest.skip("QEMU board only")
    run = build_run(enabled=False, cli_values={}, environ={}, ini_values={})
    virtio = next(e for e in fixtures.inventory(run) if e.driver == "virtio_crypto_aes_cbc")
    assert virtio.driver_class == "offload"
    assert virtio.class_evidence.startswith(("sysfs: ", "crypto_user: ")), virtio.class_evidence
