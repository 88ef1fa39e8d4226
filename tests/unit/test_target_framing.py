# SPDX-License-Identifier: MIT
"""The console framing: markers the echo cannot show whole, output found between them."""

from __future__ import annotations

import re
import subprocess

from pytest_hwcrypto.target.framing import Framing


def console(framing: Framing, command: str) -> str:
    """What a console with echo on shows: the line typed, then what sh prints (via real sh)."""
    line = framing.command_line(command)
    done = subprocess.run(["sh", "-c", line], capture_output=True, text=True, check=True)
    return line + "\r\n" + done.stdout.replace("\n", "\r\n")


def test_the_echoed_line_holds_neither_marker_whole() -> None:
    framing = Framing("0123456789ab")
    line = framing.command_line("cat /proc/crypto")
    assert framing.start not in line
    assert framing.end not in line
    assert "\n" not in line


def test_output_and_status_come_back_through_a_real_shell() -> None:
    framing = Framing.new()
    shown = console(framing, 'echo "it\'s"; echo to-stderr >&2; exit 7')
    match = re.search(framing.end_pattern(), shown)
    assert match is not None
    assert match.group(1) == "7"
    assert framing.output_between(shown[: match.start()]) == "it's\nto-stderr\n"


def test_output_without_a_final_newline_is_kept_as_it_is() -> None:
    framing = Framing.new()
    shown = console(framing, "printf abc")
    match = re.search(framing.end_pattern(), shown)
    assert match is not None and match.group(1) == "0"
    assert framing.output_between(shown[: match.start()]) == "abc"


def test_a_kernel_line_before_the_frame_is_not_output() -> None:
    framing = Framing.new()
    shown = "[   12.5] virtio_crypto: something\r\n" + console(framing, "echo ok")
    match = re.search(framing.end_pattern(), shown)
    assert match is not None
    assert framing.output_between(shown[: match.start()]) == "ok\n"


def test_a_torn_frame_is_told_apart() -> None:
    framing = Framing.new()
    assert framing.output_between("no start marker here\r\n") is None


def test_an_earlier_connection_s_markers_do_not_match() -> None:
    old, new = Framing.new(), Framing.new()
    assert old.token != new.token
    assert re.search(new.end_pattern(), console(old, "true")) is None
