# SPDX-License-Identifier: MIT
"""A journal of what a run changed in the system, so it can be undone even after kill -9.

Every change the plugin makes outside its own process -- a re-ranked driver priority now;
loop devices, dm-crypt volumes and containers as they come -- is written here *before* it
is made, with what undoes it, and struck out once undone. A run that dies leaves its file
behind; the next run's start and `hwcrypto sweep` undo what such files record, and only
that: nothing the plugin did not write down is touched.

One JSON file per run: `<state dir>/run-<pid>-<boot>.json`. A file is stale when its
process is gone (the process's start time is recorded too, so a reused PID does not keep a
dead run's changes alive). A file from another boot of this machine is discarded without undoing
anything: a reboot already reset what it recorded (priorities, devices, mounts).

The state directory is `$HWCRYPTO_STATE_DIR`, else /run/pytest-hwcrypto (tmpfs: nothing
survives a reboot, and nothing secret is ever written here).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STATE_DIR_ENV = "HWCRYPTO_STATE_DIR"
DEFAULT_STATE_DIR = Path("/run/pytest-hwcrypto")
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")

# kind -> the function that undoes one entry of that kind, returning what it did.
Undo = Callable[[Mapping[str, Any]], str]


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get(STATE_DIR_ENV) or DEFAULT_STATE_DIR)


def boot_id(path: Path = BOOT_ID) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return "unknown-boot"


@dataclass(frozen=True)
class Entry:
    kind: str  # e.g. "priority"
    key: str  # what it is about, unique per kind (e.g. the driver name)
    undo: dict[str, Any]  # what the undo function needs (e.g. the original priority)


def process_start(pid: int) -> str | None:
    """The start time of process `pid` in clock ticks since boot (/proc/PID/stat field 22)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ")".
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


class Ledger:
    """This process's journal. Writes are atomic (temp file + rename)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or state_dir()
        self.pid = os.getpid()
        self.started = process_start(self.pid)
        self.boot = boot_id()
        self.path = self.directory / f"run-{self.pid}-{self.boot[:8]}.json"

    def entries(self) -> list[Entry]:
        return _read(self.path)

    def record(self, entry: Entry) -> None:
        """Write `entry` down (before the change is made); an earlier one for its key stays."""
        entries = self.entries()
        if any(e.kind == entry.kind and e.key == entry.key for e in entries):
            return  # the first record holds the original state
        self._write([*entries, entry])

    def strike(self, kind: str, key: str) -> None:
        """The change was undone: forget it (and the file, once empty)."""
        self._write([e for e in self.entries() if not (e.kind == kind and e.key == key)])

    def _write(self, entries: list[Entry]) -> None:
        header = {"pid": self.pid, "started": self.started, "boot": self.boot}
        _write_file(self.path, header, entries)


def _write_file(path: Path, header: Mapping[str, Any], entries: list[Entry]) -> None:
    if not entries:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = {
        **header,
        "entries": [{"kind": e.kind, "key": e.key, "undo": e.undo} for e in entries],
    }
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(data, indent=1))
    os.replace(temporary, path)


def _read(path: Path) -> list[Entry]:
    try:
        data = json.loads(path.read_text())
        return [Entry(str(e["kind"]), str(e["key"]), dict(e["undo"])) for e in data["entries"]]
    except FileNotFoundError:
        return []
    except (OSError, ValueError, KeyError, TypeError):
        return []  # a torn or foreign file: nothing in it can be trusted to undo


def _header(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
        return {"pid": int(data["pid"]), "started": data.get("started"), "boot": data["boot"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def stale_files(directory: Path | None = None) -> Iterator[tuple[Path, bool]]:
    """(file, same boot) for every journal whose process is gone."""
    directory = directory or state_dir()
    current = boot_id()
    for path in sorted(directory.glob("run-*.json")):
        header = _header(path)
        if header is None or header["boot"] != current:
            yield path, False
            continue
        pid = header["pid"]
        if pid == os.getpid():
            continue  # this run's own journal
        started = process_start(pid)
        if started is None or started != header["started"]:
            yield path, True


def sweep(undo: Mapping[str, Undo], directory: Path | None = None) -> list[str]:
    """Undo what dead runs of this boot recorded; one line per thing done or kept."""
    done: list[str] = []
    for path, same_boot in stale_files(directory):
        if not same_boot:
            path.unlink(missing_ok=True)
            done.append(f"discarded {path.name}: not from this boot, nothing left to undo")
            continue
        left = []
        # Newest first, as a journal is undone: a dm volume goes before the loop device
        # it sits on, and that before its backing file.
        for entry in reversed(_read(path)):
            handler = undo.get(entry.kind)
            if handler is None:
                left.append(entry)
                done.append(f"kept {entry.kind} {entry.key}: this version cannot undo it")
                continue
            try:
                done.append(handler(entry.undo))
            except OSError as error:
                left.append(entry)
                done.append(f"could not undo {entry.kind} {entry.key}: {error}")
        # What could not be undone stays on record for the next sweep, in its order.
        _write_file(path, _header(path) or {}, left[::-1])
    return done
