# SPDX-License-Identifier: MIT
"""pytest's progress line as a board relays it: one file name, then the dots, even when a
test runs longer than the console is polled (the throughput suite measures for a minute).

The inner session is a real pytest run in a real pty (pexpect), relayed by the boards'
own Console; only the board is left out (a shell prints the markers the guest script
prints), so the test runs on the host in a few seconds.
"""

from __future__ import annotations

import io
import re
import shlex
import sys

import pytest

from pytest_hwcrypto.boards.console import EXIT_MARKER, READY_MARKER, Console

pytest_plugins = ["pytester"]


PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist"]


def relay(pytester: pytest.Pytester, poll_seconds: float) -> str:
    inner = shlex.join([*PYTEST, "--color=no", str(pytester.path)])
    script = f"echo {READY_MARKER}; {inner}; echo {EXIT_MARKER}$?"
    console = Console(["/bin/sh", "-c", script], pytester.path / "console.log")
    console.poll_seconds = poll_seconds
    stream = io.StringIO()
    outcome = console.run(timeout=120, stream=stream)
    assert outcome.exit_code == 0, stream.getvalue()
    return stream.getvalue()


def test_a_slow_test_does_not_repeat_the_file_name(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_slow="""
        import time

        def test_measures_for_a_while():
            time.sleep(1.0)

        def test_after():
            pass
        """
    )
    output = relay(pytester, poll_seconds=0.1)
    progress = [line for line in output.splitlines() if "test_slow.py" in line]
    # garbled, as before: "test_slow.py test_slow.py test_slow.py ... .."
    assert progress == [progress[0]], output
    assert re.fullmatch(r"test_slow\.py \.\.\s+\[100%\]", progress[0]), output


def test_the_exit_marker_after_an_unfinished_line_is_not_relayed(
    pytester: pytest.Pytester,
) -> None:
    """Output without a final newline, already relayed in part, is finished by one newline;
    the marker that shares its line stays out."""
    console = Console(
        [
            "/bin/sh",
            "-c",
            f"echo {READY_MARKER}; printf 'partial'; sleep 0.5; printf ' rest'; "
            f"echo {EXIT_MARKER}3",
        ],
        pytester.path / "console.log",
    )
    console.poll_seconds = 0.1
    stream = io.StringIO()
    outcome = console.run(timeout=60, stream=stream)
    assert outcome.exit_code == 3
    assert stream.getvalue() == "partial rest\n"
