# SPDX-License-Identifier: MIT
"""The run journal: recorded before a change, struck after its undo, swept after a death."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_hwcrypto import ledger
from pytest_hwcrypto.ledger import Entry, Ledger


def test_record_then_strike_leaves_no_file(tmp_path: Path) -> None:
    journal = Ledger(tmp_path)
    journal.record(Entry("priority", "cbc(aes-generic)", {"priority": 100}))
    journal.record(Entry("priority", "cbc(aes-generic)", {"priority": 300}))  # first wins
    assert [e.undo for e in journal.entries()] == [{"priority": 100}]
    journal.strike("priority", "cbc(aes-generic)")
    assert not journal.path.exists()


def _dead_run(directory: Path, entries: list[dict[str, Any]], boot: str | None = None) -> Path:
    """The journal a killed run left: its PID is that of a process that has exited."""
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(child.stdout)
    path = directory / f"run-{pid}-deadbeef.json"
    data = {"pid": pid, "started": "1", "boot": boot or ledger.boot_id(), "entries": entries}
    path.write_text(json.dumps(data))
    return path


def test_sweep_undoes_a_dead_runs_changes_and_only_those(tmp_path: Path) -> None:
    dead = _dead_run(tmp_path, [{"kind": "priority", "key": "d", "undo": {"priority": 100}}])
    alive = Ledger(tmp_path)
    alive.record(Entry("priority", "mine", {"priority": 1}))
    undone: list[Mapping[str, Any]] = []

    def undo(data: Mapping[str, Any]) -> str:
        undone.append(data)
        return "restored d"

    assert ledger.sweep({"priority": undo}, tmp_path) == ["restored d"]
    assert undone == [{"priority": 100}]
    assert not dead.exists()
    assert alive.path.exists(), "a live run's journal is never swept"


def test_what_cannot_be_undone_stays_for_the_next_sweep(tmp_path: Path) -> None:
    dead = _dead_run(tmp_path, [{"kind": "loop", "key": "/dev/loop7", "undo": {}}])
    assert ledger.sweep({}, tmp_path) == ["kept loop /dev/loop7: this version cannot undo it"]
    assert json.loads(dead.read_text())["entries"][0]["key"] == "/dev/loop7"


def test_another_boot_is_discarded_without_undoing(tmp_path: Path) -> None:
    dead = _dead_run(tmp_path, [{"kind": "priority", "key": "d", "undo": {}}], boot="old-boot")
    called = []
    messages = ledger.sweep({"priority": lambda data: called.append(data) or ""}, tmp_path)
    assert not called and not dead.exists()
    assert "not from this boot" in messages[0]


def test_a_reused_pid_does_not_keep_a_dead_run_alive(tmp_path: Path) -> None:
    import os

    path = tmp_path / "run-1-x.json"  # PID 1 is alive, but it started long before
    data = {"pid": 1, "started": "not-init's-start-time", "boot": ledger.boot_id(), "entries": []}
    path.write_text(json.dumps(data))
    assert (path, True) in list(ledger.stale_files(tmp_path))
    assert os.getpid() != 1
