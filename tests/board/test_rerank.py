# SPDX-License-Identifier: MIT
"""Re-ranking on a real kernel: a preferred driver wins its name, and priorities come back.

On the UML board `cbc(aes)` has two software drivers: the boot winner cbc(aes-fixed-time)
(priority 101, from aes_ti) and cbc(aes-generic) (100), which exists only once bound. The
kill -9 tests run the re-ranking in a child that kills itself inside the `with` block,
with its own ledger directory, and check that the next run's start and `hwcrypto sweep`
put the priority back.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_hwcrypto import ledger
from pytest_hwcrypto.fixtures import rerank_unavailable_reason
from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.kernel.rerank import Reranker
from pytest_hwcrypto.ledger import Ledger

PREFERRED = "cbc(aes-generic)"
BOOT_WINNER = "cbc(aes-fixed-time)"

# A child that prefers PREFERRED and dies by SIGKILL while it is preferred.
KILLED_CHILD = f"""
import os, signal
from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.rerank import Reranker
from pytest_hwcrypto.ledger import Ledger
with Reranker(Ledger(), afalg.instantiate_any).prefer({PREFERRED!r}):
    os.kill(os.getpid(), signal.SIGKILL)
"""


def priority(driver: str) -> int | None:
    found = [a for a in read_proc_crypto() if a.driver == driver and not a.is_internal]
    return found[0].priority if found else None


@pytest.fixture
def kernel(board_kind: str) -> None:
    if board_kind == "host":
        pytest.skip("needs a board: pytest --hwcrypto-vm=uml tests/board")
    reason = rerank_unavailable_reason()
    if reason:
        pytest.skip(reason)
    afalg.instantiate_any(PREFERRED)
    afalg.instantiate_any(BOOT_WINNER)
    if priority(BOOT_WINNER) is None:
        pytest.skip(f"{BOOT_WINNER} is not registered here (UML loads aes_ti)")


@pytest.fixture
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv(ledger.STATE_DIR_ENV, str(tmp_path))
    yield tmp_path


def _by_name_driver() -> str | None:
    session = afalg.open_skcipher("cbc(aes)", bytes(16))
    try:
        return session.driver
    finally:
        session.close()


@pytest.mark.usefixtures("kernel")
def test_preferred_driver_serves_the_name_then_priorities_come_back(state_dir: Path) -> None:
    before = {driver: priority(driver) for driver in (PREFERRED, BOOT_WINNER)}
    assert _by_name_driver() == BOOT_WINNER
    journal = Ledger(state_dir)
    with Reranker(journal, afalg.instantiate_any).prefer(PREFERRED) as preference:
        assert preference.changed and BOOT_WINNER in preference.rivals
        assert priority(PREFERRED) == preference.priority > (priority(BOOT_WINNER) or 0)
        assert [e.key for e in journal.entries()] == [PREFERRED], "recorded while changed"
        assert _by_name_driver() == PREFERRED
    assert {driver: priority(driver) for driver in before} == before
    assert _by_name_driver() == BOOT_WINNER
    assert not journal.path.exists()


@pytest.mark.usefixtures("kernel")
def test_a_failing_block_still_puts_the_priority_back(state_dir: Path) -> None:
    original = priority(PREFERRED)
    with (
        pytest.raises(RuntimeError, match="test failed here"),
        Reranker(Ledger(state_dir), afalg.instantiate_any).prefer(PREFERRED),
    ):
        raise RuntimeError("test failed here")
    assert priority(PREFERRED) == original


def _kill_while_preferred() -> int | None:
    original = priority(PREFERRED)
    child = subprocess.run([sys.executable, "-c", KILLED_CHILD], check=False, env=os.environ)
    assert child.returncode == -9
    assert priority(PREFERRED) != original, "the child died with the kernel re-ranked"
    return original


@pytest.mark.usefixtures("kernel")
def test_after_kill_9_hwcrypto_sweep_restores_the_priority(
    state_dir: Path, hwcrypto_sweep: Callable[[], subprocess.CompletedProcess[str]]
) -> None:
    original = _kill_while_preferred()
    decoy = state_dir / "notes.json"  # not a ledger: a sweep never touches it
    decoy.write_text("{}")
    done = hwcrypto_sweep()
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"restored the priority of {PREFERRED} to {original}" in done.stdout
    assert priority(PREFERRED) == original
    assert list(state_dir.glob("run-*.json")) == [] and decoy.exists()


@pytest.mark.usefixtures("kernel")
def test_after_kill_9_the_next_run_restores_it_at_start(
    state_dir: Path, pytester: pytest.Pytester
) -> None:
    original = _kill_while_preferred()
    pytester.makepyfile(test_nothing="def test_nothing(): pass")
    result = pytester.runpytest_subprocess(
        "--hwcrypto", "-p", "no:cacheprovider", "test_nothing.py"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*swept a killed run's leftovers: restored the priority of*"])
    assert priority(PREFERRED) == original
