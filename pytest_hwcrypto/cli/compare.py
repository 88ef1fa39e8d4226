# SPDX-License-Identifier: MIT
"""`hwcrypto compare`: two results files, for regressions or HW against SW."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pytest_hwcrypto.cli.exits import EXIT_FAIL, EXIT_OK
from pytest_hwcrypto.usage import UsageError


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "compare", help="compare two results files: regressions, or HW against SW"
    )
    parser.add_argument("files", nargs="*", metavar="BASELINE.json CURRENT.json")
    parser.add_argument("--sw", help="results measured on the software path")
    parser.add_argument("--hw", help="results measured on the hardware path")
    parser.add_argument("--max-drop", default="10%", help="largest accepted slowdown (10%%)")
    parser.add_argument("--min-ratio", default="1.0", help="HW must be >= R x SW (1.0)")
    parser.add_argument(
        "--block-sizes",
        default=None,
        help="range the HW rule applies to, e.g. '>=8192' or '4096..65536'",
    )
    parser.add_argument("--algorithm", help="only this algorithm")
    parser.add_argument(
        "--relative-to",
        metavar="DRIVER",
        help="judge each driver's throughput as a multiple of DRIVER's in the same run "
        "('software': the fastest generic driver), so a whole machine getting slower is not "
        "a regression",
    )
    parser.add_argument("--json", action="store_true", help="comparisons as JSON")
    parser.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    from pytest_hwcrypto.model.results import Results, ResultsError, read_json_object
    from pytest_hwcrypto.parsers.parse import select_table
    from pytest_hwcrypto.parsers.tables import ParseError
    from pytest_hwcrypto.report import benchmark_import
    from pytest_hwcrypto.verdict import compare, compare_text

    def load(spec: str) -> Results:
        """FILE, or FILE#N: table N (0-based) of a `hwcrypto parse --json` file."""
        path, table = spec, None
        head, hash_sign, tail = spec.rpartition("#")
        if hash_sign and tail.isdigit() and not Path(spec).exists():
            path, table = head, int(tail)
        try:
            results = benchmark_import.results_from_document(read_json_object(Path(path)), path)
            return results if table is None else select_table(results, table, path)
        except (ResultsError, ParseError) as error:
            raise UsageError(str(error)) from None

    try:
        max_drop = compare.parse_fraction(args.max_drop)
        min_ratio = float(args.min_ratio)
    except ValueError as error:
        raise UsageError(f"--max-drop/--min-ratio: {error}") from None
    if args.sw or args.hw:
        if args.relative_to:
            raise UsageError("--relative-to judges regressions: give BASELINE.json CURRENT.json")
        if not (args.sw and args.hw) or args.files:
            raise UsageError(
                "give --sw SW.json and --hw HW.json together, without positional files"
            )
        first, second = load(args.sw), load(args.hw)
        names = (args.sw, args.hw)
        try:
            result = compare.compare_hw_sw(
                first,
                second,
                min_ratio=min_ratio,
                block_sizes=args.block_sizes,
                algorithm=args.algorithm,
            )
        except ValueError as error:
            raise UsageError(f"--block-sizes: {error}") from None
        comparisons, crossover = result.comparisons, result.crossover
        lines = compare_text.format_hw_sw_lines(result)
    else:
        if len(args.files) != 2:
            raise UsageError("give BASELINE.json CURRENT.json, or --sw SW.json --hw HW.json")
        first, second = load(args.files[0]), load(args.files[1])
        names = (args.files[0], args.files[1])
        comparisons = compare.compare(
            first,
            second,
            max_drop=max_drop,
            algorithm=args.algorithm,
            relative_to=args.relative_to,
        )
        if not comparisons and args.relative_to:
            raise UsageError(
                f"--relative-to {args.relative_to}: no matched measurement has that reference "
                "measured on its path in both files (a driver name as the files list it, "
                "or 'software')"
            )
        crossover = None
        lines = compare_text.format_comparison_lines(comparisons, max_drop)
    if not comparisons:
        raise UsageError(
            "no measurement in the two files matches (same source, algorithm, "
            f"key size, block size, op): {compare_text.what_each_holds(first, second, names)}"
        )
    if args.json:
        json.dump(compare.comparisons_to_json(comparisons, crossover), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_FAIL if compare.any_failed(comparisons) else EXIT_OK
