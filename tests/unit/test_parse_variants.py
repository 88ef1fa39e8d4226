# SPDX-License-Identifier: MIT
"""Every pasted variant reads as the real run it came from; the issue's three scenarios.

The variants are made from tests/data/paste/raw by tests/data/paste/make_variants.py;
the first test fails when the committed files are not what the script makes.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pytest_hwcrypto.parsers.parse import ParsedDocument, parse_text, select_table, to_results
from pytest_hwcrypto.verdict import compare

PASTE = Path(__file__).parent.parent / "data" / "paste"
MIB = 2**20


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_variants", PASTE / "make_variants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATOR = _load_generator()
VARIANTS: dict[str, Any] = GENERATOR.VARIANTS

# variant -> the raw run behind each of its tables, in order; each table must read exactly
# as that run read on its own
SAME_AS_RAW = {
    "cs_collapsed": ["uml_cryptsetup_aes_ti"],
    "cs_crlf": ["uml_cryptsetup_aes_ti"],
    "cs_tabs": ["uml_cryptsetup_aes_ti"],
    "cs_prompt_dollar": ["uml_cryptsetup_aes_ti"],
    "cs_prompt_bracket": ["qemu_cryptsetup"],
    "cs_prompt_debian": ["qemu_cryptsetup_single"],
    "cs_prose_ja": ["qemu_cryptsetup"],
    "cs_na_de": ["qemu_cryptsetup_na"],
    "cs_one_line": ["uml_cryptsetup_aes_generic"],
    "cs_glued": ["uml_cryptsetup_aes_ti"],
    "cs_duplicated": ["uml_cryptsetup_aes_ti"],
    "ossl_legacy_collapsed": ["openssl_legacy"],
    "ossl_evp_crlf": ["openssl_evp"],
    "ossl_sha256_tabs": ["openssl_sha256"],
    "ossl_mr_prompt": ["openssl_mr"],
    "ossl_multi_zh": ["openssl_multi"],
    "ossl_rsa_glued": ["openssl_rsa2048"],
    "ossl_table_glued": ["openssl_evp"],
    "ossl_bytes": ["openssl_bytes"],
    "fio_collapsed": ["fio_slow_aes_ti"],
    "fio_crlf": ["fio_loop_aes_ti"],
    "fio_prompt": ["fio_loop_twojobs"],
    "fio_json_es": ["fio_slow_aes_ti_json"],
    "fio_json_glued": ["fio_slow_aes_generic_json"],
    "fio_util_glued": ["fio_slow_aes_generic"],
    "post_cryptsetup_two_kernels": ["uml_cryptsetup_aes_ti", "uml_cryptsetup_aes_generic"],
    "post_openssl_six": [
        "openssl_legacy",
        "openssl_evp",
        "openssl_engine_legacy",
        "openssl_engine_evp",
        "openssl_engine_legacy_cputime",
        "openssl_engine_evp_cputime",
    ],
    "post_openssl_camellia": ["openssl_camellia", "openssl_engine_camellia"],
    "post_fio_storage": ["fio_slow_aes_ti", "fio_slow_aes_generic"],
    "post_fio_json_storage": ["fio_slow_aes_ti_json", "fio_slow_aes_generic_json"],
    "post_fio_cipher_bound": ["fio_loop_aes_ti", "fio_loop_aes_generic"],
    "post_everything_auto": [
        "qemu_cryptsetup_na",
        "openssl_sha256",
        "openssl_rsa2048",
        "fio_slow_aes_ti_json",
        "qemu_tcrypt_sha1",
    ],
}
# variants that lose something on purpose, tested in the per-tool test files or below
PARTIAL = {
    "cs_1x",
    "cs_dropped",
    "cs_truncated",
    "ossl_11_names",
    "ossl_no_table",
    "ossl_row_cut",
    "ossl_mr_no_results",
    "ossl_multi_no_sum",
    "fio_json_cut",
}


def variant(name: str) -> str:
    return (PASTE / "variants" / f"{name}.txt").read_bytes().decode("utf-8")


def raw(name: str) -> str:
    return (PASTE / "raw" / f"{name}.txt").read_text(encoding="utf-8")


def contents(document: ParsedDocument, table: int) -> tuple[list[Any], list[Any]]:
    """A table's measurements and records without where they were (table, label...)."""
    own = document.tables[table]
    placement = {"table", "label", "command"}
    measurements = [
        {k: v for k, v in m.to_json().items() if k not in placement} for m in own.measurements
    ]
    records = [record.to_json() for record in own.records]
    return measurements, records


def test_committed_variants_are_what_the_generator_makes() -> None:
    on_disk = {path.stem for path in (PASTE / "variants").glob("*.txt")}
    assert on_disk == set(VARIANTS)
    for name, build in VARIANTS.items():
        assert (PASTE / "variants" / f"{name}.txt").read_bytes() == build().encode("utf-8"), name
    assert set(SAME_AS_RAW) | PARTIAL == set(VARIANTS)


@pytest.mark.parametrize("name", sorted(SAME_AS_RAW))
def test_variant_reads_as_the_runs_it_came_from(name: str) -> None:
    document = parse_text("auto", variant(name), f"{name}.txt")
    sources = SAME_AS_RAW[name]
    assert len(document.tables) == len(sources)
    for index, source in enumerate(sources):
        alone = parse_text("auto", raw(source), f"{source}.txt")
        assert len(alone.tables) == 1
        assert contents(document, index) == contents(alone, 0), (name, index)
        assert all(m.extra["table"] == index for m in document.tables[index].measurements)


def test_dropped_duplicated_and_truncated_lines() -> None:
    dropped = parse_text("auto", variant("cs_dropped"), "cs_dropped.txt")
    assert len(dropped.measurements) == 22  # the aes-cbc 256b row (line 12) is gone
    duplicated = parse_text("auto", variant("cs_duplicated"), "cs_duplicated.txt")
    assert duplicated.warnings == ["cs_duplicated.txt:13: repeats the line above; ignored"]
    truncated = parse_text("auto", variant("cs_truncated"), "cs_truncated.txt")
    assert len(truncated.measurements) == 23
    assert truncated.warnings == [
        "cs_truncated.txt:21: twofish-xts 512b row has no decryption value"
    ]
    one_x = parse_text("auto", variant("cs_1x"), "cs_1x.txt")
    generic = parse_text("auto", raw("uml_cryptsetup_aes_generic"), "raw")
    assert contents(one_x, 0)[0] == contents(generic, 0)[0]
    assert len(one_x.tables[0].records) == 5  # PBKDF2 only: 1.x has no argon2


def _rows(results: Any) -> dict[tuple[str, int | None, str], float]:
    return {(m.algorithm, m.key_bits, m.op): m.bytes_per_second for m in results.measurements}


def test_scenario_a_two_cryptsetup_tables_compared_flag_exactly_the_rows_that_dropped() -> None:
    document = parse_text("auto", variant("post_cryptsetup_two_kernels"), "post.txt")
    assert [(t.index, t.label) for t in document.tables] == [
        (0, "新しいカーネル (aes_ti あり, aes-fixed-time):"),
        (1, "以前のカーネル (aes-generic):"),  # its line was glued to table 0's last value
    ]
    assert document.tables[0].measurements[-1].bytes_per_second == 229.7 * MIB
    results = to_results(document)
    baseline, current = select_table(results, 1), select_table(results, 0)
    comparisons = compare.compare(baseline, current, max_drop=0.10)
    assert len(comparisons) == 24
    flagged = {(c.algorithm, c.key_bits, c.op) for c in comparisons if c.failed}
    before, after = _rows(baseline), _rows(current)
    dropped = {key for key in before if after[key] < 0.9 * before[key]}
    assert flagged == dropped
    # the rows that dropped are AES ones, the driver that changed: 7 of the 8; aes-xts 256b
    # encryption did not drop because the aes-generic run read low there (118.7 MiB/s)
    assert all(algorithm.startswith("aes-") for algorithm, _, _ in flagged)
    assert len(flagged) == 7
    assert set(_rows(current)) - flagged == {
        key for key in before if not key[0].startswith("aes-")
    } | {("aes-xts", 256, "encrypt")}


def test_scenario_b_six_openssl_tables() -> None:
    document = parse_text("auto", variant("post_openssl_six"), "six.txt")
    # each table is named by the line above its command; the command is its own field
    assert [t.label for t in document.tables] == [h for _, h in GENERATOR._OPENSSL_SIX]
    assert [t.command.text if t.command else None for t in document.tables] == [
        GENERATOR._COMMANDS[name] for name, _ in GENERATOR._OPENSSL_SIX
    ]
    assert [t.facts.get("engine") for t in document.tables] == [
        None,
        None,
        "afalg",
        "afalg",
        "afalg",
        "afalg",
    ]
    assert [t.facts["evp"] for t in document.tables] == [False, True] * 3
    kinds = [(f.kind, f.extra["table"]) for f in document.findings]
    assert kinds == [("cpu-time-not-elapsed", 4), ("cpu-time-not-elapsed", 5)]
    assert "(its runs counted 0.32 s of CPU time in 1 s)" in document.findings[0].detail
    assert document.tables[4].facts["seconds"] == 1
    # no legacy-bypasses-engine: on OpenSSL 3.0 the legacy table with the engine (2) is
    # as slow as the -evp one (3), nothing like the one without the engine (0)
    results = to_results(document)
    engine_legacy, legacy = _sizes(select_table(results, 2)), _sizes(select_table(results, 0))
    assert engine_legacy[16] < legacy[16] / 1000
    hw_sw = compare.compare_hw_sw(
        select_table(results, 1), select_table(results, 3), algorithm="aes-128-cbc"
    )
    ratios = {c.block_size: c.ratio for c in hw_sw.comparisons}
    assert sorted(ratios) == [16, 64, 256, 1024, 8192, 16384]
    assert ratios[16] == pytest.approx(532.62 / 1425655.18)
    assert ratios[16384] == pytest.approx(128253.95 / 2000961.54)
    assert hw_sw.crossover == {"aes-128-cbc": None}  # the engine never catches up here


def _sizes(results: Any) -> dict[int | None, float]:
    return {m.block_size: m.bytes_per_second for m in results.measurements}


def test_scenario_c_fio_runs_on_a_busy_disk_compare_as_storage_bound() -> None:
    document = parse_text("auto", variant("post_fio_storage"), "fio.txt")
    results = to_results(document)
    comparisons = compare.compare(select_table(results, 0), select_table(results, 1))
    assert [c.change for c in comparisons] == [0.0, 0.0]  # 392 and 408 KiB/s both times
    [finding] = results.findings
    assert finding.kind == "storage-bound"
    assert finding.extra["util"] == [98.65, 98.2]
    assert select_table(results, 1).findings == [finding]  # kept for either table
