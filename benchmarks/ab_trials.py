# SPDX-License-Identifier: MIT
"""Trials of `hwcrypto ab` on the UML board, for benchmarks/ab-bisect.md's tables.

Every trial is one whole `hwcrypto ab` run (escalating 10 -> 20 -> 40 pairs) between two
boots of a UML kernel built with `ab_kernel_knobs.py` (the knobs are 0 unless a side sets
them), so A/A and the injected slowdowns use the same image:

* `aa`: nothing set on either side -- every "regressed" is a false alarm;
* `one5` / `one10`: B sets aes_generic.bench_work (one driver, aes-generic, 5 % / 10 %
  slower on a quiet host); `slow5` / `slow10`, the first calibration, cost 2-3 % there;
* `all10`: B sets algif_skcipher.bench_work_per_kib (every AF_ALG driver alike slower);
* `drift`: A/A while busy processes are added on the host, one more every few slices
  (0 -> 2 on this 2-CPU machine), measured twice in the same trial: interleaved pairs
  (`hwcrypto ab`) and the two-run method (every A slice, then every B slice, pooled and
  judged by `hwcrypto compare`'s regression rule).

Each finished trial is one JSON line in OUT/trials.jsonl, and its A/B file is kept in OUT;
a rerun skips finished trials and resumes a cut-off one from its file. Example:

    python benchmarks/ab_trials.py --kernel linux-knobs.uml --out /tmp/ab --scenario aa --runs 30
    python benchmarks/ab_trials.py --out /tmp/ab --table
    python benchmarks/ab_rejudge.py --export /tmp/ab --to pairs.jsonl.gz   # then --resample
"""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from pytest_hwcrypto.ab.document import AbDocument, Side, load_document
from pytest_hwcrypto.ab.engine import BoardSlices, run_ab
from pytest_hwcrypto.ab.series import HOST_SPEED_SERIES, collect_pairs, describe_key
from pytest_hwcrypto.ab.slice import SliceSpec
from pytest_hwcrypto.boards.inner_pytest import make_board
from pytest_hwcrypto.model.stats import SampleStats
from pytest_hwcrypto.verdict.compare import regressed as two_run_regressed
from pytest_hwcrypto.verdict.paired import PairedVerdict, judge_pairs

AES_KNOB = "/sys/module/aes_generic/parameters/bench_work"
AFALG_KNOB = "/sys/module/algif_skcipher/parameters/bench_work_per_kib"
SCENARIOS: dict[str, dict[str, str]] = {
    "aa": {},
    # first calibrated under host load 10-20, where they read -4 % / -12 %; on a quiet host
    # (2026-12-06 23:07, load 0.5-1) the same knobs cost aes-generic only 2-3 %:
    "slow5": {AES_KNOB: "10"},
    "slow10": {AES_KNOB: "20"},
    # recalibrated in one UML boot (load 4-8, 5 rounds of 1 s at 64 KiB): 35 -> -7.4 %,
    # 70 -> -24 % (the cost grows faster than the work), so 28 ~ -5 % and 42 ~ -10 %
    "one5": {AES_KNOB: "28"},
    "one10": {AES_KNOB: "42"},
    "all10": {AFALG_KNOB: "1500"},
    "drift": {},
}
RESET = {AES_KNOB: "0", AFALG_KNOB: "0"}


def spec(args: argparse.Namespace) -> SliceSpec:
    return SliceSpec(
        seconds=args.slice_seconds,
        block_sizes=tuple(int(s) for s in args.block_sizes.split(",")),
        algorithms=("cbc(aes)",),
        sessions=2,
        max_samples=20,
        host_speed=args.host_speed,
    )


def trial_document(args: argparse.Namespace, scenario: str, run: int) -> AbDocument:
    return AbDocument(
        board="uml",
        sides={
            "A": Side("A", args.kernel, None, {"set": dict(RESET)}),
            "B": Side("B", args.kernel, None, {"set": {**RESET, **SCENARIOS[scenario]}}),
        },
        slice=spec(args),
        seed=1000 * run + sum(map(ord, scenario)),
        max_drop=args.max_drop,
        alpha=0.05,
        steps=[int(step) for step in args.steps.split(",")],
    )


def runner_for(document: AbDocument, args: argparse.Namespace) -> BoardSlices:
    board = make_board("uml", args.kernel, None)
    board.check_prerequisites()
    return BoardSlices(
        {"A": board, "B": board},
        {"A": args.kernel, "B": args.kernel},
        document.slice,
        300.0,
        sys.stderr,
        settings={s: dict(document.sides[s].config["set"]) for s in ("A", "B")},
    )


class LoadRamp:
    """Busy processes on the host, one more every `every` slices up to `most` (ended by PID)."""

    def __init__(self, every: int, most: int = 2) -> None:
        self.every, self.most = every, most
        self.pids: list[int] = []
        self.slices = 0

    def tick(self) -> None:
        self.slices += 1
        if self.slices % self.every == 0 and len(self.pids) < self.most:
            busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            self.pids.append(busy.pid)

    def stop(self) -> None:
        for pid in self.pids:
            try:
                os.kill(pid, signal.SIGTERM)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        self.pids = []
        self.slices = 0


class RampedSlices:
    """A SliceRunner that ticks the load ramp before every slice."""

    def __init__(self, inner: BoardSlices, ramp: LoadRamp) -> None:
        self.inner, self.ramp = inner, ramp

    def describe(self, side: str) -> str:
        return self.inner.describe(side)

    def run_slice(self, side: str, pair_index: int) -> Any:
        self.ramp.tick()
        return self.inner.run_slice(side, pair_index)


def run_trial(args: argparse.Namespace, scenario: str, run: int, out: Path) -> dict[str, Any]:
    path = out / f"{scenario}-{run:03d}.json"
    document = trial_document(args, scenario, run)
    if path.exists():
        document = load_document(path)
    runner = runner_for(document, args)
    started = time.time()
    load_before = os.getloadavg()[0]
    record: dict[str, Any] = {"scenario": scenario, "run": run}
    if scenario == "drift":
        ramp = LoadRamp(every=args.ramp_every)
        try:
            outcome = run_ab(document, RampedSlices(runner, ramp), path, stream=io.StringIO())
            ramp.stop()
            record["two_run"] = two_run_method(runner, ramp, len(document.complete_pairs))
        finally:
            ramp.stop()
    elif document.slice.host_speed:
        outcome = run_ab(
            document,
            runner,
            path,
            stream=io.StringIO(),
            undecided_of=escalating_on_raw(document, args.escalate_alpha),
        )
    else:
        outcome = run_ab(document, runner, path, stream=io.StringIO())
    record.update(
        {
            "pairs": outcome.pairs,
            "stopped": outcome.stopped,
            "wall_seconds": round(time.time() - started, 1),
            "pair_seconds": round(
                sum(p.wall_seconds for p in document.complete_pairs) / max(1, outcome.pairs), 2
            ),
            "load": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            "series": {
                describe_key(v.key): {
                    "verdict": v.comparison.verdict.value,
                    "change": round(v.comparison.change, 4),
                    "low": round(v.comparison.change_low, 4),
                    "high": round(v.comparison.change_high, 4),
                }
                for v in outcome.verdicts
            },
        }
    )
    if document.slice.host_speed:
        record["host_speed"] = True
        record["series_raw"] = raw_verdicts(document)
        if args.escalate_alpha != document.alpha:
            record["escalate_alpha"] = args.escalate_alpha
            record["series_raw_strict"] = raw_verdicts(document, args.escalate_alpha)
    return record


def raw_verdicts(document: AbDocument, alpha: float | None = None) -> dict[str, dict[str, Any]]:
    """The same pairs judged on bytes/s as measured, as a run without --host-speed would
    have: no yardstick series in the family, the same looks, stopping at the first look
    where every series is decided (the trials escalate on this judgement, so each look's
    pairs are there; in older trials that escalated per host speed, fewer pairs may be:
    then judged on what there is, `pairs` saying how many)."""
    found: dict[str, dict[str, Any]] = {}
    for step in document.steps:
        found = _judged_raw(document, step, alpha)
        if all(v["verdict"] != PairedVerdict.UNKNOWN.value for v in found.values()):
            break
    return found


def _judged_raw(
    document: AbDocument, upto: int, alpha: float | None = None
) -> dict[str, dict[str, Any]]:
    collected = [
        s
        for s in collect_pairs(document.complete_pairs).values()
        if s.only is None and s.key != HOST_SPEED_SERIES
    ]
    family = max(1, len(collected)) * max(1, len(document.steps))
    found = {}
    for series in collected:
        a, b = series.a_shown[:upto], series.b_shown[:upto]
        level = document.alpha if alpha is None else alpha
        c = judge_pairs(a, b, document.max_drop, alpha=level, family=family)
        found[describe_key(series.key)] = {
            "verdict": c.verdict.value,
            "change": round(c.change, 4),
            "low": round(c.change_low, 4),
            "high": round(c.change_high, 4),
            "pairs": len(a),
        }
    return found


def escalating_on_raw(document: AbDocument, alpha: float) -> Any:
    """run_ab's `undecided_of` for --host-speed trials: go on while the bytes/s judgement
    (the default's) cannot tell at `alpha`, so every judgement at that alpha or a looser
    one has the pairs its own stopping rule would use (a looser alpha stops at a prefix:
    raw_verdicts finds its look)."""

    def undecided_raw(verdicts: list[Any]) -> list[Any]:
        raw = _judged_raw(document, len(document.complete_pairs), alpha)
        return (
            list(verdicts)
            if any(v["verdict"] == "could not tell yet" for v in raw.values())
            else []
        )

    return undecided_raw


def rejudge_raw(out: Path) -> None:
    """Rewrites every --host-speed trial's series_raw from its A/B file (raw_verdicts)."""
    lines = (out / "trials.jsonl").read_text().splitlines()
    kept = []
    for line in lines:
        entry = json.loads(line)
        if entry.get("host_speed"):
            path = out / f"{entry['scenario']}-{entry['run']:03d}.json"
            entry["series_raw"] = raw_verdicts(load_document(path))
        kept.append(json.dumps(entry))
    (out / "trials.jsonl").write_text("\n".join(kept) + "\n")


def two_run_method(runner: BoardSlices, ramp: LoadRamp, slices: int) -> dict[str, Any]:
    """Every A slice, then every B slice, under the same ramp; pooled and judged as
    `hwcrypto compare` judges two runs (drop beyond max_drop and intervals apart)."""
    pooled: dict[str, dict[str, list[float]]] = {}
    for side in ("A", "B"):
        for index in range(slices):
            ramp.tick()
            outcome = runner.run_slice(side, index)
            for m in (outcome.results or {}).get("measurements", []):
                name = f"{m['algorithm']} {m['block_size']} {m['driver']}"
                pooled.setdefault(name, {"A": [], "B": []})[side].extend(m["samples"])
    verdicts = {}
    for name, sides in pooled.items():
        if sides["A"] and sides["B"]:
            a, b = SampleStats.from_samples(sides["A"]), SampleStats.from_samples(sides["B"])
            verdicts[name] = {
                "change": round(b.median / a.median - 1, 4),
                "regressed": two_run_regressed(a, b, 0.05),
            }
    return verdicts


def finished(out: Path) -> set[tuple[str, int]]:
    done = set()
    lines = out / "trials.jsonl"
    if lines.exists():
        for line in lines.read_text().splitlines():
            entry = json.loads(line)
            done.add((entry["scenario"], entry["run"]))
    return done


def table(out: Path) -> None:
    rows: dict[str, list[dict[str, Any]]] = {}
    for line in (out / "trials.jsonl").read_text().splitlines():
        entry = json.loads(line)
        rows.setdefault(entry["scenario"], []).append(entry)
    print(
        "| scenario | trials | series | regressed | same | could not tell | improved "
        "| median change | pairs used (median, max) | s per pair | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (scenario, judged), entries in _by_judgement(rows).items():
        names = sorted({name for e in entries for name in e[judged]})
        for name in names:
            words = [e[judged][name]["verdict"] for e in entries if name in e[judged]]
            changes = sorted(e[judged][name]["change"] for e in entries if name in e[judged])
            pairs = sorted(e["pairs"] for e in entries)
            loads = [x for e in entries for x in e["load"]]
            per_pair = sorted(e["pair_seconds"] for e in entries)
            label = scenario + {
                "series": "",
                "series_host": " (per host speed)",
                "series_raw_strict": " (bytes/s, alpha {})".format(
                    entries[0].get("escalate_alpha")
                ),
            }.get(judged, " (bytes/s as measured)")
            print(
                f"| {label} | {len(entries)} | {name} | {words.count('regressed')} | "
                f"{words.count('same')} | {words.count('could not tell yet')} | "
                f"{words.count('improved')} | {changes[len(changes) // 2]:+.1%} | "
                f"{pairs[len(pairs) // 2]}, {pairs[-1]} | {per_pair[len(per_pair) // 2]:.1f} | "
                f"{min(loads):.1f}-{max(loads):.1f} |"
            )
        two = [e["two_run"] for e in entries if "two_run" in e and judged != "series_raw"]
        if two:
            flagged = sum(any(v["regressed"] for v in t.values()) for t in two)
            print(
                f"| {scenario}: two-run method | {len(two)} | any series | "
                f"{flagged} trials flagged | | | | | | | |"
            )


def _by_judgement(
    rows: dict[str, list[dict[str, Any]]],
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Trials without the host speed, judged on bytes/s; with it, judged both ways on the
    same pairs (`series` per host speed, `series_raw` as measured), each a row group."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for scenario, entries in rows.items():
        for entry in entries:
            if entry.get("host_speed"):
                groups.setdefault((scenario, "series_host"), []).append(
                    {**entry, "series_host": entry["series"]}
                )
                groups.setdefault((scenario, "series_raw"), []).append(entry)
                if "series_raw_strict" in entry:
                    groups.setdefault((scenario, "series_raw_strict"), []).append(entry)
            else:
                groups.setdefault((scenario, "series"), []).append(entry)
    return groups


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernel")
    parser.add_argument("--out", required=True)
    parser.add_argument("--scenario", action="append", default=[])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--steps", default="10,20,40", help="pair counts to look at")
    parser.add_argument("--slice-seconds", type=float, default=1.5)
    parser.add_argument("--block-sizes", default="65536")
    parser.add_argument("--max-drop", type=float, default=0.02)
    parser.add_argument("--ramp-every", type=int, default=8)
    parser.add_argument(
        "--host-speed", action="store_true", help="judge per unit of host speed (and raw)"
    )
    parser.add_argument(
        "--escalate-alpha",
        type=float,
        default=0.05,
        help="with --host-speed: add pairs while bytes/s at this alpha cannot tell (0.05); "
        "a stricter one is recorded as series_raw_strict",
    )
    parser.add_argument("--table", action="store_true")
    parser.add_argument(
        "--rejudge-raw", action="store_true", help="recompute series_raw of recorded trials"
    )
    args = parser.parse_args()
    # SIGTERM through SystemExit: the load ramp's busy processes and the board are ended
    # by their cleanup (killed by the default action, both were left running)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.table:
        table(out)
        return 0
    if args.rejudge_raw:
        rejudge_raw(out)
        return 0
    done = finished(out)
    for scenario in args.scenario:
        for run in range(args.runs):
            if (scenario, run) in done:
                continue
            record = run_trial(args, scenario, run, out)
            with (out / "trials.jsonl").open("a") as lines:
                lines.write(json.dumps(record) + "\n")
            summary = {k: v["verdict"] for k, v in record["series"].items()}
            print(f"{scenario} {run}: {record['pairs']} pairs, {summary}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
