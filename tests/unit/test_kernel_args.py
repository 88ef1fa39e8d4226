# SPDX-License-Identifier: MIT
"""Kernel command-line words for a board (`hwcrypto ab --a-cmdline/--b-cmdline`): checked
once, placed where each board's kernel reads them, and shown in the A/B report."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto import cli
from pytest_hwcrypto.ab.document import Side
from pytest_hwcrypto.ab.text import format_sides
from pytest_hwcrypto.boards import uml
from pytest_hwcrypto.boards.base import kernel_args_from
from pytest_hwcrypto.boards.qemu import KVM_ENVIRONMENT_VARIABLE, QemuBoard
from pytest_hwcrypto.boards.uml import UmlBoard


def test_words_are_split_like_a_shell_and_kept_in_order() -> None:
    words = kernel_args_from(["module_blacklist=aesni_intel", "a.b=1 'c=two words'"])
    assert words == ("module_blacklist=aesni_intel", "a.b=1", "c=two words")


@pytest.mark.parametrize("word", ["init=/bin/sh", "console=ttyS0", "mem=64M", "rdinit=/x", "ro"])
def test_what_the_board_sets_itself_is_refused_by_name(word: str) -> None:
    with pytest.raises(ValueError, match="the board sets"):
        kernel_args_from([f"quiet {word}"])


def test_an_unbalanced_quote_is_one_error() -> None:
    with pytest.raises(ValueError, match="No closing quotation"):
        kernel_args_from(["a='b"])


def test_uml_boots_with_the_words_before_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(uml.os, "sched_getaffinity", lambda pid: {0})
    board = UmlBoard()
    board.state_beyond_avx = []
    board.kernel_args = ("aes_generic.bench_work=20", "loglevel=7")
    argv = board.boot_argv(tmp_path, tmp_path / "guest.sh")
    at = argv.index("aes_generic.bench_work=20")
    assert argv[at + 1] == "loglevel=7"
    assert argv.index(f"init={tmp_path / 'guest.sh'}") > at
    plain = UmlBoard()
    plain.state_beyond_avx = []
    assert "loglevel=7" not in plain.boot_argv(tmp_path, tmp_path / "guest.sh")


def test_qemu_hands_each_word_to_vng_as_append(tmp_path: Path) -> None:
    board = QemuBoard(environ={KVM_ENVIRONMENT_VARIABLE: "0"})
    board.kernel_args = ("module_blacklist=aesni_intel", "x=1")
    argv = board.boot_argv(tmp_path, tmp_path / "guest.sh")
    exec_at = argv.index("--exec")
    appended = [argv[i + 1] for i, word in enumerate(argv[:exec_at]) if word == "--append"]
    assert appended == ["module_blacklist=aesni_intel", "x=1"]


def test_the_report_names_what_each_side_boots_with() -> None:
    sides = {
        "A": Side("A", "/k/linux", None, {}),
        "B": Side("B", "/k/linux", None, {"cmdline": ["module_blacklist=aes_ti"]}),
    }
    assert format_sides(sides) == [
        "A: /k/linux",
        "B: /k/linux; command line + module_blacklist=aes_ti",
    ]


def test_cli_refuses_a_word_the_board_owns(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ab", "--kernel", "/bin/sh", "--b-cmdline", "init=/bin/sh"]) == 2
    err = capsys.readouterr().err
    assert "--b-cmdline 'init=/bin/sh': the board sets init itself" in err
    assert err.count("\n") == 1


def test_cli_refuses_a_command_line_inside_one_boot(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["ab", "--b-blacklist", "aes_ti", "--b-cmdline", "x=1"]
    assert cli.main(argv) == 2
    assert "need a boot per side" in capsys.readouterr().err
