"""The `hwcrypto` command: inventory, virtual boards, comparisons and measurements.

Each subcommand is one small function registered in `_SUBCOMMANDS`; user mistakes end
with one line on stderr and exit code 2, never a traceback. When the reader of the output
goes away (`hwcrypto parse ... | head -1`), the command ends quietly with exit code 141,
as a tool that SIGPIPE ended does.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Callable

from pytest_hwcrypto import cli_ab, cli_bisect, cli_bisect_confirm, cli_lava, cli_parse
from pytest_hwcrypto.boards.base import BoardError
from pytest_hwcrypto.profile import ProfileError
from pytest_hwcrypto.settings import SettingError
from pytest_hwcrypto.vocabulary import RESULTS_SCHEMA

EXIT_USAGE = 2
# 128 + SIGPIPE: what a shell reports for `yes | head -1`'s yes.
EXIT_CLOSED_PIPE = 141


class CliError(Exception):
    """A user mistake on the command line; printed as one line."""


def cmd_inventory(args: argparse.Namespace) -> int:
    from pytest_hwcrypto.kernel.evidence import gather_live_facts
    from pytest_hwcrypto.kernel.facts import gather_kernel_facts
    from pytest_hwcrypto.kernel.inventory import build_inventory, format_inventory_table
    from pytest_hwcrypto.kernel.procfs import ProcCryptoError, read_capture
    from pytest_hwcrypto.profile import load_profile
    from pytest_hwcrypto.vocabulary import PROC_CRYPTO

    path = Path(args.proc_crypto)
    live = path == PROC_CRYPTO
    try:
        parsed = read_capture(path)
    except ProcCryptoError as error:
        if live and not path.exists():
            raise CliError(f"{path} not found: this kernel has no crypto API procfs") from None
        raise CliError(str(error)) from None
    _print_notes(parsed.notes)
    overrides = load_profile(args.board).classify if args.board else ()
    facts = gather_live_facts(parsed.algs) if live else None
    if facts is not None:
        _print_notes(facts.notes)
    entries = build_inventory(parsed.algs, overrides=overrides, live=facts)
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


def cmd_vm(args: argparse.Namespace) -> int:
    from pytest_hwcrypto.boards.inner_pytest import make_board, pytest_command
    from pytest_hwcrypto.boards.runner import run_command_in_board
    from pytest_hwcrypto.run import build_run

    cli_values = {"vm_timeout": args.timeout, "artifacts": args.artifacts}
    run = build_run(enabled=False, cli_values=cli_values, environ={}, ini_values={})
    board = make_board(
        args.board,
        args.kernel,
        args.modules,
        cryptodev=args.cryptodev,
        test_drivers=args.test_drivers,
        third_party=args.third_party,
    )
    board.check_prerequisites()
    pytest_args: list[str] = args.pytest_args
    if args.exec_command and pytest_args:
        raise CliError("give either --exec CMD or pytest arguments after --, not both")
    command = args.exec_command or pytest_command(
        ["-p", "no:cacheprovider", *pytest_args], board.guest_python
    )
    return run_command_in_board(board, command, Path.cwd(), run, sys.stdout)


def cmd_compare(args: argparse.Namespace) -> int:
    from pytest_hwcrypto.model.results import Results, ResultsError, read_json_object
    from pytest_hwcrypto.report import benchmark_import
    from pytest_hwcrypto.tools.parse import select_table
    from pytest_hwcrypto.tools.tables import ParseError
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
            raise CliError(str(error)) from None

    try:
        max_drop = compare.parse_fraction(args.max_drop)
        min_ratio = float(args.min_ratio)
    except ValueError as error:
        raise CliError(f"--max-drop/--min-ratio: {error}") from None
    if args.sw or args.hw:
        if args.relative_to:
            raise CliError("--relative-to judges regressions: give BASELINE.json CURRENT.json")
        if not (args.sw and args.hw) or args.files:
            raise CliError("give --sw SW.json and --hw HW.json together, without positional files")
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
            raise CliError(f"--block-sizes: {error}") from None
        comparisons, crossover = result.comparisons, result.crossover
        lines = compare_text.format_hw_sw_lines(result)
    else:
        if len(args.files) != 2:
            raise CliError("give BASELINE.json CURRENT.json, or --sw SW.json --hw HW.json")
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
            raise CliError(
                f"--relative-to {args.relative_to}: no matched measurement has that reference "
                "measured on its path in both files (a driver name as the files list it, "
                "or 'software')"
            )
        crossover = None
        lines = compare_text.format_comparison_lines(comparisons, max_drop)
    if not comparisons:
        raise CliError(
            "no measurement in the two files matches (same source, algorithm, "
            f"key size, block size, op): {compare_text.what_each_holds(first, second, names)}"
        )
    if args.json:
        json.dump(compare.comparisons_to_json(comparisons, crossover), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("\n".join(lines) + "\n")
    return 1 if compare.any_failed(comparisons) else 0


def _add_compare(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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


def _add_inventory(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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


def _add_vm(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "vm",
        help="boot a virtual board and run a command or pytest in it",
        usage="hwcrypto vm {uml,qemu,qemu-arm64,qemu-armhf} [--kernel PATH] [--cryptodev] "
        "[--test-drivers] [--exec CMD | -- PYTEST_ARGS]",
    )
    parser.add_argument("board", choices=("uml", "qemu", "qemu-arm64", "qemu-armhf"))
    parser.add_argument("--kernel", help="kernel image to boot (default: Debian's)")
    parser.add_argument("--modules", help="modules directory of --kernel")
    parser.add_argument(
        "--cryptodev",
        action="store_true",
        help="give the board /dev/crypto: build cryptodev-linux for its kernel (cached) and "
        "load it (QEMU only)",
    )
    parser.add_argument(
        "--test-drivers",
        action="store_true",
        help="load the test-only drivers of pytest_hwcrypto/kmod (wrong or slow on purpose), "
        "built for its kernel (cached) (QEMU only)",
    )
    parser.add_argument(
        "--third-party",
        metavar="DIR",
        help="directory holding cryptodev-linux's source tarball for --cryptodev "
        "(default: $HWCRYPTO_THIRD_PARTY, else shared/third_party beside a source checkout)",
    )
    parser.add_argument(
        "--exec",
        dest="exec_command",
        metavar="CMD",
        help="shell command to run inside (default: pytest with the rest)",
    )
    parser.add_argument("--timeout", default=None, help="seconds before the board is ended")
    parser.add_argument("--artifacts", default=None, help="directory for the console log")
    parser.set_defaults(func=cmd_vm)


def cmd_bench(args: argparse.Namespace) -> int:
    """One measurement from the throughput suite's engine (AF_ALG), or a tcrypt run."""
    if args.engine == "tcrypt":
        return _bench_tcrypt(args)
    from pytest_hwcrypto.measure.bench import BenchError, bench
    from pytest_hwcrypto.measure.load import BackgroundLoad, LoadSpecError, parse_load_spec
    from pytest_hwcrypto.verdict.compare_text import describe_path, format_mib_s

    if not args.driver or args.block_size is None:
        raise CliError("bench afalg needs --driver D and --block-size B")
    if args.seconds <= 0 or args.block_size <= 0:
        raise CliError("--seconds and --block-size must be more than 0")
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
        raise CliError(str(error)) from None
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
        raise CliError("bench tcrypt needs --mode N (e.g. 400 with --alg sha256-generic)")
    try:
        request = tcrypt_runner.TcryptRequest(mode=args.mode, sec=args.sec, alg=args.alg)
    except ValueError as error:
        raise CliError(str(error)) from None
    reason = tcrypt_runner.unavailable_reason()
    if reason is not None:
        raise CliError(reason)
    try:
        run = tcrypt_runner.run_tcrypt(request, timeout=args.timeout)
    except tcrypt_runner.TcryptError as error:
        raise CliError(str(error)) from None
    if args.json:
        json.dump([m.to_json() for m in run.measurements], sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(run.log.rstrip() + "\n")
    return 0


def _add_bench(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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


def cmd_sweep(args: argparse.Namespace) -> int:
    """Undo what killed runs recorded in their ledgers (re-ranked priorities, ...)."""
    from pytest_hwcrypto.ledger import state_dir
    from pytest_hwcrypto.run import sweep_leftovers

    done = sweep_leftovers()
    for line in done:
        print(f"hwcrypto sweep: {line}")
    if not done:
        print(f"hwcrypto sweep: nothing left by a killed run (ledgers in {state_dir()})")
    return 1 if any(line.startswith(("could not", "kept")) for line in done) else 0


def _add_sweep(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "sweep",
        help="undo what a killed run left behind (only what it recorded doing)",
        description="Restore what runs killed before their cleanup recorded in their "
        "ledger: driver priorities they changed. Nothing else is touched.",
    )
    parser.set_defaults(func=cmd_sweep)


def cmd_report(args: argparse.Namespace) -> int:
    """Plot and HTML report of one or more results files (suite or `hwcrypto parse` output)."""
    from pytest_hwcrypto.report.document import ReportError, load_inputs, write_report

    if not args.html and not args.plot:
        raise CliError("report: give --html OUT.html, --plot OUT.png, or both")
    try:
        data = write_report(load_inputs(args.files), args.html, args.plot, args.title)
    except ReportError as error:
        raise CliError(str(error)) from None
    written = " and ".join(path for path in (args.html, args.plot) if path)
    print(
        f"hwcrypto report: {len(data.panels)} block-size series, "
        f"{sum(len(g.bars) for g in data.bar_groups)} other measurements -> {written}"
    )
    return 0


def _add_report(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("report", help="plot and a self-contained HTML report of results files")
    parser.add_argument(
        "files", nargs="+", metavar="RESULTS.json", help="results files, overlaid in order"
    )
    parser.add_argument("--html", metavar="OUT.html", help="write the HTML report here")
    parser.add_argument("--plot", metavar="OUT.png", help="write the figure here")
    parser.add_argument("--title", default="pytest-hwcrypto report", help="the report's title")
    parser.set_defaults(func=cmd_report)


_SUBCOMMANDS: tuple[Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None], ...] = (
    _add_inventory,
    _add_compare,
    _add_vm,
    _add_bench,
    _add_sweep,
    cli_parse.add_parser,
    _add_report,
    cli_lava.add_parser,
    cli_ab.add_parsers,
    cli_bisect.add_parser,
    cli_bisect_confirm.add_parser,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hwcrypto", description="Check kernel hardware crypto: registered, correct, fast."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in _SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        try:
            return _run(argv)
        finally:
            # Output left in the buffer would fail at exit, past any handler: flush it here.
            sys.stdout.flush()
    except BrokenPipeError:
        if not _stdout_reader_gone():
            raise  # a pipe of our own (a board's, a tool's) broke: that is a real error
        _discard_stdout()
        return EXIT_CLOSED_PIPE
    except SystemExit:
        # argparse's --help swallows a failed write itself; end it as every command ends.
        if _stdout_reader_gone():
            _discard_stdout()
            return EXIT_CLOSED_PIPE
        raise


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after "--" belongs to pytest inside a board (`hwcrypto vm uml -- -k aes`).
    passthrough: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, passthrough = argv[:cut], argv[cut + 1 :]
    args = parser.parse_args(argv)
    args.pytest_args = passthrough
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except (CliError, BoardError, ProfileError, SettingError, cli_ab.AbUsageError) as error:
        sys.stderr.write(f"hwcrypto: error: {error}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("hwcrypto: interrupted\n")
        return 130


def _stdout_reader_gone() -> bool:
    """Whether stdout is a pipe or socket nobody reads any more (Linux flags its write end
    with POLLERR once the last reader has closed)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by a test's capture, or closed
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's own flush at exit cannot fail and
    print "Exception ignored ... BrokenPipeError" after we have ended quietly."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
