# SPDX-License-Identifier: MIT
"""The crypto inventory: every /proc/crypto entry with its class and whether it wins.

The *winner* of an algorithm name is the implementation the kernel hands out when someone
asks for that name (dm-crypt, AF_ALG, OpenSSL's afalg engine). It is computed the way
crypto/api.c looks algorithms up:

* internal helpers (``internal : yes``, e.g. ``__xts-aes-aesni``) are never handed out by
  name;
* implementations not marked tested are skipped while a tested one exists: the kernel
  prints ``selftest : passed`` once the self-test succeeded (or tests are compiled out)
  and ``unknown`` while it is pending or after it failed. A broken driver with the highest
  priority (virtio-crypto-rsa on QEMU) therefore does not win; if no entry of a name is
  tested, the name has no winner (the kernel answers ELIBBAD);
* among the rest the highest ``priority`` wins. On a tie the kernel keeps the first one it
  meets in its algorithm list, which is newest-first, the same order /proc/crypto prints.
  So ties go to the entry listed first.

Lookups are per API, not per name alone: an skcipher user also accepts lskcipher entries, a
hash user accepts shash and ahash, and the legacy ``compression`` type is separate from
scomp/acomp. Winners are therefore chosen within each (name, type family), so ``lzo`` can
have one ``scomp`` and one ``compression`` winner.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Callable

from pytest_hwcrypto.kernel.classify import is_hardware
from pytest_hwcrypto.kernel.classify_evidence import ClassOverride, LiveFacts, classify_all
from pytest_hwcrypto.kernel.procfs import CryptoAlg
from pytest_hwcrypto.kernel.selftest_log import SelftestReport

# /proc/crypto "type" -> the API family that finds it (see the module docstring).
TYPE_FAMILIES = {
    "skcipher": "skcipher",
    "lskcipher": "skcipher",
    "ablkcipher": "skcipher",
    "blkcipher": "skcipher",
    "givcipher": "skcipher",
    "shash": "hash",
    "ahash": "hash",
    "digest": "hash",
    "scomp": "acomp",
    "acomp": "acomp",
}

# Types whose implementations are worth comparing with each other (speed, correctness).
COMPARABLE_TYPES = ("skcipher", "lskcipher", "aead", "ahash", "shash", "cipher", "akcipher")

_TABLE_COLUMNS = ("name", "driver", "module", "priority", "class", "winner", "selftest")
_EVIDENCE_COLUMN = "class evidence"

Classifier = Callable[[str, str], str]


def type_family(alg_type: str | None) -> str:
    """The lookup family of a /proc/crypto type (``lskcipher`` -> ``skcipher``)."""
    if alg_type is None:
        return ""
    return TYPE_FAMILIES.get(alg_type, alg_type)


@dataclass(frozen=True)
class InventoryEntry:
    """A /proc/crypto entry with its driver class, the evidence for it, and winner flag."""

    alg: CryptoAlg
    driver_class: str
    winner: bool
    # One line saying what decided the class ("name table: ...", "sysfs: ...", "unknown: ...").
    class_evidence: str = ""
    # The kernel log's "alg: self-tests for ALG using DRIVER failed (rc=N)" for this driver,
    # where /proc/crypto has not seen it pass (it says "unknown" after a failure).
    selftest_failure: SelftestReport | None = None

    @property
    def name(self) -> str:
        return self.alg.name

    @property
    def driver(self) -> str:
        return self.alg.driver

    @property
    def module(self) -> str | None:
        return self.alg.module

    @property
    def priority(self) -> int | None:
        return self.alg.priority

    @property
    def type(self) -> str | None:
        return self.alg.type

    @property
    def selftest(self) -> str | None:
        """/proc/crypto's word, or ``failed`` where it says ``unknown`` and the log has the
        failure."""
        if self.selftest_failure is not None and not self.alg.passed_selftest:
            return "failed"
        return self.alg.selftest

    @property
    def refcnt(self) -> int | None:
        return self.alg.refcnt

    @property
    def internal(self) -> bool | None:
        return self.alg.internal

    @property
    def is_hardware(self) -> bool:
        return is_hardware(self.driver_class)

    def to_json(self) -> dict[str, object]:
        """The results-JSON inventory item (docs/architecture.md) plus refcnt and internal."""
        return {
            "name": self.name,
            "driver": self.driver,
            "module": self.module,
            "priority": self.priority,
            "type": self.type,
            "class": self.driver_class,
            "class_evidence": self.class_evidence,
            "selftest": self.selftest,
            **(
                {"selftest_log": self.selftest_failure.line}
                if self.selftest == "failed" and self.selftest_failure
                else {}
            ),
            "winner": self.winner,
            "refcnt": self.refcnt,
            "internal": self.internal,
        }


def build_inventory(
    algs: Iterable[CryptoAlg],
    classify: Classifier | None = None,
    *,
    overrides: Sequence[ClassOverride] = (),
    live: LiveFacts | None = None,
    selftest_failures: Mapping[str, SelftestReport] | None = None,
) -> list[InventoryEntry]:
    """Classify every entry and mark the winners, keeping the /proc/crypto order.

    By default the class comes from evidence (``classify_evidence.classify_all``): the board
    profile's ``[[classify]]`` entries (``overrides``), what the live kernel says (``live``,
    from ``evidence.gather_live_facts``), the name table, the capture, templates. A
    ``classify`` function replaces all of that (its evidence reads ``classifier: NAME``).
    ``selftest_failures`` (kernel/selftest_log.failures of the kernel log) turn a driver's
    ``unknown`` self-test into ``failed``.
    """
    failed = selftest_failures or {}
    listed = list(algs)
    winners = _winner_positions(listed)
    if classify is not None:
        label = f"classifier: {getattr(classify, '__name__', 'custom')}"
        decided = [(classify(alg.driver, alg.module or ""), label) for alg in listed]
    else:
        decided = [
            (found.driver_class, found.evidence) for found in classify_all(listed, overrides, live)
        ]
    return [
        InventoryEntry(
            alg=alg,
            driver_class=driver_class,
            winner=position in winners,
            class_evidence=evidence,
            selftest_failure=failed.get(alg.driver),
        )
        for position, (alg, (driver_class, evidence)) in enumerate(zip(listed, decided))
    ]


def can_win(alg: CryptoAlg) -> bool:
    """Whether the kernel would hand this entry out for its name (see module docstring)."""
    tested = alg.selftest is None or alg.passed_selftest
    # A record from an excerpt without its name line cannot be asked for by name.
    # A record cut short may have lost the selftest/internal lines that decide.
    return bool(alg.name) and alg.complete and not alg.is_internal and tested


def _winner_positions(algs: Sequence[CryptoAlg]) -> set[int]:
    best: dict[tuple[str, str], int] = {}
    for position, alg in enumerate(algs):
        if not can_win(alg):
            continue
        group = (alg.name, type_family(alg.type))
        current = best.get(group)
        # Strictly greater: on a tie the earlier-listed (newer) entry stays, as in the kernel.
        if current is None or _rank(alg) > _rank(algs[current]):
            best[group] = position
    return set(best.values())


def _rank(alg: CryptoAlg) -> float:
    return float("-inf") if alg.priority is None else float(alg.priority)


def drivers_of(entries: Iterable[InventoryEntry], name: str) -> list[InventoryEntry]:
    """All entries registered for ``name``: winner(s) first, then by priority, highest first."""
    matching = [entry for entry in entries if entry.name == name]
    return sorted(matching, key=lambda entry: (not entry.winner, -_rank(entry.alg)))


def flagged_winner_entry(
    entries: Iterable[InventoryEntry], name: str, family: str | None = None
) -> InventoryEntry | None:
    """The winning entry for ``name`` (optionally of one type family), or None."""
    for entry in entries:
        if entry.name != name or not entry.winner:
            continue
        if family is None or type_family(entry.type) == family:
            return entry
    return None


def algorithms_with_multiple_drivers(
    entries: Iterable[InventoryEntry], types: Sequence[str] = COMPARABLE_TYPES
) -> list[str]:
    """Names with more than one distinct non-internal driver of the given types.

    These are the algorithms where the kernel had a choice, so where "is the winner the
    right one" can be asked. Names come in order of first appearance.
    """
    drivers_by_name: dict[str, set[str]] = {}
    for entry in entries:
        if entry.type in types and not entry.alg.is_internal:
            drivers_by_name.setdefault(entry.name, set()).add(entry.driver)
    return [name for name, drivers in drivers_by_name.items() if len(drivers) > 1]


def find_driver(entries: Iterable[InventoryEntry], driver: str) -> InventoryEntry | None:
    """The first entry whose driver name is ``driver`` (exact), or None."""
    for entry in entries:
        if entry.driver == driver:
            return entry
    return None


def format_inventory_table(entries: Iterable[InventoryEntry], evidence: bool = False) -> str:
    """An aligned text table: name, driver, module, priority, class, winner (*), selftest
    (and the class evidence when asked)."""
    header = list(_TABLE_COLUMNS) + ([_EVIDENCE_COLUMN] if evidence else [])
    rows = [header] + [
        _table_row(entry) + ([entry.class_evidence] if evidence else []) for entry in entries
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows
    ]
    return "\n".join(lines)


def _table_row(entry: InventoryEntry) -> list[str]:
    return [
        entry.name,
        entry.driver,
        entry.module or "-",
        "-" if entry.priority is None else str(entry.priority),
        entry.driver_class,
        "*" if entry.winner else "",
        entry.selftest or "-",
    ]
