# SPDX-License-Identifier: MIT
"""The detectable drop of two throughput runs, per block size (benchmarks/detectable-drop.md).

    .venv/bin/python benchmarks/detectable_drop.py RUN_A.json RUN_B.json [--sizes 16,4096,65536]

For every series both runs measured: what `hwcrypto compare` says this pair could have
detected (model/sensitivity.py), the real change of the medians and whether it was flagged;
then per block size the median and range over the series, and the samples' median CoV.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_hwcrypto.model.results import load_results
from pytest_hwcrypto.verdict.compare import compare_measurements


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baseline")
    parser.add_argument("current")
    parser.add_argument("--sizes", default="16,4096,65536")
    parser.add_argument("--max-drop", type=float, default=0.10)
    args = parser.parse_args()
    then, now = load_results(args.baseline), load_results(args.current)
    comparisons = compare_measurements(then.measurements, now.measurements, args.max_drop)
    covs = {
        (m.driver, m.block_size): m.sample_stats().cov
        for m in [*then.measurements, *now.measurements]
        if m.samples
    }
    print("size  series  detectable drop median (range)  change median  flagged  CoV median")
    for size in (int(s) for s in args.sizes.split(",")):
        at = [c for c in comparisons if c.block_size == size and c.detectable_drop is not None]
        if not at:
            continue
        drops = [c.detectable_drop or 0.0 for c in at]
        cov = statistics.median(v for (_, s), v in covs.items() if s == size)
        print(
            f"{size:>5}  {len(at):>6}  {statistics.median(drops):>6.0%} "
            f"({min(drops):.0%}-{max(drops):.0%})"
            f"  {statistics.median(c.change for c in at):>+13.1%}"
            f"  {sum(c.failed for c in at):>7}  {cov:>10.0%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
