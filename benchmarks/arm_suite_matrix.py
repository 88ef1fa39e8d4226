# SPDX-License-Identifier: MIT
"""Shipped suites on an ARM board, short settings, one board session per call: what passed,
what was skipped (and why), what failed, and how long each suite file took. The whole list
outlasts one board session under TCG on a busy host, so docs/boards.md "Every suite on the ARM
boards" runs it in chunks (`-- --hwcrypto-suite=...`, the last one wins), each with its
own OUT_DIR, and tabulates them together with --table.

    nice -n 19 .venv/bin/python benchmarks/arm_suite_matrix.py qemu-arm64 OUT_DIR [-- PYTEST_ARGS]
    .venv/bin/python benchmarks/arm_suite_matrix.py --table OUT_DIR/qemu-arm64-junit.xml ...

The session is the one .ci/run's stage 5 runs on the x86 QEMU board, shortened the same
way (16 MiB dm-crypt volumes) and more for TCG on two emulated cores at a busy host's
pace (AES-CBC and AES-XTS only, 16 B and 64 KiB blocks, a 5 s throughput budget,
concurrency 1 and 4, the board given 20 min; -v, so a board ended early still shows each
outcome on its console): every measuring suite selected (inventory and correctness are
.ci/arm's), /dev/crypto and the test drivers loaded, the board's shipped profile. It
writes BOARD-junit.xml, BOARD-results.json, BOARD-output.txt and
BOARD-load.txt (uptime before and after) in OUT_DIR, then prints a markdown table per
suite file. `--table` prints the table of earlier runs' JUnit files.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

# correctness is left out: .ci/arm runs it on both boards against every AES and SHA driver
# (and with every suite in one session it alone outlasted a 30 min board at load ~10)
PROFILES = Path(__file__).resolve().parents[1] / "pytest_hwcrypto" / "boards" / "profiles"
SUITES = "throughput,cryptsetup,openssl,cryptodev,dmcrypt,lxc"
SHORT = (
    "--hwcrypto-algorithm=cbc(aes),xts(aes)",
    "--hwcrypto-block-sizes=16,65536",
    "--hwcrypto-dmcrypt-bytes=16M",
    "--hwcrypto-budget=5",
    "--hwcrypto-concurrency=1,4",
    "--hwcrypto-vm-timeout=1200",
)


def uptime() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def run(board: str, out: Path, extra: list[str]) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    junit = out / f"{board}-junit.xml"
    argv = [
        sys.executable, "-m", "pytest", "-v", "-rs", "-p", "no:cacheprovider",
        "--hwcrypto", f"--hwcrypto-vm={board}", "--hwcrypto-cryptodev",
        "--hwcrypto-test-drivers", f"--hwcrypto-suite={SUITES}", *SHORT,
        f"--hwcrypto-board={PROFILES / f'{board}.toml'}", *extra,
        f"--hwcrypto-json={out / f'{board}-results.json'}", f"--junitxml={junit}",
    ]  # fmt: skip
    load = [f"before {time.strftime('%H:%M:%S')} load {uptime()}"]
    began = time.monotonic()
    with open(out / f"{board}-output.txt", "w") as output:
        output.write(" ".join(argv) + "\n")
        output.flush()
        done = subprocess.run(argv, stdout=output, stderr=subprocess.STDOUT, check=False)
    load.append(f"after {time.strftime('%H:%M:%S')} load {uptime()}")
    load.append(f"session {time.monotonic() - began:.0f} s, exit {done.returncode}")
    (out / f"{board}-load.txt").write_text("\n".join(load) + "\n")
    return junit


def table(junit: Path) -> str:
    """One row per suite file: passed / skipped / failed, seconds, the skip reasons."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    seconds: dict[str, float] = defaultdict(float)
    reasons: dict[str, set[str]] = defaultdict(set)
    for case in ET.parse(junit).iter("testcase"):
        suite = (case.get("classname") or "?").split(".")[-1]
        seconds[suite] += float(case.get("time") or 0)
        outcome = "passed"
        for kind in ("failure", "error", "skipped"):
            found = case.find(kind)
            if found is not None:
                outcome = "failed" if kind != "skipped" else "skipped"
                if kind == "skipped":
                    reasons[suite].add((found.get("message") or "").strip()[:160])
        counts[suite][outcome] += 1
    lines = [f"{junit.name}", "| suite file | passed | skipped | failed | s | skip reasons |"]
    lines.append("|---|---|---|---|---|---|")
    for suite in sorted(counts):
        row = counts[suite]
        why = "; ".join(sorted(reasons[suite])) or "-"
        lines.append(
            f"| {suite} | {row['passed']} | {row['skipped']} | {row['failed']} | "
            f"{seconds[suite]:.0f} | {why} |"
        )
    return "\n".join(lines)


_OUTCOME = re.compile(r"^(suites/\S+?\.py)::(\S.*?) (PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)\b")


def table_from_output(output: Path) -> str:
    """Counts per suite file from a -v session's output, for a board ended before pytest
    wrote its JUnit file; the test it was in when ended is named."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    last = ""
    for line in output.read_text(errors="replace").splitlines():
        found = _OUTCOME.match(line)
        if found:
            counts[Path(found.group(1)).stem][found.group(3).lower()] += 1
            last = f"{found.group(1)}::{found.group(2)}"
    lines = [f"{output.name} (no JUnit: counts from the -v output)"]
    lines += ["| suite file | passed | skipped | failed |", "|---|---|---|---|"]
    for suite in sorted(counts):
        row = counts[suite]
        lines.append(f"| {suite} | {row['passed']} | {row['skipped']} | {row['failed']} |")
    lines.append(f"last finished: {last or '-'}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", nargs="+", type=Path, help="print tables of JUnit files")
    parser.add_argument("board", nargs="?", choices=("qemu-arm64", "qemu-armhf"))
    parser.add_argument("out", nargs="?", type=Path)
    parser.add_argument("extra", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()
    if args.table:
        print(
            "\n\n".join(
                table(path) if path.suffix == ".xml" else table_from_output(path)
                for path in args.table
            )
        )
        return 0
    if args.board is None or args.out is None:
        parser.error("give BOARD OUT_DIR, or --table JUNIT...")
    junit = run(args.board, args.out, args.extra)
    output = args.out / f"{args.board}-output.txt"
    print(table(junit) if junit.is_file() else table_from_output(output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
