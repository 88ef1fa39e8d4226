# SPDX-License-Identifier: MIT
"""measure/load.py: the load spec, and busy-loop children started and ended by PID."""

from __future__ import annotations

import os
import sys
import time

import pytest

from pytest_hwcrypto.measure.load import (
    BackgroundLoad,
    LoadSpec,
    LoadSpecError,
    parse_load_spec,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cpu:1", LoadSpec("cpu", 1)),
        ("CPU:4", LoadSpec("cpu", 4)),
        (" cpu:2 ", LoadSpec("cpu", 2)),
        ("cpu", LoadSpec("cpu", 1)),
        ("cpu:0", None),
        ("none", None),
        ("", None),
        (None, None),
    ],
)
def test_load_specs(text: str | None, expected: LoadSpec | None) -> None:
    assert parse_load_spec(text) == expected


@pytest.mark.parametrize("text", ["io:1", "cpu:x", "cpu:-1", "cpu:1.5", "cpu:9999"])
def test_bad_load_specs_name_the_accepted_form(text: str) -> None:
    with pytest.raises(LoadSpecError, match=r"cpu:N|whole number|at most"):
        parse_load_spec(text)


def test_describe_round_trips() -> None:
    spec = parse_load_spec("cpu:3")
    assert spec is not None and spec.describe() == "cpu:3"
    assert BackgroundLoad(None).describe() == "none"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_children_spin_while_the_block_runs_and_are_gone_after() -> None:
    with BackgroundLoad(LoadSpec("cpu", 2)) as load:
        pids = load.pids
        assert len(pids) == 2 and os.getpid() not in pids
        assert all(_alive(pid) for pid in pids)
        first = load.cpu_seconds()
        deadline = time.monotonic() + 5
        while load.cpu_seconds() <= first and time.monotonic() < deadline:
            time.sleep(0.05)
        assert load.cpu_seconds() > first, "the children keep using CPU"
    assert load.pids == ()
    assert not any(_alive(pid) for pid in pids)


def test_children_end_when_the_block_raises() -> None:
    load = BackgroundLoad(LoadSpec("cpu", 1))
    with pytest.raises(RuntimeError), load:
        pid = load.pids[0]
        raise RuntimeError("measurement failed")
    assert not _alive(pid)


def test_a_child_ignoring_sigterm_is_killed() -> None:
    stubborn = (
        sys.executable,
        "-c",
        "import os, signal; signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "os.write(1, b'+')\nwhile True: pass",
    )
    load = BackgroundLoad(LoadSpec("cpu", 1), command=stubborn)
    load.start()
    pid = load.pids[0]
    started = time.monotonic()
    load.stop()
    assert not _alive(pid)
    assert time.monotonic() - started < 10


def test_a_command_that_cannot_spin_is_reported() -> None:
    load = BackgroundLoad(LoadSpec("cpu", 1), command=(sys.executable, "-c", "pass"))
    with pytest.raises(OSError, match=r"ended at once|did not start"):
        load.start()
    assert load.pids == ()


def test_no_spec_starts_nothing() -> None:
    with BackgroundLoad(None) as load:
        assert load.pids == ()
        assert load.cpu_seconds() == 0.0
