# SPDX-License-Identifier: MIT
"""The threaded engine's own cost: one request in flight through a lane pool against the
single-request loop, on the same AF_ALG transform (issue 36's bar: >= 0.95x).

At N = 1 the runner measures through the bound target's own loop (measure/parallel.py
at_level); N > 1 goes through a LanePool of N threads, each on its own op socket. This
measures the pool's machinery alone: the same transform, a pool of ONE lane, samples of
the loop and of the pool alternated in pairs (AB, BA, AB, ...), the ratio pool / loop per
pair. Run it inside a board (it needs AF_ALG), e.g.

    hwcrypto vm qemu --exec '.venv/bin/python benchmarks/lane_overhead.py'

and read the medians with the load average beside them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from pytest_hwcrypto.kernel.inventory import build_inventory
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.measure.afalg_engine import AfAlgBound
from pytest_hwcrypto.measure.cpu import CpuMeter
from pytest_hwcrypto.measure.engine import Timing
from pytest_hwcrypto.measure.targets import discover_targets
from pytest_hwcrypto.vocabulary import PROC_CRYPTO

DRIVER = "cbc(aes-generic)"


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--driver", default=DRIVER)
    parser.add_argument("--sizes", default="16,4096,65536")
    parser.add_argument("--pairs", type=int, default=12)
    parser.add_argument("--seconds", type=float, default=0.5, help="one sample")
    args = parser.parse_args(argv[1:])
    timing = Timing(time.perf_counter, CpuMeter())
    inventory = build_inventory(read_proc_crypto(PROC_CRYPTO))
    targets = [t for t in discover_targets(inventory) if t.driver == args.driver]
    if not targets:
        print(f"{args.driver} is not registered here", file=sys.stderr)
        return 1
    bound = AfAlgBound(targets[0], 10.0, timing)
    pool = bound.at_concurrency(1)
    print(f"lane overhead, {args.driver}, {args.pairs} pairs of {args.seconds} s; load {load()}")
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            bound.warm_up("encrypt", size, 0.3)
            pool.warm_up("encrypt", size, 0.3)
            ratios, loops, lanes = [], [], []
            for pair in range(args.pairs):
                order = (bound, pool) if pair % 2 == 0 else (pool, bound)
                rates = {
                    id(side): side.sample("encrypt", size, args.seconds).bytes_per_second
                    for side in order
                }
                loops.append(rates[id(bound)])
                lanes.append(rates[id(pool)])
                ratios.append(rates[id(pool)] / rates[id(bound)])
            print(
                f"  {size:6d} B: loop {statistics.median(loops) / 2**20:8.3f} MiB/s, "
                f"one lane {statistics.median(lanes) / 2**20:8.3f} MiB/s, "
                f"pool/loop median {statistics.median(ratios):.3f} "
                f"(pairs {min(ratios):.3f}-{max(ratios):.3f}); load {load()}"
            )
    finally:
        pool.close()
        bound.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
