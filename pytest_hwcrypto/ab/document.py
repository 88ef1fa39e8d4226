# SPDX-License-Identifier: MIT
"""The results file of an A/B run: both sides, every slice with every sample, the pairing
and the order -- written after every pair, so a run cut off keeps what it measured and a
rerun with the same file resumes where it stopped.

Shape (schema `pytest-hwcrypto-ab/1`):
`{"schema", "board", "sides": {"A": {kernel, modules, label, config}, "B": {...}},
"slice": {seconds, block_sizes, algorithms, sessions, max_samples, by_name, host_speed},
"seed",
"max_drop", "alpha", "steps": [8, 16, ...], "inventory": {"A": [...], "B": [...]},
"pairs": [{"index", "order": "AB"|"BA", "slices": {"A": {results, boot_seconds,
wall_seconds, started, host_load, error}, "B": {...}}}], "verdict": {...}}`.
A slice's `results` is a results file of the running kernel (schema pytest-hwcrypto/1)
without its inventory when that equals the side's first (kept once under "inventory").
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_hwcrypto.ab.slice import SliceSpec
from pytest_hwcrypto.model.results import Measurement, ResultsError

AB_SCHEMA = "pytest-hwcrypto-ab/1"
SIDES = ("A", "B")


class AbFileError(ValueError):
    """The A/B results file cannot be read or does not fit this run; one line."""


@dataclass(frozen=True)
class Side:
    """What one side is: a kernel (and its modules), or a configuration of the same kernel."""

    label: str
    kernel: str | None = None
    modules: str | None = None
    config: Mapping[str, Any] = field(default_factory=dict)  # e.g. {"blacklist": ["aesni_intel"]}

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "kernel": self.kernel,
            "modules": self.modules,
            "config": dict(self.config),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Side:
        return cls(
            label=str(data.get("label", "")),
            kernel=data.get("kernel"),
            modules=data.get("modules"),
            config=dict(data.get("config") or {}),
        )


@dataclass
class SliceRecord:
    side: str
    results: dict[str, Any] | None
    boot_seconds: float | None
    wall_seconds: float
    started: float
    host_load: float | None
    error: str | None = None

    def measurements(self) -> list[Measurement]:
        if not self.results:
            return []
        return [
            Measurement.from_json(m, f"slice {self.side}: measurements[{i}]")
            for i, m in enumerate(self.results.get("measurements", []))
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "results": self.results,
            "boot_seconds": self.boot_seconds,
            "wall_seconds": self.wall_seconds,
            "started": self.started,
            "host_load": self.host_load,
            "error": self.error,
        }

    @classmethod
    def from_json(cls, side: str, data: Mapping[str, Any]) -> SliceRecord:
        return cls(
            side=side,
            results=data.get("results"),
            boot_seconds=data.get("boot_seconds"),
            wall_seconds=float(data.get("wall_seconds", 0.0)),
            started=float(data.get("started", 0.0)),
            host_load=data.get("host_load"),
            error=data.get("error"),
        )


@dataclass
class PairRecord:
    index: int
    order: str
    slices: dict[str, SliceRecord] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return all(
            side in self.slices and self.slices[side].error is None and self.slices[side].results
            for side in SIDES
        )

    @property
    def wall_seconds(self) -> float:
        return sum(record.wall_seconds for record in self.slices.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "order": self.order,
            "slices": {side: record.to_json() for side, record in self.slices.items()},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PairRecord:
        return cls(
            index=int(data["index"]),
            order=str(data["order"]),
            slices={
                side: SliceRecord.from_json(side, record)
                for side, record in dict(data.get("slices") or {}).items()
            },
        )


@dataclass
class AbDocument:
    board: str
    sides: dict[str, Side]
    slice: SliceSpec
    seed: int
    max_drop: float
    alpha: float
    steps: list[int]
    inventory: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    pairs: list[PairRecord] = field(default_factory=list)
    verdict: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def complete_pairs(self) -> list[PairRecord]:
        return [pair for pair in self.pairs if pair.complete]

    def add_slice(self, pair: PairRecord, record: SliceRecord) -> None:
        """Keep a slice; its inventory is stored once per side unless it changed."""
        results = record.results
        if results is not None and "inventory" in results:
            known = self.inventory.get(record.side)
            if known is None:
                self.inventory[record.side] = results.pop("inventory")
            elif known == results["inventory"]:
                results.pop("inventory")
        pair.slices[record.side] = record

    def identity(self) -> dict[str, Any]:
        """What a resumed run must share with the file: the sides, the board, the slice."""
        return {
            "board": self.board,
            "sides": {side: self.sides[side].to_json() for side in SIDES},
            "slice": self.slice.to_json(),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": AB_SCHEMA,
            **self.identity(),
            "seed": self.seed,
            "max_drop": self.max_drop,
            "alpha": self.alpha,
            "steps": list(self.steps),
            "inventory": self.inventory,
            "pairs": [pair.to_json() for pair in self.pairs],
            "verdict": self.verdict,
            **self.extra,
        }

    @classmethod
    def from_json(cls, data: Any, where: str) -> AbDocument:
        if not isinstance(data, dict) or data.get("schema") != AB_SCHEMA:
            raise AbFileError(f"{where}: not an A/B results file (schema {AB_SCHEMA!r})")
        try:
            spec = dict(data["slice"])
            document = cls(
                board=str(data["board"]),
                sides={side: Side.from_json(data["sides"][side]) for side in SIDES},
                slice=SliceSpec(
                    seconds=float(spec["seconds"]),
                    block_sizes=tuple(int(size) for size in spec["block_sizes"]),
                    algorithms=tuple(str(a) for a in spec.get("algorithms", ())),
                    sessions=int(spec.get("sessions", 2)),
                    max_samples=int(spec.get("max_samples", 20)),
                    by_name=bool(spec.get("by_name", False)),
                    host_speed=bool(spec.get("host_speed", False)),
                    suite=str(spec.get("suite", "throughput")),
                    pytest_args=tuple(str(a) for a in spec.get("pytest_args", ())),
                ),
                seed=int(data["seed"]),
                max_drop=float(data["max_drop"]),
                alpha=float(data["alpha"]),
                steps=[int(step) for step in data["steps"]],
                inventory={k: list(v) for k, v in dict(data.get("inventory") or {}).items()},
                pairs=[PairRecord.from_json(pair) for pair in data.get("pairs", [])],
                verdict=dict(data.get("verdict") or {}),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise AbFileError(f"{where}: malformed A/B results file ({error!r})") from None
        known = {
            "schema",
            "board",
            "sides",
            "slice",
            "seed",
            "max_drop",
            "alpha",
            "steps",
            "inventory",
            "pairs",
            "verdict",
        }
        document.extra = {k: v for k, v in data.items() if k not in known}
        return document


def load_document(path: Path) -> AbDocument:
    try:
        text = path.read_text()
    except OSError as error:
        raise AbFileError(f"{path}: cannot read ({error.strerror})") from None
    try:
        data = json.loads(text)
    except ValueError as error:
        raise AbFileError(f"{path}: not JSON ({error})") from None
    try:
        return AbDocument.from_json(data, str(path))
    except ResultsError as error:
        raise AbFileError(str(error)) from None


def save_document(document: AbDocument, path: Path) -> None:
    """Write atomically: a run killed mid-write leaves the previous file whole."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(document.to_json(), indent=1) + "\n")
    os.replace(partial, path)


def resume_mismatch(existing: AbDocument, wanted: AbDocument) -> str | None:
    """Why `existing` cannot be continued as `wanted` (None: it can)."""
    have, want = existing.identity(), wanted.identity()
    for key in ("board", "sides", "slice"):
        if have[key] != want[key]:
            return f"its {key} differ ({have[key]} in the file, {want[key]} asked)"
    return None
