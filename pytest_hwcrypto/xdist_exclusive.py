# SPDX-License-Identifier: MIT
"""Measuring alone under pytest-xdist: a lock every test of a run shares, and a measuring
test takes for itself.

Two workers of one run share the CPUs; a throughput figure taken while another worker
runs correctness tests is a figure of a contended machine. So every test holds the lock
shared, and a test of a measuring suite holds it exclusively: it waits for the tests
running in other workers to finish, and none starts until it is done. A second lock, the
turnstile, keeps a waiting measurer from being starved by workers that keep starting new
tests (a test passes the turnstile before it takes its shared lock; a measurer holds the
turnstile while it waits).

Between processes through flock(2) on two files named after the run (its xdist test run
id), so only the workers of one run wait for each other.

And all tests of the measuring suites' modules go to one worker (`measuring_scheduler`):
a module measures once, in its module-scoped fixture, for all its tests; split over two
workers it would measure twice. (xdist's own `--dist loadgroup` would do that by
`xdist_group` markers, but it renames tests through an attribute pytest 9 no longer
reads, so it groups nothing there.) The plugin uses this for the default distribution
(`-n N`, i.e. `--dist load`); with another `--dist` the measuring suites skip, saying why.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.vocabulary import MEASURING_SUITES, XDIST_MEASURING_GROUP

_PREFIX = "hwcrypto-measuring-"


def lock_paths(run_id: str, directory: Path | None = None) -> tuple[Path, Path]:
    """(the lock, its turnstile) of the run `run_id`."""
    base = directory or Path(tempfile.gettempdir())
    return base / f"{_PREFIX}{run_id}.lock", base / f"{_PREFIX}{run_id}.turnstile"


class MeasuringLock:
    def __init__(self, run_id: str, directory: Path | None = None) -> None:
        self.path, self.turnstile = lock_paths(run_id, directory)

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        """Held by every other test: many at once, never beside a measuring one."""
        with _locked(self.turnstile, fcntl.LOCK_EX):
            pass
        with _locked(self.path, fcntl.LOCK_SH):
            yield

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Held by a measuring test: alone in the run while it holds it."""
        with _locked(self.turnstile, fcntl.LOCK_EX), _locked(self.path, fcntl.LOCK_EX):
            yield

    def remove(self) -> None:
        """After the run (every worker has ended): the two lock files go."""
        for path in (self.path, self.turnstile):
            path.unlink(missing_ok=True)


@contextlib.contextmanager
def _locked(path: Path, operation: int) -> Iterator[None]:
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, operation)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock


# ---------------------------------------------------------------------------------------
# the xdist side: which runs take turns, which tests are measuring, one worker for them

# workerinput key: the controller tells each worker that measuring tests take turns.
MEASURING_TURNS = "hwcrypto_measuring_turns"
_TURNS_KEY = pytest.StashKey[bool]()


def take_turns(config: pytest.Config) -> None:
    """xdist controller, at configure: under the default distribution, measuring tests
    take turns; the run gets a known id, which names the lock."""
    if hasattr(config, "workerinput") or config.getoption("dist", "no") != "load":
        return
    config.stash[_TURNS_KEY] = True
    if config.getoption("testrunuid", None) is None:
        config.option.testrunuid = uuid.uuid4().hex


def measuring_serialized(config: pytest.Config) -> bool:
    """Do measuring tests of this xdist run take turns (controller or worker)?"""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        return bool(workerinput.get(MEASURING_TURNS))
    return config.stash.get(_TURNS_KEY, False)


def configure_node(node: Any) -> None:
    """xdist controller, per worker: a worker parses the command line again, so it learns
    from its workerinput that measuring tests take turns."""
    if measuring_serialized(node.config):
        node.workerinput[MEASURING_TURNS] = True


def is_measuring(item: pytest.Item) -> bool:
    markers = {f"hwcrypto_{suite}" for suite in MEASURING_SUITES}
    return any(mark.name in markers for mark in item.iter_markers())


def is_measuring_module(nodeid: str) -> bool:
    """`suites/test_throughput.py::...`, `test_cryptodev_throughput.py::...`: a module of
    a measuring suite, by the shipped suites' file names (the scheduler sees node ids only)."""
    stem = nodeid.split("::", 1)[0].rsplit("/", 1)[-1].removesuffix(".py")
    return any(stem == f"test_{s}" or stem.startswith(f"test_{s}_") for s in MEASURING_SUITES)


def measuring_turn(item: pytest.Item) -> AbstractContextManager[None]:
    """Around a test in an xdist worker: alone in the run when it belongs to a measuring
    suite, beside other non-measuring tests otherwise."""
    workerinput = getattr(item.config, "workerinput", None)
    if workerinput is None or not measuring_serialized(item.config):
        return contextlib.nullcontext()
    lock = MeasuringLock(str(workerinput["testrunuid"]))
    return lock.exclusive() if is_measuring(item) else lock.shared()


def measuring_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's load distribution, except that the measuring suites' modules are one unit
    of work (one worker runs them all, one after another)."""
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

    class MeasuringScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return XDIST_MEASURING_GROUP if is_measuring_module(nodeid) else nodeid

    return MeasuringScheduling(config, log)


def measuring_lines(config: pytest.Config) -> list[str]:
    """The header line that says, once, why measuring suites take turns under xdist."""
    if hasattr(config, "workerinput") or not measuring_serialized(config):
        return []
    return [
        "hwcrypto: under pytest-xdist the measuring suites ("
        + ", ".join(sorted(MEASURING_SUITES))
        + ") run in one worker, each test alone while the other workers wait: "
        "tests beside them would compete for the CPUs being measured"
    ]


def remove_lock(config: pytest.Config) -> None:
    run_id = config.getoption("testrunuid", None)
    if run_id and measuring_serialized(config) and not hasattr(config, "workerinput"):
        MeasuringLock(str(run_id)).remove()
