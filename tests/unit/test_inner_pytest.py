# SPDX-License-Identifier: MIT
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import pytest_hwcrypto
from pytest_hwcrypto.boards.base import host_dirs_to_keep
from pytest_hwcrypto.boards.console import scan_kernel_log
from pytest_hwcrypto.boards.inner_pytest import (
    copy_input_files,
    copy_result_files,
    inner_pytest_args,
    input_files_from_elsewhere,
)
from pytest_hwcrypto.settings import Resolved


def test_board_options_are_dropped_and_result_files_redirected(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    inner = inner_pytest_args(
        [
            "--hwcrypto",
            "--hwcrypto-vm=uml",
            "--hwcrypto-kernel",
            "/k",
            "--junitxml",
            "out/j.xml",
            "--hwcrypto-json=r.json",
            "-k",
            "aes",
        ],
        cwd=tmp_path,
        run_dir=run_dir,
    )
    assert inner.args == [
        "-p",
        "no:cacheprovider",
        "--color=no",
        "--hwcrypto",
        f"--junitxml={run_dir / 'junit.xml'}",
        f"--hwcrypto-json={run_dir / 'results.json'}",
        "-k",
        "aes",
    ]
    assert inner.result_files == {
        "junit.xml": tmp_path / "out/j.xml",
        "results.json": tmp_path / "r.json",
    }


def test_result_files_are_copied_to_the_callers_paths(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "junit.xml").write_text("<testsuites/>")
    inner = inner_pytest_args(
        ["--junitxml=deep/j.xml", "--hwcrypto-json=r.json"], cwd=tmp_path, run_dir=run_dir
    )
    assert copy_result_files(inner, run_dir) == [tmp_path / "deep/j.xml"]
    assert (tmp_path / "deep/j.xml").read_text() == "<testsuites/>"


def test_input_files_are_copied_where_the_board_can_read_them(tmp_path: Path) -> None:
    """A baseline or profile under the host's /tmp is not visible inside the board."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (tmp_path / "base.json").write_text("{}")
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab/board.toml").write_text("[board]")
    inner = inner_pytest_args(
        ["--hwcrypto-baseline", "base.json", "--hwcrypto-board=lab/board.toml", "-q"],
        cwd=tmp_path,
        run_dir=run_dir,
    )
    assert inner.args[-3:] == [
        f"--hwcrypto-baseline={run_dir / 'baseline/base.json'}",
        f"--hwcrypto-board={run_dir / 'board/board.toml'}",
        "-q",
    ]
    copy_input_files(inner, run_dir)
    assert (run_dir / "baseline/base.json").read_text() == "{}"
    assert (run_dir / "board/board.toml").read_text() == "[board]"


def test_a_pytest_benchmark_run_id_is_copied_as_the_file_it_names(tmp_path: Path) -> None:
    saved = tmp_path / ".benchmarks/Linux-CPython-3.11-64bit/0003_abc_20261201.json"
    saved.parent.mkdir(parents=True)
    saved.write_text("{}")
    run_dir = tmp_path / "run"
    inner = inner_pytest_args(["--hwcrypto-baseline=0003"], cwd=tmp_path, run_dir=run_dir)
    assert inner.input_files == {f"baseline/{saved.name}": saved}


def test_input_files_set_by_environment_become_options_that_are_copied() -> None:
    """HWCRYPTO_BASELINE reaches the board as an environment variable too, but its path may
    not exist there: the runner turns it into an option, which is copied in."""
    settings = {
        "baseline": Resolved("/tmp/good.json", "environment HWCRYPTO_BASELINE"),
        "board": Resolved("lab.toml", "command line"),  # already among the arguments
        "json": Resolved("out.json", "environment HWCRYPTO_JSON"),  # written, not read
    }
    assert input_files_from_elsewhere(settings) == ["--hwcrypto-baseline=/tmp/good.json"]
    assert input_files_from_elsewhere({"baseline": Resolved(None, "default")}) == []


def test_kernel_log_scanner_finds_selftest_failures_and_oopses() -> None:
    log = """
[    3.100000] virtio_crypto virtio0: max_queues: 1
[    3.200000] alg: akcipher: test 1 failed for virtio-crypto-rsa, err=-22
[    4.000000] BUG: kernel NULL pointer dereference, address: 0000000000000008
[    4.000001] Oops: 0000 [#1] PREEMPT SMP NOPTI
alg: akcipher: test 1 failed for virtio-crypto-rsa, err=-22
[    5.0] WARNING: CPU: 0 PID: 12 at crypto/testmgr.c:5800 alg_test+0x1/0x2
"""
    events = scan_kernel_log(log)
    assert [(e.kind, e.line[:24]) for e in events] == [
        ("selftest-failed", "alg: akcipher: test 1 fa"),
        ("oops", "BUG: kernel NULL pointer"),
        ("oops", "Oops: 0000 [#1] PREEMPT "),
        ("warning", "WARNING: CPU: 0 PID: 12 "),
    ]


def test_ordinary_boot_messages_are_not_trouble() -> None:
    assert scan_kernel_log("alg: No test for lzo (lzo-generic)\nnet: registered\n") == []


def test_host_dirs_under_scratch_are_kept_outermost_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """A CI checkout under /tmp: its venv and the plugin source must stay visible."""
    monkeypatch.setattr(sys, "prefix", "/tmp/ci/checkout/.venv")
    monkeypatch.setattr(pytest_hwcrypto, "__file__", "/tmp/ci/checkout/pytest_hwcrypto/__init__.py")
    run_dir = Path("/tmp/hwcrypto-board-0123")
    kept = host_dirs_to_keep(Path("/tmp/work"), ["/tmp", "/run"], run_dir)
    assert kept == [Path("/tmp/work"), Path("/tmp/ci/checkout")]  # the venv is inside
    monkeypatch.setattr(pytest_hwcrypto, "__file__", "/srv/src/pytest_hwcrypto/__init__.py")
    monkeypatch.setattr(sys, "prefix", "/usr")
    assert host_dirs_to_keep(Path("/srv/work"), ["/tmp"], run_dir) == []
    assert host_dirs_to_keep(run_dir / "sub", ["/tmp"], run_dir) == []


def test_html_report_is_written_in_the_run_directory_and_copied_out(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    inner = inner_pytest_args(["--hwcrypto-html", "out/r.html"], cwd=tmp_path, run_dir=run_dir)
    assert f"--hwcrypto-html={run_dir / 'report.html'}" in inner.args
    assert inner.result_files == {"report.html": tmp_path / "out/r.html"}
