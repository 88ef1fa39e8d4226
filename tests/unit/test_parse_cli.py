# SPDX-License-Identifier: MIT
"""`hwcrypto parse`: human table, JSON, stdin, --table, one-line errors with exit 2."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pytest_hwcrypto.cli import main
from pytest_hwcrypto.model.results import Results
from pytest_hwcrypto.report.benchmark_import import results_from_document

VARIANTS = Path(__file__).parent.parent / "data" / "paste" / "variants"
POST = str(VARIANTS / "post_cryptsetup_two_kernels.txt")


def test_human_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "auto", POST]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith("post_cryptsetup_two_kernels.txt: 2 table(s) (auto)")
    assert 'table 0  cryptsetup  "新しいカーネル (aes_ti あり, aes-fixed-time):"' in out
    assert 'table 1  cryptsetup  "以前のカーネル (aes-generic):"' in out
    assert "  aes-cbc      128-bit  encrypt  119.4 MiB/s" in out
    assert "argon2id: 4 iterations, 192187 KiB memory, 4 threads for 256-bit key" in out


def test_json_is_a_results_file_that_compare_reads(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "cryptsetup-benchmark", POST, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["schema"] == "pytest-hwcrypto/1"
    results = Results.from_json(document, "out.json")
    assert len(results.measurements) == 48
    first = document["measurements"][0]
    assert (first["table"], first["label"]) == (0, "新しいカーネル (aes_ti あり, aes-fixed-time):")
    assert [t["table"] for t in document["paste"]["tables"]] == [0, 1]
    assert document["paste"]["records"][0]["kind"] == "cryptsetup-pbkdf"
    assert len(results_from_document(document, "out.json").measurements) == 48


def test_table_option_and_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (VARIANTS / "post_openssl_six.txt").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text)))
    assert main(["parse", "openssl-speed", "-", "--table", "4", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert {m["table"] for m in document["measurements"]} == {4}
    assert [f["kind"] for f in document["findings"]] == ["cpu-time-not-elapsed"]
    assert document["paste"]["file"] == "<stdin>"


def test_warnings_go_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "auto", str(VARIANTS / "cs_truncated.txt")]) == 0
    captured = capsys.readouterr()
    assert captured.err.endswith(
        "cs_truncated.txt:21: twofish-xts 512b row has no decryption value\n"
    )
    assert captured.err.startswith("hwcrypto: warning: ")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["fio", "/no/such/file"], "/no/such/file: cannot read: No such file or directory"),
        (["fio", POST], "post_cryptsetup_two_kernels.txt: no fio output"),
        (
            ["auto", POST, "--table", "7"],
            "post_cryptsetup_two_kernels.txt: no table 7 (it has tables 0..1)",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    arguments: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["parse", *arguments]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith("hwcrypto: error: ")
    assert message in captured.err
    assert "Traceback" not in captured.err


def test_binary_and_empty_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    binary = tmp_path / "core.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert main(["parse", "auto", str(binary)]) == 2
    assert main(["parse", "auto", str(empty)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].endswith("core.bin: no cryptsetup benchmark, openssl speed, fio or tcrypt table")
    assert err[1].endswith("empty.txt: empty input, nothing to parse")


def test_compare_two_tables_of_one_post(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """post.json#1 (the older kernel's table, baseline) against post.json#0 (current): the
    AES rows that fell by more than 10 % regress, no other row does."""
    assert main(["parse", "auto", POST, "--json"]) == 0
    post = tmp_path / "post.json"
    post.write_text(capsys.readouterr().out)
    assert main(["compare", f"{post}#1", f"{post}#0", "--max-drop", "10%", "--json"]) == 1
    comparisons = json.loads(capsys.readouterr().out)["comparisons"]
    regressed = {(c["algorithm"], c["key_bits"], c["op"]) for c in comparisons if c["failed"]}
    assert regressed and {algorithm for algorithm, _, _ in regressed} <= {"aes-cbc", "aes-xts"}
    assert ("aes-cbc", 128, "encrypt") in regressed
    assert not any(c["failed"] for c in comparisons if not c["algorithm"].startswith("aes-"))
    assert main(["compare", f"{post}#1", f"{post}#0"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert all("aes-" in line for line in lines if "regress" in line)


def test_a_table_the_post_does_not_have_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["parse", "auto", POST, "--json"]) == 0
    post = tmp_path / "post.json"
    post.write_text(capsys.readouterr().out)
    assert main(["compare", f"{post}#1", f"{post}#5"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"hwcrypto: error: {post}: no table 5 (it has tables 0..1)"
    )
