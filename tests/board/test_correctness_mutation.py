# SPDX-License-Identifier: MIT
"""Mutation test of the correctness suite: a driver that flips one output bit must be caught.

The suite runs in a pytester subprocess with a small plugin that wraps the AF_ALG engine so
that every output of one *victim* driver comes back with one bit inverted. The suite must
fail, every failure must name the victim, and no other driver may fail.

Two ways to get an engine:
* on a board (AF_ALG present) the real engine is wrapped, so real kernel drivers answer
  and only the victim's bytes are damaged after the fact;
* elsewhere (this host has no AF_ALG) a fake engine answers with pyca/OpenSSL against a
  recorded UML /proc/crypto, so the mutation test needs no kernel.

This module doubles as that plugin: the subprocess imports it and calls `install()`.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

from pytest_hwcrypto.kernel import afalg, differential
from pytest_hwcrypto.kernel import check_targets as ct
from pytest_hwcrypto.vocabulary import AlgType

pytest_plugins = ["pytester"]

VICTIM = "cbc(aes-generic)"
UML_CAPTURE = (
    Path(__file__).resolve().parent.parent / "data" / "proc_crypto" / "uml-6.1.176-templates.txt"
)
VICTIM_ENV = "HWCRYPTO_MUTATION_VICTIM"
FAKE_ENV = "HWCRYPTO_MUTATION_FAKE_PROC_CRYPTO"


# --- the plugin side (runs inside the pytester subprocess) ----------------------------------


def flip(data: bytes) -> bytes:
    """One bit of the output inverted (empty output has no bit to flip)."""
    return differential.flip_bit(data, 0)


class Flipping:
    """Wraps a session: the victim's encrypt/decrypt/digest outputs get one bit flipped."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    def __enter__(self) -> Flipping:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._session.close()

    def encrypt(self, *args: Any, **kwargs: Any) -> bytes:
        return flip(self._session.encrypt(*args, **kwargs))

    def decrypt(self, *args: Any, **kwargs: Any) -> bytes:
        return flip(self._session.decrypt(*args, **kwargs))

    def digest(self, *args: Any, **kwargs: Any) -> bytes:
        return flip(self._session.digest(*args, **kwargs))


class FakeSession:
    """What the engine's sessions offer, computed by OpenSSL; `alg` is a driver string."""

    def __init__(self, alg: str, key: bytes | None, algorithm: str, authsize: int = 0) -> None:
        self.alg = self.driver = alg
        self.key = key or b""
        self.spec = differential.SPECS[algorithm]
        self.authsize = authsize

    def __enter__(self) -> FakeSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Nothing to release."""

    def _cipher(self, iv: bytes | None) -> Any:
        return differential.CIPHERS[self.spec.name](self.key, iv or b"")

    def encrypt(
        self,
        data: bytes,
        iv: bytes | None = None,
        aad: bytes = b"",
        *,
        chunks: Sequence[int] | None = None,
        out_offset: int = 0,  # where the kernel writes; the bytes are the same
    ) -> bytes:
        if self.spec.kind == AlgType.AEAD:
            return differential.seal_reference(
                self.spec, self.key, iv or b"", aad, bytes(data), self.authsize
            )
        encryptor = self._cipher(iv).encryptor()
        return bytes(encryptor.update(bytes(data)) + encryptor.finalize())

    def decrypt(
        self,
        data: bytes,
        iv: bytes | None = None,
        aad: bytes = b"",
        *,
        chunks: Sequence[int] | None = None,
        out_offset: int = 0,  # where the kernel writes; the bytes are the same
    ) -> bytes:
        if self.spec.kind == AlgType.AEAD:
            return self._open_sealed(bytes(data), iv or b"", aad)
        decryptor = self._cipher(iv).decryptor()
        return bytes(decryptor.update(bytes(data)) + decryptor.finalize())

    def encrypt_in_two_requests(self, data: bytes, iv: bytes, first: int) -> bytes:
        """OpenSSL chains the IV across the two requests as a correct driver does."""
        return self.encrypt(data, iv)

    def _open_sealed(self, sealed: bytes, iv: bytes, aad: bytes) -> bytes:
        body, tag = sealed[: len(sealed) - self.authsize], sealed[len(sealed) - self.authsize :]
        if self.spec.name == "gcm(aes)":
            # GCM's payload is CTR from counter 2; the tag is then checked by resealing.
            decryptor = Cipher(algorithms.AES(self.key), modes.CTR(iv + b"\0\0\0\2")).decryptor()
            plaintext = decryptor.update(body) + decryptor.finalize()
            if AESGCM(self.key).encrypt(iv, plaintext, aad)[len(body) :][: self.authsize] == tag:
                return plaintext
        else:
            try:
                return ChaCha20Poly1305(self.key).decrypt(iv, sealed, aad)
            except InvalidTag:
                pass
        raise afalg.AuthenticationFailed(f"{self.alg}: EBADMSG", alg=self.alg)

    def digest(self, data: bytes, *, chunks: Sequence[int] | None = None) -> bytes:
        return differential.digest_reference(self.spec, self.key or None, bytes(data))


class FakeEngine:
    """open_skcipher/open_aead/open_hash for drivers named in a recorded /proc/crypto."""

    def __init__(self, proc_crypto: Path) -> None:
        from pytest_hwcrypto.kernel.inventory import build_inventory
        from pytest_hwcrypto.kernel.procfs import read_proc_crypto

        registered = ct.registered_from(build_inventory(read_proc_crypto(proc_crypto)))
        self.algorithm_of = {r.driver: r.name for r in registered if r.name in differential.SPECS}
        self.algorithm_of.update({name: name for name in differential.SPECS})
        self.algorithm_of.update(
            dict((driver, alg) for alg, driver in ct.pinned_bindings(registered))
        )

    def session(self, alg: str, key: bytes | None, authsize: int = 0) -> FakeSession:
        if alg not in self.algorithm_of:
            raise afalg.DriverNotRegistered(f"driver {alg} is not registered", alg=alg)
        return FakeSession(alg, key, self.algorithm_of[alg], authsize)


def install(victim: str, fake_proc_crypto: str | None) -> None:
    """Patch the engine module: a fake engine if asked, then the victim's bit flips."""
    if fake_proc_crypto:
        from pytest_hwcrypto import fixtures

        engine = FakeEngine(Path(fake_proc_crypto))
        fixtures.PROC_CRYPTO = Path(fake_proc_crypto)
        fakes: dict[str, Any] = {
            "afalg_available": lambda alg_type, **_: (True, "fake engine"),
            "open_skcipher": lambda alg, key, **_: engine.session(alg, key),
            "open_aead": lambda alg, key, *, authsize, **_: engine.session(alg, key, authsize),
            "open_hash": lambda alg, key=None, **_: engine.session(alg, key),
        }
        for name, fake in fakes.items():
            setattr(afalg, name, fake)
    for name in ("open_skcipher", "open_aead", "open_hash"):
        setattr(afalg, name, _flipping(getattr(afalg, name), victim))


def _flipping(opener: Any, victim: str) -> Any:
    def open_session(alg: str, *args: Any, **kwargs: Any) -> Any:
        session = opener(alg, *args, **kwargs)
        return Flipping(session) if alg == victim else session

    return open_session


PLUGIN = f"""
import os
from test_correctness_mutation import install

def pytest_configure(config):
    install(os.environ["{VICTIM_ENV}"], os.environ.get("{FAKE_ENV}"))
"""


# --- the test side --------------------------------------------------------------------------


def afalg_here() -> bool:
    return afalg.afalg_available(afalg.SKCIPHER)[0]


def failures(junit: Path) -> dict[str, str]:
    """Failed test id -> failure message, from the inner run's JUnit XML."""
    found = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        failure = case.find("failure")
        if failure is not None:
            test_id = re.sub(r"^test_\w+\[|\]$", "", case.get("name", ""))
            # The element's text is the whole message (the attribute is abbreviated).
            found[test_id] = (failure.text or failure.get("message") or "").strip()
    return found


def run_suite_with_victim(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, fake: bool, *extra: str
) -> tuple[pytest.RunResult, dict[str, str]]:
    pytester.makepyfile(flipper=PLUGIN)
    monkeypatch.setenv(
        "PYTHONPATH",
        os.pathsep.join(
            [
                str(Path(__file__).resolve().parent),
                str(pytester.path),
                os.environ.get("PYTHONPATH", ""),
            ]
        ),
    )
    monkeypatch.setenv(VICTIM_ENV, VICTIM)
    if fake:
        monkeypatch.setenv(FAKE_ENV, str(UML_CAPTURE))
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess(
        "-p",
        "flipper",
        "--hwcrypto",
        "--hwcrypto-suite=correctness",
        "-k",
        "cbc",
        "--hwcrypto-fuzz-iterations=4",
        "--hwcrypto-seed=1",
        f"--junitxml={junit}",
        "-p",
        "no:cacheprovider",
        *extra,
    )
    return result, failures(junit)


def assert_only_the_victim_fails(result: pytest.RunResult, failed: dict[str, str]) -> None:
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-3000:]
    victim_tests = [test_id for test_id in failed if f":{VICTIM}:" in test_id]
    others = sorted(set(failed) - set(victim_tests))
    assert not others, f"drivers other than {VICTIM} failed: {others}"
    # Every published CBC vector of the victim is wrong, in both directions.
    assert sum(":CBC" in test_id for test_id in victim_tests) >= 50
    assert any(":fuzz#" in test_id for test_id in victim_tests)
    for test_id, message in failed.items():
        assert message.startswith(f"{VICTIM} fails"), (test_id, message)
        assert "first difference at byte" in message or "wrong output" in message, message


def test_a_driver_flipping_one_bit_fails_the_suite_by_name_fake_engine(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No kernel needed: OpenSSL plays every driver of the recorded UML /proc/crypto."""
    result, failed = run_suite_with_victim(pytester, monkeypatch, fake=True)
    assert_only_the_victim_fails(result, failed)
    passed = result.parseoutcomes().get("passed", 0)
    assert passed >= 60, "cbc(aes-fixed-time) and the length-0 cases of the victim pass"
    some = next(message for test_id, message in failed.items() if "CBCVarKey128" in test_id)
    assert "key (16 bytes)" in some and "expected [" in some


def test_a_driver_flipping_one_bit_fails_the_suite_by_name_real_kernel(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, board_kind: str
) -> None:
    """On a board: real drivers answer, the victim's answers are damaged after the fact."""
    if not afalg_here():
        pytest.skip("needs AF_ALG: run inside a virtual board (pytest --hwcrypto-vm=uml)")
    result, failed = run_suite_with_victim(pytester, monkeypatch, fake=False)
    assert_only_the_victim_fails(result, failed)
    fuzz = [message for test_id, message in failed.items() if ":fuzz#" in test_id]
    assert all("run seed 1)" in message for message in fuzz)
