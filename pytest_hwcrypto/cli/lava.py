# SPDX-License-Identifier: MIT
"""`hwcrypto lava ...`: run the suites in a LAVA lab and read the results back.

    hwcrypto lava definition --wheel URL > hwcrypto.yaml       # Lava-Test Test Definition 1.0
    hwcrypto lava job --device-type qemu --kernel URL --rootfs URL --wheel URL > job.yaml
    hwcrypto lava job --device-type beaglebone-black --install apt --wheel URL  # placeholders
    hwcrypto lava results --server http://lava:8000 --job 42 -o board42.json
    hwcrypto lava results --file tests.json --job 42 -o board42.json
    hwcrypto lava guest                                   # build (or find) the QEMU guest
    hwcrypto lava run job.yaml                            # lava-run on the local QEMU device
    hwcrypto lava lab start|stop|status                   # a whole local LAVA lab

The work is in pytest_hwcrypto/lab/; this module reads options and files and turns every
user mistake into one line on stderr (exit 2), never a traceback. cli/__init__.py only
registers `add_parser`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pytest_hwcrypto.usage import UsageError


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `hwcrypto lava` (cli/__init__.py lists this in `_SUBCOMMANDS`)."""
    parser = sub.add_parser(
        "lava",
        help="LAVA lab: test definition, job, results read back, a local lab",
        description="Run the shipped suites in a LAVA lab: write the test definition and "
        "job, read a finished job's test cases back as a results file.",
    )
    lava = parser.add_subparsers(dest="lava_command", metavar="ACTION", required=True)

    definition = lava.add_parser("definition", help="the Lava-Test Test Definition 1.0")
    _definition_options(definition)
    definition.set_defaults(func=cmd_definition)

    job = lava.add_parser("job", help="a LAVA job running the definition on a device type")
    _definition_options(job)
    job.add_argument("--device-type", default="qemu", help="LAVA device type (qemu)")
    job.add_argument("--kernel", metavar="URL", help="kernel image URL")
    job.add_argument(
        "--rootfs", metavar="URL", help="qemu: the guest initramfs; other types: an NFS rootfs"
    )
    job.add_argument("--dtb", metavar="URL", help="device tree blob URL (ARM boards)")
    job.add_argument("--name", help="job name")
    job.add_argument("--tags", default="", help="device tags, comma separated")
    job.add_argument("--memory", type=int, default=2048, help="qemu: guest MiB (2048)")
    job.add_argument(
        "--no-virtio-crypto",
        action="store_true",
        help="qemu: no virtio-crypto offload engine in the guest",
    )
    job.add_argument("--minutes", type=int, default=40, help="job timeout (40)")
    job.set_defaults(func=cmd_job)

    results = lava.add_parser("results", help="a finished job's test cases as a results file")
    results.add_argument("--server", metavar="URL", help="the LAVA server (http://host:port)")
    results.add_argument("--job", metavar="ID", help="the job id")
    results.add_argument("--token", help="API token (or $LAVA_TOKEN); public jobs need none")
    results.add_argument(
        "--file",
        metavar="PATH",
        help="a downloaded results file instead of the server: the REST API's JSON "
        "(/api/v0.2/jobs/ID/tests/) or `lavacli results ID --yaml`",
    )
    results.add_argument("-o", "--output", metavar="RESULTS.json", help="write it here")
    results.set_defaults(func=cmd_results)

    _add_local(lava)


def _definition_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--suite", default="inventory,throughput", help="suites to run (inventory,throughput)"
    )
    parser.add_argument(
        "--install",
        default="wheel",
        help="how the device gets the plugin: wheel (venv over the system's python3-* "
        "packages + pip --no-deps), apt (Debian's packages first), pypi, none (wheel)",
    )
    parser.add_argument("--wheel", default="", help="the wheel: a URL or a path on the device")
    parser.add_argument("--profile", metavar="PROFILE.toml", help="board profile to carry")
    parser.add_argument(
        "--kcidb-origin", help="also write KCIDB data on the device with this origin"
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")


def _add_local(lava: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Subcommands that run LAVA on this machine: the guest image, lava-run, the lab."""
    guest = lava.add_parser(
        "guest", help="build (once, cached) the x86-64 QEMU guest: Debian 12 + python3 stack"
    )
    guest.add_argument("--cache", metavar="DIR", help="where images are kept")
    guest.set_defaults(func=cmd_guest)

    run = lava.add_parser(
        "run",
        help="run a generated job with lava-run (no server) on the QEMU device",
        description="Build or find the guest image, serve the wheel to the guest, write the "
        "job, render the QEMU device dictionary, run Debian's lava-run, and read the test "
        "cases back: OUTPUT_DIR gets job.yaml, device.yaml, lava-run.log, cases.json and "
        "results.json.",
    )
    run.add_argument("--wheel", required=True, help="the plugin's wheel (a file here)")
    run.add_argument("--suite", default="inventory,throughput", help="suites to run")
    run.add_argument(
        "--profile",
        metavar="PROFILE.toml",
        help="board profile to carry; 'qemu-strict' is the shipped one whose rule fails",
    )
    run.add_argument("--output-dir", default="hwcrypto-artifacts/lava-run", help="where to")
    run.add_argument("--cache", metavar="DIR", help="where guest images are kept")
    run.add_argument("--memory", type=int, default=2048, help="guest MiB (2048)")
    run.add_argument("--minutes", type=int, default=40, help="job timeout (40)")
    run.set_defaults(func=cmd_run, kcidb_origin=None, install="wheel")

    lab = lava.add_parser(
        "lab",
        help="a whole local LAVA lab (server, database, scheduler, worker, QEMU device)",
        description="start/stop/status run the shipped lava-lab.sh (127.0.0.1 only; stop "
        "leaves no process, database or file behind). submit writes the QEMU job, submits "
        "it with lavacli, serves the wheel while it runs and reads the results back through "
        "the REST API.",
    )
    lab.add_argument("action", choices=("start", "stop", "status", "submit"))
    lab.add_argument("--wheel", help="submit: the plugin's wheel (a file here)")
    lab.add_argument("--suite", default="inventory,throughput", help="submit: suites to run")
    lab.add_argument("--profile", metavar="PROFILE.toml", help="submit: 'qemu-strict' or a file")
    lab.add_argument("--cache", metavar="DIR", help="submit: where guest images are kept")
    lab.add_argument("--output-dir", default="hwcrypto-artifacts/lava-lab", help="submit: where")
    lab.add_argument("--memory", type=int, default=2048, help="submit: guest MiB (2048)")
    lab.add_argument("--minutes", type=int, default=40, help="submit: job timeout (40)")
    lab.set_defaults(func=cmd_lab, kcidb_origin=None, install="wheel")


def _definition_spec(args: argparse.Namespace) -> object:
    from pytest_hwcrypto.lab.lava_job import DefinitionSpec, JobSpecError
    from pytest_hwcrypto.profile import ProfileError, load_profile
    from pytest_hwcrypto.settings import parse_kcidb_origin, parse_suites

    try:
        parse_suites(args.suite)
    except ValueError as error:
        raise UsageError(f"--suite: {error}") from None
    profile_text = None
    if args.profile:
        try:
            load_profile(Path(args.profile))
            profile_text = Path(args.profile).read_text(encoding="utf-8")
        except (ProfileError, OSError) as error:
            raise UsageError(f"--profile: {error}") from None
    if args.kcidb_origin:
        try:
            parse_kcidb_origin(args.kcidb_origin)
        except ValueError as error:
            raise UsageError(f"--kcidb-origin: {error}") from None
    spec = DefinitionSpec(
        suites=args.suite,
        install=args.install,
        wheel=args.wheel,
        profile_toml=profile_text,
        pytest_args=tuple(getattr(args, "pytest_args", ()) or ()),
        kcidb_origin=args.kcidb_origin,
    )
    try:
        spec.check()
    except JobSpecError as error:
        raise UsageError(str(error)) from None
    return spec


def _write(text: str, output: str | None) -> None:
    if not output:
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"-o {output}: {error.strerror or error}") from None
    sys.stderr.write(f"hwcrypto lava: wrote {output}\n")


def cmd_definition(args: argparse.Namespace) -> int:
    from pytest_hwcrypto.lab.lava_job import DefinitionSpec, definition_yaml

    spec = _definition_spec(args)
    assert isinstance(spec, DefinitionSpec)
    _write(definition_yaml(spec), args.output)
    return 0


def cmd_job(args: argparse.Namespace) -> int:
    from pytest_hwcrypto.lab.lava_job import DefinitionSpec, JobSpec, JobSpecError, job_yaml

    spec = _definition_spec(args)
    assert isinstance(spec, DefinitionSpec)
    job = JobSpec(
        definition=spec,
        device_type=args.device_type,
        kernel=args.kernel,
        rootfs=args.rootfs,
        dtb=args.dtb,
        job_name=args.name,
        timeout_minutes=args.minutes,
        memory_mb=args.memory,
        virtio_crypto=not args.no_virtio_crypto,
        tags=tuple(tag for tag in args.tags.split(",") if tag),
    )
    try:
        _write(job_yaml(job), args.output)
    except JobSpecError as error:
        raise UsageError(str(error)) from None
    return 0


def cmd_results(args: argparse.Namespace) -> int:
    import os

    from pytest_hwcrypto.lab import lava_results
    from pytest_hwcrypto.model.results import save_results

    try:
        if args.file:
            job = lava_results.read_job_file(Path(args.file), args.job)
        elif args.server and args.job:
            token = args.token or os.environ.get("LAVA_TOKEN")
            job = lava_results.fetch_job(args.server, args.job, token)
        else:
            raise UsageError("give --server URL --job ID, or --file PATH")
    except lava_results.LavaResultsError as error:
        raise UsageError(str(error)) from None
    sys.stderr.write(lava_results.summary_line(job) + "\n")
    if job.failure is not None:
        return 1
    results = lava_results.to_results(job)
    if args.output:
        save_results(results, args.output)
        sys.stderr.write(f"hwcrypto lava: wrote {args.output}\n")
    else:
        json.dump(results.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    failed = [verdict for verdict in results.verdicts if not verdict.passed]
    return 1 if failed else 0


def cmd_guest(args: argparse.Namespace) -> int:
    from pytest_hwcrypto.lab import lava_local

    try:
        where = lava_local.build_guest(Path(args.cache) if args.cache else None, sys.stderr)
    except lava_local.LocalLavaError as error:
        raise UsageError(str(error)) from None
    print(where)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """lava-run alone, end to end (module docstring of lab/lava_local.py)."""
    import time

    from pytest_hwcrypto.lab import lava_job, lava_local, lava_results
    from pytest_hwcrypto.model.results import save_results

    reason = lava_local.missing_prerequisites()
    if reason is not None:
        raise UsageError(reason)
    wheel = _wheel(args)
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        guest = lava_local.build_guest(Path(args.cache) if args.cache else None, sys.stderr)
        lava_local.echo(f"lava-run: guest {guest} ({time.monotonic() - started:.0f} s)")
        with lava_local.serve_directory(wheel.parent) as port:
            url = f"http://{lava_local.GUEST_HOST_ADDRESS}:{port}/{wheel.name}"
            data, job_file = _write_qemu_job(args, guest, url, out)
            device_file = out / "device.yaml"
            context = lava_job.parse_context_value(data["context"])
            lava_local.render_device(context, device_file)
            lava_local.echo(f"lava-run: job {job_file}, wheel served at {url}")
            outcome = lava_local.run_lava(
                job_file, device_file, out, out / "lava-run.log", lava_local.echo
            )
    except lava_local.LocalLavaError as error:
        raise UsageError(str(error)) from None
    document = lava_local.cases_document(outcome, "local")
    (out / "cases.json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    job = lava_results.read_job_file(out / "cases.json", "local")
    sys.stderr.write(lava_results.summary_line(job) + "\n")
    lava_local.echo(
        f"lava-run: {outcome.seconds:.0f} s in lava-run, {time.monotonic() - started:.0f} s "
        f"in all; {out}/cases.json"
    )
    if job.failure is not None:
        return 1
    save_results(lava_results.to_results(job), out / "results.json")
    lava_local.echo(f"lava-run: results file {out}/results.json")
    return 0


def _wheel(args: argparse.Namespace) -> Path:
    from pytest_hwcrypto.lab import lava_local

    if not args.wheel:
        raise UsageError("--wheel PATH is needed: the guest installs the plugin from it")
    wheel = Path(args.wheel).resolve()
    if not wheel.is_file() or wheel.suffix != ".whl":
        raise UsageError(f"--wheel {args.wheel}: not a wheel file")
    if args.profile == "qemu-strict":
        args.profile = str(lava_local.shipped_profile())
    return wheel


def _write_qemu_job(
    args: argparse.Namespace, guest: Path, wheel_url: str, out: Path
) -> tuple[dict[str, Any], Path]:
    """The QEMU job for the guest in `guest`, written to out/job.yaml and checked with
    LAVA's own schema."""
    from pytest_hwcrypto.lab import lava_job, lava_local

    definition = _definition_spec(argparse.Namespace(**{**vars(args), "wheel": wheel_url}))
    assert isinstance(definition, lava_job.DefinitionSpec)
    spec = lava_job.JobSpec(
        definition=definition,
        kernel=(guest / "vmlinuz").as_uri(),
        rootfs=(guest / "guest.cpio").as_uri(),
        memory_mb=args.memory,
        timeout_minutes=args.minutes,
    )
    data, _ = lava_job.job(spec)
    job_file = out / "job.yaml"
    job_file.write_text(lava_job.job_yaml(spec), encoding="utf-8")
    invalid = lava_local.validate_job(job_file)
    if invalid is not None:
        raise UsageError(f"{job_file}: LAVA's schema refuses it: {invalid}")
    return data, job_file


def cmd_lab(args: argparse.Namespace) -> int:
    """The local lab: lava-lab.sh, or a job submitted to it and read back."""
    import subprocess
    import time

    from pytest_hwcrypto.lab import lava_local, lava_results
    from pytest_hwcrypto.model.results import save_results

    if args.action != "submit":
        try:
            script = lava_local.script("lava-lab.sh")
        except lava_local.LocalLavaError as error:
            raise UsageError(str(error)) from None
        return subprocess.run(["bash", str(script), args.action], check=False).returncode
    wheel = _wheel(args)
    try:
        lab = lava_local.LocalLab.find()
        out = Path(args.output_dir)
        out.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        guest = lava_local.build_guest(Path(args.cache) if args.cache else None, sys.stderr)
        with lava_local.serve_directory(wheel.parent) as port:
            url = f"http://{lava_local.GUEST_HOST_ADDRESS}:{port}/{wheel.name}"
            _, job_file = _write_qemu_job(args, guest, url, out)
            job_id = lab.submit(job_file)
            lava_local.echo(f"lava-lab: job {job_id} submitted ({lab.url}/scheduler/job/{job_id})")
            lab.wait(job_id, lava_local.echo, timeout=args.minutes * 60 + 300)
        lava_local.echo(
            f"lava-lab: job {job_id} finished {time.monotonic() - started:.0f} s after submission"
        )
        job = lava_results.fetch_job(lab.url, job_id, lab.token)
    except (lava_local.LocalLavaError, lava_results.LavaResultsError) as error:
        raise UsageError(str(error)) from None
    sys.stderr.write(lava_results.summary_line(job) + "\n")
    if job.failure is not None:
        return 1
    save_results(lava_results.to_results(job), out / "results.json")
    lava_local.echo(f"lava-lab: results file {out}/results.json")
    return 0
