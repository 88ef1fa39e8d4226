"""storage-bound (pure): a dm-crypt volume that runs as fast as the bare device under it.

Then the storage, not the cipher, sets the pace, and comparing drivers through that volume
says nothing about the drivers (the Kirkwood NAS case: fio identical with and without the
engine, disk at 100 % util). Judged per op and block size against the bare device's
measurement of the same workload in the same boot: the volume's 95 % interval of the
median reaches the bare device's, i.e. it is not clearly slower.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_hwcrypto.model.results import Finding, Measurement
from pytest_hwcrypto.verdict.compare_text import format_mib_s
from pytest_hwcrypto.vocabulary import FindingKind


def _low(m: Measurement) -> float:
    return m.ci_low if m.ci_low is not None else m.bytes_per_second


def _high(m: Measurement) -> float:
    return m.ci_high if m.ci_high is not None else m.bytes_per_second


def _words(m: Measurement) -> str:
    spread = f" [{format_mib_s(_low(m))}, {format_mib_s(_high(m))}]" if m.ci_low else ""
    return f"{format_mib_s(m.bytes_per_second)} MiB/s{spread}"


def storage_bound_findings(
    volumes: Sequence[Measurement], bare: Sequence[Measurement]
) -> list[Finding]:
    """One finding per volume measurement within noise of the bare device's."""
    by_cell = {(m.op, m.block_size): m for m in bare}
    findings = []
    for volume in volumes:
        device = by_cell.get((volume.op, volume.block_size))
        if device is None or _high(volume) < _low(device):
            continue
        detail = (
            f"{volume.driver} {volume.op} at {volume.block_size} B through dm-crypt ran "
            f"{_words(volume)} against {_words(device)} on the bare device: not clearly "
            "slower, so the storage (or the per-request cost under it) sets the pace and "
            "this says nothing about the driver"
        )
        extra = {
            "driver": volume.driver,
            "source": str(volume.source),
            "op": volume.op,
            "block_size": volume.block_size,
            "ratio": volume.bytes_per_second / max(device.bytes_per_second, 1e-9),
        }
        findings.append(Finding(FindingKind.STORAGE_BOUND, volume.algorithm, detail, extra))
    return findings
