# SPDX-License-Identifier: MIT
"""inventory: classes and winners on real captures, the JSON item, the helpers, the table."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.kernel.classify import DRIVER_CLASSES, classify_driver
from pytest_hwcrypto.kernel.inventory import (
    InventoryEntry,
    algorithms_with_multiple_drivers,
    build_inventory,
    can_win,
    drivers_of,
    find_driver,
    flagged_winner_entry,
    format_inventory_table,
    type_family,
)
from pytest_hwcrypto.kernel.procfs import parse_proc_crypto, read_proc_crypto
from pytest_hwcrypto.vocabulary import DriverClass

CAPTURES = Path(__file__).resolve().parent.parent / "data" / "proc_crypto"
CAPTURE_FILES = sorted(CAPTURES.glob("*.txt"))
UML = CAPTURES / "uml-6.1.176.txt"
UML_TEMPLATES = CAPTURES / "uml-6.1.176-templates.txt"
HOST = CAPTURES / "host-6.18.44-fc-v782.txt"
EVIDENCE_KINDS = {
    "profile",
    "crypto_user",
    "sysfs",
    "device tree",
    "name table",
    "capture",
    "template",
    "unknown",
}


def inventory(path: Path) -> list[InventoryEntry]:
    return build_inventory(read_proc_crypto(path))


def winner_driver(entries: list[InventoryEntry], name: str) -> str:
    entry = flagged_winner_entry(entries, name)
    assert entry is not None, f"{name} has no winner"
    return entry.driver


# --- every capture ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", CAPTURE_FILES, ids=lambda path: path.name)
def test_one_winner_per_name_and_type_family(path: Path) -> None:
    entries = inventory(path)
    groups: dict[tuple[str, str], list[InventoryEntry]] = {}
    for entry in entries:
        groups.setdefault((entry.name, type_family(entry.type)), []).append(entry)
    for group, members in groups.items():
        winners = [entry for entry in members if entry.winner]
        eligible = [entry for entry in members if can_win(entry.alg)]
        assert len(winners) == (1 if eligible else 0), group
        if winners:
            top = max(entry.priority or 0 for entry in eligible)
            assert winners[0].priority == top, group


@pytest.mark.parametrize("path", CAPTURE_FILES, ids=lambda path: path.name)
def test_every_entry_has_a_class_and_json_item(path: Path) -> None:
    algs = read_proc_crypto(path)
    entries = build_inventory(algs)
    assert [entry.alg for entry in entries] == algs
    for entry in entries:
        assert entry.driver_class in DRIVER_CLASSES
        assert entry.class_evidence.split(":", 1)[0] in EVIDENCE_KINDS, entry.class_evidence
        if entry.class_evidence.startswith("name table:"):
            assert entry.driver_class == classify_driver(entry.driver, entry.module or "")
        item = entry.to_json()
        assert list(item) == [
            "name",
            "driver",
            "module",
            "priority",
            "type",
            "class",
            "class_evidence",
            "selftest",
            "winner",
            "refcnt",
            "internal",
        ]
        assert (item["name"], item["driver"], item["class"]) == (
            entry.name,
            entry.driver,
            entry.driver_class,
        )


# --- concrete winners ---------------------------------------------------------------------------


def test_uml_aes_and_xts_aes_winners_without_aes_ti() -> None:
    entries = inventory(UML)
    assert winner_driver(entries, "aes") == "aes-generic"
    assert winner_driver(entries, "xts(aes)") == "xts(ecb(aes-generic))"
    aes = find_driver(entries, "aes-generic")
    assert aes is not None and aes.driver_class == DriverClass.GENERIC and aes.winner


def test_uml_with_aes_ti_fixed_time_wins_by_priority_101() -> None:
    entries = inventory(UML_TEMPLATES)
    assert [(e.driver, e.priority, e.winner) for e in drivers_of(entries, "aes")] == [
        ("aes-fixed-time", 101, True),
        ("aes-generic", 100, False),
    ]
    assert [(e.driver, e.priority, e.winner) for e in drivers_of(entries, "xts(aes)")] == [
        ("xts(ecb(aes-fixed-time))", 101, True),
        ("xts(ecb(aes-generic))", 100, False),
    ]


def test_uml_cryptd_wrapper_wins_cbc_aes() -> None:
    # cryptd adds 50 to the priority of what it wraps: 150 beats aes-fixed-time's 101.
    entries = inventory(UML_TEMPLATES)
    assert [(e.driver, e.priority) for e in drivers_of(entries, "cbc(aes)")] == [
        ("cryptd(cbc(aes-generic))", 150),
        ("cbc(aes-fixed-time)", 101),
        ("cbc(aes-generic)", 100),
    ]


def test_uml_stdrng_winner_is_the_highest_drbg() -> None:
    entries = inventory(UML_TEMPLATES)
    assert winner_driver(entries, "stdrng") == "drbg_nopr_hmac_sha512"
    assert len(drivers_of(entries, "stdrng")) == 8


def test_same_name_different_type_families_each_have_a_winner() -> None:
    entries = inventory(UML)
    lzo = drivers_of(entries, "lzo")
    assert [(e.driver, e.winner) for e in lzo] == [("lzo-scomp", True), ("lzo-generic", True)]
    found = flagged_winner_entry(entries, "lzo", family="compression")
    assert found is not None and found.driver == "lzo-generic"


def test_host_lskcipher_and_fixed_time_winners() -> None:
    entries = inventory(HOST)
    assert winner_driver(entries, "aes") == "aes-fixed-time"
    assert winner_driver(entries, "cbc(aes)") == "cbc(ecb(aes-fixed-time))"
    sha256 = flagged_winner_entry(entries, "sha256")
    assert sha256 is not None and sha256.driver == "sha256-lib" and sha256.priority == 300


def test_algorithms_with_multiple_drivers_on_captures() -> None:
    assert algorithms_with_multiple_drivers(inventory(UML)) == []
    assert algorithms_with_multiple_drivers(inventory(UML_TEMPLATES)) == [
        "cbc(aes)",
        "xts(aes)",
        "ecb(aes)",
        "aes",
    ]
    # stdrng has eight drivers, but rng is not a comparable type unless asked for.
    assert algorithms_with_multiple_drivers(inventory(UML_TEMPLATES), types=("rng",)) == ["stdrng"]
    assert algorithms_with_multiple_drivers(inventory(HOST)) == ["aes"]


# --- hand-made rules -------------------------------------------------------------------------


def block(
    name: str,
    driver: str,
    priority: int,
    *,
    module: str = "kernel",
    internal: str = "no",
    selftest: str = "passed",
    alg_type: str = "skcipher",
) -> str:
    return (
        f"name         : {name}\ndriver       : {driver}\nmodule       : {module}\n"
        f"priority     : {priority}\nrefcnt       : 1\nselftest     : {selftest}\n"
        f"internal     : {internal}\ntype         : {alg_type}\n\n"
    )


def entries_of(*blocks: str) -> list[InventoryEntry]:
    return build_inventory(parse_proc_crypto("".join(blocks)))


AESNI = (
    block("__xts(aes)", "__xts-aes-aesni", 401, module="aesni_intel", internal="yes")
    + block("xts(aes)", "xts-aes-aesni", 401, module="aesni_intel")
    + block("xts(aes)", "xts(ecb(aes-generic))", 100, module="xts")
)


def test_internal_helper_never_wins() -> None:
    entries = entries_of(
        block("xts(aes)", "__xts-aes-aesni", 999, module="aesni_intel", internal="yes"),
        block("xts(aes)", "xts(ecb(aes-generic))", 100, module="xts"),
    )
    assert [(e.driver, e.winner) for e in entries] == [
        ("__xts-aes-aesni", False),
        ("xts(ecb(aes-generic))", True),
    ]


def test_priority_decides_and_the_class_follows_the_driver() -> None:
    entries = entries_of(AESNI)
    xts = drivers_of(entries, "xts(aes)")
    assert [(e.driver, e.driver_class, e.winner) for e in xts] == [
        ("xts-aes-aesni", "cpu-accel", True),
        ("xts(ecb(aes-generic))", "generic", False),
    ]
    helper = find_driver(entries, "__xts-aes-aesni")
    # Alone under its name, but internal: never handed out by name, so no winner there.
    assert helper is not None and not helper.winner and helper.is_hardware
    assert flagged_winner_entry(entries, "__xts(aes)") is None


def test_tie_goes_to_the_entry_listed_first() -> None:
    # /proc/crypto lists newest first and the kernel keeps the first of equal priority.
    entries = entries_of(block("aes", "aes-b", 100), block("aes", "aes-a", 100))
    assert winner_driver(entries, "aes") == "aes-b"


def test_untested_or_failed_driver_does_not_win() -> None:
    # virtio-crypto-rsa fails its self-test on QEMU: /proc/crypto shows "unknown" and the
    # kernel hands out rsa-generic although virtio has the higher priority.
    entries = entries_of(
        block(
            "rsa",
            "virtio-crypto-rsa",
            150,
            module="virtio_crypto",
            selftest="unknown",
            alg_type="akcipher",
        ),
        block("rsa", "rsa-generic", 100, alg_type="akcipher"),
    )
    assert winner_driver(entries, "rsa") == "rsa-generic"
    assert drivers_of(entries, "rsa")[1].driver_class == "offload"


def test_name_without_any_tested_driver_has_no_winner() -> None:
    entries = entries_of(block("rsa", "virtio-crypto-rsa", 150, selftest="unknown"))
    assert flagged_winner_entry(entries, "rsa") is None
    assert not entries[0].winner


def test_exact_duplicates_keep_one_winner() -> None:
    twice = block("cbc(aes)", "cbc-aes-caam", 3000, module="caam_jr")
    entries = entries_of(twice, twice)
    assert [entry.winner for entry in entries] == [True, False]
    assert entries[0].to_json() == {**entries[1].to_json(), "winner": True}


def test_skcipher_and_lskcipher_compete_hash_types_compete() -> None:
    entries = entries_of(
        block("cbc(aes)", "cbc(ecb(aes-fixed-time))", 101, alg_type="lskcipher"),
        block("cbc(aes)", "cbc-aes-aesni", 400, module="aesni_intel"),
        block("sha256", "sha256-generic", 100, alg_type="shash"),
        block("sha256", "sha256-caam", 300, module="caam_jr", alg_type="ahash"),
    )
    assert winner_driver(entries, "cbc(aes)") == "cbc-aes-aesni"
    assert winner_driver(entries, "sha256") == "sha256-caam"
    assert type_family("lskcipher") == type_family("skcipher") == "skcipher"
    assert type_family(None) == "" and type_family("aead") == "aead"


def test_missing_priority_ranks_lowest() -> None:
    text = "name : aes\ndriver : aes-odd\ntype : cipher\n\n" + block(
        "aes", "aes-generic", 0, alg_type="cipher"
    )
    entries = build_inventory(parse_proc_crypto(text))
    assert winner_driver(entries, "aes") == "aes-generic"
    assert entries[0].to_json()["priority"] is None


def test_to_json_values() -> None:
    entry = entries_of(AESNI)[0]
    assert entry.to_json() == {
        "name": "__xts(aes)",
        "driver": "__xts-aes-aesni",
        "module": "aesni_intel",
        "priority": 401,
        "type": "skcipher",
        "class": "cpu-accel",
        "class_evidence": "name table: module aesni_intel "
        "(x86 AES-NI / VAES (aesni_intel; __*-aesni are its internal helpers))",
        "selftest": "passed",
        "winner": False,
        "refcnt": 1,
        "internal": True,
    }


def test_custom_classifier_is_used() -> None:
    def always_x(driver: str, module: str) -> str:
        return "x"

    entries = build_inventory(parse_proc_crypto(AESNI), classify=always_x)
    assert {entry.driver_class for entry in entries} == {"x"}
    assert {entry.class_evidence for entry in entries} == {"classifier: always_x"}


def test_find_driver_and_drivers_of_when_absent() -> None:
    entries = entries_of(AESNI)
    assert find_driver(entries, "xts-aes-ce") is None
    assert drivers_of(entries, "cbc(aes)") == []
    assert flagged_winner_entry(entries, "cbc(aes)") is None


def test_algorithms_with_multiple_drivers_ignores_internal_and_duplicates() -> None:
    twice = block("cbc(aes)", "cbc-aes-caam", 3000, module="caam_jr")
    entries = entries_of(AESNI, twice, twice)
    assert algorithms_with_multiple_drivers(entries) == ["xts(aes)"]


def test_format_inventory_table_is_aligned_and_marks_winners() -> None:
    table = format_inventory_table(entries_of(AESNI))
    lines = table.splitlines()
    assert lines[0].split() == [
        "name",
        "driver",
        "module",
        "priority",
        "class",
        "winner",
        "selftest",
    ]
    assert lines[2].split() == [
        "xts(aes)",
        "xts-aes-aesni",
        "aesni_intel",
        "401",
        "cpu-accel",
        "*",
        "passed",
    ]
    assert lines[3].split() == [
        "xts(aes)",
        "xts(ecb(aes-generic))",
        "xts",
        "100",
        "generic",
        "passed",
    ]
    column = lines[0].index("driver")
    assert all(line[column - 2 : column] == "  " and line[column] != " " for line in lines)
    assert lines[0].index("winner") == lines[2].index("*")
    assert not table.endswith("\n")


def test_format_inventory_table_of_a_real_capture() -> None:
    lines = format_inventory_table(inventory(UML_TEMPLATES)).splitlines()
    assert len(lines) == 1 + len(read_proc_crypto(UML_TEMPLATES))
    fixed = next(line for line in lines if line.split()[1:2] == ["xts(ecb(aes-fixed-time))"])
    assert fixed.split() == [
        "xts(aes)",
        "xts(ecb(aes-fixed-time))",
        "xts",
        "101",
        "generic",
        "*",
        "passed",
    ]


def test_format_of_missing_values_uses_dashes() -> None:
    entries = build_inventory(parse_proc_crypto("name : aes\ndriver : aes-odd\n\n"))
    assert format_inventory_table(entries).splitlines()[1].split() == [
        "aes",
        "aes-odd",
        "-",
        "-",
        "unknown",
        "*",
        "-",
    ]


def test_a_record_cut_short_or_without_a_name_never_wins() -> None:
    text = "name : aes\ndriver : aes-generic\nmodule : kernel\npriority : 100\ntype : cipher\n\n"
    cut = text + "name : aes\ndriver : aes-ce\nmodule : kernel\npriority : 300\n"
    entries = build_inventory(parse_proc_crypto(cut))
    assert [(entry.driver, entry.winner) for entry in entries] == [
        ("aes-generic", True),
        ("aes-ce", False),
    ]
    nameless = build_inventory(parse_proc_crypto("driver : aes-ce\n"))
    assert [(entry.driver, entry.winner) for entry in nameless] == [("aes-ce", False)]
