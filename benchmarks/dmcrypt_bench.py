# SPDX-License-Identifier: MIT
"""dm-crypt benchmark: 1 GiB round trips per driver, the suite's read rate against fio, and
the block layer's cost against AF_ALG for the same driver.

Run inside a board (root, loop + dm-crypt, fio):

    .venv/bin/hwcrypto vm uml --exec '.venv/bin/python benchmarks/dmcrypt_bench.py'
    .venv/bin/hwcrypto vm qemu --exec '.venv/bin/python benchmarks/dmcrypt_bench.py'

Per driver of xts(aes) and cbc(aes) that dm-crypt will use (pinned by capi:, proven by
table + refcnt; block/volume.py):

(1) round trip: --bytes (1 GiB) written through the volume and read back with zero
    differing bytes. The boards' memory (UML 1 GiB, QEMU 2 GiB) cannot hold a 1 GiB tmpfs
    backing file beside everything else, so it is done in passes of --pass-bytes (256 MiB)
    on one volume, each pass a new seeded pattern: written (buffered, fsync), caches
    dropped, the dm device closed and opened again, read back and compared byte for byte.
    Reported: MiB/s of the writes and of the reads, and the differing bytes (must be 0).
(2) fidelity: the suite's own sequential O_DIRECT read (measure/dmcrypt_engine.py, 1 MiB
    requests, sampled the way the run loop samples) against `fio --rw=read --bs=1M
    --direct=1` on the same volume in the same boot, alternating engine, fio, engine, fio
    ... (--rounds). Figure: median(engine) / median(fio); goal >= 0.95.
(3) block layer cost: the same driver at 4 KiB through dm-crypt (O_DIRECT reads =
    decrypt, engine) and through AF_ALG (measure/afalg_engine.py), alternating; figure:
    dm-crypt / AF_ALG.

Prints one JSON document (and a table on stderr) with /proc/loadavg at start and end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from pytest_hwcrypto.block import dmcrypt, pattern_io  # noqa: E402
from pytest_hwcrypto.block.tools import unavailable_reason  # noqa: E402
from pytest_hwcrypto.block.volume import Volume, VolumeMaker  # noqa: E402
from pytest_hwcrypto.kernel.inventory import build_inventory  # noqa: E402
from pytest_hwcrypto.kernel.procfs import read_proc_crypto  # noqa: E402
from pytest_hwcrypto.ledger import Ledger  # noqa: E402
from pytest_hwcrypto.measure.afalg_engine import AfAlgEngine  # noqa: E402
from pytest_hwcrypto.measure.block_workloads import (  # noqa: E402
    BlockDevice,
    Workload,
    run_workload,
)
from pytest_hwcrypto.measure.cpu import CpuMeter  # noqa: E402
from pytest_hwcrypto.measure.dmcrypt_engine import (  # noqa: E402
    BARE,
    SECTOR_SIZE,
    DmcryptBound,
    dmcrypt_targets,
)
from pytest_hwcrypto.measure.engine import Evidence, Timing  # noqa: E402
from pytest_hwcrypto.measure.targets import Target  # noqa: E402
from pytest_hwcrypto.vocabulary import MIB, Source  # noqa: E402

FIDELITY_GOAL = 0.95
COMPARE_CHUNK = 4 * MIB


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().strip()


def drop_caches() -> None:
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def differing_bytes(got: bytes, wanted: bytes) -> int:
    if got == wanted:
        return 0
    return sum(a != b for a, b in zip(got, wanted)) + abs(len(got) - len(wanted))


def round_trip(maker: VolumeMaker, volume: Volume, total: int, per_pass: int) -> dict[str, float]:
    """Only the I/O is timed (writes + fsync, reads), not making or comparing the pattern."""
    written = read = differing = 0
    write_seconds = read_seconds = 0.0
    for number in range(max(1, total // per_pass)):
        seed = f"bench:{volume.driver}:{number}"
        fd = os.open(volume.path, os.O_WRONLY)
        try:
            for chunk in pattern_io.pattern_chunks(seed, per_pass, COMPARE_CHUNK):
                began = time.perf_counter()
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
                write_seconds += time.perf_counter() - began
                written += len(chunk)
            began = time.perf_counter()
            os.fsync(fd)
            write_seconds += time.perf_counter() - began
        finally:
            os.close(fd)
        drop_caches()
        maker.reopen(volume)
        with open(volume.path, "rb", buffering=0) as disk:
            for wanted in pattern_io.pattern_chunks(seed, per_pass, COMPARE_CHUNK):
                began = time.perf_counter()
                got = disk.read(len(wanted))
                read_seconds += time.perf_counter() - began
                differing += differing_bytes(got, wanted)
                read += len(got)
    return {
        "written_bytes": written,
        "read_bytes": read,
        "differing_bytes": differing,
        "write_mib_s": written / write_seconds / MIB,
        "read_mib_s": read / read_seconds / MIB,
    }


def bound_on(maker: VolumeMaker, volume: Volume, size: int) -> DmcryptBound:
    evidence = Evidence(volume.driver, volume.evidence)
    timing = Timing(time.perf_counter, CpuMeter())
    # held=None: closing the bound closes its descriptor only; main() closes the volume.
    return DmcryptBound(volume.path, evidence, timing, size, maker, None)


def engine_rate(bound: DmcryptBound, block_size: int, seconds: float) -> float:
    return bound.sample("decrypt", block_size, seconds).bytes_per_second


def fidelity(
    maker: VolumeMaker, volume: Volume, size: int, rounds: int, seconds: float
) -> dict[str, object]:
    """Alternating samples: the engine's 1 MiB O_DIRECT reads, fio's, on one volume."""
    bound = bound_on(maker, volume, size)
    device = BlockDevice(volume.path, size, "", volume.driver, None, volume.evidence)
    workload = Workload("fio-seq-read-1M", Source.FIO, "read", MIB)
    engine, fio = [], []
    try:
        bound.warm_up("encrypt", MIB, 0.5)  # every sector written once: reads decrypt data
        for _ in range(rounds):
            engine.append(engine_rate(bound, MIB, seconds))
            fio += [m.bytes_per_second for m in run_workload(device, workload, seconds)]
    finally:
        bound.close()
    ratios = [e / f for e, f in zip(engine, fio)]
    return {
        "engine_mib_s": [round(x / MIB, 1) for x in engine],
        "fio_mib_s": [round(x / MIB, 1) for x in fio],
        "ratio_of_medians": statistics.median(engine) / statistics.median(fio),
        "median_of_ratios": statistics.median(ratios),
    }


def block_layer_cost(
    maker: VolumeMaker, volume: Volume, target: Target, size: int, rounds: int, seconds: float
) -> dict[str, object]:
    """The same driver at 4 KiB: dm-crypt O_DIRECT reads against AF_ALG decrypts."""
    bound = bound_on(maker, volume, size)
    timing = Timing(time.perf_counter, CpuMeter())
    afalg_target = replace(target, block_multiple=1)
    session = AfAlgEngine().open(afalg_target, timing)
    dm, af = [], []
    try:
        bound.warm_up("encrypt", 4096, 0.3)
        session.warm_up("decrypt", 4096, 0.3)
        for _ in range(rounds):
            dm.append(engine_rate(bound, 4096, seconds))
            af.append(session.sample("decrypt", 4096, seconds).bytes_per_second)
    finally:
        bound.close()
        session.close()
    return {
        "afalg_evidence": session.evidence.how,
        "dmcrypt_mib_s": [round(x / MIB, 2) for x in dm],
        "afalg_mib_s": [round(x / MIB, 2) for x in af],
        "dmcrypt_over_afalg": statistics.median(dm) / statistics.median(af),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bytes", type=int, default=1024 * MIB, help="round trip per driver")
    parser.add_argument("--pass-bytes", type=int, default=256 * MIB, help="volume size")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=1.0, help="per sample")
    parser.add_argument("--driver", action="append", help="only these drivers (repeatable)")
    args = parser.parse_args()
    reason = unavailable_reason()
    if reason:
        print(f"cannot run: {reason}", file=sys.stderr)
        return 2
    subprocess.run(["modprobe", "-q", "crypto_user"], check=False)
    report: dict[str, object] = {"loadavg_start": loadavg(), "drivers": {}}
    started = time.perf_counter()
    inventory = build_inventory(read_proc_crypto())
    targets = [t for t in dmcrypt_targets(inventory) if t.driver != BARE]
    with tempfile.TemporaryDirectory() as state:
        os.environ["HWCRYPTO_STATE_DIR"] = state
        maker = VolumeMaker(Ledger(Path(state)))
        for target in targets:
            if args.driver and target.driver not in args.driver:
                continue
            refused = dmcrypt.refusal(target.driver)
            if refused:
                report["drivers"][target.driver] = {"refused": refused}  # type: ignore[index]
                continue
            volume = maker.open(target.driver, target.key_bits or 256, SECTOR_SIZE, args.pass_bytes)
            try:
                entry: dict[str, object] = {"evidence": volume.evidence}
                entry["round_trip"] = round_trip(maker, volume, args.bytes, args.pass_bytes)
                entry["fidelity"] = fidelity(
                    maker, volume, args.pass_bytes, args.rounds, args.seconds
                )
                entry["block_layer_4k"] = block_layer_cost(
                    maker, volume, target, args.pass_bytes, args.rounds, args.seconds
                )
            finally:
                maker.close(volume)
            report["drivers"][target.driver] = entry  # type: ignore[index]
            trip = entry["round_trip"]
            print(
                f"{target.driver}: round trip {trip['written_bytes'] // MIB} MiB "  # type: ignore[index]
                f"w {trip['write_mib_s']:.1f} r {trip['read_mib_s']:.1f} MiB/s, "  # type: ignore[index]
                f"differing {trip['differing_bytes']}; fidelity "  # type: ignore[index]
                f"{entry['fidelity']['ratio_of_medians']:.3f}; dm/afalg 4K "  # type: ignore[index]
                f"{entry['block_layer_4k']['dmcrypt_over_afalg']:.3f}",  # type: ignore[index]
                file=sys.stderr,
                flush=True,
            )
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["loadavg_end"] = loadavg()
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
