# SPDX-License-Identifier: MIT
"""The /dev/crypto engine and the QEMU board's cryptodev wiring, without a kernel."""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.boards import kmod_build
from pytest_hwcrypto.boards.qemu import CRYPTODEV_MODULE, QemuBoard
from pytest_hwcrypto.kernel import cryptodev
from pytest_hwcrypto.kernel.inventory import build_inventory
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.kernel.rerank import Preference
from pytest_hwcrypto.measure import cryptodev_engine
from pytest_hwcrypto.measure.cpu import CpuMeter
from pytest_hwcrypto.measure.cryptodev_engine import CryptodevEngine
from pytest_hwcrypto.measure.engine import EngineError, Timing
from pytest_hwcrypto.measure.targets import Target
from pytest_hwcrypto.run import CRYPTODEV_STATE_ENV
from pytest_hwcrypto.vocabulary import Source

CAPTURES = Path(__file__).resolve().parent.parent / "data" / "proc_crypto"
CAPTURE = CAPTURES / "qemu-6.1.0-57-amd64.txt"
TIMING = Timing(time.perf_counter, CpuMeter())


def test_reachable_are_the_skciphers_and_plain_hashes_cryptodev_has_ids_for() -> None:
    engine = CryptodevEngine(None)
    targets = engine.reachable(build_inventory(read_proc_crypto(CAPTURE)))
    by_algorithm: dict[str, set[str]] = {}
    for target in targets:
        by_algorithm.setdefault(target.algorithm, set()).add(target.driver)
    assert by_algorithm["cbc(aes)"] == {
        "cbc-aes-aesni",
        "virtio_crypto_aes_cbc",
        "cbc(aes-generic)",
    }
    assert "xts(ecb(aes-generic))" in by_algorithm["xts(aes)"]
    assert "sha256" in by_algorithm
    assert not {"gcm(aes)", "chacha20"} & set(by_algorithm), "no AEAD timing, no cryptodev id"
    assert not any(name.startswith("hmac(") for name in by_algorithm), "keyed hashes left out"
    assert engine.source == Source.CRYPTODEV


class FakeSession:
    def __init__(self, driver: str) -> None:
        self.driver = driver
        self.closed = False

    def close(self) -> None:
        self.closed = True


class FakeReranker:
    def __init__(self) -> None:
        self.preferred: list[str] = []

    @contextmanager
    def prefer(self, driver: str) -> Iterator[Preference]:
        self.preferred.append(driver)
        yield Preference(driver, "cbc(aes)", 150, 401, ("cbc-aes-aesni",))


@pytest.fixture
def fake_device(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A /dev/crypto whose sessions are served by `state['serves']` (or the preferred one)."""
    state: dict[str, Any] = {"serves": None}
    monkeypatch.setattr(cryptodev, "unavailable_reason", lambda path: None)

    class Device:
        def __init__(self, path: Path, timeout: float) -> None:
            state["device"] = self

        def close(self) -> None:
            state["closed"] = True

    def open_on_driver(device: Any, name: str, key: bytes, driver: str, prefer: Any) -> Any:
        if prefer is not None:
            with prefer(driver):
                served = state["serves"] or driver
        else:
            served = state["serves"] or "cbc-aes-aesni"
        if served != driver:
            raise cryptodev.CryptodevError(f"asked for {driver}, served by {served}")
        return FakeSession(served)

    monkeypatch.setattr(cryptodev, "CryptoDevice", Device)
    monkeypatch.setattr(cryptodev, "open_on_driver", open_on_driver)
    return state


def _target(driver: str) -> Target:
    return Target("cbc(aes)", driver, "skcipher", 128, 0)


def test_open_prefers_the_driver_and_says_how_in_the_evidence(fake_device: dict[str, Any]) -> None:
    reranker = FakeReranker()
    engine = CryptodevEngine(reranker)  # type: ignore[arg-type]
    bound = engine.open(_target("virtio_crypto_aes_cbc"), TIMING)
    assert reranker.preferred == ["virtio_crypto_aes_cbc"]
    assert bound.evidence.driver == "virtio_crypto_aes_cbc"
    assert "names virtio_crypto_aes_cbc (opened while re-ranked to priority 401, from 150)" in (
        bound.evidence.how
    )


def test_a_mismatch_is_an_engine_error_naming_both(fake_device: dict[str, Any]) -> None:
    fake_device["serves"] = "cbc-aes-aesni"
    engine = CryptodevEngine(FakeReranker())  # type: ignore[arg-type]
    with pytest.raises(EngineError, match=r"asked for cbc\(aes-generic\), served by cbc-aes-aesni"):
        engine.open(_target("cbc(aes-generic)"), TIMING)
    assert fake_device["closed"]


def test_without_reranking_only_the_winner_opens_and_the_error_says_why(
    fake_device: dict[str, Any],
) -> None:
    engine = CryptodevEngine(None, no_rerank_reason="re-ranking needs root")
    assert engine.open(_target("cbc-aes-aesni"), TIMING).evidence.driver == "cbc-aes-aesni"
    with pytest.raises(EngineError, match="served by cbc-aes-aesni; re-ranking needs root"):
        engine.open(_target("virtio_crypto_aes_cbc"), TIMING)


def test_no_dev_crypto_is_unavailable(tmp_path: Path) -> None:
    engine = CryptodevEngine(None, path=tmp_path / "crypto")
    with pytest.raises(EngineError, match="is missing") as error:
        engine.open(_target("cbc-aes-aesni"), TIMING)
    assert error.value.unavailable


def test_a_hash_target_needs_no_key_and_an_hmac_is_not_reachable() -> None:
    plain = Target("sha256", "sha256-generic", "hash", None, 2)
    keyed = Target("hmac(sha256)", "hmac(sha256-generic)", "hash", None, 2)
    assert cryptodev_engine.reachable_by_cryptodev(plain)
    assert not cryptodev_engine.reachable_by_cryptodev(keyed)


# --- the QEMU board ---------------------------------------------------------------------------


def test_the_guest_loads_cryptodev_only_when_asked(tmp_path: Path) -> None:
    kernel = Path("/boot/vmlinuz-6.1.0-57-amd64")
    plain = QemuBoard(kernel=kernel).guest_script("true\n", tmp_path, tmp_path)
    assert "insmod" not in plain
    script = QemuBoard(kernel=kernel, cryptodev=True).guest_script("true\n", tmp_path, tmp_path)
    assert f"insmod {tmp_path / CRYPTODEV_MODULE}" in script
    assert f"export {CRYPTODEV_STATE_ENV}=" in script
    assert script.index("insmod") < script.index("true\n", script.index("insmod"))


def test_prepare_builds_for_the_boards_release_and_puts_the_module_in_the_run_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = tmp_path / "cache" / "cryptodev.ko"
    built.parent.mkdir()
    built.write_bytes(b"module")
    asked: list[str] = []

    def build_module(
        spec: kmod_build.ModuleSource, release: str, progress: Any, **options: Any
    ) -> Path:
        asked.append(release)
        progress(f"{spec.name} for {release}: cached build {built}")
        return built

    monkeypatch.setattr(kmod_build, "build_module", build_module)
    board = QemuBoard(kernel=tmp_path / "vmlinuz-6.1.0-57-amd64", cryptodev=True)
    stream = io.StringIO()
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    board.prepare(run_dir, stream)
    assert asked == ["6.1.0-57-amd64"]
    assert (run_dir / CRYPTODEV_MODULE).read_bytes() == b"module"
    assert stream.getvalue() == f"hwcrypto: cryptodev for 6.1.0-57-amd64: cached build {built}\n"
    QemuBoard(kernel=tmp_path / "vmlinuz-x").prepare(run_dir, stream)  # nothing to do


def test_the_suite_checks_every_name_it_can_serve_and_every_skcipher_driver() -> None:
    from pytest_hwcrypto.kernel import differential

    inventory = build_inventory(read_proc_crypto(CAPTURE))
    targets = [t for t in CryptodevEngine(None).reachable(inventory) if t.kind == "skcipher"]
    names = {entry.name for entry in inventory}
    subjects = cryptodev.discover_subjects(names, differential.SPECS, targets)
    by_name = {s.algorithm: s.key_bytes for s in subjects if s.driver is None}
    assert by_name["cbc(aes)"] == 16 and by_name["xts(aes)"] == 32 and by_name["sha256"] == 0
    assert "gcm(aes)" in by_name and "hmac(sha256)" in by_name
    assert "cbc(des)" not in by_name, "no differential spec for it"
    assert {s.id for s in subjects if s.algorithm == "cbc(aes)" and s.driver} == {
        "cbc(aes)@cbc-aes-aesni",
        "cbc(aes)@virtio_crypto_aes_cbc",
        "cbc(aes)@cbc(aes-generic)",
    }
