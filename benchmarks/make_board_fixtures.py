# SPDX-License-Identifier: MIT
"""Results JSON from real board runs, for tests/unit/test_compare_board_fixtures.py.

Run from the repository root on the host (boots three UML boards and one QEMU board):

    .venv/bin/python benchmarks/make_board_fixtures.py [--only uml|qemu] [--out tests/data]

* board_uml_results_1.json, board_uml_results_2.json: the throughput suite on two fresh
  UML boards, nothing changed in between (A/A: `hwcrypto compare` must not flag them);
* board_uml_results_slow.json: the same, with the pytest session inside the board in a
  cgroup whose cpu.max gives it 85 % of the CPU (a ~15 % slowdown `compare` must flag).
  The period is 100 ms because the UML kernel runs at HZ=100: with a 10 ms period the
  quota is enforced per tick and "8500 10000" halves the throughput instead;
* board_qemu_results.json: the throughput suite on the QEMU board (aesni, virtio-crypto and
  generic AES: `compare --sw/--hw` crossovers).

The throttled run cannot use --hwcrypto-vm (the cgroup must be set up inside the board
before pytest starts), so it runs through `hwcrypto vm --exec` and its JSON comes back on
the console between marker lines.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv" / "bin"
SUITE = ["--hwcrypto", "--hwcrypto-suite=throughput", "-q", "-p", "no:cacheprovider"]
BEGIN, END = "HWCRYPTO-FIXTURE-JSON-BEGIN", "HWCRYPTO-FIXTURE-JSON-END"

THROTTLED_SCRIPT = """
echo +cpu > /sys/fs/cgroup/cgroup.subtree_control
mkdir -p /sys/fs/cgroup/hwcrypto-slow
echo '85000 100000' > /sys/fs/cgroup/hwcrypto-slow/cpu.max
echo $$ > /sys/fs/cgroup/hwcrypto-slow/cgroup.procs
{pytest} {args} --hwcrypto-json=/tmp/slow.json > /tmp/pytest.log 2>&1
echo {begin}; cat /tmp/slow.json; echo {end}
"""


def suite_on(board: str, out: Path) -> None:
    command = [str(VENV / "pytest"), f"--hwcrypto-vm={board}", *SUITE, f"--hwcrypto-json={out}"]
    subprocess.run(command, cwd=ROOT, check=False)
    print(f"wrote {out}")


def throttled_suite_on_uml(out: Path) -> None:
    script = THROTTLED_SCRIPT.format(
        pytest=shlex.quote(str(VENV / "pytest")),
        args=" ".join(shlex.quote(arg) for arg in SUITE),
        begin=BEGIN,
        end=END,
    )
    done = subprocess.run(
        [str(VENV / "hwcrypto"), "vm", "--exec", script, "uml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    console = done.stdout
    if BEGIN not in console or END not in console:
        sys.exit(f"the throttled run printed no results:\n{console[-2000:]}\n{done.stderr}")
    text = console.split(BEGIN, 1)[1].split(END, 1)[0]
    results = json.loads(text[text.index("{") :])
    results.setdefault("board", {})["slowdown"] = "cpu.max 85000 100000 on the pytest session"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data")
    parser.add_argument("--only", choices=("uml", "uml-aa", "uml-slow", "qemu"))
    args = parser.parse_args()
    if args.only in (None, "uml", "uml-aa"):
        suite_on("uml", args.out / "board_uml_results_1.json")
        suite_on("uml", args.out / "board_uml_results_2.json")
    if args.only in (None, "uml", "uml-slow"):
        throttled_suite_on_uml(args.out / "board_uml_results_slow.json")
    if args.only in (None, "qemu"):
        suite_on("qemu", args.out / "board_qemu_results.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
