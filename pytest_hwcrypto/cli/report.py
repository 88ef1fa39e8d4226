# SPDX-License-Identifier: MIT
"""`hwcrypto report`: plot and HTML report of results files."""

from __future__ import annotations

import argparse

from pytest_hwcrypto.usage import UsageError


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("report", help="plot and a self-contained HTML report of results files")
    parser.add_argument(
        "files", nargs="+", metavar="RESULTS.json", help="results files, overlaid in order"
    )
    parser.add_argument("--html", metavar="OUT.html", help="write the HTML report here")
    parser.add_argument("--plot", metavar="OUT.png", help="write the figure here")
    parser.add_argument("--title", default="pytest-hwcrypto report", help="the report's title")
    parser.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    """Plot and HTML report of one or more results files (suite or `hwcrypto parse` output)."""
    from pytest_hwcrypto.report.document import ReportError, load_inputs, write_report

    if not args.html and not args.plot:
        raise UsageError("report: give --html OUT.html, --plot OUT.png, or both")
    try:
        data = write_report(load_inputs(args.files), args.html, args.plot, args.title)
    except ReportError as error:
        raise UsageError(str(error)) from None
    written = " and ".join(path for path in (args.html, args.plot) if path)
    print(
        f"hwcrypto report: {len(data.panels)} block-size series, "
        f"{sum(len(g.bars) for g in data.bar_groups)} other measurements -> {written}"
    )
    return 0
