# SPDX-License-Identifier: MIT
"""The pure parts of driving a board: the files fetched in one command, the helper's
samples, the compiler chosen for a board's architecture."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pytest_hwcrypto.target.helper_build import compiler_for, source_hash
from pytest_hwcrypto.target.helper_run import parse_bound_line, parse_speed_output
from pytest_hwcrypto.target.mirror import fetch_command, parse_fetched
from pytest_hwcrypto.target.protocol import TargetError


def test_fetched_files_come_back_byte_for_byte(tmp_path: Path) -> None:
    present = tmp_path / "present"
    present.write_bytes(bytes(range(256)) * 40)
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    missing = tmp_path / "missing"
    command = fetch_command((str(present), str(empty), str(missing)))
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
    files = parse_fetched(done.stdout)
    assert files[str(present)] == present.read_bytes()
    assert files[str(empty)] == b""
    assert str(missing) not in files


def test_speed_samples_and_total_are_read() -> None:
    text = "sample 10 40960 250000000\nnoise\nsample 12 49152 260000000\ndone 22 90112 510000000\n"
    samples, total = parse_speed_output(text)
    assert [s.operations for s in samples] == [10, 12]
    assert samples[0].bytes_per_second == pytest.approx(40960 / 0.25)
    assert total is not None and total.bytes == 90112


def test_speed_without_a_total_says_so() -> None:
    assert parse_speed_output("sample 1 16 100\n") == (
        parse_speed_output("sample 1 16 100")[0],
        None,
    )


@pytest.mark.parametrize(
    ("line", "rose"),
    [
        ("bound cbc-aes-aesni 2 3", True),  # a registered driver: one more reference
        ("bound cbc(aes-generic) -1 1", True),  # a template instance created by the bind
        ("bound cbc-aes-aesni 2 2", False),  # another driver took the bind
        ("bound cbc(aes-generic) -1 -1", False),  # not listed even after the bind
    ],
)
def test_the_bound_line_says_whether_the_driver_served(line: str, rose: bool) -> None:
    bound = parse_bound_line(f"noise\n{line}\ndone 1 16 100\n")
    assert bound is not None and bound.rose is rose
    assert bound.driver == line.split()[1]


def test_speed_output_without_a_bound_line_proves_nothing() -> None:
    assert parse_bound_line("done 1 16 100\nbound x y z\n") is None


@pytest.mark.parametrize(
    ("machine", "program"),
    [
        ("x86_64", "gcc"),
        ("aarch64", "aarch64-linux-gnu-gcc"),
        ("armv7l", "arm-linux-gnueabihf-gcc"),
    ],
)
def test_each_architecture_has_its_compiler(machine: str, program: str) -> None:
    assert compiler_for(machine).program == program


def test_an_unknown_architecture_is_named() -> None:
    with pytest.raises(TargetError, match="'mips'"):
        compiler_for("mips")


def test_the_cache_key_follows_the_source(tmp_path: Path) -> None:
    one, two = tmp_path / "a.c", tmp_path / "b.c"
    one.write_text("int main(void) { return 0; }\n")
    two.write_text("int main(void) { return 1; }\n")
    assert source_hash(one) != source_hash(two)
    assert source_hash(one) == source_hash(one)
