# SPDX-License-Identifier: MIT
"""Correctness suite: published vectors and differential cases against every registered driver.

Each driver is bound by its exact driver name, so a test names the one implementation that
produced the bytes: "cbc(aes-fixed-time) fails CBCVarKey128 #37". Two kinds of tests:

* test_known_answer: NIST CAVP and RFC vectors from the installed cryptography_vectors
  package (sampled, see pytest_hwcrypto.kernel.vectors);
* test_differential: seeded random cases (see pytest_hwcrypto.kernel.differential) whose
  output must equal OpenSSL's (via pyca cryptography), from a misaligned buffer and
  submitted in pieces, decrypting back to the input; for AEADs a flipped tag bit must be
  refused; for hashes, incremental must equal one-shot. Equality with the generic C
  driver follows from both matching OpenSSL; the generic driver is asked when a driver
  disagrees, and the failure says whether it agrees with OpenSSL or with the driver.

A driver that refuses a valid key, returns short output or hangs fails with that reason.
Drivers AF_ALG cannot reach (masked off-CPU drivers, failed self-tests) are skipped with the
reason; the inventory suite is where those fail.
"""

from __future__ import annotations

import errno
import functools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Callable, cast

import pytest

from pytest_hwcrypto import fixtures, target_run
from pytest_hwcrypto.bytes_diff import hex_preview, mismatch_message
from pytest_hwcrypto.kernel import afalg, differential, vectors
from pytest_hwcrypto.kernel.check_targets import (
    CheckTarget,
    discover_check_targets,
    reference_driver,
)
from pytest_hwcrypto.kernel.differential import DifferentialCase, RunSeed
from pytest_hwcrypto.kernel.vectors import AeadVector, CipherVector, DigestVector, Vector
from pytest_hwcrypto.model.results import Finding
from pytest_hwcrypto.report.recorder import ResultsRecorder
from pytest_hwcrypto.run import HwcryptoRun, run_of
from pytest_hwcrypto.target import correctness as on_board
from pytest_hwcrypto.target.helper_run import BatchAnswer
from pytest_hwcrypto.vocabulary import AlgType, FindingKind, Suite

pytestmark = pytest.mark.hwcrypto_correctness


# --- collection: which drivers, which vectors, how many cases -------------------------------


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    state = run_of(metafunc.config)
    # The reference driver is looked up among all targets, of the same algorithm anyway.
    targets = [t for t in correctness_targets(state) if state.options.chooses(t.algorithm)]
    if "known_answer" in metafunc.fixturenames:
        pairs = [
            (target, vector)
            for target in targets
            for vector in vectors.known_answers(target.algorithm)
        ]
        metafunc.parametrize(
            ("target", "known_answer"),
            pairs,
            ids=[f"{t.id}:{v.source}#{v.position}" for t, v in pairs],
        )
    if "case_index" in metafunc.fixturenames:
        count = state.options.fuzz_iterations
        cases = [(target, index) for target in targets for index in range(count)]
        metafunc.parametrize(
            ("target", "case_index"), cases, ids=[f"{t.id}:fuzz#{i}" for t, i in cases]
        )


def correctness_targets(state: HwcryptoRun) -> list[CheckTarget]:
    """The drivers to check, computed once per process (every xdist worker does the same)."""
    if state.correctness_targets is None:
        selected = Suite.CORRECTNESS in state.options.suite
        session = target_run.target_session(state) if selected else None
        if session is not None:
            state.correctness_targets = on_board.discover_board_check_targets(session)
        else:
            state.correctness_targets = (
                discover_check_targets(state.options.timeout, fixtures.PROC_CRYPTO)
                if selected
                else []
            )
    targets: list[CheckTarget] = state.correctness_targets
    return targets


# --- fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def correctness_seed(
    hwcrypto_run: HwcryptoRun,
    pytestconfig: pytest.Config,
    record_testsuite_property: Callable[[str, object], None],
) -> RunSeed:
    """The run's seed: --hwcrypto-seed, else shared by all xdist workers, else random."""
    if hwcrypto_run.seed is None:
        workerinput = getattr(pytestconfig, "workerinput", None)
        hwcrypto_run.seed = differential.run_seed(
            hwcrypto_run.options.seed, differential.shared_run_id(workerinput)
        )
    seed: RunSeed = hwcrypto_run.seed
    record_testsuite_property("hwcrypto.correctness.seed", seed.value)
    return seed


@pytest.fixture(scope="session")
def board_answers(
    hwcrypto_run: HwcryptoRun,
    correctness_seed: RunSeed,
    record_testsuite_property: Callable[[str, object], None],
) -> on_board.BoardAnswers:
    """On a target: every case of the run sent to the board's helper in one batch."""
    session = target_run.target_session(hwcrypto_run)
    assert session is not None
    targets = [
        t for t in correctness_targets(hwcrypto_run) if hwcrypto_run.options.chooses(t.algorithm)
    ]
    requests: list[str] = []
    cases = 0
    for target in targets:
        for vector in vectors.known_answers(target.algorithm):
            line = on_board.vector_request(target, vector)
            requests += [line] if line else []
            cases += line is not None
        for index in range(hwcrypto_run.options.fuzz_iterations):
            case, expected = case_and_expected(target.algorithm, index, correctness_seed.value)
            lines = on_board.case_requests(target, case, expected)
            requests += lines
            cases += bool(lines)
    answers = on_board.answer_all(session, requests, cases)
    record_testsuite_property("hwcrypto.correctness.board_batch", answers.describe_cost())
    return answers


def board_answer(
    board: on_board.BoardAnswers, target: CheckTarget, line: str | None, subject: str
) -> bytes:
    """The board's output for `line`; a skip (AEAD, failed self-test) or failure else."""
    if line is None:
        pytest.skip(f"{target.driver}: {on_board.NOT_ON_BOARD_AEAD}")
    answer: BatchAnswer = board.answers[line]
    if answer.output is not None:
        return answer.output
    said = f"{answer.what} failed on the board: {os.strerror(answer.errno)}"
    if answer.errno == errno.ELIBBAD:
        pytest.skip(f"{target.driver}: {said} (the inventory suite reports this)")
    if answer.what.startswith("bind") and answer.errno == errno.ENOENT:
        _fail(f"{subject}: listed at collection but cannot be bound now ({said})", "")
    _fail(f"{subject}: {said}", "")
    raise AssertionError("unreachable")


# --- known answers --------------------------------------------------------------------------


def test_known_answer(
    target: CheckTarget,
    known_answer: Vector,
    hwcrypto_afalg: fixtures.AfAlg,
    hwcrypto_results: ResultsRecorder,
    hwcrypto_run: HwcryptoRun,
    request: pytest.FixtureRequest,
) -> None:
    """The driver reproduces a published vector."""
    subject = f"{target.driver} fails {known_answer.label} ({known_answer.direction})"
    if hwcrypto_run.options.target is not None:
        board: on_board.BoardAnswers = request.getfixturevalue("board_answers")
        got = board_answer(board, target, on_board.vector_request(target, known_answer), subject)
        if isinstance(known_answer, CipherVector):
            want = known_answer.ciphertext if known_answer.encrypt else known_answer.plaintext
        else:
            assert isinstance(known_answer, DigestVector)
            want = known_answer.digest
        fail_on_mismatch(subject, want, got, vector_details(known_answer))
        return
    with driver_trouble_fails(target, subject, hwcrypto_results, vector_details(known_answer)):
        if isinstance(known_answer, CipherVector):
            check_cipher_vector(hwcrypto_afalg, target, known_answer, subject)
        elif isinstance(known_answer, AeadVector):
            check_aead_vector(hwcrypto_afalg, target, known_answer, subject)
        else:
            check_digest_vector(hwcrypto_afalg, target, known_answer, subject)


def check_cipher_vector(
    engine: fixtures.AfAlg, target: CheckTarget, vector: CipherVector, subject: str
) -> None:
    iv = vector.iv or None  # ECB has no IV
    with engine.skcipher(target.driver, vector.key) as session:
        if vector.encrypt:
            got, want = session.encrypt(vector.plaintext, iv), vector.ciphertext
        else:
            got, want = session.decrypt(vector.ciphertext, iv), vector.plaintext
    fail_on_mismatch(subject, want, got, vector_details(vector))


def check_aead_vector(
    engine: fixtures.AfAlg, target: CheckTarget, vector: AeadVector, subject: str
) -> None:
    with engine.aead(target.driver, vector.key, len(vector.tag)) as session:
        if vector.encrypt:
            got = session.encrypt(vector.plaintext, vector.iv, vector.aad)
            fail_on_mismatch(subject, vector.ciphertext + vector.tag, got, vector_details(vector))
            return
        sealed = vector.ciphertext + vector.tag
        if not vector.authentic:
            expect_rejection(
                session,
                sealed,
                vector.iv,
                vector.aad,
                f"{subject}: accepted a forged tag",
                vector_details(vector),
            )
            return
        got = session.decrypt(sealed, vector.iv, vector.aad)
    fail_on_mismatch(subject, vector.plaintext, got, vector_details(vector))


def check_digest_vector(
    engine: fixtures.AfAlg, target: CheckTarget, vector: DigestVector, subject: str
) -> None:
    with engine.hash(target.driver, vector.key) as session:
        got = session.digest(vector.message)
    fail_on_mismatch(subject, vector.digest, got, vector_details(vector))


def vector_details(vector: Vector) -> str:
    """Where the vector is and its inputs (published test data only)."""
    parts = [f"vector {vector.label}: {vector.where}"]
    if isinstance(vector, (CipherVector, AeadVector)):
        parts.append(f"key ({len(vector.key)} bytes) {hex_preview(vector.key)}")
        if vector.iv:
            parts.append(f"iv {hex_preview(vector.iv)}")
        data = vector.plaintext if vector.encrypt else vector.ciphertext
        parts.append(f"length {len(data)}")
    if isinstance(vector, AeadVector):
        parts.append(f"aad {hex_preview(vector.aad)}, tag length {len(vector.tag)}")
    if isinstance(vector, DigestVector):
        if vector.key is not None:
            parts.append(f"key ({len(vector.key)} bytes) {hex_preview(vector.key)}")
        parts.append(f"message length {len(vector.message)}")
    return "; ".join(parts)


# --- differential cases ---------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def case_and_expected(algorithm: str, index: int, seed: int) -> tuple[DifferentialCase, bytes]:
    """The case and OpenSSL's answer, shared by every driver of the algorithm."""
    spec = differential.SPECS[algorithm]
    case = differential.generate_case(spec, index, seed)
    return case, differential.expected_output(spec, case)


@pytest.fixture
def correctness_reference(target: CheckTarget, hwcrypto_run: HwcryptoRun) -> CheckTarget | None:
    """The generic driver of the target's algorithm (None when the kernel has none)."""
    return reference_driver(correctness_targets(hwcrypto_run), target.algorithm)


def test_differential(
    target: CheckTarget,
    case_index: int,
    hwcrypto_afalg: fixtures.AfAlg,
    hwcrypto_results: ResultsRecorder,
    correctness_seed: RunSeed,
    correctness_reference: CheckTarget | None,
    hwcrypto_run: HwcryptoRun,
    request: pytest.FixtureRequest,
) -> None:
    """The driver agrees with OpenSSL on a seeded random case, every way it is submitted.

    Agreeing with the generic driver follows: the generic driver's own tests hold it to the
    same OpenSSL bytes. So the generic driver is run only when this driver disagrees with
    OpenSSL, to say whether the kernel's generic code disagrees the same way (then the
    difference is in the definition, not in this driver) — and a broken generic driver
    fails its own tests instead of every driver compared with it.
    """
    case, expected = case_and_expected(target.algorithm, case_index, correctness_seed.value)
    if hwcrypto_run.options.target is not None:
        run_case_on_board(request.getfixturevalue("board_answers"), target, case, expected)
        return
    run = CaseRun(
        hwcrypto_afalg,
        target,
        case,
        expected,
        correctness_reference,
        f"{case.describe()}; {correctness_seed.rerun_hint()}",
    )
    with driver_trouble_fails(target, run.subject, hwcrypto_results, run.details):
        if target.kind == AlgType.SKCIPHER:
            run_skcipher_case(run)
        elif target.kind == AlgType.AEAD:
            run_aead_case(run)
        else:
            run_hash_case(run)


class CaseRun:
    """One differential case on one driver: its inputs, OpenSSL's answer, how to report."""

    def __init__(
        self,
        engine: fixtures.AfAlg,
        target: CheckTarget,
        case: DifferentialCase,
        expected: bytes,
        reference: CheckTarget | None,
        details: str,
    ) -> None:
        self.engine, self.target, self.case = engine, target, case
        self.expected, self.reference, self.details = expected, reference, details
        self.subject = f"{target.driver} fails {differential.case_id(target.algorithm, case.index)}"

    def check(self, what: str, want: bytes, got: bytes) -> None:
        """Fail naming the driver, the check and the first differing byte."""
        message = mismatch_message(f"{self.subject}: {what}", want, got)
        if message is not None:
            pytest.fail(f"{message}\n  {self.details}{self.second_opinion(got)}", pytrace=False)

    def second_opinion(self, got: bytes) -> str:
        """What the generic driver answers for the same one-shot request."""
        reference = self.reference
        if reference is None or reference.driver == self.target.driver:
            return ""
        try:
            generic = one_shot(self.engine, reference, self.case)
        except afalg.AfAlgError as error:
            return f"\n  generic driver {reference.driver} could not be asked: {error}"
        if generic == self.expected:
            verdict = "agrees with OpenSSL: this driver is wrong"
        elif generic == got:
            verdict = (
                "gives the same bytes as this driver: the kernel and OpenSSL "
                "disagree, not this driver and the generic code"
            )
        else:
            verdict = "disagrees with both OpenSSL and this driver"
        return f"\n  generic driver {reference.driver} {verdict}"


def run_skcipher_case(run: CaseRun) -> None:
    case, iv = run.case, run.case.iv or None
    # Output into a buffer misaligned like the input: an odd offset there gives the driver
    # a destination scatterlist that starts, and splits across pages, at odd offsets.
    into = f" into a buffer misaligned by {case.misalign}" if case.misalign else ""
    with run.engine.skcipher(run.target.driver, case.key) as session:
        got = session.encrypt(misaligned(case.data, case.misalign), iv, out_offset=case.misalign)
        run.check(f"encrypt{into} vs OpenSSL", run.expected, got)
        chunked = session.encrypt(case.data, iv, chunks=case.chunks[:-1])
        run.check(f"encrypt in chunks {_chunks(case)} vs OpenSSL", run.expected, chunked)
        back = session.decrypt(
            misaligned(run.expected, case.misalign),
            iv,
            chunks=case.chunks[:-1],
            out_offset=case.misalign,
        )
        run.check(f"decrypt(encrypt(x)){into} != x", case.data, back)
        first = differential.first_request_length(differential.SPECS[case.algorithm], case)
        if first:
            assert case.iv  # a mode that chains its IV has one
            two = session.encrypt_in_two_requests(case.data, case.iv, first)
            what = (
                f"encrypt as two requests ({first}+{len(case.data) - first} bytes, the "
                "second from the IV the driver returned after the first) vs OpenSSL"
            )
            run.check(what, run.expected, two)


def run_aead_case(run: CaseRun) -> None:
    case = run.case
    into = f" into a buffer misaligned by {case.misalign}" if case.misalign else ""
    with run.engine.aead(run.target.driver, case.key, case.authsize) as session:
        got = session.encrypt(case.data, case.iv, case.aad, out_offset=case.misalign)
        run.check(f"encrypt{into} vs OpenSSL", run.expected, got)
        back = session.decrypt(run.expected, case.iv, case.aad, out_offset=case.misalign)
        run.check(f"decrypt(encrypt(x)){into} != x", case.data, back)
        # A bit of the tag: bit numbers count from the end of ciphertext || tag.
        forged = differential.flip_bit(run.expected, case.seed % (8 * case.authsize))
        expect_rejection(
            session,
            forged,
            case.iv,
            case.aad,
            f"{run.subject}: accepted a tag with one bit flipped",
            run.details,
        )


def run_hash_case(run: CaseRun) -> None:
    case = run.case
    with run.engine.hash(run.target.driver, case.key_or_none) as session:
        got = session.digest(misaligned(case.data, case.misalign))
        run.check("digest vs OpenSSL", run.expected, got)
        incremental = session.digest(case.data, chunks=case.chunks[:-1])
        run.check(f"incremental digest (chunks {_chunks(case)}) vs one-shot", got, incremental)


def run_case_on_board(
    board: on_board.BoardAnswers, target: CheckTarget, case: DifferentialCase, expected: bytes
) -> None:
    """The one-shot submissions of the case, answered by the board's helper."""
    subject = f"{target.driver} fails {differential.case_id(target.algorithm, case.index)}"
    details = f"{case.describe()}; on the board: one-shot requests only"
    lines = on_board.case_requests(target, case, expected)
    if not lines:
        pytest.skip(f"{target.driver}: {on_board.NOT_ON_BOARD_AEAD}")
    got = board_answer(board, target, lines[0], subject)
    fail_on_mismatch(
        f"{subject}: {'digest' if len(lines) == 1 else 'encrypt'} vs OpenSSL",
        expected,
        got,
        details,
    )
    if len(lines) == 2:
        back = board_answer(board, target, lines[1], subject)
        fail_on_mismatch(f"{subject}: decrypt(encrypt(x)) != x", case.data, back, details)


def one_shot(engine: fixtures.AfAlg, target: CheckTarget, case: DifferentialCase) -> bytes:
    """The plain one-request output of a driver, for comparing drivers with each other."""
    if target.kind == AlgType.SKCIPHER:
        with engine.skcipher(target.driver, case.key) as session:
            return session.encrypt(case.data, case.iv or None)
    if target.kind == AlgType.AEAD:
        with engine.aead(target.driver, case.key, case.authsize) as session:
            return session.encrypt(case.data, case.iv, case.aad)
    with engine.hash(target.driver, case.key_or_none) as session:
        return session.digest(case.data)


def misaligned(data: bytes, offset: int) -> bytes:
    """`data` in a buffer that starts `offset` bytes past an allocation (0 = as allocated).

    A memoryview: the engine wraps whatever it gets in memoryview(), so the kernel copies
    from the misaligned address (its type hints say bytes, hence the cast).
    """
    buffer = bytearray(offset + len(data))
    buffer[offset:] = data
    return cast(bytes, memoryview(buffer)[offset:])


def _chunks(case: DifferentialCase) -> str:
    return "+".join(map(str, case.chunks)) or "none"


# --- turning outcomes into verdicts ---------------------------------------------------------


def fail_on_mismatch(subject: str, expected: bytes, got: bytes, details: str) -> None:
    message = mismatch_message(subject, expected, got)
    if message is not None:
        pytest.fail(f"{message}\n  {details}", pytrace=False)


def expect_rejection(
    session: afalg.AeadSession, sealed: bytes, iv: bytes, aad: bytes, subject: str, details: str
) -> None:
    """Decryption must fail with EBADMSG and hand out no plaintext."""
    try:
        plaintext = session.decrypt(sealed, iv, aad)
    except afalg.AuthenticationFailed:
        return
    pytest.fail(
        f"{subject} (returned {len(plaintext)} bytes of plaintext instead of EBADMSG)\n  {details}",
        pytrace=False,
    )


@contextmanager
def driver_trouble_fails(
    target: CheckTarget, subject: str, results: ResultsRecorder, details: str
) -> Iterator[None]:
    """Engine errors become a failure (or skip) that says what the driver did, no traceback."""
    try:
        yield
    except afalg.AfAlgMasked as error:
        results.add_finding(
            Finding(
                FindingKind.AFALG_MASKED, target.algorithm, str(error), {"driver": target.driver}
            )
        )
        pytest.skip(f"{target.driver}: {error}")
    except (afalg.AfAlgUnavailable, afalg.SelfTestFailed) as error:
        pytest.skip(f"{target.driver}: {error} (the inventory suite reports this)")
    except afalg.BadKeyLength as error:
        _fail(f"{subject}: rejects a valid {error.key_length}-byte key ({error})", details)
    except afalg.BadAuthSize as error:
        _fail(f"{subject}: rejects a valid tag length ({error})", details)
    except afalg.OperationTimeout as error:
        _fail(f"{subject}: hangs: no answer within {error.timeout:g} s ({error})", details)
    except afalg.AuthenticationFailed as error:
        _fail(f"{subject}: refuses its own authentic ciphertext ({error})", details)
    except afalg.DriverNotRegistered as error:
        _fail(f"{subject}: listed at collection but cannot be bound now ({error})", details)
    except afalg.AfAlgError as error:
        _fail(f"{subject}: {error}", details)


def _fail(message: str, details: str) -> None:
    pytest.fail(f"{message}\n  {details}", pytrace=False)
