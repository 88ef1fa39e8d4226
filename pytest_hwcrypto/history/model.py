# SPDX-License-Identifier: MIT
"""What a history holds: runs keyed by board and kernel, and series of measurements.

Pure data, no I/O: the store (history/store.py) builds these from its rows, and the
change-point detection (history/changes.py) takes them in kernel order.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class KernelIdentity:
    """Which kernel a run measured, as precisely as the run's file says.

    ``release`` is `uname -r`; ``commit`` the git commit (40 hex digits) and
    ``describe`` `git describe` where the run knew them; ``config_digest`` a digest of
    the kernel's config where it was readable. Two runs are of the same kernel when
    every field present in both agrees.
    """

    release: str
    commit: str | None = None
    describe: str | None = None
    config_digest: str | None = None

    def label(self) -> str:
        """Short name for tables: describe, else release plus a short commit."""
        if self.describe:
            return self.describe
        if self.commit:
            return f"{self.release} ({self.commit[:12]})"
        return self.release


@dataclass(frozen=True)
class RunIdentity:
    """One CI run: a board booted one kernel once, with one version of the plugin.

    ``run_id`` is a digest of the run's own content (the store's key), so adding the
    same file twice names the same run. ``started`` is ISO 8601 UTC; it is when the run
    happened, never the order the kernels are judged in.
    """

    run_id: str
    board: str
    kernel: KernelIdentity
    plugin_version: str
    started: str


@dataclass(frozen=True)
class SeriesKey:
    """What one series measures, keyed as the results file keys a measurement.

    ``driver`` is the driver that served; None for paths that name only the algorithm
    (cryptsetup benchmark, OpenSSL), where a change of winner shows as ``driver`` of the
    points changing under one key with driver None.
    """

    board: str
    path: str
    algorithm: str
    driver: str | None
    key_bits: int | None
    block_size: int | None
    op: str
    concurrency: int | None


@dataclass(frozen=True)
class Point:
    """One run's value for a series: bytes per second (or its unit), and its samples."""

    run: RunIdentity
    value: float
    samples: tuple[float, ...] = ()
    served_by: str | None = None  # the driver that served, where the key names none


@dataclass
class Series:
    """A series' points, in the order the caller asked for (the store does not sort)."""

    key: SeriesKey
    unit: str = "bytes/s"
    points: list[Point] = field(default_factory=list)
