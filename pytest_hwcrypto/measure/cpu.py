# SPDX-License-Identifier: MIT
"""CPU accounting for throughput samples: what the measured work cost the CPUs.

An offload engine's point is not only speed: while the device works, the CPU is free. Two
figures make that visible next to bytes per second:

* **process CPU** -- user + system time of the measuring process (getrusage, else
  os.times). Synchronous kernel crypto runs inside the process's own syscalls, so this is
  the CPU a software driver burns; a process waiting for a device sleeps and is not charged.
* **system-wide CPU** -- busy time of all CPUs from /proc/stat (everything but idle and
  iowait). It also catches work done for us elsewhere: interrupt handlers, softirqs, the
  kworkers of async drivers (cryptd). It catches other processes too, so the CPU of our own
  background load (--hwcrypto-load) is subtracted; other activity on the machine remains,
  which is why it is reported beside the process figure, not instead of it.

* **kernel threads** -- user + system time of every kernel thread (kthreadd's children:
  kworkers, cryptd, an engine's own threads), from /proc/<pid>/stat, when the meter is
  asked to (`kernel_threads=True`). An asynchronous driver's completion work, and the work
  items of a driver that computes off the submitter's thread, run there and are charged
  to no user process. Not counted: interrupt and softirq time charged to no thread, and
  the time of a kworker that exits between two readings.

Bytes per CPU-second is then bytes / CPU seconds: a driver that moves the same bytes per
second with half the CPU shows twice the figure. CPU seconds per byte (`cpu_per_byte` in
the results) is process + kernel-thread seconds over bytes, the cost of the path to the
machine whatever thread pays it.

The parsers are pure; `CpuMeter` reads the files.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

try:  # not on every platform Python runs on; Linux has it
    import resource
except ImportError:  # pragma: no cover
    resource = None  # type: ignore[assignment]

PROC_STAT = Path("/proc/stat")

# /proc/stat "cpu" columns, in order (older kernels print fewer; missing ones are 0).
STAT_COLUMNS = (
    "user",
    "nice",
    "system",
    "idle",
    "iowait",
    "irq",
    "softirq",
    "steal",
    "guest",
    "guest_nice",
)
# guest and guest_nice are already included in user and nice.
BUSY_COLUMNS = ("user", "nice", "system", "irq", "softirq", "steal")


class CpuStatError(ValueError):
    """A /proc file could not be read as expected; the message names it."""


def clock_ticks_per_second() -> int:
    """USER_HZ, the unit of /proc/stat and /proc/<pid>/stat times."""
    try:
        return int(os.sysconf("SC_CLK_TCK"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - always set on Linux
        return 100


@dataclass(frozen=True)
class SystemCpuTimes:
    """The all-CPUs line of /proc/stat, in seconds."""

    busy: float
    idle: float

    def __sub__(self, earlier: SystemCpuTimes) -> SystemCpuTimes:
        return SystemCpuTimes(self.busy - earlier.busy, self.idle - earlier.idle)


def parse_proc_stat(text: str, ticks_per_second: int) -> SystemCpuTimes:
    """Busy and idle seconds of all CPUs together from /proc/stat's `cpu` line."""
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            return _times_from_fields(fields[1:], ticks_per_second)
    raise CpuStatError("/proc/stat: no 'cpu' line (is /proc mounted?)")


def _times_from_fields(fields: list[str], ticks_per_second: int) -> SystemCpuTimes:
    try:
        values = dict(zip(STAT_COLUMNS, (int(field) for field in fields)))
    except ValueError:
        raise CpuStatError(f"/proc/stat: 'cpu' line is not numbers: {' '.join(fields)}") from None
    busy = sum(values.get(column, 0) for column in BUSY_COLUMNS)
    idle = values.get("idle", 0) + values.get("iowait", 0)
    return SystemCpuTimes(busy / ticks_per_second, idle / ticks_per_second)


def parse_pid_stat(text: str, ticks_per_second: int) -> float:
    """utime + stime (seconds) from /proc/<pid>/stat.

    The command name (field 2) is in parentheses and may itself contain spaces and
    parentheses, so fields are counted from the last ')'.
    """
    closing = text.rfind(")")
    if closing < 0:
        raise CpuStatError(f"not a /proc/<pid>/stat line: {text[:60]!r}")
    rest = text[closing + 1 :].split()
    # rest[0] is field 3 (state); utime and stime are fields 14 and 15.
    try:
        return (int(rest[11]) + int(rest[12])) / ticks_per_second
    except (IndexError, ValueError):
        raise CpuStatError(f"/proc/<pid>/stat has no utime/stime: {text[:60]!r}") from None


def parse_pid_parent(text: str) -> int:
    """The parent pid (field 4) from /proc/<pid>/stat (counted from the last ')')."""
    closing = text.rfind(")")
    rest = text[closing + 1 :].split() if closing >= 0 else []
    try:
        return int(rest[1])
    except (IndexError, ValueError):
        raise CpuStatError(f"/proc/<pid>/stat has no parent pid: {text[:60]!r}") from None


# kthreadd: every kernel thread is it or one of its children
KTHREADD_PID = 2


class KernelThreadClock:
    """CPU seconds of all kernel threads together, read from /proc/<pid>/stat.

    Which pids are kernel threads is learnt once per pid (its parent is kthreadd), so a
    reading after the first opens only the kernel threads' stat files.
    """

    def __init__(self, proc: Path, ticks_per_second: int) -> None:
        self._proc = proc
        self._ticks = ticks_per_second
        self._is_kthread: dict[int, bool] = {}

    def seconds(self) -> float | None:
        try:
            names = os.listdir(self._proc)
        except OSError:
            return None
        total = 0.0
        alive = set()
        for name in names:
            if not name.isdigit():
                continue
            pid = int(name)
            alive.add(pid)
            known = self._is_kthread.get(pid)
            if known is False:
                continue
            try:
                text = (self._proc / name / "stat").read_text()
                if known is None:
                    known = pid == KTHREADD_PID or parse_pid_parent(text) == KTHREADD_PID
                    self._is_kthread[pid] = known
                if known:
                    total += parse_pid_stat(text, self._ticks)
            except (OSError, CpuStatError):
                continue  # ended meanwhile
        for gone in set(self._is_kthread) - alive:
            del self._is_kthread[gone]
        return total


def process_cpu_seconds() -> float:
    """User + system CPU seconds of this process so far (all its threads)."""
    if resource is not None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return float(usage.ru_utime + usage.ru_stime)
    times = os.times()  # pragma: no cover - resource exists on Linux
    return times.user + times.system  # pragma: no cover


@dataclass(frozen=True)
class CpuSnapshot:
    """CPU counters at one instant."""

    process: float
    system_busy: float | None  # None where /proc/stat cannot be read
    excluded: float  # CPU of processes whose time must not count (our background load)
    kernel_threads: float | None = None  # None unless the meter reads them


@dataclass(frozen=True)
class CpuUsage:
    """CPU spent between two snapshots, or summed over many such intervals."""

    process_seconds: float = 0.0
    system_seconds: float | None = 0.0  # busy time of all CPUs, our background load excluded
    kernel_thread_seconds: float | None = None  # all kernel threads; None: not read
    # False where nothing was read at all (a host-driven board's helper reports no CPU):
    # then the zeros above mean "not measured", and no CPU figure may be recorded.
    measured: bool = True

    def __add__(self, other: CpuUsage) -> CpuUsage:
        return CpuUsage(
            self.process_seconds + other.process_seconds,
            _sum_known(self.system_seconds, other.system_seconds),
            _sum_known(self.kernel_thread_seconds, other.kernel_thread_seconds),
            self.measured and other.measured,
        )

    @property
    def path_seconds(self) -> float:
        """What the measured path cost: the process, plus kernel threads where read."""
        return self.process_seconds + (self.kernel_thread_seconds or 0.0)


def _sum_known(one: float | None, other: float | None) -> float | None:
    return None if one is None or other is None else one + other


def usage_between(before: CpuSnapshot, after: CpuSnapshot) -> CpuUsage:
    process = max(after.process - before.process, 0.0)
    kthreads = (
        None
        if before.kernel_threads is None or after.kernel_threads is None
        else max(after.kernel_threads - before.kernel_threads, 0.0)
    )
    if before.system_busy is None or after.system_busy is None:
        return CpuUsage(process, None, kthreads)
    busy = after.system_busy - before.system_busy
    excluded = after.excluded - before.excluded
    # Tick-granular counters can make the difference slightly negative for short intervals.
    return CpuUsage(process, max(busy - excluded, 0.0), kthreads)


def cpu_per_byte(byte_count: float, cpu_seconds: float) -> float | None:
    """CPU seconds per byte; None without bytes (nothing to divide)."""
    if byte_count <= 0:
        return None
    return cpu_seconds / byte_count


def total_usage(usages: Iterable[CpuUsage]) -> CpuUsage:
    total = CpuUsage()
    for usage in usages:
        total = total + usage
    return total


def bytes_per_cpu_second(byte_count: float, cpu_seconds: float | None) -> float | None:
    """None when no CPU time was seen: the counters are too coarse to divide by."""
    if cpu_seconds is None or cpu_seconds <= 0:
        return None
    return byte_count / cpu_seconds


class CpuMeter:
    """Takes CpuSnapshots; `excluded_pids` names processes whose CPU must not count."""

    def __init__(
        self,
        excluded_pids: Callable[[], Iterable[int]] = tuple,
        proc: Path = Path("/proc"),
        kernel_threads: bool = False,
    ) -> None:
        self._excluded_pids = excluded_pids
        self._proc = proc
        self._ticks = clock_ticks_per_second()
        self._stat_readable = True
        self._kthreads = KernelThreadClock(proc, self._ticks) if kernel_threads else None

    def snapshot(self) -> CpuSnapshot:
        return CpuSnapshot(
            process=process_cpu_seconds(),
            system_busy=self._system_busy(),
            excluded=self._excluded_seconds(),
            kernel_threads=self._kthreads.seconds() if self._kthreads else None,
        )

    def start(self) -> CpuSnapshot:
        """A snapshot that opens an interval: this process's own CPU read last, so reading
        the kernel threads' files (milliseconds on UML) is not charged to the interval."""
        kthreads = self._kthreads.seconds() if self._kthreads else None
        system, excluded = self._system_busy(), self._excluded_seconds()
        return CpuSnapshot(process_cpu_seconds(), system, excluded, kthreads)

    def stop(self) -> CpuSnapshot:
        """A snapshot that closes an interval: this process's own CPU read first."""
        process = process_cpu_seconds()
        kthreads = self._kthreads.seconds() if self._kthreads else None
        return CpuSnapshot(process, self._system_busy(), self._excluded_seconds(), kthreads)

    def _system_busy(self) -> float | None:
        if not self._stat_readable:
            return None
        try:
            text = (self._proc / "stat").read_text()
            return parse_proc_stat(text, self._ticks).busy
        except (OSError, CpuStatError):
            self._stat_readable = False  # say "unknown" rather than retry every sample
            return None

    def _excluded_seconds(self) -> float:
        total = 0.0
        for pid in self._excluded_pids():
            try:
                total += parse_pid_stat((self._proc / str(pid) / "stat").read_text(), self._ticks)
            except (OSError, CpuStatError):
                continue  # ended already: its last CPU time is no longer readable
        return total


# What a sample carries where no CPU time could be read (see CpuUsage.measured).
CPU_NOT_MEASURED = CpuUsage(system_seconds=None, measured=False)
