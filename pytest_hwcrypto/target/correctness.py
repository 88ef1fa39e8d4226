# SPDX-License-Identifier: MIT
"""The correctness suite on a host-driven board: drivers found there, answers batched.

Vectors and differential cases are made on the host (kernel/vectors.py,
kernel/differential.py), sent to the board's helper as one batch of hex lines, and its
answers compared on the host, so the link carries each input once and one round trip serves
every case. Which drivers are checked is decided as in-board (kernel/check_targets.py): the
algorithms are bound by name, each mode template is pinned over every registered cipher
driver, and /proc/crypto is read again; here the binds are batch requests too.

What the helper cannot do yet is not checked on a board: AEADs (it has no aead type), and
of the differential submissions only the one-shot ones (encrypt, decrypt back, digest), not
the misaligned, chunked or two-request ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_hwcrypto.kernel.check_targets import (
    CheckTarget,
    Registered,
    by_name_bindings,
    pinned_bindings,
    registered_from,
    select_targets,
)
from pytest_hwcrypto.kernel.classify import classify_driver
from pytest_hwcrypto.kernel.differential import SPECS, DifferentialCase
from pytest_hwcrypto.kernel.inventory import build_inventory
from pytest_hwcrypto.kernel.procfs import parse_proc_crypto
from pytest_hwcrypto.kernel.vectors import CORE_ALGORITHMS, CipherVector, DigestVector, Vector
from pytest_hwcrypto.target.helper_run import BatchAnswer, BatchCost, hex_field
from pytest_hwcrypto.target.session import TargetSession
from pytest_hwcrypto.vocabulary import AlgType

NOT_ON_BOARD_AEAD = "AEADs are not host-driven yet (the board's helper has no aead type)"


def bind_request(algorithm: str, name: str) -> str | None:
    """A batch line whose bind makes the kernel build `name` (None: AEAD, not here)."""
    spec = SPECS[algorithm]
    if spec.kind == AlgType.HASH:
        return f"hash {name} -"
    if spec.kind == AlgType.SKCIPHER:
        # bytes(range(n)): XTS halves differ and DES keys differ, so no weak-key refusal.
        key = bytes(range(spec.key_sizes[0])) if spec.key_sizes else b""
        return f"skcipher {name} enc {hex_field(key)} - -"
    return None


def bound(answer: BatchAnswer) -> bool:
    """The bind of a request succeeded (a keyless bind of a keyed hash then fails the
    request with ENOKEY: the instance exists all the same)."""
    return answer.ok or answer.what.startswith("request")


def discover_board_check_targets(session: TargetSession) -> list[CheckTarget]:
    """The drivers the correctness suite checks on the board (kernel/check_targets.py)."""
    by_name = [line for a, n in by_name_bindings() if (line := bind_request(a, n))]
    session.helper.batch(by_name)

    def registered() -> list[Registered]:
        text = session.proc_crypto_now()
        source = f"{session.transport.describe()} /proc/crypto"
        return registered_from(build_inventory(parse_proc_crypto(text, source)))

    pairs = [
        (algorithm, driver, line)
        for algorithm, driver in pinned_bindings(registered())
        if (line := bind_request(algorithm, driver))
    ]
    answers, _ = session.helper.batch([line for _, _, line in pairs]) if pairs else ([], None)
    pinned: dict[str, set[str]] = {}
    for (algorithm, driver, _), answer in zip(pairs, answers):
        if bound(answer):
            pinned.setdefault(algorithm, set()).add(driver)
    return select_targets(
        registered(),
        pinned,
        CORE_ALGORITHMS,
        lambda driver: classify_driver(driver, ""),
    )


def vector_request(target: CheckTarget, vector: Vector) -> str | None:
    """The batch line that asks the board's driver for a known answer (None: AEAD)."""
    if isinstance(vector, CipherVector):
        direction, data = (
            ("enc", vector.plaintext) if vector.encrypt else ("dec", vector.ciphertext)
        )
        return (
            f"skcipher {target.driver} {direction} {hex_field(vector.key)} "
            f"{hex_field(vector.iv)} {hex_field(data)}"
        )
    if isinstance(vector, DigestVector):
        if vector.key is None:
            return f"hash {target.driver} {hex_field(vector.message)}"
        return f"hash {target.driver} {hex_field(vector.key)} {hex_field(vector.message)}"
    return None


def case_requests(target: CheckTarget, case: DifferentialCase, expected: bytes) -> list[str]:
    """The one-shot submissions of a differential case: encrypt and decrypt back, or the
    digest ([] for an AEAD)."""
    if target.kind == AlgType.SKCIPHER:
        keys = f"{target.driver} {{}} {hex_field(case.key)} {hex_field(case.iv)}"
        return [
            f"skcipher {keys.format('enc')} {hex_field(case.data)}",
            f"skcipher {keys.format('dec')} {hex_field(expected)}",
        ]
    if target.kind == AlgType.HASH:
        if case.key:
            return [f"hash {target.driver} {hex_field(case.key)} {hex_field(case.data)}"]
        return [f"hash {target.driver} {hex_field(case.data)}"]
    return []


@dataclass
class BoardAnswers:
    """Every request of the run's cases, answered by the board in one batch."""

    answers: dict[str, BatchAnswer]
    cost: BatchCost
    cases: int

    def describe_cost(self) -> str:
        """'N cases, B bytes and S ms per case' over the link, for the report."""
        cases = max(self.cases, 1)
        moved = self.cost.bytes_sent + self.cost.bytes_received
        return (
            f"{self.cases} cases in one batch of {self.cost.requests} requests: "
            f"{moved / cases:.0f} bytes and {1000 * self.cost.seconds / cases:.1f} ms per case "
            f"({self.cost.seconds:.1f} s in all)"
        )


def answer_all(session: TargetSession, requests: Sequence[str], cases: int) -> BoardAnswers:
    """The board's answer to each distinct request line (asked once each)."""
    distinct = list(dict.fromkeys(requests))
    answers, cost = session.helper.batch(distinct)
    return BoardAnswers(dict(zip(distinct, answers)), cost, cases)
