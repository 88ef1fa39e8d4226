# SPDX-License-Identifier: MIT
"""Target fidelity: the board-side helper's AF_ALG throughput against the in-board engine.

A host-driven run measures through pytest_hwcrypto/target/helper (`speed`: one request of
N bytes at a time for the given seconds); an in-board run measures through the suite's Python
engine. Both must give the same figure. Run inside a board with Python, on the kernel the
busybox board boots:

    .venv/bin/hwcrypto vm qemu --exec '.venv/bin/python benchmarks/target_fidelity.py'

Each round is one engine sample and one helper sample on the same driver in the same boot,
the order swapped every round (engine first, then helper first) so that a drift of the
shared host's load hits both alike. The figure is the median of the per-round ratios
helper / engine, with its quartiles and how many rounds the helper was the faster, and
median(helper) / median(engine). The bar is >= 0.95 (the one the engine met against a C
loop). The load average is printed before and after each row.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from fidelity import python_sample  # noqa: E402

from pytest_hwcrypto.measure.afalg_engine import AfAlgBound  # noqa: E402
from pytest_hwcrypto.measure.cpu import CpuMeter  # noqa: E402
from pytest_hwcrypto.measure.engine import Timing  # noqa: E402
from pytest_hwcrypto.measure.plan import operations_for  # noqa: E402
from pytest_hwcrypto.measure.targets import Target  # noqa: E402
from pytest_hwcrypto.target.helper_run import parse_speed_output  # noqa: E402

BAR = 0.95
KEY = bytes(range(16)).hex()
IV = bytes(16).hex()


def helper_sample(helper: str, driver: str, size: int, seconds: float) -> float:
    out = subprocess.run(
        [helper, "speed", "skcipher", driver, str(size), f"{seconds:.3f}", KEY, IV],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    _, total = parse_speed_output(out)
    assert total is not None, out
    return total.bytes_per_second


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def measure(helper: str, driver: str, size: int, rounds: int, seconds: float) -> str:
    target = Target("cbc(aes)", driver, "skcipher", 128, 0)
    session = AfAlgBound(target, 60.0, Timing(time.perf_counter, CpuMeter()))
    block = os.urandom(size)
    before = load()
    try:
        session.run("encrypt", block, 50)
        began = time.perf_counter()
        session.run("encrypt", block, 200)
        count = operations_for(200 / (time.perf_counter() - began), seconds)
        helper_sample(helper, driver, size, seconds)  # its page cache and first bind
        engine, ours = [], []
        for round_number in range(rounds):
            if round_number % 2:
                ours.append(helper_sample(helper, driver, size, seconds))
                engine.append(python_sample(session, block, count))
            else:
                engine.append(python_sample(session, block, count))
                ours.append(helper_sample(helper, driver, size, seconds))
    finally:
        session.close()
    ratios = sorted(h / e for h, e in zip(ours, engine))
    low, paired, high = statistics.quantiles(ratios, n=4)
    faster = sum(ratio > 1 for ratio in ratios)
    ratio = statistics.median(ours) / statistics.median(engine)
    return (
        f"| {driver} | {size} | {statistics.median(engine) / 2**20:.2f} | "
        f"{statistics.median(ours) / 2**20:.2f} | {ratio:.3f} | {paired:.3f} "
        f"({low:.2f}-{high:.2f}) | {faster}/{rounds} | "
        f"{statistics.stdev(engine) / statistics.mean(engine):.0%} / "
        f"{statistics.stdev(ours) / statistics.mean(ours):.0%} | {before} / {load()} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--helper", required=True, help="the helper built for this board")
    parser.add_argument("--driver", action="append", default=None)
    parser.add_argument("--sizes", default="16,4096,65536")
    parser.add_argument("--rounds", type=int, default=31)
    parser.add_argument("--seconds", type=float, default=0.5, help="per sample")
    args = parser.parse_args()
    print(
        "| driver | bytes | engine MiB/s | helper MiB/s | ratio of medians | paired "
        "(quartiles) | helper faster | CoV engine / helper | load before / after |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for driver in args.driver or ["cbc-aes-aesni", "cbc(aes-generic)"]:
        for size in args.sizes.split(","):
            print(measure(args.helper, driver, int(size), args.rounds, args.seconds), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
