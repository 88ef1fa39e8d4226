# SPDX-License-Identifier: MIT
"""Every recorded A/B trial's pairs, kept in the repository and judged again at any alpha.

`ab_trials.py` keeps each trial's whole A/B file in its OUT directory (70-400 KB each:
every sample of every slice), too much to commit for every round. `--export` reduces
them to what a judgement needs -- per trial and series, the order of each pair and the
A and B throughput as measured (bytes/s, the judgement of a run without --host-speed) --
one JSON line a trial, so `results/ab_pairs_uml_*.jsonl.gz` holds every pair measured.

`--alpha` then judges every exported trial as `hwcrypto ab --alpha X` would have judged
the same pairs: the same looks and family (series x looks), stopping at the first look
where every series is decided. A trial recorded at alpha 0.05 may have stopped at a look
where a stricter alpha could not decide yet; its next look was never measured, and such
a trial is counted as "stopped short" rather than guessed.

    python benchmarks/ab_rejudge.py --export round1=OUT1 OUT2 ... --to results/ab_pairs.jsonl.gz
    python benchmarks/ab_rejudge.py --alpha 0.05 --alpha 0.01 results/ab_pairs.jsonl.gz
    python benchmarks/ab_rejudge.py --resample 1000 --pairs 10 results/ab_pairs.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
from pathlib import Path
from typing import Any

from pytest_hwcrypto.ab.document import load_document
from pytest_hwcrypto.ab.series import HOST_SPEED_SERIES, collect_pairs
from pytest_hwcrypto.verdict.paired import PairedVerdict, judge_pairs

# which series a scenario slowed: its "regressed" is a find, in any other series (and in
# any series of an A/A run) a false alarm
SLOWED = {
    "aa": (),
    "drift": (),
    "one5": ("cbc(aes-generic)",),
    "one10": ("cbc(aes-generic)",),
    "slow5": ("cbc(aes-generic)",),
    "slow10": ("cbc(aes-generic)",),
    "all10": ("cbc(aes-generic)", "cbc(aes-fixed-time)"),
}
UNDECIDED = "could not tell yet"


def export(directories: list[str], to: Path) -> int:
    """Each of `directories` is OUT or LABEL=OUT (LABEL names the round in the export)."""
    exported: list[dict[str, Any]] = []
    for named in directories:
        label, _, where = named.rpartition("=")
        directory = Path(where)
        recorded = {}
        trials = directory / "trials.jsonl"
        if trials.exists():
            for line in trials.read_text().splitlines():
                entry = json.loads(line)
                recorded[(entry["scenario"], entry["run"])] = entry
        for path in sorted(directory.glob("*-[0-9][0-9][0-9].json")):
            scenario, run = path.stem.rsplit("-", 1)
            entry = recorded.get((scenario, int(run)))
            if entry is None:
                continue  # a trial cut off before it finished: not in the tables either
            document = load_document(path)
            series: dict[str, dict[str, list[float]]] = {}
            for pairs in collect_pairs(document.complete_pairs).values():
                if pairs.only is not None:
                    continue
                # the trials measure one op and block size a driver
                driver = "(host speed)" if pairs.key == HOST_SPEED_SERIES else pairs.key[-1]
                if driver in series:
                    raise SystemExit(f"{path}: two series of {driver}; export keys by driver")
                series[driver] = {"a": pairs.a_shown, "b": pairs.b_shown}
                if pairs.normalised:  # --host-speed: also per unit of the yardstick
                    series[driver].update(a_host=pairs.a, b_host=pairs.b)
            exported.append(
                {
                    "round": label or directory.name,
                    "scenario": scenario,
                    "run": int(run),
                    "steps": document.steps,
                    "max_drop": document.max_drop,
                    "orders": [p.order for p in document.complete_pairs],
                    "load": entry["load"],
                    "series": series,
                }
            )
    with gzip.open(to, "wt") as out:
        for trial in exported:
            out.write(json.dumps(trial) + "\n")
    print(f"{len(exported)} trials written to {to}")
    return 0


def judged(
    trial: dict[str, Any], alpha: float, host_speed: bool = False
) -> tuple[dict[str, str], int, bool]:
    """(verdict per series, pairs used, stopped short) as `hwcrypto ab --alpha` would;
    `host_speed`: as `--host-speed` would (per unit of the yardstick, which is then a
    series of its own); no verdicts for a trial measured without it."""
    series = {
        name: {"a": s["a_host"], "b": s["b_host"]} if host_speed and "a_host" in s else s
        for name, s in trial["series"].items()
        if host_speed or name != "(host speed)"
    }
    if host_speed and "(host speed)" not in series:
        return {}, 0, False
    steps = trial["steps"]
    family = max(1, len(series)) * max(1, len(steps))
    have = min(len(s["a"]) for s in series.values())
    verdicts: dict[str, str] = {}
    used = 0
    for step in steps:
        if step > have:
            return verdicts, used, True
        used = step
        verdicts = {
            name: judge_pairs(
                s["a"][:step], s["b"][:step], trial["max_drop"], alpha=alpha, family=family
            ).verdict.value
            for name, s in series.items()
        }
        if UNDECIDED not in verdicts.values():
            break
    return verdicts, used, False


def report(trials: list[dict[str, Any]], alphas: list[float]) -> int:
    print(
        "| alpha | judged | scenario | runs | false regressed (runs) | slowed series found "
        "| stopped short | load |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for alpha in alphas:
        for host_speed in (False, True):
            for scenario in sorted({t["scenario"] for t in trials}):
                _report_row(trials, alpha, host_speed, scenario)
    return 0


def _report_row(
    trials: list[dict[str, Any]], alpha: float, host_speed: bool, scenario: str
) -> None:
    runs = [t for t in trials if t["scenario"] == scenario]
    if host_speed:
        runs = [t for t in runs if "(host speed)" in t["series"]]
    if not runs:
        return
    false_runs = found = asked = short = 0
    for trial in runs:
        verdicts, _, stopped_short = judged(trial, alpha, host_speed)
        slowed = SLOWED.get(scenario, ())
        false_runs += any(v == "regressed" for name, v in verdicts.items() if name not in slowed)
        short += stopped_short
        for name in slowed:
            if name in trial["series"]:
                asked += 1
                found += verdicts.get(name) == "regressed"
    loads = [x for t in runs for x in t["load"]]
    print(
        f"| {alpha} | {'per host speed' if host_speed else 'bytes/s'} | {scenario} | "
        f"{len(runs)} | {false_runs} | {f'{found} of {asked}' if asked else '-'} | {short} | "
        f"{min(loads):.1f}-{max(loads):.1f} |"
    )


def resample(
    trials: list[dict[str, Any]], alphas: list[float], comparisons: int, pairs: int
) -> int:
    """A/A comparisons drawn from every recorded A/A pair of a series (A and B kept as
    measured, pairs drawn with replacement), each judged with the family of the real A/A
    runs (their series x looks) -- the rate one more real run would show if pairs were
    independent of the run they came from."""
    runs = [t for t in trials if t["scenario"] == "aa"]
    pool: dict[str, list[tuple[float, float]]] = {}
    for run in runs:
        for name, series in run["series"].items():
            if name != "(host speed)":  # bytes/s as measured: the yardstick is no series
                pool.setdefault(name, []).extend(zip(series["a"], series["b"]))
    family = max(len([n for n in run["series"] if n != "(host speed)"]) for run in runs) * max(
        len(run["steps"]) for run in runs
    )
    for alpha in alphas:
        rng = random.Random(1)
        regressed = total = 0
        for values in pool.values():
            for _ in range(comparisons):
                drawn = [rng.choice(values) for _ in range(pairs)]
                a, b = [x for x, _ in drawn], [y for _, y in drawn]
                verdict = judge_pairs(a, b, runs[0]["max_drop"], alpha=alpha, family=family).verdict
                regressed += verdict is PairedVerdict.REGRESSED
                total += 1
        print(
            f"alpha {alpha}: {regressed} of {total} resampled A/A comparisons regressed "
            f"({regressed / total:.2%}), {pairs} pairs, family {family}, "
            f"from {sum(map(len, pool.values()))} recorded pairs of {len(runs)} runs"
        )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "exported", nargs="?", type=Path, metavar="FILE", help="an exported .jsonl.gz to judge"
    )
    parser.add_argument("--export", nargs="+", metavar="[LABEL=]OUT", help="trial directories")
    parser.add_argument("--to", type=Path, help="where --export writes")
    parser.add_argument("--alpha", type=float, action="append", default=[])
    parser.add_argument("--rounds", help="only these rounds (comma-separated labels)")
    parser.add_argument("--resample", type=int, metavar="N", help="N A/A comparisons a series")
    parser.add_argument(
        "--pairs", dest="pair_count", type=int, default=10, help="pairs a resampled comparison"
    )
    args = parser.parse_args()
    if args.export:
        if args.to is None:
            parser.error("--export needs --to FILE.jsonl.gz")
        return export(args.export, args.to)
    if args.exported is None:
        parser.error("name an exported FILE.jsonl.gz, or --export OUT... --to FILE")
    with gzip.open(args.exported, "rt") as lines:
        trials = [json.loads(line) for line in lines]
    if args.rounds:
        trials = [t for t in trials if t["round"] in args.rounds.split(",")]
    if args.resample:
        return resample(trials, args.alpha or [0.05], args.resample, args.pair_count)
    return report(trials, args.alpha or [0.05])


if __name__ == "__main__":
    sys.exit(main())
