# SPDX-License-Identifier: MIT
"""`hwcrypto bench`: one measurement through AF_ALG, or a tcrypt run."""

from __future__ import annotations

import argparse
import json
import sys

from pytest_hwcrypto.usage import UsageError


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "bench", help="measure one driver through AF_ALG (the throughput suite's engine)"
    )
    parser.add_argument("engine", choices=("afalg", "tcrypt"))
    parser.add_argument("--driver", help="driver name as /proc/crypto lists it, or a template")
    parser.add_argument("--key-bits", type=int, default=None, help="key size (default: AES-128)")
    parser.add_argument("--block-size", type=int, default=None, help="bytes per request")
    parser.add_argument("--seconds", type=float, default=2.0, help="measuring time (2)")
    parser.add_argument("--op", default=None, help="encrypt (default), decrypt, or digest")
    parser.add_argument("--load", default=None, help="background load while measuring: cpu:N")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds before giving up")
    parser.add_argument("--mode", type=int, default=None, help="tcrypt: mode=N")
    parser.add_argument("--alg", default=None, help="tcrypt: alg= (modes 300 and 400)")
    parser.add_argument("--sec", type=int, default=1, help="tcrypt: sec= (0 counts cycles)")
    parser.add_argument("--json", action="store_true", help="the measurement as results JSON")
    parser.set_defaults(func=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:
    """One measurement from the throughput suite's engine (AF_ALG), or a tcrypt run."""
    if args.engine == "tcrypt":
        return _bench_tcrypt(args)
    from pytest_hwcrypto.measure.bench import BenchError, bench
    from pytest_hwcrypto.measure.load import BackgroundLoad, LoadSpecError, parse_load_spec
    from pytest_hwcrypto.units import format_mib_s
    from pytest_hwcrypto.verdict.compare_text import describe_path

    if not args.driver or args.block_size is None:
        raise UsageError("bench afalg needs --driver D and --block-size B")
    if args.seconds <= 0 or args.block_size <= 0:
        raise UsageError("--seconds and --block-size must be more than 0")
    try:
        with BackgroundLoad(parse_load_spec(args.load)) as load:
            measurement = bench(
                args.driver,
                block_size=args.block_size,
                seconds=args.seconds,
                key_bits=args.key_bits,
                op=args.op,
                timeout=args.timeout,
                load=load,
            )
    except (BenchError, LoadSpecError) as error:
        raise UsageError(str(error)) from None
    if args.json:
        json.dump(measurement.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    stats = measurement.sample_stats()
    where = describe_path(
        measurement.algorithm,
        measurement.key_bits,
        measurement.block_size,
        measurement.op,
        measurement.source,
        measurement.driver,
    )
    per_cpu = measurement.bytes_per_cpu_second
    sys.stdout.write(
        f"{where}: {format_mib_s(measurement.bytes_per_second)} MiB/s (median of {stats.n}, "
        f"95% CI {format_mib_s(stats.ci_low)}..{format_mib_s(stats.ci_high)}, "
        f"CoV {stats.cov:.1%})"
        + (f", {format_mib_s(per_cpu)} MiB per CPU-second" if per_cpu else "")
        + "\n"
    )
    return 0


def _bench_tcrypt(args: argparse.Namespace) -> int:
    from pytest_hwcrypto.measure import tcrypt_runner

    if args.mode is None:
        raise UsageError("bench tcrypt needs --mode N (e.g. 400 with --alg sha256-generic)")
    try:
        request = tcrypt_runner.TcryptRequest(mode=args.mode, sec=args.sec, alg=args.alg)
    except ValueError as error:
        raise UsageError(str(error)) from None
    reason = tcrypt_runner.unavailable_reason()
    if reason is not None:
        raise UsageError(reason)
    try:
        run = tcrypt_runner.run_tcrypt(request, timeout=args.timeout)
    except tcrypt_runner.TcryptError as error:
        raise UsageError(str(error)) from None
    if args.json:
        json.dump([m.to_json() for m in run.measurements], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(run.log.rstrip() + "\n")
    return 0
