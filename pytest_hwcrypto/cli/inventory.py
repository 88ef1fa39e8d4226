# SPDX-License-Identifier: MIT
"""`hwcrypto inventory`: the registered crypto implementations, classed."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from pytest_hwcrypto.usage import UsageError
from pytest_hwcrypto.vocabulary import RESULTS_SCHEMA


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("inventory", help="list registered crypto implementations")
    parser.add_argument("--json", action="store_true", help="JSON as in the results schema")
    parser.add_argument(
        "--proc-crypto",
        default="/proc/crypto",
        metavar="PATH",
        help="read this file instead of /proc/crypto: a capture, also as pasted (prompts, "
        "grep excerpts, CRLF, records without blank lines)",
    )
    parser.add_argument(
        "--board",
        metavar="PROFILE.toml",
        help="board profile whose [[classify]] entries set the class of drivers it names",
    )
    parser.add_argument(
        "--evidence",
        action="store_true",
        help="add a column saying which evidence decided each class",
    )
    parser.set_defaults(func=cmd_inventory)


def cmd_inventory(args: argparse.Namespace) -> int:
    from pytest_hwcrypto.kernel.evidence import gather_live_facts
    from pytest_hwcrypto.kernel.facts import gather_kernel_facts
    from pytest_hwcrypto.kernel.inventory import build_inventory, format_inventory_table
    from pytest_hwcrypto.kernel.kmsg import read_kernel_log
    from pytest_hwcrypto.kernel.procfs import ProcCryptoError, read_capture
    from pytest_hwcrypto.kernel.selftest_log import failures
    from pytest_hwcrypto.profile import load_profile
    from pytest_hwcrypto.vocabulary import PROC_CRYPTO

    path = Path(args.proc_crypto)
    live = path == PROC_CRYPTO
    try:
        parsed = read_capture(path)
    except ProcCryptoError as error:
        if live and not path.exists():
            raise UsageError(f"{path} not found: this kernel has no crypto API procfs") from None
        raise UsageError(str(error)) from None
    _print_notes(parsed.notes)
    overrides = load_profile(args.board).classify if args.board else ()
    facts = gather_live_facts(parsed.algs) if live else None
    if facts is not None:
        _print_notes(facts.notes)
    # A capture's self-tests are what /proc/crypto said; a live kernel's log says more.
    failed = failures(read_kernel_log()) if live else {}
    entries = build_inventory(
        parsed.algs, overrides=overrides, live=facts, selftest_failures=failed
    )
    if args.json:
        kernel = gather_kernel_facts().to_json() if live else {"capture": str(path)}
        json.dump(
            {
                "schema": RESULTS_SCHEMA,
                "kernel": kernel,
                "inventory": [entry.to_json() for entry in entries],
            },
            sys.stdout,
            indent=2,
        )
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_inventory_table(entries, evidence=args.evidence) + "\n")
    return 0


_MAX_NOTES = 10


def _print_notes(notes: Sequence[str]) -> None:
    """What the reader left out, one line each on stderr (the first ten, then a count)."""
    for note in notes[:_MAX_NOTES]:
        sys.stderr.write(f"hwcrypto: note: {note}\n")
    if len(notes) > _MAX_NOTES:
        sys.stderr.write(f"hwcrypto: note: ... and {len(notes) - _MAX_NOTES} more\n")
