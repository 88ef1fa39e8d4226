# SPDX-License-Identifier: MIT
"""One slice of an A/B run, measured inside a booted board: `python -m pytest_hwcrypto.ab.slice`.

Every boot of `hwcrypto ab` runs this: read /proc/crypto, measure the same plan as the
throughput suite (AF_ALG, interleaved rounds, several sessions per driver) over every
driver of the algorithms asked for -- one driver is enough, it is compared with itself in
the other kernel -- or, asked nothing, over the winners of what users' paths bind
(measure/targets.PATH_ALGORITHMS) for a few seconds, and write one results
file: kernel, inventory, every sample, and the findings that need no rule. A short slice
per boot, rather than a whole suite run, is what makes pairs cheap: on the UML board a
boot costs ~1 s, a pytest session inside it ~10 s more.

With `--by-name` each algorithm is also measured bound by *name*, as cryptsetup, dm-crypt
and OpenSSL's afalg engine bind it: the kernel picks the winner, so a kernel (or a
blacklisted module, or a re-ranked driver) that changes the winner changes this series,
which keeps its key while the driver that served is recorded beside it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_hwcrypto.kernel.facts import gather_kernel_facts
from pytest_hwcrypto.kernel.inventory import InventoryEntry, build_inventory
from pytest_hwcrypto.kernel.procfs import ProcCryptoError, read_proc_crypto
from pytest_hwcrypto.measure.afalg_engine import AfAlgEngine
from pytest_hwcrypto.measure.bench import BenchError, bench_target
from pytest_hwcrypto.measure.host_speed import user_space_speed
from pytest_hwcrypto.measure.plan import Plan, least_budget, make_plan
from pytest_hwcrypto.measure.runner import run_plan
from pytest_hwcrypto.measure.targets import PlanError, Target, discover_targets, winner_targets
from pytest_hwcrypto.model.results import Finding, Measurement, inventory_items
from pytest_hwcrypto.verdict.rules import (
    crossover_findings,
    hw_loses_to_sw_findings,
    winner_not_fastest_findings,
)
from pytest_hwcrypto.vocabulary import DEFAULT_TIMEOUT_SECONDS, RESULTS_SCHEMA

# Measurement.extra: the series was bound by algorithm name; its `driver` is the one that
# served, and the series is keyed on the name alone (ab/series.py).
BY_NAME_KEY = "ab_by_name"
SLICE_EXIT_NOTHING = 5  # nothing to measure on this kernel
# A kernel call's deadline inside a slice: the first bind of a template instance runs its
# self-tests, which under QEMU's TCG on a loaded host took over the plugin's 10 s default
# (6.1 on the QEMU board, load ~15: "bind did not complete within 10 s").
SLICE_TIMEOUT_SECONDS = max(60.0, DEFAULT_TIMEOUT_SECONDS)


@dataclasses.dataclass(frozen=True)
class SliceSpec:
    """What every slice of one A/B run measures; the same on both sides."""

    seconds: float
    block_sizes: tuple[int, ...]
    # every driver of these (one is enough); empty: the winners of PATH_ALGORITHMS
    algorithms: tuple[str, ...] = ()
    sessions: int = 2
    max_samples: int = 20
    by_name: bool = False
    # Time the host's user-space speed around every sample (measure/host_speed.py), so
    # the pairs can be judged per unit of it; the throughput slice only.
    host_speed: bool = False
    # Another suite, or pytest arguments: each boot runs a whole (short) pytest session,
    # `pytest --hwcrypto --hwcrypto-suite=SUITE --hwcrypto-budget=SECONDS ARGS`, instead of
    # this module; ~10 s more per boot on UML, but any suite that records samples pairs.
    suite: str = "throughput"
    pytest_args: tuple[str, ...] = ()

    @property
    def uses_pytest(self) -> bool:
        return self.suite != "throughput" or bool(self.pytest_args)

    def command(self, python: str, out: Path, settings: Mapping[str, str]) -> list[str]:
        """The command a boot runs to measure this slice into `out`."""
        if not self.uses_pytest:
            knobs = [f"--set={path}={value}" for path, value in settings.items()]
            head = [python, "-m", "pytest_hwcrypto.ab.slice", "--out", str(out)]
            return head + self.argv() + knobs
        if settings:
            raise ValueError("kernel knobs (--a-set/--b-set) work with the throughput slice only")
        return [
            python,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "--hwcrypto",
            f"--hwcrypto-suite={self.suite}",
            f"--hwcrypto-budget={self.seconds:g}",
            f"--hwcrypto-json={out}",
            f"--hwcrypto-block-sizes={','.join(str(size) for size in self.block_sizes)}",
            *[f"--hwcrypto-algorithm={algorithm}" for algorithm in self.algorithms],
            *self.pytest_args,
        ]

    def argv(self) -> list[str]:
        args = [
            "--seconds",
            repr(self.seconds),
            "--block-sizes",
            ",".join(str(size) for size in self.block_sizes),
            "--sessions",
            str(self.sessions),
            "--max-samples",
            str(self.max_samples),
        ]
        for algorithm in self.algorithms:
            args += ["--algorithm", algorithm]
        args += ["--by-name"] if self.by_name else []
        return args + (["--host-speed"] if self.host_speed else [])

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def slice_targets(entries: Sequence[InventoryEntry], spec: SliceSpec) -> list[Target]:
    """The drivers to measure, and with `by_name` each algorithm bound by name.

    A by-name series must exist on both sides even where the other side has only one
    driver left (a blacklisted module took the rest, and an algorithm with one driver is
    not compared within a kernel): the algorithms asked for are bound by name whatever
    their driver count, the kernel building the template instance if it must.
    """
    if spec.algorithms:
        chosen = [
            t for t in discover_targets(entries, min_drivers=1) if t.algorithm in spec.algorithms
        ]
    else:
        chosen = winner_targets(entries)
    if spec.by_name:
        names = list(dict.fromkeys([*spec.algorithms, *(t.algorithm for t in chosen)]))
        for name in names:
            try:
                target = bench_target(name, None)
            except BenchError:
                continue  # not on this kernel: the series shows as measured on one side
            chosen.append(dataclasses.replace(target, algorithm=name, driver=name, rank=-1))
    return chosen


SETTABLE_ROOTS = ("/sys/", "/proc/sys/")


def parse_setting(text: str) -> tuple[str, str]:
    """'PATH=VALUE' for a kernel knob under /sys or /proc/sys; ValueError saying why not."""
    path, equals, value = text.partition("=")
    if not equals or not path.startswith(SETTABLE_ROOTS):
        raise ValueError(
            f"{text!r}: write PATH=VALUE with PATH under /sys/ or /proc/sys/, e.g. "
            "/sys/module/aes_generic/parameters/bench_work=8"
        )
    return path, value


def apply_settings(settings: Mapping[str, str]) -> None:
    """Write each knob; OSError names the knob (a missing one means another kernel)."""
    for path, value in settings.items():
        try:
            Path(path).write_text(value)
        except OSError as error:
            raise OSError(f"cannot set {path}={value}: {error.strerror}") from None


def slice_plan(targets: Sequence[Target], spec: SliceSpec) -> tuple[Plan, float]:
    """The slice's plan and its seconds: every target asked for, always.

    The throughput suite's plan leaves out whole algorithms a budget cannot share; an A/B
    slice must not, or a series the user asked for (sha256 beside xts and cbc in a 1 s
    slice) would go unjudged without a word. So a slice too short for all of them takes
    the least budget that holds them all, and says so in its results (`slice_seconds`).
    """

    def plan_for(seconds: float) -> Plan:
        return make_plan(
            targets,
            spec.block_sizes,
            seconds,
            max_samples=spec.max_samples,
            sessions=spec.sessions,
        )

    plan = plan_for(spec.seconds)
    if not plan.left_out:
        return plan, spec.seconds
    whole = plan_for(max(spec.seconds, 1.0) * 1000.0)  # every cell, to price them
    seconds = max(spec.seconds, least_budget(whole) * 1.01)  # a hair over: no rounding
    return plan_for(seconds), seconds


def measure_slice(
    spec: SliceSpec,
    timeout: float = SLICE_TIMEOUT_SECONDS,
    settings: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Measure one slice on the running kernel; the results document (schema of results).

    `settings`: kernel knobs (sysfs, sysctl) this side sets before measuring.
    """
    apply_settings(settings or {})
    entries = build_inventory(read_proc_crypto())
    targets = slice_targets(entries, spec)
    inventory = [entry.to_json() for entry in entries]
    document: dict[str, Any] = {
        "schema": RESULTS_SCHEMA,
        "kernel": gather_kernel_facts().to_json(),
        "inventory": inventory,
        "measurements": [],
        "findings": [],
        "verdicts": [],
    }
    if not targets:
        return document
    plan, seconds = slice_plan(targets, spec)
    if seconds > spec.seconds:
        document["slice_seconds"] = round(seconds, 1)
    run = run_plan(
        plan, AfAlgEngine(timeout), host_speed=user_space_speed if spec.host_speed else None
    )
    by_name = {t.driver for t in targets if t.rank == -1}
    measurements: list[Measurement] = []
    for record in run.records:
        measurement = record.measurement(run.load, run.rounds_id)
        if measurement is None:
            continue
        if record.cell.target.driver in by_name:
            measurement.extra[BY_NAME_KEY] = True
        measurements.append(measurement)
    named = [m for m in measurements if not m.extra.get(BY_NAME_KEY)]
    items = inventory_items(inventory)
    findings: list[Finding] = (
        winner_not_fastest_findings(named, items)
        + hw_loses_to_sw_findings(named, items)
        + crossover_findings(named, items)
    )
    # Read again after measuring: binding by name built template instances (xts(aes) over
    # whatever cipher won), and which driver now wins a name is what the two sides compare.
    document["inventory"] = [entry.to_json() for entry in build_inventory(read_proc_crypto())]
    document["measurements"] = [m.to_json() for m in measurements]
    document["findings"] = [f.to_json() for f in findings]
    document["open_failures"] = [f"{f.target.driver}: {f.message}" for f in run.failures]
    return document


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_hwcrypto.ab.slice")
    parser.add_argument("--out", required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--block-sizes", required=True)
    parser.add_argument("--algorithm", action="append", default=[])
    parser.add_argument("--sessions", type=int, default=2)
    parser.add_argument("--max-samples", type=int, default=20)
    parser.add_argument("--by-name", action="store_true")
    parser.add_argument("--host-speed", action="store_true")
    parser.add_argument("--set", action="append", default=[], metavar="PATH=VALUE")
    args = parser.parse_args(argv)
    spec = SliceSpec(
        seconds=args.seconds,
        block_sizes=tuple(int(size) for size in args.block_sizes.split(",")),
        algorithms=tuple(args.algorithm),
        sessions=args.sessions,
        max_samples=args.max_samples,
        by_name=args.by_name,
        host_speed=args.host_speed,
    )
    try:
        document = measure_slice(spec, settings=dict(parse_setting(t) for t in args.set))
    except (OSError, ProcCryptoError, PlanError, ValueError) as error:
        sys.stderr.write(f"hwcrypto ab slice: {error}\n")
        return 1
    out = Path(args.out)
    partial = out.with_suffix(".partial")
    partial.write_text(json.dumps(document) + "\n")
    os.replace(partial, out)
    return 0 if document["measurements"] else SLICE_EXIT_NOTHING


if __name__ == "__main__":
    sys.exit(main())
