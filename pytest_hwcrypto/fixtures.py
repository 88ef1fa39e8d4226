"""Fixtures of `pytest --hwcrypto`, thin: each composes objects from the pure modules.

Registered by plugin.py only when --hwcrypto is given, so other projects never see them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_hwcrypto.kernel import afalg
from pytest_hwcrypto.kernel.facts import KernelFacts, gather_kernel_facts
from pytest_hwcrypto.kernel.inventory import InventoryEntry, build_inventory
from pytest_hwcrypto.kernel.procfs import ProcCryptoError, read_proc_crypto
from pytest_hwcrypto.profile import BoardProfile
from pytest_hwcrypto.report.recorder import WORKER_OUTPUT_KEY, ResultsRecorder
from pytest_hwcrypto.session import HwcryptoSession

PROC_CRYPTO = Path("/proc/crypto")


def hwcrypto_state(config: pytest.Config) -> HwcryptoSession:
    from pytest_hwcrypto.plugin import SESSION_KEY

    return config.stash[SESSION_KEY]


def kernel_facts(state: HwcryptoSession) -> KernelFacts:
    if "facts" not in state.cache:
        state.cache["facts"] = gather_kernel_facts()
    facts: KernelFacts = state.cache["facts"]
    return facts


def inventory(state: HwcryptoSession) -> list[InventoryEntry]:
    """The /proc/crypto inventory, read once per session (also at collection time)."""
    if "inventory" not in state.cache:
        try:
            state.cache["inventory"] = build_inventory(read_proc_crypto(PROC_CRYPTO))
        except FileNotFoundError:
            state.cache["inventory"] = []
    entries: list[InventoryEntry] = state.cache["inventory"]
    return entries


def recorder(state: HwcryptoSession) -> ResultsRecorder:
    if "recorder" not in state.cache:
        facts = kernel_facts(state)
        state.cache["recorder"] = ResultsRecorder(
            kernel=facts.to_json(), inventory=[entry.to_json() for entry in inventory(state)]
        )
    rec: ResultsRecorder = state.cache["recorder"]
    return rec


def report_header(state: HwcryptoSession) -> list[str]:
    facts = kernel_facts(state)
    profile = state.profile
    lines = [
        f"hwcrypto: kernel {facts.release} ({facts.machine}) — results are for this kernel",
        f"hwcrypto: suites {','.join(state.value('suite'))}; "
        f"board profile {profile.path if profile else 'none'}",
    ]
    if not PROC_CRYPTO.exists():
        lines.append("hwcrypto: /proc/crypto is missing: this kernel has no crypto API procfs")
    return lines


def write_results(config: pytest.Config, state: HwcryptoSession) -> None:
    rec = recorder(state)
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller writes the file
        workeroutput[WORKER_OUTPUT_KEY] = rec.to_json()
        return
    path = state.value("json")
    if path:
        rec.write(Path(path))


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist controller: merge a finished worker's results into ours."""
    output = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT_KEY)
    if output:
        recorder(hwcrypto_state(node.config)).merge(output)


@pytest.fixture(scope="session")
def hwcrypto_session(pytestconfig: pytest.Config) -> HwcryptoSession:
    """Resolved settings, board profile and per-session caches."""
    return hwcrypto_state(pytestconfig)


@pytest.fixture(scope="session")
def hwcrypto_profile(hwcrypto_session: HwcryptoSession) -> BoardProfile | None:
    """The board profile given with --hwcrypto-board, or None."""
    return hwcrypto_session.profile


@pytest.fixture(scope="session")
def hwcrypto_kernel(hwcrypto_session: HwcryptoSession) -> KernelFacts:
    """Facts of the running kernel: release, config, self-tests, user API, blacklists."""
    return kernel_facts(hwcrypto_session)


@pytest.fixture(scope="session")
def hwcrypto_inventory(hwcrypto_session: HwcryptoSession) -> list[InventoryEntry]:
    """Every registered implementation from /proc/crypto, classified, winners marked."""
    if not PROC_CRYPTO.exists():
        pytest.skip(
            "/proc/crypto is missing: build the kernel with CONFIG_CRYPTO and CONFIG_PROC_FS"
        )
    try:
        return inventory(hwcrypto_session)
    except ProcCryptoError as error:
        pytest.fail(str(error), pytrace=False)


@pytest.fixture(scope="session")
def hwcrypto_results(hwcrypto_session: HwcryptoSession) -> ResultsRecorder:
    """Where tests record measurements, findings and verdicts for --hwcrypto-json."""
    return recorder(hwcrypto_session)


class AfAlg:
    """The AF_ALG engine with this session's operation timeout; skips when AF_ALG is absent."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout

    def require(self, alg_type: str) -> None:
        available, why = afalg.afalg_available(alg_type)
        if not available:
            pytest.skip(why)

    def skcipher(self, alg: str, key: bytes) -> afalg.SkcipherSession:
        self.require("skcipher")
        return afalg.open_skcipher(alg, key, timeout=self.timeout)

    def aead(self, alg: str, key: bytes, authsize: int) -> afalg.AeadSession:
        self.require("aead")
        return afalg.open_aead(alg, key, authsize=authsize, timeout=self.timeout)

    def hash(self, alg: str, key: bytes | None = None) -> afalg.HashSession:
        self.require("hash")
        return afalg.open_hash(alg, key, timeout=self.timeout)

    def rng(self, alg: str, seed: bytes | None = None) -> afalg.RngSession:
        self.require("rng")
        return afalg.open_rng(alg, seed, timeout=self.timeout)


@pytest.fixture(scope="session")
def hwcrypto_afalg(hwcrypto_session: HwcryptoSession) -> Iterator[AfAlg]:
    """Open AF_ALG sessions bound to an algorithm or an exact driver name."""
    yield AfAlg(hwcrypto_session.value("timeout"))
