# SPDX-License-Identifier: MIT
"""A history of real UML boots for the `hwcrypto history show` tests: one run per kernel
(tests/data/board_uml_results_1.json), the 64 KiB cbc figures replaced by round5/all10/1's
boots (tests/data/history/README.md): 16 kernels at the old level, 4 at the new; the
4 KiB and 64 KiB series only."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from pytest_hwcrypto.cli import main
from pytest_hwcrypto.cli.exits import EXIT_OK

DATA = Path(__file__).resolve().parent / "data"
KERNELS = 20  # 16 at the old level, 4 at the new


def write_runs(directory: Path) -> list[str]:
    """One results file per kernel 6.1.100 .. 6.1.119, the real boots' figures in."""
    template = json.loads((DATA / "board_uml_results_1.json").read_text())
    trials: dict[str, Any] = json.loads(
        (DATA / "history" / "uml_ab_pairs_extract.json").read_text()
    )
    boots = trials["round5/all10/1"]["series"]
    paths = []
    for n in range(KERNELS):
        document = copy.deepcopy(template)
        document["kernel"]["release"] = f"6.1.{100 + n}"
        # two block sizes of each series family: every group and both levels of the page,
        # at a quarter of the judging time of all seven
        document["measurements"] = [
            m for m in document["measurements"] if m["block_size"] in (4096, 65536)
        ]
        for measurement in document["measurements"]:
            values = boots.get(measurement["driver"])
            if values and measurement["block_size"] == 65536:
                measurement["bytes_per_second"] = float((values["a"] + values["b"])[n])
        path = directory / f"run{n:02d}.json"
        path.write_text(json.dumps(document))
        paths.append(str(path))
    return paths


def build_history(directory: Path) -> Path:
    db = directory / "history.sqlite"
    files = write_runs(directory)
    assert main(["history", "add", "--history-db", str(db), "--board", "uml", *files]) == EXIT_OK
    return db
