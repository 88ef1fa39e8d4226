# SPDX-License-Identifier: MIT
"""Apache Otava and signal-processing-algorithms on histories made of real boots.

Each history is one series of one trial in `results/ab_pairs_uml_2026-12-06_07.jsonl.gz`:
the trial's A values in the order they were measured, then its B values in that order --
every value one real boot of the UML board, A's kernel first, B's after, as a kernel CI
history of two kernels would hold them. The change, where one was planted, is at index
len(A). Truth per scenario (benchmarks/ab_trials.py):

* aa, drift: no change in either series (drift: A/A while the host gets busier);
* one5 / one10: aes-generic slowed by 5 % / 10 % in B, aes-fixed-time unchanged;
* all10: both slowed by 10 %;
* slow5 / slow10: the first calibration (2-3 % on a quiet host): left out of both counts.

Measured per library: changes found at index len(A) exactly and within 2; how many B runs
it took (the history cut after k B values, k = 1, 2, ..., the first k at which a change
point within 2 of len(A) is reported); false change points (any reported) on unchanged
histories; the time for 200 series of 10,000 points drawn with replacement from the real
A/A values (seeded).

The two libraries cannot share one environment (Otava pins numpy 2.2, the other needs
numpy < 2), so run it once in each:

    VENV_OTAVA/bin/python benchmarks/history_detect_libraries.py --library otava FILE
    VENV_SPA/bin/python benchmarks/history_detect_libraries.py --library spa FILE
    .venv/bin/python benchmarks/history_detect_libraries.py --gate 0.10 --round round5 FILE
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

Detector = Callable[[Sequence[float]], list[int]]
UNCHANGED = {
    "aa": ("cbc(aes-fixed-time)", "cbc(aes-generic)"),
    "drift": ("cbc(aes-fixed-time)", "cbc(aes-generic)"),
}
CHANGED = {
    "one5": ("cbc(aes-generic)",),
    "one10": ("cbc(aes-generic)",),
    "all10": ("cbc(aes-fixed-time)", "cbc(aes-generic)"),
}


def otava_detector(pvalue: float, window: int) -> Detector:
    from otava.analysis import compute_change_points

    def detect(series: Sequence[float]) -> list[int]:
        points, _ = compute_change_points(list(series), window_len=window, max_pvalue=pvalue)
        return [int(p.index) for p in points]

    return detect


def spa_detector(pvalue: float, permutations: int) -> Detector:
    import numpy as np
    from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive

    def detect(series: Sequence[float]) -> list[int]:
        # its permutation test draws from numpy's global generator: seeded per call
        np.random.seed(1)
        random.seed(1)
        return sorted(
            int(i)
            for i in e_divisive(
                np.array(series, dtype=float), pvalue=pvalue, permutations=permutations
            )
        )

    return detect


def histories(
    path: Path, rounds: Sequence[str] = (), host_speed: bool = False
) -> list[dict[str, Any]]:
    out = []
    with gzip.open(path, "rt") as handle:
        for line in handle:
            trial = json.loads(line)
            if rounds and trial["round"] not in rounds:
                continue
            for name, values in trial["series"].items():
                if name.startswith("("):
                    continue  # the host-speed yardstick, not a driver
                scenario = trial["scenario"]
                if name in CHANGED.get(scenario, ()):
                    truth = "changed"
                elif scenario in UNCHANGED or (
                    scenario in CHANGED and name not in CHANGED[scenario]
                ):
                    truth = "unchanged"
                else:
                    continue
                out.append(
                    {
                        "trial": f"{trial['round']}/{scenario}/{trial['run']}",
                        "scenario": scenario,
                        "series": name,
                        # per host speed: each boot's value per unit of the yardstick
                        # measured in the same boot (rounds 4-5, ab --host-speed)
                        "a": values["a_host"] if host_speed else values["a"],
                        "b": values["b_host"] if host_speed else values["b"],
                        "truth": truth,
                    }
                )
    return out


def judge(detect: Detector, history: dict[str, Any]) -> dict[str, Any]:
    a, b = history["a"], history["b"]
    found = detect(a + b)
    row = {k: history[k] for k in ("trial", "scenario", "series", "truth")}
    row["found"] = found
    row["n"] = len(a) + len(b)
    if history["truth"] == "changed":
        row["exact"] = len(a) in found
        row["near"] = any(abs(i - len(a)) <= 2 for i in found)
        row["others"] = len([i for i in found if abs(i - len(a)) > 2])
        row["runs_after"] = None
        for k in range(1, len(b) + 1):
            if any(abs(i - len(a)) <= 2 for i in detect(a + b[:k])):
                row["runs_after"] = k
                break
    return row


def scale(detect: Detector, path: Path, series: int, points: int) -> float:
    pool = [v for h in histories(path) if h["scenario"] == "aa" for v in h["a"] + h["b"]]
    rng = random.Random(20261207)
    data = [[rng.choice(pool) for _ in range(points)] for _ in range(series)]
    start = time.perf_counter()
    for one in data:
        detect(one)
    return time.perf_counter() - start


def gate(path: Path, max_drop: float, rounds: Sequence[str], host_speed: bool) -> None:
    """The CI gate's view (`hwcrypto history detect`, history/changes.py): each history
    replayed one run -- one kernel -- at a time, as CI adds them; does the gate fire (a drop
    beyond max_drop new with the newest kernel), and where?"""
    from pytest_hwcrypto.history.changes import MIN_RUNS, series_changes
    from pytest_hwcrypto.history.model import KernelIdentity, Point, RunIdentity, Series, SeriesKey

    key = SeriesKey("uml", "afalg", "cbc(aes)", None, 128, 65536, "encrypt", None)
    rows = []
    for history in histories(path, rounds, host_speed):
        values = history["a"] + history["b"]
        points = [
            Point(RunIdentity(str(n), "uml", KernelIdentity(f"6.1.{n}"), "0", "t"), v)
            for n, v in enumerate(values)
        ]
        fired = []  # (runs so far, first bad index) each time the gate fires
        for end in range(MIN_RUNS, len(points) + 1):
            verdict = series_changes(Series(key, points=points[:end]), points[:end], max_drop)
            for change in verdict.changes:
                if change.failing and change.newest:
                    fired.append((end, int(change.first_bad.release.split(".")[-1])))
        rows.append((history, fired))
    per = " per host speed" if host_speed else ""
    print(f"gate at max-drop {max_drop:.0%}{per}, histories replayed one run at a time")
    for scenario in ("one5", "one10", "all10"):
        changed = [(h, f) for h, f in rows if h["scenario"] == scenario and h["truth"] == "changed"]
        right = [
            min(end for end, bad in f if abs(bad - len(h["a"])) <= 2) - len(h["a"])
            for h, f in changed
            if any(abs(bad - len(h["a"])) <= 2 for _, bad in f)
        ]
        wrong = sum(1 for h, f in changed if any(abs(bad - len(h["a"])) > 2 for _, bad in f))
        right.sort()
        print(
            f"  {scenario}: {len(changed)} histories, fired within 2 of the change {len(right)}"
            f" (B runs then: median {right[len(right) // 2] if right else None}),"
            f" fired elsewhere {wrong}"
        )
    for label in ("aa", "drift"):
        unchanged = [f for h, f in rows if h["scenario"] == label]
        print(
            f"  {label}: {len(unchanged)} histories, gate fired in {sum(1 for f in unchanged if f)}"
        )
    others = [f for h, f in rows if h["scenario"] in CHANGED and h["truth"] == "unchanged"]
    print(f"  one*: unchanged driver: {len(others)}, gate fired in {sum(1 for f in others if f)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", type=Path)
    parser.add_argument("--library", choices=("otava", "spa"), default="otava")
    parser.add_argument(
        "--gate",
        metavar="MAX_DROP",
        type=float,
        help="judge with history/changes.py as the CI gate would (needs the project)",
    )
    parser.add_argument("--round", action="append", default=[], help="only these rounds")
    parser.add_argument(
        "--per-host-speed", action="store_true", help="--gate on values per host speed"
    )
    parser.add_argument("--pvalue", type=float)
    parser.add_argument("--window", type=int, default=50, help="otava: window_len")
    parser.add_argument("--permutations", type=int, default=100, help="spa: permutations")
    parser.add_argument("--scale-series", type=int, default=200)
    parser.add_argument("--scale-points", type=int, default=10_000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.gate is not None:
        gate(args.pairs, args.gate, args.round, args.per_host_speed)
        return
    if args.library == "otava":
        pvalue = args.pvalue if args.pvalue is not None else 0.001
        detect = otava_detector(pvalue, args.window)
    else:
        pvalue = args.pvalue if args.pvalue is not None else 0.05
        detect = spa_detector(pvalue, args.permutations)
    rows = [judge(detect, h) for h in histories(args.pairs)]
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"library {args.library}, p {pvalue}")
    for scenario in ("one5", "one10", "all10"):
        changed = [r for r in rows if r["scenario"] == scenario and r["truth"] == "changed"]
        after = sorted(r["runs_after"] for r in changed if r["runs_after"] is not None)
        median = after[len(after) // 2] if after else None
        exact = sum(r["exact"] for r in changed)
        near = sum(r["near"] for r in changed)
        extra = sum(r["others"] for r in changed)
        print(
            f"  {scenario}: {len(changed)} changed series, exact {exact}, within 2 {near},"
            f" extra points {extra}, B runs to see it: median {median},"
            f" range {after[:1]}-{after[-1:]}, never {len(changed) - len(after)}"
        )
    for label, pick in (
        ("aa", lambda r: r["scenario"] == "aa"),
        ("drift", lambda r: r["scenario"] == "drift"),
        (
            "one*: unchanged driver",
            lambda r: r["scenario"] in CHANGED and r["truth"] == "unchanged",
        ),
    ):
        unchanged = [r for r in rows if pick(r)]
        false = [r for r in unchanged if r["found"]]
        print(
            f"  unchanged {label}: {len(unchanged)} histories, {len(false)} with a false"
            f" change point ({sum(len(r['found']) for r in false)} points)"
        )
    if args.scale_series:
        seconds = scale(detect, args.pairs, args.scale_series, args.scale_points)
        print(f"  scale: {args.scale_series} series x {args.scale_points} points: {seconds:.1f} s")


if __name__ == "__main__":
    main()
