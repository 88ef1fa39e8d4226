# SPDX-License-Identifier: MIT
"""tcrypt, the kernel's in-kernel speed test: `modprobe tcrypt mode=... alg=... sec=...`.

tcrypt allocates transforms inside the kernel, so it reaches drivers that AF_ALG cannot
(since 2026 upstream drops off-CPU implementations from AF_ALG: commit 7524070f26d8). It
prints its results to the kernel log and then refuses to load, with EAGAIN, by design;
results are read from /dev/kmsg (only the records written after modprobe started) and
parsed by parsers/tcrypt.py.

What the modes measure (6.1):

* ``mode=300`` / ``mode=400`` with ``alg=NAME``: the (a)synchronous hash speed test of
  NAME, which may be a driver name (``alg=sha256-generic``), over tcrypt's 16 B..8 KiB
  template; one second per test with ``sec=1`` (~23 tests).
* ``mode=200`` (synchronous) and ``mode=500`` (asynchronous, so offload engines count)
  run fixed lists of AES modes, key sizes and block sizes on whichever driver wins each
  name; ``alg`` is ignored there. With ``sec=0`` each test is 8 timed operations counted
  in CPU cycles -- seconds instead of minutes for the whole list, converted to bytes/s with
  the rate of the counter the kernel's get_cycles() reads: the TSC on x86 (its calibration),
  the ARM generic timer on ARM (arm64's get_cycles() is its virtual counter, and 32-bit
  ARM's reads it as the delay timer), whose rate the kernel prints at boot
  (``arch_timer: cp15 timer(s) running at 62.50MHz (virt).``), not the CPU clock.

User-mode Linux cannot run it: the ``sec=N`` loop waits for jiffies that do not advance
inside that loop, so modprobe never returns (seen on the UML board), and its cycle counter
reads 0, so ``sec=0`` gives nothing to convert. Detect UML and skip with that reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from pytest_hwcrypto.kernel.facts import is_user_mode_linux
from pytest_hwcrypto.model.results import Measurement
from pytest_hwcrypto.parsers.tcrypt import TcryptParseError, parse_tcrypt

KMSG = Path("/dev/kmsg")
CPUINFO = Path("/proc/cpuinfo")

HASH_SPEED_MODE = 300
AHASH_SPEED_MODE = 400
SKCIPHER_ASYNC_SPEED_MODE = 500
MODES_TAKING_ALG = frozenset({0, HASH_SPEED_MODE, AHASH_SPEED_MODE})
# Modes 600 and up fire num_mb requests at once and wait for them all
# (test_mb_skcipher_speed): 600 is AES in ecb/cbc/lrw/xts/ctr/rfc3686 on the winners. Their
# results are for the whole batch (operations and bytes of all num_mb requests).
MULTIBUFFER_SPEED_MODE = 600
MULTIBUFFER_MODES = range(600, 700)
DEFAULT_NUM_MB = 8  # tcrypt's own default

UML_REASON = (
    "tcrypt cannot run on User-mode Linux: its timed loop (sec=N) never returns there "
    "(jiffies do not advance inside it) and its cycle counter reads 0 (sec=0); "
    "run the tcrypt path on the QEMU board (--hwcrypto-vm=qemu) or real hardware"
)

_TSC_MHZ = re.compile(
    r"tsc: (?:Refined TSC clocksource calibration|Detected)[: ]+(?P<mhz>\d+(?:\.\d+)?) MHz"
)
# drivers/clocksource/arm_arch_timer.c's banner: "cp15", "mmio" or "cp15 and mmio" timers.
_ARCH_TIMER_MHZ = re.compile(r"arch_timer: [\w ]*timer\(s\) running at (?P<mhz>\d+(?:\.\d+)?) ?MHz")
_CPUINFO_MHZ = re.compile(r"^cpu MHz\s*:\s*(?P<mhz>\d+(?:\.\d+)?)", re.MULTILINE)


class TcryptError(RuntimeError):
    """tcrypt ran but gave no usable result; the message says what the kernel printed."""


@dataclass(frozen=True)
class TcryptRequest:
    """One `modprobe tcrypt` invocation."""

    mode: int
    sec: int = 1
    alg: str | None = None
    klen: int | None = None
    # Requests in flight at once, for the multibuffer modes (None: tcrypt's default, 8).
    num_mb: int | None = None

    def __post_init__(self) -> None:
        if self.sec < 0:
            raise ValueError("sec must be 0 (cycles) or more seconds")
        if self.num_mb is not None and self.mode not in MULTIBUFFER_MODES:
            raise ValueError(
                f"tcrypt mode={self.mode} ignores num_mb=; num_mb= works with the "
                f"multibuffer modes {MULTIBUFFER_MODES.start}-{MULTIBUFFER_MODES.stop - 1}"
            )
        if self.num_mb is not None and self.num_mb < 1:
            raise ValueError("num_mb must be 1 or more requests in flight")
        if self.alg is not None and self.mode not in MODES_TAKING_ALG:
            raise ValueError(
                f"tcrypt mode={self.mode} ignores alg=; alg= works with modes "
                f"{', '.join(str(mode) for mode in sorted(MODES_TAKING_ALG))}"
            )

    def modprobe_argv(self, modprobe: str = "modprobe") -> list[str]:
        argv = [modprobe, "tcrypt", f"mode={self.mode}", f"sec={self.sec}"]
        if self.alg is not None:
            argv.append(f"alg={self.alg}")
        if self.klen is not None:
            argv.append(f"klen={self.klen}")
        if self.num_mb is not None:
            argv.append(f"num_mb={self.num_mb}")
        return argv

    @property
    def in_flight(self) -> int | None:
        """Requests a multibuffer test keeps in flight; None for the other modes."""
        if self.mode not in MULTIBUFFER_MODES:
            return None
        return self.num_mb or DEFAULT_NUM_MB

    def describe(self) -> str:
        return " ".join(self.modprobe_argv()[1:])


@dataclass
class TcryptRun:
    request: TcryptRequest
    measurements: list[Measurement]
    log: str
    seconds: float
    modprobe_output: str = ""
    notes: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------
# pure helpers


def cpu_hz_from(kernel_log: str = "", cpuinfo: str = "") -> float | None:
    """The cycle-counter rate tcrypt's sec=0 results are in: the kernel's TSC calibration
    (the refined value when present), else the ARM generic timer's rate (ARM has no TSC;
    its get_cycles() counts that timer's ticks, 62.5 MHz on QEMU's virt machine, whatever
    the CPU clock), else /proc/cpuinfo's `cpu MHz`."""
    found = [float(match["mhz"]) for match in _TSC_MHZ.finditer(kernel_log)]
    if found:
        return found[-1] * 1e6
    timer = _ARCH_TIMER_MHZ.search(kernel_log)
    if timer:
        return float(timer["mhz"]) * 1e6
    match = _CPUINFO_MHZ.search(cpuinfo)
    return float(match["mhz"]) * 1e6 if match else None


def kmsg_text(records: str) -> str:
    """Plain log text from /dev/kmsg records (`prio,seq,usec,flags;message`).

    Continuation lines of a record (` KEY=value` dictionary lines) are dropped; the message
    itself (pr_cont pieces included, the kernel joins them) is kept, one record per line.
    """
    lines = []
    for record in records.splitlines():
        if record.startswith(" "):
            continue
        _, separator, message = record.partition(";")
        lines.append(message if separator else record)
    return "\n".join(lines)


def with_levels(measurements: list[Measurement], request: TcryptRequest) -> list[Measurement]:
    """The multibuffer results marked with the requests they kept in flight (num_mb), so
    each level is a series of its own, as AF_ALG's threads and /dev/crypto's are."""
    for measurement in measurements:
        if measurement.extra.get("tcrypt_mode") == "multibuffer":
            measurement.concurrency = request.in_flight
    return measurements


def tcrypt_failures(log: str) -> list[str]:
    """Lines where tcrypt (or the crypto API under it) says a test could not run."""
    pattern = re.compile(
        r"^.*(?:failed to load transform|setkey\(\) failed|"
        r"(?:encryption|decryption) failed|Failed to allocate).*$",
        re.MULTILINE,
    )
    return [match.group(0).strip() for match in pattern.finditer(log)]


# ---------------------------------------------------------------------------------------
# running it


def unavailable_reason(cpuinfo_path: Path = CPUINFO, kmsg: Path = KMSG) -> str | None:
    """Why tcrypt cannot be used here (a skip reason that says how to fix it), or None."""
    try:
        if is_user_mode_linux(cpuinfo_path.read_text(errors="replace")):
            return UML_REASON
    except OSError:
        pass
    if os.geteuid() != 0:
        return "tcrypt needs root (modprobe): run the session as root or inside a board"
    if shutil.which("modprobe") is None:
        return "modprobe not found: install kmod"
    if not kmsg.exists():
        return f"{kmsg} is missing: tcrypt's results go to the kernel log (mount devtmpfs)"
    if not _module_known("tcrypt"):
        return (
            "the tcrypt module is not available for this kernel: build with "
            "CONFIG_CRYPTO_TEST=m (CONFIG_CRYPTO_BENCHMARK=m since 2025)"
        )
    return None


def _module_known(name: str) -> bool:
    try:
        done = subprocess.run(
            ["modinfo", "-F", "filename", name],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and bool(done.stdout.strip())


def run_tcrypt(request: TcryptRequest, *, timeout: float, cpu_hz: float | None = None) -> TcryptRun:
    """Run one tcrypt speed test and return its measurements.

    Raises TcryptError when the kernel printed no speed result (the message carries
    tcrypt's own complaint), and on UML before anything is started.
    """
    reason = unavailable_reason()
    if reason == UML_REASON:
        raise TcryptError(reason)
    started = time.monotonic()
    with _KernelLogTail(KMSG) as tail:
        output = _modprobe(request, timeout)
        log = kmsg_text(tail.read_new())
    seconds = time.monotonic() - started
    hz = cpu_hz if cpu_hz is not None else cpu_hz_from(log + "\n" + _boot_log(), _cpuinfo())
    try:
        measurements = parse_tcrypt(log, f"tcrypt {request.describe()}", cpu_hz=hz)
    except TcryptParseError as error:
        complaints = tcrypt_failures(log) or [output.strip() or "no output"]
        raise TcryptError(f"{error}; kernel said: {'; '.join(complaints[:3])}") from None
    notes = [] if request.sec else [f"cycles converted at {hz / 1e6:.0f} MHz" if hz else ""]
    for measurement in with_levels(measurements, request):
        measurement.extra["tcrypt_request"] = request.describe()
    return TcryptRun(request, measurements, log, seconds, output, [n for n in notes if n])


def _modprobe(request: TcryptRequest, timeout: float) -> str:
    """modprobe's output. tcrypt always 'fails' with EAGAIN once its tests are done."""
    try:
        done = subprocess.run(
            request.modprobe_argv(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise TcryptError(
            f"modprobe tcrypt {request.describe()} did not return within {timeout:g} s "
            "(a process stuck in a module's init cannot be killed; the board must be ended)"
        ) from None
    return done.stdout + done.stderr


def _cpuinfo() -> str:
    try:
        return CPUINFO.read_text(errors="replace")
    except OSError:
        return ""


def _boot_log() -> str:
    """The whole kernel log, for the TSC calibration printed at boot."""
    try:
        return subprocess.run(
            ["dmesg"], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


class _KernelLogTail:
    """Reads the /dev/kmsg records written after it was opened (and only those)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._fd = -1

    def __enter__(self) -> _KernelLogTail:
        self._fd = os.open(self._path, os.O_RDONLY | os.O_NONBLOCK)
        os.lseek(self._fd, 0, os.SEEK_END)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def read_new(self) -> str:
        records = []
        while True:
            try:
                record = os.read(self._fd, 8192)
            except BlockingIOError:
                break
            except BrokenPipeError:
                continue  # records were overwritten before we read them; go on
            if not record:
                break
            records.append(record.decode("utf-8", errors="replace"))
        return "".join(records)
