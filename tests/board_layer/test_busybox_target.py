# SPDX-License-Identifier: MIT
"""Host-driven runs against a board without Python, booted here: the busybox board.

One boot shared by every test (34 s to SSH-ready under TCG on the shared two-core host at
load 12; the whole module about 4 minutes at load 20, most of it the helper's upload over
the serial console). Skips, with the install hint, where QEMU, busybox-static, dropbear or
the kernel are missing, and inside a board, which never boots another.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.boards.busybox_board import BusyboxBoard
from pytest_hwcrypto.target.session import TargetSession, open_transport
from pytest_hwcrypto.target.spec import parse_target

# A QEMU board: CI runs it in its QEMU stage (-m qemu), not with the UML board layer.
pytestmark = pytest.mark.qemu

KEY = bytes(range(16))
IV = bytes(range(16, 32))


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BusyboxBoard]:
    if "HWCRYPTO_BOARD_RUN_DIR" in os.environ:
        pytest.skip("already inside a virtual board: boards are booted from the host")
    started = BusyboxBoard(tmp_path_factory.mktemp("busybox"))
    try:
        started.start()
    except BoardError as error:
        pytest.skip(str(error))
    yield started
    started.stop()


def session_on(board: BusyboxBoard, kind: str) -> TargetSession:
    target = board.ssh_target if kind == "ssh" else board.serial_target
    spec = parse_target(target)
    assert spec is not None
    return TargetSession(open_transport(spec, str(board.directory / "id_ed25519")))


def run_suite(
    board: BusyboxBoard, target: str, json_path: Path, *more: str
) -> subprocess.CompletedProcess[str]:
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "--hwcrypto",
        f"--hwcrypto-target={target}",
        f"--hwcrypto-target-key={board.directory / 'id_ed25519'}",
        f"--hwcrypto-json={json_path}",
        "-rs",
        *(more or ("--hwcrypto-suite=inventory",)),
    ]
    return subprocess.run(
        argv, cwd=json_path.parent, capture_output=True, text=True, timeout=600, check=False
    )


def test_the_board_has_no_python(board: BusyboxBoard) -> None:
    session = session_on(board, "ssh")
    try:
        result = session.transport.run("command -v python3 python perl")
        assert (result.status, result.output) == (127, "")  # none of them found
        assert session.transport.run("uname -s").output == "Linux\n"
    finally:
        session.close()


@pytest.mark.parametrize("kind", ["ssh", "serial"])
def test_the_helper_answers_as_the_host_computes(board: BusyboxBoard, kind: str) -> None:
    session = session_on(board, kind)
    data = b"the quick brown fox" * 7
    cipher = Cipher(algorithms.AES(KEY), modes.CBC(IV)).encryptor()
    expected = cipher.update(data[:128]) + cipher.finalize()
    try:
        requests = "\\n".join(
            [
                f"hash sha256 {data.hex()}",
                f"skcipher cbc(aes) enc {KEY.hex()} {IV.hex()} {data[:128].hex()}",
                "hash no-such-algorithm 00",
            ]
        )
        # One line (a console runs lines): printf turns the escapes into newlines.
        session.transport.run(f"printf '{requests}\\n' > /tmp/hwcrypto-requests")
        answers = session.helper.run("batch /tmp/hwcrypto-requests").output.splitlines()
        assert answers[:2] == [f"ok {hashlib.sha256(data).hexdigest()}", f"ok {expected.hex()}"]
        assert answers[2].startswith("error 2 bind no-such-algorithm")  # ENOENT
        speed = session.helper.run("speed hash sha256 4096 1").output
        assert speed.splitlines()[-1].startswith("done ")
    finally:
        session.close()
    after = session_on(board, "ssh")
    try:
        assert not after.transport.run("ls /tmp/hwcrypto-helper").ok
    finally:
        after.close()


def test_inventory_from_the_host_over_ssh_and_serial(board: BusyboxBoard, tmp_path: Path) -> None:
    ran = {}
    for kind, target in (("ssh", board.ssh_target), ("serial", board.serial_target)):
        done = run_suite(board, target, tmp_path / f"{kind}.json")
        spec = parse_target(target)
        assert spec is not None
        assert f"hwcrypto: target {spec.describe()}: Linux " in done.stdout
        ran[kind] = json.loads((tmp_path / f"{kind}.json").read_text())
        # QEMU's builtin virtio-crypto backend has no RSA raw padding: its driver fails the
        # self-test, and the host must catch that from the board's kernel log.
        assert "alg: self-tests for rsa using virtio-crypto-rsa failed" in done.stdout
        assert done.returncode == 1, done.stdout[-2000:]
    ssh, serial = ran["ssh"], ran["serial"]
    drivers = {entry["driver"] for entry in ssh["inventory"]}
    assert {"cbc-aes-aesni", "virtio_crypto_aes_cbc", "sha256-generic"} <= drivers
    assert ssh["inventory"] == serial["inventory"]
    assert ssh["kernel"]["release"] == serial["kernel"]["release"]
    assert [f["kind"] for f in ssh["findings"]] == [f["kind"] for f in serial["findings"]]


def test_throughput_from_the_host_over_ssh(board: BusyboxBoard, tmp_path: Path) -> None:
    # Two sizes and a short budget: the shared host, and the judging is the suite's own.
    done = run_suite(
        board,
        board.ssh_target,
        tmp_path / "throughput.json",
        "--hwcrypto-suite=throughput",
        "--hwcrypto-algorithm=cbc(aes)",
        "--hwcrypto-block-sizes=16,4096",
        "--hwcrypto-budget=15",
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert "2 passed" in done.stdout.splitlines()[-1], done.stdout[-2000:]
    measured = json.loads((tmp_path / "throughput.json").read_text())["measurements"]
    drivers = {m["driver"] for m in measured if m["algorithm"] == "cbc(aes)"}
    assert {"cbc-aes-aesni", "cbc(aes-generic)"} <= drivers
    # Every measurement carries the board-side proof of the driver that served it.
    assert all("refcnt rose" in m["evidence"] for m in measured), measured[0]["evidence"]
    assert {m["block_size"] for m in measured} == {16, 4096}


def test_correctness_from_the_host_over_ssh(board: BusyboxBoard, tmp_path: Path) -> None:
    xml = tmp_path / "correctness.xml"
    done = run_suite(
        board,
        board.ssh_target,
        tmp_path / "correctness.json",
        "--hwcrypto-suite=correctness",
        "--hwcrypto-algorithm=cbc(aes),sha256",
        f"--junitxml={xml}",
    )
    assert done.returncode == 0, done.stdout[-2000:]
    # Known answers and fuzz cases of both kinds of driver, all answered by one batch.
    report = xml.read_text()
    assert 'name="test_known_answer[cbc(aes):cbc-aes-aesni:' in report
    assert 'name="test_differential[sha256:sha256-generic:fuzz#0]"' in report
    assert 'name="hwcrypto.correctness.board_batch" value="' in report
    assert 'failures="0"' in report
