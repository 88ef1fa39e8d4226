"""(b) A/A stability and (c) sensitivity, with a slowdown injected into one driver.

Run inside the QEMU board with the test-only drivers loaded (tests/kmod):

    flock /work/coord/measure.lock .venv/bin/hwcrypto vm qemu --test-drivers \\
        --exec '.venv/bin/python benchmarks/driver_sensitivity.py --trials 10 --json F'

The measured driver is cbc-aes-hwcrypto-test-a (cbc(aes-generic) behind a thin wrapper).
Each trial, for each block size on its own, measures with the suite's engine and the
suite's time per series (run_plan over a plan of the same shape): a baseline, a second
baseline (the A/A control: flagging it is a false alarm), and then one run per injected
slowdown s, with the driver's per-byte busy-wait (delay_ns_per_kib) set so each request
takes t * s / (1 - s) longer, t being the baseline's time per request: the throughput
drops by s for that driver alone, whatever else the machine does. The delay is spent in
the kernel in real time, so under TCG it means what it says.

A run is *flagged* by the verdict `hwcrypto compare` and --hwcrypto-baseline use
(verdict.compare.regressed): the median ratio below 1 - max_drop and the intervals apart.
Each comparison's ratio and interval are kept, so the verdict is worked out for several
max_drop values from the same runs; the *detectable drop* at a size is the smallest
injected slowdown flagged in >= 95 % of trials by a max_drop whose A/A false alarms are
<= 5 %.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_hwcrypto.kernel.inventory import build_inventory
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.kernel.test_drivers import CBC_A, TestDriversControl
from pytest_hwcrypto.measure.afalg_engine import AfAlgEngine
from pytest_hwcrypto.measure.plan import make_plan
from pytest_hwcrypto.measure.runner import run_plan
from pytest_hwcrypto.measure.targets import Target, discover_targets
from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.verdict.compare import compare_measurements

SECONDS_PER_SERIES = 2.0  # per measured run of one driver at one size
SLOWDOWNS = (0.10, 0.15, 0.30, 0.50)
MAX_DROPS = (0.05, 0.10, 0.25)
HIT_BAR, FALSE_ALARM_BAR = 0.95, 0.05


def measure(targets: Sequence[Target], size: int) -> list[Measurement]:
    plan = make_plan(targets, [size], SECONDS_PER_SERIES * len(targets))
    return run_plan(plan, AfAlgEngine()).measurements()


def comparison(baseline: list[Measurement], current: list[Measurement]) -> dict[str, float]:
    """The ratio current/baseline and its interval (one series: one comparison)."""
    (found,) = compare_measurements(baseline, current, 0.0)
    return {"ratio": 1.0 + found.change, "high": found.ratio_high}


def flagged(row: dict[str, float], max_drop: float) -> bool:
    """verdict.compare.regressed on a kept comparison."""
    return row["ratio"] < 1.0 - max_drop and row["high"] < 1.0


def time_per_request_ns(measurements: list[Measurement], size: int) -> float:
    (measured,) = measurements
    return size / measured.bytes_per_second * 1e9


def loadavg() -> str:
    """The board's own load average (the host's is taken outside, around the run)."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def summarise(trials: list[dict[str, object]], sizes: Sequence[int]) -> dict[str, object]:
    summary: dict[str, object] = {}
    for size in sizes:
        rows = [trial[str(size)] for trial in trials]  # type: ignore[index]
        by_drop: dict[str, object] = {}
        detectable = None
        for max_drop in MAX_DROPS:
            false = sum(flagged(r["control"], max_drop) for r in rows) / len(rows)
            hits = {
                f"{s:g}": sum(flagged(r["slowed"][f"{s:g}"], max_drop) for r in rows) / len(rows)
                for s in SLOWDOWNS
            }
            by_drop[f"{max_drop:g}"] = {"false_alarms": false, "flagged": hits}
            if false <= FALSE_ALARM_BAR:
                caught = [s for s in SLOWDOWNS if hits[f"{s:g}"] >= HIT_BAR]
                if caught and (detectable is None or min(caught) < detectable[0]):
                    detectable = (min(caught), max_drop)
        summary[str(size)] = {
            "by_max_drop": by_drop,
            "detectable_drop": None if detectable is None else detectable[0],
            "with_max_drop": None if detectable is None else detectable[1],
            "median_ratio_control": sorted(r["control"]["ratio"] for r in rows)[len(rows) // 2],
        }
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--sizes", default="16,4096,65536")
    parser.add_argument("--json", help="write every trial and the summary here")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    control = TestDriversControl(None)
    if not control.loaded():
        print("hwcrypto_test is not loaded: hwcrypto vm qemu --test-drivers", file=sys.stderr)
        return 2
    inventory = build_inventory(read_proc_crypto())
    targets = [t for t in discover_targets(inventory) if t.driver == CBC_A]
    trials: list[dict[str, object]] = []
    for trial in range(args.trials):
        record: dict[str, object] = {"loadavg_before": loadavg()}
        for size in sizes:
            baseline = measure(targets, size)
            per_request = time_per_request_ns(baseline, size)
            row: dict[str, object] = {
                "baseline_ns_per_request": per_request,
                "control": comparison(baseline, measure(targets, size)),
                "slowed": {},
            }
            for slowdown in SLOWDOWNS:
                extra_ns = per_request * slowdown / (1.0 - slowdown)
                per_kib = round(extra_ns * 1024 / size)
                with control.setting("delay_ns_per_kib", CBC_A, per_kib):
                    slowed = comparison(baseline, measure(targets, size))
                row["slowed"][f"{slowdown:g}"] = slowed  # type: ignore[index]
            record[str(size)] = row
        record["loadavg_after"] = loadavg()
        trials.append(record)
        print(
            f"trial {trial + 1}: "
            + "; ".join(
                f"{size} B A/A {record[str(size)]['control']['ratio']:.3f} "  # type: ignore[index]
                + " ".join(
                    f"-{float(s):.1%}:{v['ratio']:.3f}"
                    for s, v in record[str(size)]["slowed"].items()  # type: ignore[index]
                )
                for size in sizes
            )
            + f"; load {record['loadavg_before']}",
            flush=True,
        )
    summary = summarise(trials, sizes)
    print(json.dumps(summary, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps({"trials": trials, "summary": summary}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
