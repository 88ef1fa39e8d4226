"""Collects what a session learnt (measurements, findings, verdicts) for --hwcrypto-json.

Under pytest-xdist each worker records its own part; the worker sends it to the controller
in `workeroutput` and the controller merges, so one results file covers the whole run.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_hwcrypto.model.results import SCHEMA, Results, save_results

WORKER_OUTPUT_KEY = "hwcrypto_results"


@dataclass
class ResultsRecorder:
    kernel: dict[str, Any] = field(default_factory=dict)
    inventory: list[dict[str, Any]] = field(default_factory=list)
    measurements: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add_measurement(self, measurement: dict[str, Any]) -> None:
        with self._lock:
            self.measurements.append(measurement)

    def add_finding(self, kind: str, algorithm: str, detail: str, **extra: Any) -> None:
        finding = {"kind": kind, "algorithm": algorithm, "detail": detail, **extra}
        with self._lock:
            if finding not in self.findings:
                self.findings.append(finding)

    def update_inventory(self, entries: list[dict[str, Any]]) -> None:
        """Take in a later reading of /proc/crypto.

        Binding a template instance by driver name (``cbc(aes-generic)``) registers it, so
        the inventory read at session start lacks drivers that were measured; a later
        reading adds them (and may move the winner), and replaces entries it also has.
        """
        with self._lock:
            self.inventory = _union_inventory(self.inventory, entries)

    def add_verdict(self, rule: str, passed: bool, message: str) -> None:
        with self._lock:
            self.verdicts.append({"rule": rule, "passed": passed, "message": message})

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "kernel": self.kernel,
            "inventory": self.inventory,
            "measurements": self.measurements,
            "findings": self.findings,
            "verdicts": self.verdicts,
        }

    def merge(self, other: dict[str, Any]) -> None:
        """Take in what an xdist worker recorded."""
        with self._lock:
            self.kernel = self.kernel or other.get("kernel", {})
            self.inventory = _union_inventory(self.inventory, other.get("inventory", []))
            self.measurements.extend(other.get("measurements", []))
            for finding in other.get("findings", []):
                if finding not in self.findings:
                    self.findings.append(finding)
            self.verdicts.extend(other.get("verdicts", []))

    def write(self, path: Path) -> None:
        """Validate against the results model and write atomically."""
        path.parent.mkdir(parents=True, exist_ok=True)
        save_results(Results.from_json(self.to_json(), "recorded results"), path)


def _union_inventory(
    older: list[dict[str, Any]], newer: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Entries of both, keyed by driver and type; on a clash the newer reading wins."""
    merged = {(entry.get("driver"), entry.get("type")): entry for entry in older}
    merged.update({(entry.get("driver"), entry.get("type")): entry for entry in newer})
    return list(merged.values())
