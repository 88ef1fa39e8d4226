# SPDX-License-Identifier: MIT
"""Is a run that is "off as a whole" one session's doing, and which driver's?

Run inside the QEMU board with the test-only drivers loaded (pytest_hwcrypto/kmod):

    .venv/bin/hwcrypto vm qemu --test-drivers \\
        --exec '.venv/bin/python benchmarks/session_offsets.py 4096 40 3'

Each run is the throughput suite's engine (run_plan) over three drivers that cost the
same: cbc-aes-hwcrypto-test-a and -b (cbc(aes-generic) behind the module's wrapper) and
cbc(aes-generic) itself, `seconds` each, every run with fresh AF_ALG sessions. Per run it
prints the three pairwise shares (median of same-round quotients, verdict/relative.py).
One session off for its whole run shows as the two shares that contain it moving together
while the third stays near 1 (e.g. A/G and B/G off, A/B not: the generic session).

It also records the page offset of every output buffer the session's request loop
allocates, because a buffer that straddles a page boundary gives the kernel a two-entry
scatterlist where an aligned one gives one: if that varied between runs it would move
a whole run.
"""

from __future__ import annotations

import ctypes
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_hwcrypto.kernel.afalg import sessions as afalg_sessions
from pytest_hwcrypto.kernel.inventory import build_inventory
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.kernel.test_drivers import CBC_A, CBC_B
from pytest_hwcrypto.measure.afalg_engine import AfAlgEngine
from pytest_hwcrypto.measure.plan import make_plan
from pytest_hwcrypto.measure.runner import run_plan
from pytest_hwcrypto.measure.targets import discover_targets
from pytest_hwcrypto.verdict.relative import relative_measurements, resolve_references

GENERIC = "cbc(aes-generic)"
PAGE = 4096
SMALLEST_TRACKED = 1024  # request buffers; smaller bytearrays are IVs and digests
page_offsets: list[int] = []


def tracked_bytearray(*args: object) -> bytearray:
    """bytearray as the session module makes it, noting where each output buffer starts."""
    made = bytearray(*args)  # type: ignore[call-overload]
    if len(made) >= SMALLEST_TRACKED:
        address = ctypes.addressof((ctypes.c_char * 1).from_buffer(made))
        page_offsets.append(address % PAGE)
    return made


def main() -> int:
    size, runs, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    afalg_sessions.bytearray = tracked_bytearray  # type: ignore[attr-defined]
    wanted = (CBC_A, CBC_B, GENERIC)
    targets = [
        t for t in discover_targets(build_inventory(read_proc_crypto())) if t.driver in wanted
    ]
    if len(targets) != len(wanted):
        print(f"need {wanted}: load them with hwcrypto vm qemu --test-drivers", file=sys.stderr)
        return 2
    rows = []
    for number in range(runs):
        page_offsets.clear()
        plan = make_plan(targets, [size], seconds * len(targets), max_samples=50)
        run = run_plan(plan, AfAlgEngine()).measurements()
        shares = {}
        for reference in (GENERIC, CBC_B):
            for found in relative_measurements(run, resolve_references(run, reference)):
                shares[f"{found.driver}/{reference}"] = found.bytes_per_second
        row = {
            "run": number,
            "shares": shares,
            "page_offsets": sorted(set(page_offsets)),
            "buffers": len(page_offsets),
            "board_load": Path("/proc/loadavg").read_text().split()[0],
        }
        rows.append(row)
        shown = " ".join(f"{pair}={share:.3f}" for pair, share in shares.items())
        print(f"run {number}: {shown} page offsets {row['page_offsets']}", flush=True)
    print("SESSION-OFFSETS-JSON " + json.dumps(rows), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
