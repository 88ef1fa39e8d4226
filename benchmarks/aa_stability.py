# SPDX-License-Identifier: MIT
"""(b) A/A stability and (d) suite time: the throughput suite on an unchanged UML board.

Run from the repository root on the host; each run boots a fresh UML board:

    .venv/bin/python benchmarks/aa_stability.py --runs 10 --out /tmp/aa

Every run is `pytest --hwcrypto --hwcrypto-vm=uml --hwcrypto-suite=throughput` with
aa_uml_profile.toml, whose rules have a known truth on this board, and its results JSON is
kept. Then, across the runs:

* false verdicts: a rule verdict other than its known truth; a regression flagged between
  two runs of the unchanged board (`hwcrypto compare` logic, --max-drop 10 %); a
  winner-not-fastest finding at <= 256 B (where both drivers are syscall-bound and equal)
  or none at >= 16 KiB (where aes-fixed-time is about half as fast);
* CoV across runs of each series' median (bar: <= 3 % at >= 4 KiB);
* the wall time of each run, boot included (bar: <= 120 s).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_hwcrypto.model.results import Results, load_results  # noqa: E402
from pytest_hwcrypto.verdict.compare import compare  # noqa: E402

PROFILE = Path(__file__).resolve().parent / "aa_uml_profile.toml"
EXPECTED_VERDICTS = {
    "cbc winner fastest, small blocks": True,
    "cbc winner fastest, large blocks": False,
    "xts generic floor": True,
}
EQUAL_UP_TO = 256
CLEARLY_SLOWER_FROM = 16384


def run_suite(out: Path, index: int, extra: list[str]) -> float:
    command = [
        str(ROOT / ".venv" / "bin" / "pytest"),
        "--hwcrypto",
        "--hwcrypto-vm=uml",
        "--hwcrypto-suite=throughput",
        f"--hwcrypto-board={PROFILE}",
        f"--hwcrypto-json={out / f'run-{index:02d}.json'}",
        "-q",
        "-p",
        "no:cacheprovider",
        *extra,
    ]
    began = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - began
    (out / f"run-{index:02d}.log").write_text(done.stdout + done.stderr)
    return seconds


def false_verdicts(runs: list[Results]) -> list[str]:
    problems = []
    for index, results in enumerate(runs):
        for verdict in results.verdicts:
            expected = EXPECTED_VERDICTS.get(verdict.rule)
            if expected is not None and verdict.passed != expected:
                problems.append(f"run {index}: rule {verdict.rule!r} {verdict.message}")
        problems += _winner_findings_problems(index, results)
    for index, results in enumerate(runs[1:], 1):
        for comparison in compare(runs[0], results, max_drop=0.10):
            if comparison.failed:
                problems.append(
                    f"run {index} vs run 0: {comparison.algorithm} {comparison.driver} "
                    f"{comparison.block_size} B regress {comparison.change:+.1%}"
                )
    return problems


def _winner_findings_problems(index: int, results: Results) -> list[str]:
    problems = []
    flagged_sizes: dict[str, set[int]] = {}
    for finding in results.findings:
        if finding.kind != "winner-not-fastest":
            continue
        for point in finding.extra.get("points", []):
            size = point.get("block_size") if isinstance(point, dict) else None
            if isinstance(size, int):
                flagged_sizes.setdefault(finding.algorithm, set()).add(size)
    measured = {m.algorithm for m in results.measurements}
    for algorithm in sorted(measured):
        sizes = flagged_sizes.get(algorithm, set())
        small = sorted(s for s in sizes if s <= EQUAL_UP_TO)
        if small:
            problems.append(f"run {index}: {algorithm} winner-not-fastest at {small} B")
        large = {m.block_size for m in results.measurements if m.algorithm == algorithm}
        missed = sorted(s for s in large if s is not None and s >= CLEARLY_SLOWER_FROM)
        missed = [s for s in missed if s not in sizes]
        if missed:
            problems.append(f"run {index}: {algorithm} slow winner not reported at {missed} B")
    return problems


def stability(runs: list[Results]) -> dict[str, float]:
    medians: dict[str, list[float]] = {}
    for results in runs:
        for m in results.measurements:
            if m.source != "afalg" or m.block_size is None:
                continue
            key = f"{m.algorithm} {m.driver} {m.block_size}"
            medians.setdefault(key, []).append(m.bytes_per_second)
    return {
        key: statistics.stdev(values) / statistics.mean(values)
        for key, values in medians.items()
        if len(values) > 1
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--analyze-only", action="store_true")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    times: list[float] = []
    if not args.analyze_only:
        for index in range(args.runs):
            times.append(run_suite(args.out, index, args.pytest_args))
            print(f"run {index}: {times[-1]:.1f} s", flush=True)
        (args.out / "wall_seconds.json").write_text(json.dumps(times) + "\n")
    elif (args.out / "wall_seconds.json").exists():
        times = json.loads((args.out / "wall_seconds.json").read_text())
    runs = [load_results(path) for path in sorted(args.out.glob("run-*.json"))]
    problems = false_verdicts(runs)
    covs = stability(runs)
    large = {key: cov for key, cov in covs.items() if int(key.rsplit(" ", 1)[1]) >= 4096}
    print(f"{len(runs)} runs; false verdicts: {len(problems)}")
    for problem in problems:
        print(f"  {problem}")
    for key, cov in sorted(covs.items(), key=lambda item: item[1], reverse=True):
        print(f"  CoV across runs {cov:6.1%}  {key}")
    worst = max(large.values(), default=0.0)
    print(f"worst CoV across runs at >= 4 KiB: {worst:.1%} (bar 3 %)")
    if times:
        print(
            f"suite wall time incl. boot: median {statistics.median(times):.1f} s, "
            f"max {max(times):.1f} s (bar 120 s)"
        )
    return 0 if not problems and worst <= 0.03 else 1


if __name__ == "__main__":
    sys.exit(main())
