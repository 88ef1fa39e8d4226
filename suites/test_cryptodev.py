# SPDX-License-Identifier: MIT
"""/dev/crypto suite: cryptodev-linux as its users get it, and every driver it can be steered to.

/dev/crypto (cryptodev-linux) is how OpenWrt, Turris OS and Armbian userspace and OpenSSL's
devcrypto engine reach kernel drivers, engines included, from containers too. It opens
sessions by algorithm *name*, so it gets the name's winner. Each check runs on *subjects*:
every algorithm cryptodev offers by name (what its users get), and every driver of the
skcipher algorithms with a choice (cbc-aes-aesni, virtio_crypto_aes_cbc, cbc(aes-generic),
...), reached by re-ranking it to win while its sessions are opened (kernel/cryptodev/pool).
Failures name the driver CIOCGSESSINFO reported for the session.

* test_known_answer, test_differential, test_random_sizes: the bytes equal pyca
  `cryptography`'s (OpenSSL): the correctness suite's published vectors (kernel/vectors)
  and seeded cases (kernel/differential, from aligned and misaligned buffers, decrypting
  back, a flipped AEAD tag refused), and random 16 B, 4 KiB and 64 KiB inputs;
* test_serving_driver: a by-name session is served by the /proc/crypto winner of the name
  (a verdict per algorithm, the driver as a JUnit property).

Throughput through /dev/crypto is the other half of the suite: test_cryptodev_throughput.py.
What cryptodev cannot express is skipped with the reason: lengths that are not whole
blocks (no XTS ciphertext stealing) and submitting one request in pieces.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar, Union, cast

import pytest

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.bytes_diff import hex_preview, mismatch_message
from pytest_hwcrypto.kernel import cryptodev, differential, vectors
from pytest_hwcrypto.kernel.cryptodev import Subject
from pytest_hwcrypto.kernel.differential import RunSeed
from pytest_hwcrypto.kernel.inventory import build_inventory, type_family
from pytest_hwcrypto.kernel.procfs import read_proc_crypto
from pytest_hwcrypto.kernel.vectors import AeadVector, CipherVector, DigestVector, Vector
from pytest_hwcrypto.measure.cryptodev_engine import reachable_by_cryptodev
from pytest_hwcrypto.measure.targets import discover_targets
from pytest_hwcrypto.model.results import Verdict
from pytest_hwcrypto.report.recorder import ResultsRecorder
from pytest_hwcrypto.run import HwcryptoRun, run_of
from pytest_hwcrypto.settings import Options
from pytest_hwcrypto.vocabulary import AlgType, Suite

pytestmark = pytest.mark.hwcrypto_cryptodev

RANDOM_SIZES = (16, 4096, 65536)
AnySession = Union[cryptodev.CipherSession, cryptodev.AeadSession, cryptodev.HashSession]
# Stands in for every subject when /dev/crypto is missing: one skip per test, with the reason.
NO_DEVICE = Subject("no-dev-crypto")
SUBJECTS_KEY = pytest.StashKey[list[Subject]]()
T = TypeVar("T")


# --- collection: the subjects -----------------------------------------------------------------


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    subjects = collect(metafunc.config)
    count = run_of(metafunc.config).options.fuzz_iterations
    if "known_answer" in metafunc.fixturenames:
        _parametrize(metafunc, "known_answer", subjects, _known_answers, lambda v: v.label)
    if "case_index" in metafunc.fixturenames:
        _parametrize(metafunc, "case_index", subjects, lambda s: range(count), "fuzz#{}".format)
    if "size" in metafunc.fixturenames:
        _parametrize(metafunc, "size", subjects, lambda s: RANDOM_SIZES, "{}B".format)
    if "by_name" in metafunc.fixturenames:
        by_name = [s for s in subjects if s.driver is None]
        metafunc.parametrize("by_name", by_name, ids=[s.id for s in by_name])


def _known_answers(subject: Subject) -> list[Vector]:
    return vectors.known_answers(subject.algorithm)


def _parametrize(
    metafunc: pytest.Metafunc,
    name: str,
    subjects: list[Subject],
    items_of: Callable[[Subject], Sequence[T]],
    label: Callable[[T], str],
) -> None:
    """(subject, item) for every item of every subject; one placeholder without a device."""
    if subjects == [NO_DEVICE]:
        metafunc.parametrize(("subject", name), [(NO_DEVICE, None)], ids=[NO_DEVICE.id])
        return
    pairs = [(subject, item) for subject in subjects for item in items_of(subject)]
    ids = [f"{subject.id}:{label(item)}" for subject, item in pairs]
    metafunc.parametrize(("subject", name), pairs, ids=ids)


def collect(config: pytest.Config) -> list[Subject]:
    """Every algorithm by name plus every skcipher driver with a choice; once per process."""
    if SUBJECTS_KEY not in config.stash:
        state = run_of(config)
        subjects: list[Subject] = []
        if Suite.CRYPTODEV in state.options.suite:
            if fixtures.cryptodev_unavailable_reason() is not None:
                subjects = [NO_DEVICE]
            else:
                inventory = fixtures.inventory(state)
                chooses = state.options.chooses
                per_driver = [
                    target
                    for target in discover_targets(inventory)
                    if target.kind == AlgType.SKCIPHER
                    and reachable_by_cryptodev(target)
                    and chooses(target.algorithm)
                ]
                names = {entry.name for entry in inventory if chooses(entry.name)}
                subjects = cryptodev.discover_subjects(names, differential.SPECS, per_driver)
        config.stash[SUBJECTS_KEY] = subjects
    return config.stash[SUBJECTS_KEY]


# --- fixtures -------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def cryptodev_seed(hwcrypto_run: HwcryptoRun, pytestconfig: pytest.Config) -> RunSeed:
    """The correctness suite's seed: --hwcrypto-seed, else shared by xdist workers."""
    if hwcrypto_run.seed is None:
        workerinput = getattr(pytestconfig, "workerinput", None)
        hwcrypto_run.seed = differential.run_seed(
            hwcrypto_run.options.seed, differential.shared_run_id(workerinput)
        )
    seed: RunSeed = hwcrypto_run.seed
    return seed


@pytest.fixture(scope="session")
def sessions(hwcrypto_cryptodev: fixtures.Cryptodev) -> Iterator[cryptodev.SessionPool]:
    """The sessions of the subject being checked (kernel/cryptodev/pool.py)."""
    pool = cryptodev.SessionPool(hwcrypto_cryptodev.by_name, hwcrypto_cryptodev.on_driver)
    yield pool
    pool.close()


def session_for(
    pool: cryptodev.SessionPool, subject: Subject, key: bytes, batch: list[bytes]
) -> AnySession:
    if subject is NO_DEVICE:
        pytest.skip(fixtures.cryptodev_unavailable_reason() or "no /dev/crypto at collection")
    try:
        return cast(AnySession, pool.get(subject, key, batch))
    except cryptodev.CryptodevError as error:
        pytest.fail(f"{subject.describe()}: {error}", pytrace=False)


@contextmanager
def refusals_fail(what: str, details: str) -> Iterator[None]:
    """A request the kernel refuses or never completes fails saying so, no traceback."""
    try:
        yield
    except cryptodev.CryptodevError as error:
        if error.authentication_failed:
            message = f"{what}: refuses its own authentic input ({error})"
            pytest.fail(f"{message}\n  {details}", pytrace=False)
        pytest.fail(f"{what}: {error}\n  {details}", pytrace=False)


def fail_on_mismatch(what: str, want: bytes, got: bytes, details: str) -> None:
    message = mismatch_message(what, want, got)
    if message is not None:
        pytest.fail(f"{message}\n  {details}", pytrace=False)


def whole_blocks(subject: Subject, length: int) -> None:
    alg = cryptodev.algorithm(subject.algorithm)
    if alg is not None and length % alg.block_size:
        pytest.skip(
            f"{length} bytes of {subject.algorithm}: cryptodev takes whole "
            f"{alg.block_size}-byte blocks only (no ciphertext stealing)"
        )


def expect_refusal(
    session: cryptodev.AeadSession, sealed: bytes, iv: bytes, aad: bytes, tag: int, what: str
) -> None:
    """Opening must fail as a bad tag (EBADMSG) and hand out no plaintext."""
    try:
        plaintext = session.decrypt(sealed, iv, aad, tag)
    except cryptodev.CryptodevError as error:
        if error.authentication_failed:
            return
        pytest.fail(f"{what}: refused, but not as a bad tag: {error}", pytrace=False)
    pytest.fail(f"{what}: accepted a forged tag ({len(plaintext)} bytes out)", pytrace=False)


# --- known answers --------------------------------------------------------------------------


def _vector_key(vector: Vector) -> bytes:
    return vector.key or b""


def test_known_answer(
    subject: Subject, known_answer: Vector, sessions: cryptodev.SessionPool
) -> None:
    """The session reproduces a published vector (by name, or on one driver)."""
    vector = known_answer
    batch = [_vector_key(v) for v in vectors.known_answers(subject.algorithm)]
    details = f"vector {vector.label}: {vector.where}; key {hex_preview(_vector_key(vector))}"
    if isinstance(vector, CipherVector):
        whole_blocks(subject, len(vector.plaintext))
    session = session_for(sessions, subject, _vector_key(vector), batch)
    what = f"{session.driver} ({subject.describe()}) fails {vector.label} ({vector.direction})"
    if isinstance(vector, AeadVector) and not vector.encrypt and not vector.authentic:
        assert isinstance(session, cryptodev.AeadSession)
        sealed = vector.ciphertext + vector.tag
        expect_refusal(session, sealed, vector.iv, vector.aad, len(vector.tag), what)
        return
    with refusals_fail(what, details):
        want, got = answer(session, vector)
    fail_on_mismatch(what, want, got, details)


def answer(session: AnySession, vector: Vector) -> tuple[bytes, bytes]:
    """(expected, what the session gave) for one vector in its direction."""
    if isinstance(vector, CipherVector):
        assert isinstance(session, cryptodev.CipherSession)
        iv = vector.iv or None
        if vector.encrypt:
            return vector.ciphertext, session.encrypt(vector.plaintext, iv)
        return vector.plaintext, session.decrypt(vector.ciphertext, iv)
    if isinstance(vector, AeadVector):
        assert isinstance(session, cryptodev.AeadSession)
        tag, sealed = len(vector.tag), vector.ciphertext + vector.tag
        if vector.encrypt:
            return sealed, session.encrypt(vector.plaintext, vector.iv, vector.aad, tag)
        return vector.plaintext, session.decrypt(sealed, vector.iv, vector.aad, tag)
    assert isinstance(vector, DigestVector) and isinstance(session, cryptodev.HashSession)
    return vector.digest, session.digest(vector.message)


# --- seeded differential cases --------------------------------------------------------------


def test_differential(
    subject: Subject,
    case_index: int,
    sessions: cryptodev.SessionPool,
    cryptodev_seed: RunSeed,
    hwcrypto_options: Options,
) -> None:
    """A seeded random case equals OpenSSL's answer, misaligned buffers included."""
    spec = differential.SPECS[subject.algorithm]
    seed = cryptodev_seed.value
    case = differential.generate_case(spec, case_index, seed)
    expected = differential.expected_output(spec, case)
    details = f"{case.describe()}; {cryptodev_seed.rerun_hint()}"
    count = hwcrypto_options.fuzz_iterations
    batch = [differential.generate_case(spec, i, seed).key for i in range(count)]
    if spec.kind == AlgType.SKCIPHER:
        whole_blocks(subject, len(case.data))
    session = session_for(sessions, subject, case.key, batch)
    what = f"{session.driver} ({subject.describe()}) fails {case.algorithm} fuzz #{case_index}"
    with refusals_fail(what, details):
        run_case(session, case, expected, what, details)


def run_case(
    session: AnySession,
    case: differential.DifferentialCase,
    expected: bytes,
    what: str,
    details: str,
) -> None:
    if isinstance(session, cryptodev.CipherSession):
        iv = case.iv or None
        got = session.encrypt(case.data, iv, misalign=case.misalign)
        fail_on_mismatch(f"{what}: encrypt vs OpenSSL", expected, got, details)
        back = session.decrypt(expected, iv, misalign=case.misalign)
        fail_on_mismatch(f"{what}: decrypt(encrypt(x)) != x", case.data, back, details)
    elif isinstance(session, cryptodev.AeadSession):
        got = session.encrypt(case.data, case.iv, case.aad, case.authsize)
        fail_on_mismatch(f"{what}: seal vs OpenSSL", expected, got, details)
        back = session.decrypt(expected, case.iv, case.aad, case.authsize)
        fail_on_mismatch(f"{what}: open(seal(x)) != x", case.data, back, details)
        forged = differential.flip_bit(expected, case.seed % (8 * case.authsize))
        expect_refusal(session, forged, case.iv, case.aad, case.authsize, f"{what}\n  {details}")
    else:
        got = session.digest(case.data, misalign=case.misalign)
        fail_on_mismatch(f"{what}: digest vs OpenSSL", expected, got, details)


# --- random sizes -----------------------------------------------------------------------------


def test_random_sizes(
    subject: Subject, size: int, sessions: cryptodev.SessionPool, cryptodev_seed: RunSeed
) -> None:
    """Random 16 B, 4 KiB and 64 KiB inputs equal OpenSSL's answer and come back."""
    spec = differential.SPECS.get(subject.algorithm)
    rng = random.Random(differential.seed_from_text(f"{cryptodev_seed.value}:{subject.id}"))
    assert spec is not None
    key = rng.randbytes(subject.key_bytes)
    session = session_for(sessions, subject, key, [key])
    data = rng.randbytes(size)
    iv = rng.randbytes(spec.iv_size)
    what = f"{session.driver} ({subject.describe()}) fails random {size} B"
    details = f"key {hex_preview(key)}, iv {hex_preview(iv)}; {cryptodev_seed.rerun_hint()}"
    with refusals_fail(what, details):
        if isinstance(session, cryptodev.CipherSession):
            want = differential.encrypt_reference(spec, key, iv, data)
            got = session.encrypt(data, iv or None)
            fail_on_mismatch(f"{what}: encrypt vs OpenSSL", want, got, details)
            back = session.decrypt(got, iv or None)
            fail_on_mismatch(f"{what}: decrypt", data, back, details)
        elif isinstance(session, cryptodev.AeadSession):
            want = differential.seal_reference(spec, key, iv, b"", data, 16)
            got = session.encrypt(data, iv)
            fail_on_mismatch(f"{what}: seal vs OpenSSL", want, got, details)
        else:
            want = differential.digest_reference(spec, key or None, data)
            fail_on_mismatch(f"{what}: digest vs OpenSSL", want, session.digest(data), details)


# --- who serves a by-name session -------------------------------------------------------------


def test_serving_driver(
    by_name: Subject,
    hwcrypto_cryptodev: fixtures.Cryptodev,
    hwcrypto_results: ResultsRecorder,
    record_testsuite_property: Callable[[str, object], None],
) -> None:
    """CIOCGSESSINFO names the /proc/crypto winner of the name: /dev/crypto gets the winner."""
    if by_name is NO_DEVICE:
        pytest.skip(fixtures.cryptodev_unavailable_reason() or "no /dev/crypto at collection")
    name = by_name.algorithm
    alg = cryptodev.algorithm(name)
    assert alg is not None
    key = bytes(by_name.key_bytes)
    with hwcrypto_cryptodev.steady():
        try:
            session = hwcrypto_cryptodev.by_name(name, key)
        except cryptodev.CryptodevError as error:
            pytest.fail(str(error), pytrace=False)
        with session:
            entries = build_inventory(read_proc_crypto(fixtures.PROC_CRYPTO))
    winners = [
        e.driver
        for e in entries
        if e.name == name and e.winner and type_family(e.type) == type_family(alg.kind)
    ]
    record_testsuite_property(f"hwcrypto.cryptodev.driver.{name}", session.driver)
    passed = session.driver in winners
    said = f"a /dev/crypto {name} session is served by {session.driver} (CIOCGSESSINFO)"
    verdict = Verdict(
        f"cryptodev-serves-winner {name}",
        passed,
        f"{said}, the /proc/crypto winner"
        if passed
        else f"{said}, but the /proc/crypto winner is {', '.join(winners) or 'nobody'}",
    )
    fixtures.record_and_judge(hwcrypto_results, verdict)
