"""`hwcrypto inventory --json` against the board's real /proc/crypto."""

from __future__ import annotations

import json
import os

import pytest

from pytest_hwcrypto.cli import main

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
    assert drivers["virtio_crypto_aes_cbc"]["class"] == "offload"
    aesni = [d for d in drivers if isinstance(d, str) and d.endswith("-aesni")]
    assert "cbc-aes-aesni" in aesni
    assert {drivers[d]["class"] for d in aesni} == {"cpu-accel"}
