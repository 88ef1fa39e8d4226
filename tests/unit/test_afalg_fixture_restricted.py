# SPDX-License-Identifier: MIT
"""fixtures.AfAlg on a kernel that refuses driver names (Linux 7.3, af_alg_restrict = 1):
the driver is made the winner of its name and the name is bound; the session must be on
that driver, else the refusal stands. The kernel is faked: only the decision is tested
here (the board test runs it on 7.3)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from pytest_hwcrypto import fixtures
from pytest_hwcrypto.kernel import afalg


@dataclass
class FakeSession:
    driver: str | None
    closed: bool = False

    def close(self) -> None:
        self.closed = True


class FakeReranker:
    def __init__(self) -> None:
        self.preferred: list[str] = []
        self.winner = "cbc-aes-aesni"

    @contextlib.contextmanager
    def prefer(self, driver: str) -> Iterator[None]:
        self.preferred.append(driver)
        before, self.winner = self.winner, driver
        try:
            yield
        finally:
            self.winner = before


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> tuple[fixtures.AfAlg, FakeReranker]:
    reranker = FakeReranker()
    monkeypatch.setattr(fixtures, "_algorithm_of", lambda driver: "cbc(aes)")
    monkeypatch.setattr(fixtures, "reranking_lock", contextlib.nullcontext)
    made = fixtures.AfAlg(5.0)
    monkeypatch.setattr(made, "_reranker_or_none", lambda: reranker)
    return made, reranker


def refusing_driver_names(reranker: FakeReranker, honest: bool = True):  # type: ignore[no-untyped-def]
    def opener(name: str) -> FakeSession:
        if name != "cbc(aes)":
            raise afalg.AfAlgRestricted(f"refuses {name}", alg=name)
        return FakeSession(reranker.winner if honest else "cbc-aes-aesni")

    return opener


def test_a_refused_driver_is_reached_as_the_winner_of_its_name(
    engine: tuple[fixtures.AfAlg, FakeReranker],
) -> None:
    made, reranker = engine
    session = made._reached("cbc-aes-lib", refusing_driver_names(reranker))
    assert session.driver == "cbc-aes-lib"
    assert reranker.preferred == ["cbc-aes-lib"]
    assert reranker.winner == "cbc-aes-aesni"  # put back


def test_a_name_served_by_another_driver_keeps_the_refusal(
    engine: tuple[fixtures.AfAlg, FakeReranker],
) -> None:
    made, reranker = engine
    with pytest.raises(afalg.AfAlgRestricted, match="refuses cbc-aes-lib"):
        made._reached("cbc-aes-lib", refusing_driver_names(reranker, honest=False))


def test_without_re_ranking_the_refusal_stands(monkeypatch: pytest.MonkeyPatch) -> None:
    made = fixtures.AfAlg(5.0)  # no run: no re-ranking
    with pytest.raises(afalg.AfAlgRestricted):
        made._reached("cbc-aes-lib", refusing_driver_names(FakeReranker()))
