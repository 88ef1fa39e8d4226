# SPDX-License-Identifier: MIT
"""What pasting does to text, undone: line ends, prompts, glue, labels, commands."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import pytest_hwcrypto.parsers as parsers
from pytest_hwcrypto.parsers.commandline import parse_command, strip_prompt
from pytest_hwcrypto.parsers.parse import parse_text
from pytest_hwcrypto.parsers.paste import read_paste

ROW = "aes-xts 512b 88.7 MiB/s 54.6 MiB/s"


@pytest.mark.parametrize(
    ("line", "rest"),
    [
        ("$ openssl speed -evp aes-128-cbc", "openssl speed -evp aes-128-cbc"),
        ("[root@host ~]# cryptsetup benchmark", "cryptsetup benchmark"),
        ("root@box:~# cryptsetup benchmark", "cryptsetup benchmark"),
        ("user@pc ~/src $ fio --name=x", "fio --name=x"),
        ("bash-5.2$ openssl speed", "openssl speed"),
        ("(venv) $ openssl speed", "openssl speed"),
        ("# openssl speed -elapsed", "openssl speed -elapsed"),
        ("# Algorithm | Key | Encryption | Decryption", None),  # cryptsetup's header
        ("## kernel 5.4.6", None),
    ],
)
def test_prompts_are_removed(line: str, rest: str | None) -> None:
    stripped, prompted = strip_prompt(line)
    if rest is None:
        assert (stripped, prompted) == (line, False)
    else:
        assert (stripped, prompted) == (rest, True)


def test_command_flags_of_each_tool() -> None:
    openssl = parse_command("sudo openssl speed -elapsed -engine afalg -multi 2 -evp aes-128-cbc")
    assert openssl is not None
    assert openssl.flags == {"elapsed": True, "engine": "afalg", "multi": "2", "evp": "aes-128-cbc"}
    legacy = parse_command("openssl speed -elapsed -bytes 4096 -seconds 1 -mr aes-128-cbc sha256")
    assert legacy is not None
    assert legacy.flags == {"elapsed": True, "bytes": "4096", "seconds": "1", "mr": True}
    assert legacy.arguments == ["aes-128-cbc", "sha256"]
    cryptsetup = parse_command("cryptsetup benchmark -c aes-xts --key-size 512 --pbkdf=argon2id")
    assert cryptsetup is not None
    assert cryptsetup.flags == {"cipher": "aes-xts", "key-size": "512", "pbkdf": "argon2id"}
    fio = parse_command("fio --name=randrw --rw=randrw --bs=4k --direct=1 | tee log")
    assert fio is not None and fio.flags["bs"] == "4k" and "tee" not in fio.arguments
    assert parse_command("openssl version") is None  # not `speed`
    assert parse_command("uname -r") is None


def test_line_ends_tabs_odd_spaces_and_colours_are_plain_text() -> None:
    text = "a\r\nb\rc\n\x1b[1;32md\x1b[0m\te\u00a0f\u3000g\u200b"
    paste = read_paste(text, "x")
    assert paste.lines == ("a", "b", "c", "d       e f g")
    assert paste.origins == (1, 2, 3, 4)


@pytest.mark.parametrize(
    "glued",
    [
        f"{ROW}The next run on kernel 5.4:",
        f"{ROW}次のカーネル:",
        f"{ROW} The next run on kernel 5.4:",
    ],
)
def test_a_value_glued_to_the_next_words_still_reads(glued: str) -> None:
    document = parse_text("auto", f"{glued}\n{ROW}\n", "glued.txt")
    assert [m.bytes_per_second for m in document.tables[0].measurements] == [
        88.7 * 2**20,
        54.6 * 2**20,
    ]
    assert len(document.tables) == 2
    assert document.tables[1].label is not None
    assert document.tables[1].label.endswith(":")


def test_labels_are_the_nearest_line_above_that_is_not_a_command() -> None:
    text = "\n".join(
        [
            "Hi all,",
            "### kernel v5.5",
            "```",
            ROW,
            "```",
            "**kernel v5.4.6**",
            "",
            "with CESA (explicit):",
            "root@nas:~# cryptsetup benchmark -c aes-xts -s 512",
            ROW,
            "and quoted from the list:",
            "> aes-cbc 128b 100.0 MiB/s 90.0 MiB/s",
        ]
    )
    document = parse_text("auto", text, "post.txt")
    first, second, third = document.tables
    assert first.label == "kernel v5.5" and first.command is None
    # the line that tells the tables apart, not the command (kept as its own field)
    assert second.label == "with CESA (explicit):"
    assert second.heading == "with CESA (explicit):"
    assert second.command is not None and second.command.flags["key-size"] == "512"
    assert third.label == "and quoted from the list:"
    assert third.measurements[0].algorithm == "aes-cbc"
    assert [m.extra["table"] for m in document.measurements] == [0, 0, 1, 1, 2, 2]
    assert document.measurements[2].extra["label"] == "with CESA (explicit):"
    assert document.measurements[2].extra["command"] == "cryptsetup benchmark -c aes-xts -s 512"


def test_warnings_name_the_line_of_the_original_text() -> None:
    text = "intro\r\n\r\n" + "aes-xts 512b 88.7 MiB/s\r\n"
    document = parse_text("auto", text, "post.txt")
    assert document.warnings == ["post.txt:3: aes-xts 512b row has no decryption value"]


def test_parsers_are_the_bottom_layer() -> None:
    """parsers/ imports only itself, vocabulary.py, model/results.py and the standard library
    (import-linter checks the layers; this also keeps third-party packages out)."""
    allowed = (
        "pytest_hwcrypto.parsers",
        "pytest_hwcrypto.vocabulary",
        "pytest_hwcrypto.model.results",
    )
    stdlib = getattr(sys, "stdlib_module_names", None)  # Python 3.10+
    for path in Path(parsers.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            for name in names:
                if name.startswith("pytest_hwcrypto"):
                    assert name.startswith(allowed), f"{path.name} imports {name}"
                elif stdlib is not None:
                    assert name.split(".")[0] in stdlib, f"{path.name} imports {name}"


def test_a_command_of_another_tool_is_not_the_tables_command() -> None:
    text = f"$ openssl speed -evp aes-128-cbc\n{ROW}\n"
    [table] = parse_text("auto", text, "post").tables
    assert table.label == "openssl speed -evp aes-128-cbc"
    assert table.command is None
