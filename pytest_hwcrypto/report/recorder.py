# SPDX-License-Identifier: MIT
"""Collects what a run learnt (measurements, findings, verdicts) for --hwcrypto-json.

Typed all the way: suites add the model's Measurement, Finding and Verdict records, and
read Measurements back (a rule in one suite may judge what another suite measured).
Under pytest-xdist each worker records its own part; the worker sends it to the
controller in `workeroutput` as JSON and the controller merges, so one results file
covers the whole run.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_hwcrypto.model.results import (
    Finding,
    Measurement,
    Results,
    Verdict,
    save_results,
)

WORKER_OUTPUT_KEY = "hwcrypto_results"


@dataclass
class ResultsRecorder:
    kernel: dict[str, Any] = field(default_factory=dict)
    inventory: list[dict[str, Any]] = field(default_factory=list)
    environment: dict[str, Any] = field(default_factory=dict)
    hwrng: dict[str, Any] | None = None  # hw_random's sources (kernel/hwrng.py), when read
    _measurements: list[Measurement] = field(default_factory=list)
    _findings: list[Finding] = field(default_factory=list)
    _verdicts: list[Verdict] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def measurements(self) -> list[Measurement]:
        """Everything measured so far in this process (a copy)."""
        with self._lock:
            return list(self._measurements)

    @property
    def findings(self) -> list[Finding]:
        with self._lock:
            return list(self._findings)

    @property
    def verdicts(self) -> list[Verdict]:
        with self._lock:
            return list(self._verdicts)

    def add_measurement(self, measurement: Measurement) -> None:
        with self._lock:
            self._measurements.append(measurement)

    def add_finding(self, finding: Finding) -> None:
        """Each finding once: several tests may see the same fact."""
        with self._lock:
            if finding not in self._findings:
                self._findings.append(finding)

    def add_verdict(self, verdict: Verdict) -> None:
        with self._lock:
            self._verdicts.append(verdict)

    def update_inventory(self, entries: list[dict[str, Any]]) -> None:
        """Take in a later reading of /proc/crypto.

        Binding a template instance by driver name (``cbc(aes-generic)``) registers it, so
        the inventory read at run start lacks drivers that were measured; a later reading
        adds them (and may move the winner), and replaces entries it also has.
        """
        with self._lock:
            self.inventory = _union_inventory(self.inventory, entries)

    def results(self) -> Results:
        with self._lock:
            return Results(
                kernel=dict(self.kernel),
                inventory=list(self.inventory),
                measurements=list(self._measurements),
                findings=list(self._findings),
                verdicts=list(self._verdicts),
                environment=dict(self.environment),
                extra={} if self.hwrng is None else {"hwrng": dict(self.hwrng)},
            )

    def to_json(self) -> dict[str, Any]:
        """Plain JSON types only: the vocabulary's str enums become str (execnet, which
        carries a worker's part to the xdist controller, refuses enum members)."""
        plain: dict[str, Any] = json.loads(json.dumps(self.results().to_json()))
        return plain

    def merge(self, other: dict[str, Any]) -> None:
        """Take in what an xdist worker recorded (its `to_json()`)."""
        worker = Results.from_json(other, "an xdist worker's results")
        with self._lock:
            self.kernel = self.kernel or worker.kernel
            # Workers know what the controller may not have computed (the run's seed).
            for key, value in worker.environment.items():
                if self.environment.get(key) is None:
                    self.environment[key] = value
            self.inventory = _union_inventory(self.inventory, worker.inventory)
            self.hwrng = self.hwrng or worker.extra.get("hwrng")
            self._measurements.extend(worker.measurements)
            self._findings.extend(f for f in worker.findings if f not in self._findings)
            self._verdicts.extend(worker.verdicts)

    def write(self, path: Path) -> None:
        """Validate against the results model (a round trip through JSON) and write."""
        path.parent.mkdir(parents=True, exist_ok=True)
        save_results(Results.from_json(self.to_json(), "recorded results"), path)


def _union_inventory(
    older: list[dict[str, Any]], newer: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Entries of both, keyed by driver and type; on a clash the newer reading wins."""
    merged = {(entry.get("driver"), entry.get("type")): entry for entry in older}
    merged.update({(entry.get("driver"), entry.get("type")): entry for entry in newer})
    return list(merged.values())
