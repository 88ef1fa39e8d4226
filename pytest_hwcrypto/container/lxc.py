# SPDX-License-Identifier: MIT
"""LXC containers the plugin makes: create, start, run commands, stop, destroy, undo.

Every container is named `hwcrypto-<run id>-<n>` (block/naming.py) and written to the
run's ledger *before* anything of it exists, with its LXC path and whether the shared
`lxc.pivot` cgroup was already there. The undo (at teardown, at the next run's start,
`hwcrypto sweep`) stops it, destroys it and removes the cgroups LXC leaves behind after a
failed start or a killed monitor (`lxc.payload.<name>`, `lxc.monitor.<name>`, and
`lxc.pivot` if this container made it). A container no ledger names is never touched.

The LXC path is a directory on tmpfs (`<state dir>/lxc`), given to every lxc-* command
with `-P`, so nothing lands in /var/lib/lxc. Output of attached commands is written to a
file in the container's /tmp and read from the host: on the UML board lxc-attach's own
output does not come back reliably.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shlex
import shutil
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_hwcrypto.block import naming
from pytest_hwcrypto.container import nodes, probe, rootfs
from pytest_hwcrypto.container.config import (
    HOOK_NAME,
    ContainerSpec,
    DeviceNode,
    ReadOnlyBind,
    render_autodev_hook,
    render_config,
)
from pytest_hwcrypto.container.terminal import Attached, Completed, Terminal
from pytest_hwcrypto.container.terminal import ContainerError as ContainerError
from pytest_hwcrypto.ledger import Entry, Ledger, Undo, state_dir

LEDGER_KIND = "container"
CGROUP_ROOT = Path("/sys/fs/cgroup")
PIVOT_CGROUP = "lxc.pivot"
# A subordinate range for unprivileged containers (root of the container -> this uid).
IDMAP_BASE = 100000
IDMAP_SIZE = 65536
INSIDE_PATH = "/bin:/usr/bin:/sbin:/usr/sbin"
_outputs = itertools.count(1)


def default_lxc_path() -> Path:
    """`<state dir>-lxc`: beside the ledgers, not inside their private (0700) directory,
    so an unprivileged container's root can reach its rootfs."""
    directory = state_dir()
    return directory.with_name(directory.name + "-lxc")


def unavailable_reason() -> str | None:
    """Why containers cannot be made here, with how to fix it; None when they can."""
    if os.geteuid() != 0:
        return "LXC containers with devices need root: run as root (or inside a board)"
    for program in ("lxc-start", "lxc-attach", "lxc-stop", "lxc-destroy"):
        if shutil.which(program) is None:
            return f"{program} is not installed: apt-get install lxc"
    if rootfs.busybox_path() is None:
        return "busybox is not installed (the containers' shell): apt-get install busybox-static"
    if not nodes.cgroup2_mounted() and not nodes.cgroup_v1_devices_mounted():
        return "no cgroup hierarchy is mounted: mount -t cgroup2 none /sys/fs/cgroup"
    return None


@dataclass
class Container:
    name: str
    lxc_path: Path
    spec: ContainerSpec
    terminal: Terminal
    config_path: Path
    interpreter: str = sys.executable  # the python the container runs (nodes.python_inside)
    pythonpath: str | None = None
    start_seconds: list[float] = field(default_factory=list)

    @property
    def config(self) -> str:
        return self.config_path.read_text()

    @property
    def directory(self) -> Path:
        return self.lxc_path / self.name

    @property
    def log_path(self) -> Path:
        return self.lxc_path / f"{self.name}.lxc.log"

    def _lxc(self, tool: str, *args: str) -> list[str]:
        return [tool, "-n", self.name, "-P", str(self.lxc_path), *args]

    def start(self) -> float:
        """Start in the background; the seconds lxc-start took (it returns once RUNNING)."""
        started = time.monotonic()
        done = self.terminal.run(
            self._lxc("lxc-start", "-d", "-l", "INFO", "-o", str(self.log_path))
        )
        if done.exit_code != 0:
            raise ContainerError(f"lxc-start {self.name} failed: {self._log_errors()}")
        seconds = time.monotonic() - started
        self.start_seconds.append(seconds)
        return seconds

    def stop(self) -> None:
        self.terminal.run(self._lxc("lxc-stop", "-k"))

    def restart(self) -> float:
        self.stop()
        return self.start()

    def state(self) -> str:
        done = self.terminal.run(self._lxc("lxc-info", "-s"))
        return done.output.split(":", 1)[-1].strip() if done.exit_code == 0 else "UNKNOWN"

    def run(self, command: str, timeout: float = 120.0) -> Completed:
        """`command` by /bin/sh inside: its exit status and its output (stdout + stderr)."""
        output_name = f"hwcrypto-output-{next(_outputs)}"
        inside = f"/tmp/{output_name}"
        on_host = Path(self.spec.rootfs) / "tmp" / output_name
        done = self.terminal.run(self._attach(f"( {command} ) >{inside} 2>&1"), timeout)
        try:
            output = on_host.read_text(errors="replace")
            on_host.unlink()
        except FileNotFoundError:
            # lxc-attach itself failed before the shell ran: its complaint is the output.
            output = done.output
        with open(self.terminal.log_path, "a", encoding="utf-8") as log:
            log.write(f"# inside: {command}\n{output}\n")
        return Completed(done.argv, done.exit_code, output, done.seconds)

    def attach(self, command: str) -> Attached:
        """`command` inside for as long as it runs, lxc-attach held open on a pty (a process
        sent to the background from an attached shell does not outlive lxc-attach)."""
        return self.terminal.spawn(self._attach(command))

    def _attach(self, command: str) -> list[str]:
        return self._lxc(
            "lxc-attach",
            "--clear-env",
            "-v",
            f"PATH={INSIDE_PATH}",
            "-v",
            "HOME=/root",
            "-v",
            "PYTHONDONTWRITEBYTECODE=1",
            *(["-v", f"PYTHONPATH={self.pythonpath}"] if self.pythonpath else []),
            "--",
            "/bin/sh",
            "-c",
            command,
        )

    def python(self, code: str, timeout: float = 120.0) -> Completed:
        """`code` run inside by this interpreter (bound read-only at its own path), or by
        Debian's python3 where an unprivileged container cannot reach it."""
        return self.run(shlex.join([self.interpreter, "-c", code]), timeout)

    def probe(self, *args: str) -> dict[str, Any]:
        """One container.probe check run inside; its JSON answer."""
        argv = probe.command(*args, interpreter=self.interpreter)
        return probe.parse_answer(self.run(shlex.join(argv)).output)

    def _log_errors(self) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return f"no LXC log at {self.log_path}"
        # Every start logs `Unsupported config key "lxc.seccomp"`: harmless, not the reason.
        errors = [ln for ln in lines if " ERROR " in ln and "lxc.seccomp" not in ln]
        return (errors[0].split(" - ", 1)[-1] if errors else "no error logged") + (
            f" (log: {self.log_path})"
        )


class ContainerMaker:
    """Makes the run's containers, each recorded in the ledger before it exists."""

    def __init__(self, ledger: Ledger, lxc_path: Path | None = None) -> None:
        self.ledger = ledger
        self.lxc_path = lxc_path or default_lxc_path()
        self.terminal = Terminal(self.lxc_path / "commands.log")

    def create(
        self,
        devices: Sequence[str] = (),
        refused: Sequence[str] = (),
        *,
        privileged: bool = True,
        device_policy: bool = True,
        package_dir: Path | None = None,
    ) -> Container:
        if not privileged:
            blocked = nodes.unreachable_ancestor(self.lxc_path / "rootfs")
            if blocked is not None:
                raise ContainerError(
                    f"an unprivileged container cannot reach {self.lxc_path}: {blocked} is not "
                    f"searchable by others (chmod o+x {blocked}, or use an LXC path under /tmp)"
                )
        allowed = tuple(nodes.read_node(path) for path in devices)
        refused_nodes = tuple(nodes.read_node(path) for path in refused)
        name = naming.next_name()
        self.lxc_path.mkdir(parents=True, exist_ok=True, mode=0o711)
        self.ledger.record(
            Entry(
                LEDGER_KIND,
                name,
                {
                    "name": name,
                    "lxc_path": str(self.lxc_path),
                    "pivot_existed": (CGROUP_ROOT / PIVOT_CGROUP).exists(),
                },
            )
        )
        directory = self.lxc_path / name
        busybox = rootfs.busybox_path()
        if busybox is None:
            raise ContainerError("busybox is not installed: apt-get install busybox-static")
        directory.mkdir(mode=0o755)
        root = directory / "rootfs"
        extra = rootfs.build_rootfs(root, busybox)
        here = package_dir or Path(__file__).resolve().parent.parent
        python = nodes.python_inside(here, unprivileged=not privileged)
        binds = tuple(ReadOnlyBind(path) for path in extra) + python.binds
        spec = ContainerSpec(
            name=name,
            rootfs=str(root),
            hook_path=str(directory / HOOK_NAME),
            devices=allowed,
            refused=refused_nodes,
            binds=binds,
            device_policy=device_policy,
            cgroup_v1_devices=nodes.cgroup_v1_devices_mounted(),
            idmap=() if privileged else _idmap(),
        )
        hook = directory / HOOK_NAME
        hook.write_text(render_autodev_hook((*allowed, *refused_nodes)))
        hook.chmod(0o755)
        config_path = directory / "config"
        config_path.write_text(render_config(spec))
        if not privileged:
            rootfs.chown_tree(root, IDMAP_BASE, IDMAP_BASE)
        return Container(
            name,
            self.lxc_path,
            spec,
            self.terminal,
            config_path,
            python.interpreter,
            python.pythonpath,
        )

    @contextmanager
    def container(self, devices: Sequence[str] = (), **options: Any) -> Iterator[Container]:
        """A started container, destroyed on leaving (after a failing test too)."""
        made: Container | None = None
        try:
            made = self.create(devices, **options)
            made.start()
            yield made
        finally:
            if made is not None:
                self.destroy(made.name)

    def destroy(self, name: str) -> None:
        recorded = next(
            (e.undo for e in self.ledger.entries() if e.kind == LEDGER_KIND and e.key == name),
            {"name": name, "lxc_path": str(self.lxc_path)},
        )
        undo_container(recorded)
        self.ledger.strike(LEDGER_KIND, name)


def _idmap() -> tuple[str, ...]:
    return (f"u 0 {IDMAP_BASE} {IDMAP_SIZE}", f"g 0 {IDMAP_BASE} {IDMAP_SIZE}")


def leftover_cgroups(name: str, root: Path = CGROUP_ROOT) -> list[Path]:
    """The cgroups LXC made for container `name` (also under a v1 controller's hierarchy)."""
    found: list[Path] = []
    for prefix in ("lxc.payload.", "lxc.monitor."):
        for pattern in (f"{prefix}{name}", f"{prefix}{name}-[0-9]*"):
            found += root.glob(pattern)
            found += root.glob(f"*/{pattern}")
    return sorted(set(found))


def _remove_cgroup(path: Path) -> None:
    """rmdir a cgroup and its children, deepest first (cgroups are removed by rmdir)."""
    for directory, names, _files in os.walk(path, topdown=False):
        for child in names:
            with contextlib.suppress(FileNotFoundError):
                os.rmdir(os.path.join(directory, child))
    with contextlib.suppress(FileNotFoundError):
        os.rmdir(path)


def undo_container(undo: Mapping[str, Any]) -> str:
    """Stop, destroy and clean up after container `undo["name"]`; the ledger's undo.

    An OSError keeps the entry for the next sweep.
    """
    name = str(undo["name"])
    lxc_path = Path(str(undo["lxc_path"]))
    terminal = Terminal(lxc_path / "commands.log")
    directory = lxc_path / name
    if directory.exists():
        try:
            terminal.run(["lxc-stop", "-n", name, "-P", str(lxc_path), "-k"])
            done = terminal.run(["lxc-destroy", "-n", name, "-P", str(lxc_path), "-f"])
        except ContainerError as error:  # lxc gone, or no answer: kept for the next sweep
            raise OSError(str(error)) from None
        if directory.exists():
            raise OSError(f"lxc-destroy {name}: {done.complaint()}")
    with contextlib.suppress(FileNotFoundError):
        (lxc_path / f"{name}.lxc.log").unlink()
    for cgroup in leftover_cgroups(name):
        try:
            _remove_cgroup(cgroup)
        except OSError as error:
            raise OSError(f"cgroup {cgroup} of container {name}: {error.strerror}") from None
    pivot = CGROUP_ROOT / PIVOT_CGROUP
    if not undo.get("pivot_existed", True) and pivot.exists():
        # Made by this container's start; busy (EBUSY) if another container uses it now.
        with contextlib.suppress(OSError):
            os.rmdir(pivot)
    return f"removed container {name}"


def undo_handlers() -> dict[str, Undo]:
    """Undo functions of the kinds this package records (run.undo_handlers wires them)."""
    return {LEDGER_KIND: undo_container}


def device(path: str) -> DeviceNode:
    return nodes.read_node(path)
