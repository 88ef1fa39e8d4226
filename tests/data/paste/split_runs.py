# SPDX-License-Identifier: MIT
"""Cut a board's output (record_*.sh) into one raw file per run: NAME.txt.

The recording scripts announce each run with a marker line ``@@@ NAME @@@ COMMAND``; the
lines up to the next marker are exactly what COMMAND printed.  Lines starting with
``hwcrypto: `` are printed by `hwcrypto vm` on the host (boot and exit notes), not by the
command, and are left out.  Prints ``NAME<TAB>COMMAND`` per file written, for README.md.

    python3 tests/data/paste/split_runs.py BOARD_STDOUT tests/data/paste/
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

MARKER = re.compile(r"^@@@ (?P<name>\S+) @@@ ?(?P<command>.*)$")
SKIPPED = {"end", "cleanup"}


def split(stdout: Path, directory: Path) -> None:
    name: str | None = None
    lines: list[str] = []

    def flush() -> None:
        if name is not None and name not in SKIPPED:
            (directory / f"{name}.txt").write_text("".join(lines), encoding="utf-8")

    for line in stdout.read_text(encoding="utf-8").splitlines(keepends=True):
        marker = MARKER.match(line.rstrip("\n"))
        if marker:
            flush()
            name, lines = marker["name"], []
            if name not in SKIPPED:
                print(f"{name}\t{marker['command'].strip()}")
        elif name is not None and not line.startswith("hwcrypto: "):
            lines.append(line)
    flush()


if __name__ == "__main__":
    split(Path(sys.argv[1]), Path(sys.argv[2]))
