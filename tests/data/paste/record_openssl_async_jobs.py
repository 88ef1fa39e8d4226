# SPDX-License-Identifier: MIT
"""Record `openssl speed -async_jobs N` through the afalg engine on the QEMU board.

Inside the board (the test drivers loaded, run as root from the repository root):

    hwcrypto vm qemu --test-drivers \
      --exec '.venv/bin/python tests/data/paste/record_openssl_async_jobs.py' > OUT

The asynchronous test engine (100 ms a request, its work skipped) is made the cbc(aes)
winner for the runs, so the afalg engine reaches it; each run is printed as a block
``=====BEGIN NAME rc=N`` / ``$ COMMAND`` / what COMMAND printed (stdout and stderr, as a
terminal shows them) / ``=====END NAME``. On the host, cut a block into a raw file:

    python3 tests/data/paste/record_openssl_async_jobs.py cut OUT NAME raw/FILE.txt
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ENGINE = "cbc-aes-hwcrypto-test-async"
PARAMETERS = Path("/sys/module/hwcrypto_test/parameters")
COMMAND = "openssl speed -elapsed -evp aes-128-cbc -engine afalg{mr} -bytes 4096 -seconds 3"
RUNS = (
    ("human", COMMAND.format(mr="") + " -async_jobs 4"),
    ("mr", COMMAND.format(mr=" -mr") + " -async_jobs 4"),
    ("one", COMMAND.format(mr="") + " -async_jobs 1"),
)


def record() -> None:
    from pytest_hwcrypto.kernel import afalg
    from pytest_hwcrypto.kernel.rerank import Reranker
    from pytest_hwcrypto.ledger import Ledger

    (PARAMETERS / "async_latency_us").write_text("100000")
    (PARAMETERS / "async_ns_per_kib").write_text("0")
    (PARAMETERS / "async_skip_compute").write_text("Y")
    afalg.instantiate_any("cbc(aes)")
    with Reranker(Ledger(), afalg.instantiate_any).prefer(ENGINE):
        for name, command in RUNS:
            done = subprocess.run(
                command,
                shell=True,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                check=False,
            )
            print(f"=====BEGIN {name} rc={done.returncode}")
            print(f"$ {command}\n{done.stdout}", end="")
            print(f"=====END {name}")


def cut(board_output: Path, name: str, raw: Path) -> None:
    lines = board_output.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(f"=====BEGIN {name} "))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith(f"=====END {name}"))
    raw.write_text("".join(lines[start + 1 : end]), encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:2] == ["cut"]:
        cut(Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4]))
    else:
        record()
