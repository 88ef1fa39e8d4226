# SPDX-License-Identifier: MIT
"""(a) Harness fidelity: the throughput suite's AF_ALG number against a C loop.

Run inside a board (it needs AF_ALG and gcc):

    .venv/bin/hwcrypto vm --exec '.venv/bin/python benchmarks/fidelity.py' uml

Both sides drive the same driver in the same boot: the suite's engine
(measure/afalg_engine.AfAlgBound.run, timed the way the run loop times a sample) and
afalg_loop.c (one sendmsg with op and IV + one read per request, compiled here with gcc).
Samples alternate Python, C, Python, C ... so drift on a shared machine hits both alike;
the figure is median(Python) / median(C) per block size (and, less sensitive to drift,
the median of the per-round Python/C ratios). The bar is >= 0.95.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pytest_hwcrypto.measure.afalg_engine import AfAlgBound  # noqa: E402
from pytest_hwcrypto.measure.cpu import CpuMeter  # noqa: E402
from pytest_hwcrypto.measure.engine import Timing  # noqa: E402
from pytest_hwcrypto.measure.plan import operations_for  # noqa: E402
from pytest_hwcrypto.measure.targets import Target  # noqa: E402

BAR = 0.95


def build_c_loop(directory: Path) -> Path:
    binary = directory / "afalg_loop"
    subprocess.run(
        ["gcc", "-O2", "-Wall", "-o", str(binary), str(HERE / "afalg_loop.c")], check=True
    )
    return binary


def c_sample(binary: Path, driver: str, key_bytes: int, size: int, count: int) -> float:
    out = subprocess.run(
        [str(binary), "skcipher", driver, str(key_bytes), str(size), str(count)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    fields = dict(part.split("=") for part in out.split())
    return int(fields["bytes"]) / float(fields["seconds"])


def python_sample(session: AfAlgBound, block: bytes, count: int) -> float:
    began = time.perf_counter()
    session.run("encrypt", block, count)
    return count * len(block) / (time.perf_counter() - began)


def measure(driver: str, size: int, rounds: int, seconds: float, binary: Path) -> dict[str, object]:
    target = Target("cbc(aes)", driver, "skcipher", 128, 0)
    session = AfAlgBound(target, 60.0, Timing(time.perf_counter, CpuMeter()))
    block = os.urandom(size)
    try:
        session.run("encrypt", block, 50)  # warm-up
        began = time.perf_counter()
        session.run("encrypt", block, 200)
        count = operations_for(200 / (time.perf_counter() - began), seconds)
        python, c = [], []
        for _ in range(rounds):
            python.append(python_sample(session, block, count))
            c.append(c_sample(binary, driver, 16, size, count))
    finally:
        session.close()
    ratio = statistics.median(python) / statistics.median(c)
    # Each Python sample and the C sample after it ran seconds apart: the median of their
    # ratios cancels most of the machine's drift, the ratio of medians does not.
    paired = statistics.median(p / q for p, q in zip(python, c))
    return {
        "driver": driver,
        "block_size": size,
        "requests_per_sample": count,
        "python_mib_s": statistics.median(python) / 2**20,
        "c_mib_s": statistics.median(c) / 2**20,
        "python_cov": statistics.stdev(python) / statistics.mean(python),
        "c_cov": statistics.stdev(c) / statistics.mean(c),
        "ratio": ratio,
        "paired_ratio": paired,
        "meets_bar": ratio >= BAR,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--driver", action="append", default=None)
    parser.add_argument("--sizes", default="16,4096,65536")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--seconds", type=float, default=0.15, help="per sample")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    drivers = args.driver or ["cbc(aes-generic)", "cbc(aes-fixed-time)"]
    with tempfile.TemporaryDirectory() as scratch:
        binary = build_c_loop(Path(scratch))
        results = [
            measure(driver, int(size), args.rounds, args.seconds, binary)
            for driver in drivers
            for size in args.sizes.split(",")
        ]
    for row in results:
        print(
            f"{row['driver']:22} {row['block_size']:6} B  python {row['python_mib_s']:8.2f} "
            f"C {row['c_mib_s']:8.2f} MiB/s  ratio {row['ratio']:.3f} "
            f"(paired {row['paired_ratio']:.3f})  "
            f"(CoV {row['python_cov']:.0%} / {row['c_cov']:.0%})"
            + ("" if row["meets_bar"] else "  BELOW 0.95")
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0 if all(row["meets_bar"] for row in results) else 1


if __name__ == "__main__":
    sys.exit(main())
