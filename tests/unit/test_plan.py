# SPDX-License-Identifier: MIT
"""measure/plan.py: targets from real and synthetic inventories, budget split, order, pacing."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.kernel.inventory import InventoryEntry, build_inventory
from pytest_hwcrypto.kernel.procfs import parse_proc_crypto, read_proc_crypto
from pytest_hwcrypto.measure.plan import (
    MAX_SAMPLES,
    MIN_SAMPLE_SECONDS,
    SAFETY_SHARE,
    SESSIONS,
    Cell,
    Pacer,
    cells_for,
    least_budget,
    make_plan,
    next_calibration_count,
    operations_for,
    round_order,
    setup_seconds,
    split_samples,
)
from pytest_hwcrypto.measure.targets import (
    RANK_CIPHER_MODES,
    RANK_HASHES,
    RANK_OTHER_SKCIPHERS,
    PlanError,
    Target,
    algorithms,
    discover_targets,
    instance_driver_name,
)
from pytest_hwcrypto.verdict.blocksizes import parse_block_size_list
from pytest_hwcrypto.vocabulary import DEFAULT_BLOCK_SIZES

CAPTURES = Path(__file__).resolve().parent.parent / "data" / "proc_crypto"


def uml_inventory(name: str = "uml-6.1.176-templates.txt") -> list[InventoryEntry]:
    return build_inventory(read_proc_crypto(CAPTURES / name))


def fresh_uml_inventory() -> list[InventoryEntry]:
    """The UML board right after boot with aes_ti loaded: no template instance yet."""
    algs = read_proc_crypto(CAPTURES / "uml-6.1.176-templates.txt")
    return build_inventory([alg for alg in algs if "(" not in alg.name])


def block(name: str, driver: str, alg_type: str, priority: int, **more: object) -> str:
    lines = [
        f"name         : {name}",
        f"driver       : {driver}",
        f"module       : {more.pop('module', 'kernel')}",
        f"priority     : {priority}",
        "refcnt       : 1",
        f"selftest     : {more.pop('selftest', 'passed')}",
        f"internal     : {more.pop('internal', 'no')}",
        f"type         : {alg_type}",
    ]
    lines += [f"{key.replace('_', ' '):<13}: {value}" for key, value in more.items()]
    return "\n".join(lines) + "\n"


def qemu_like_inventory() -> list[InventoryEntry]:
    """What the QEMU board registers, cut down: AES-NI, virtio-crypto, generic AES, hashes."""
    cipher_sizes = {"blocksize": 16, "min_keysize": 16, "max_keysize": 32}
    sk = {"blocksize": 16, "min_keysize": 16, "max_keysize": 32, "ivsize": 16}
    text = "\n".join(
        [
            block("aes", "aes-aesni", "cipher", 300, module="aesni_intel", **cipher_sizes),
            block("aes", "aes-generic", "cipher", 100, **cipher_sizes),
            block("cbc(aes)", "cbc-aes-aesni", "skcipher", 400, module="aesni_intel", **sk),
            block("__cbc(aes)", "__cbc-aes-aesni", "skcipher", 400, internal="yes", **sk),
            block(
                "cbc(aes)", "virtio_crypto_aes_cbc", "skcipher", 150, module="virtio_crypto", **sk
            ),
            block("ctr(aes)", "ctr-aes-aesni", "skcipher", 400, module="aesni_intel", **sk),
            block(
                "xts(aes)",
                "xts-aes-aesni",
                "skcipher",
                401,
                module="aesni_intel",
                blocksize=16,
                min_keysize=32,
                max_keysize=64,
            ),
            block("sha256", "sha256-generic", "shash", 100, digestsize=32),
            block("sha256", "sha256-ni", "shash", 250, module="sha256_ssse3", digestsize=32),
            block("ghash", "ghash-generic", "shash", 100),
            block("ghash", "ghash-clmulni", "ahash", 400, module="ghash_clmulni_intel"),
            block(
                "pkcs1pad(rsa,sha256)",
                "virtio-crypto-rsa",
                "akcipher",
                150,
                module="virtio_crypto",
                selftest="unknown",
            ),
            block("chacha20", "chacha20-generic", "skcipher", 100, min_keysize=32, max_keysize=32),
            block(
                "chacha20",
                "chacha20-simd",
                "skcipher",
                300,
                module="chacha_x86_64",
                min_keysize=32,
                max_keysize=32,
            ),
        ]
    )
    return build_inventory(parse_proc_crypto(text, "qemu-like"))


def by_algorithm(targets: list[Target]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for target in targets:
        grouped.setdefault(target.algorithm, []).append(target.driver)
    return grouped


# --- what: targets ---------------------------------------------------------------------


def test_fresh_uml_board_gets_every_mode_over_both_software_aes() -> None:
    targets = discover_targets(fresh_uml_inventory())
    assert by_algorithm(targets) == {
        "ecb(aes)": ["ecb(aes-fixed-time)", "ecb(aes-generic)"],
        "cbc(aes)": ["cbc(aes-fixed-time)", "cbc(aes-generic)"],
        "ctr(aes)": ["ctr(aes-fixed-time)", "ctr(aes-generic)"],
        "xts(aes)": ["xts(ecb(aes-fixed-time))", "xts(ecb(aes-generic))"],
    }
    assert all(not t.registered and t.rank == RANK_CIPHER_MODES for t in targets)
    assert {t.driver_class for t in targets} == {"generic"}


def test_key_sizes_are_aes_128_and_xts_takes_two_keys() -> None:
    targets = discover_targets(fresh_uml_inventory())
    bits = {t.algorithm: t.key_bits for t in targets}
    assert bits == {"ecb(aes)": 128, "cbc(aes)": 128, "ctr(aes)": 128, "xts(aes)": 256}


def test_already_instantiated_templates_are_not_measured_twice() -> None:
    targets = discover_targets(uml_inventory())
    grouped = by_algorithm(targets)
    # The capture has cryptd(cbc(aes-generic)) registered too: a real driver of cbc(aes).
    assert sorted(grouped["cbc(aes)"]) == [
        "cbc(aes-fixed-time)",
        "cbc(aes-generic)",
        "cryptd(cbc(aes-generic))",
    ]
    assert sorted(grouped["xts(aes)"]) == ["xts(ecb(aes-fixed-time))", "xts(ecb(aes-generic))"]
    for drivers in grouped.values():
        assert len(drivers) == len(set(drivers))


def test_xts_is_instantiated_over_ecb() -> None:
    assert instance_driver_name("xts", "aes-generic") == "xts(ecb(aes-generic))"
    assert instance_driver_name("cbc", "aes-fixed-time") == "cbc(aes-fixed-time)"


def test_qemu_board_offload_and_aesni_against_a_generic_instance() -> None:
    targets = discover_targets(qemu_like_inventory())
    grouped = by_algorithm(targets)
    assert grouped["cbc(aes)"] == ["cbc-aes-aesni", "virtio_crypto_aes_cbc", "cbc(aes-generic)"]
    # nothing registers ecb(aes) by itself here: aes-aesni's template stands for cpu-accel
    assert grouped["ecb(aes)"] == ["ecb(aes-aesni)", "ecb(aes-generic)"]
    assert grouped["xts(aes)"] == ["xts-aes-aesni", "xts(ecb(aes-generic))"]
    classes = {t.driver: t.driver_class for t in targets}
    assert classes["virtio_crypto_aes_cbc"] == "offload"
    assert classes["cbc(aes-generic)"] == "generic"


def test_internal_helpers_and_failed_selftests_are_never_targets() -> None:
    drivers = {t.driver for t in discover_targets(qemu_like_inventory())}
    assert "__cbc-aes-aesni" not in drivers
    assert "virtio-crypto-rsa" not in drivers


def test_other_skciphers_and_unkeyed_hashes_come_after_the_cipher_modes() -> None:
    targets = discover_targets(qemu_like_inventory())
    ranks = {t.algorithm: t.rank for t in targets}
    assert ranks["chacha20"] == RANK_OTHER_SKCIPHERS
    assert ranks["sha256"] == RANK_HASHES
    assert "ghash" not in ranks, "keyed hashes need a key: not a plain digest"
    assert [t.rank for t in targets] == sorted(t.rank for t in targets)
    sha = [t for t in targets if t.algorithm == "sha256"]
    assert {t.kind for t in sha} == {"hash"} and {t.key_bits for t in sha} == {None}
    assert {t.key_bits for t in targets if t.algorithm == "chacha20"} == {256}


def test_uml_board_without_aes_ti_has_nothing_to_compare() -> None:
    assert discover_targets(uml_inventory("uml-6.1.176.txt")) == []


def test_one_implementation_and_nothing_registered_gives_nothing() -> None:
    text = block("aes", "aes-generic", "cipher", 100, blocksize=16, min_keysize=16)
    assert discover_targets(build_inventory(parse_proc_crypto(text, "x"))) == []


def test_algorithms_keep_order() -> None:
    targets = discover_targets(fresh_uml_inventory())
    assert algorithms(targets) == ["ecb(aes)", "cbc(aes)", "ctr(aes)", "xts(aes)"]


# --- block sizes -------------------------------------------------------------------------


def test_block_size_list_parses_suffixes_sorts_and_dedups() -> None:
    assert parse_block_size_list("4K, 16,64,16") == (16, 64, 4096)
    assert parse_block_size_list("16,64,256,1024,4096,16384,65536") == DEFAULT_BLOCK_SIZES
    assert parse_block_size_list([64, 16]) == (16, 64)


@pytest.mark.parametrize("text", ["", "16,abc", "0", "16,4KB"])
def test_bad_block_size_lists_say_what_is_wrong(text: str) -> None:
    with pytest.raises(ValueError):
        parse_block_size_list(text)


def test_cells_skip_sizes_the_driver_cannot_take() -> None:
    des = Target("cbc(des)", "cbc(des-generic)", "skcipher", 64, 0, block_multiple=8)
    odd = Target("cbc(x)", "cbc(x-generic)", "skcipher", 128, 0, block_multiple=48)
    cells = cells_for([des, odd], (16, 64, 96))
    assert [(c.target.driver, c.block_size) for c in cells] == [
        ("cbc(des-generic)", 16),
        ("cbc(des-generic)", 64),
        ("cbc(des-generic)", 96),
        ("cbc(x-generic)", 96),
    ]
    assert {c.op for c in cells} == {"encrypt"}


# --- how long ----------------------------------------------------------------------------


def test_uml_default_budget_measures_everything_for_about_a_second_per_cell() -> None:
    plan = make_plan(discover_targets(fresh_uml_inventory()), DEFAULT_BLOCK_SIZES, 60.0)
    assert len(plan.cells) == 8 * 7
    assert not plan.left_out
    assert 5 <= plan.samples <= 11
    assert plan.sample_seconds >= 0.1
    assert plan.setup_seconds == pytest.approx(setup_seconds(8, SESSIONS))
    total = plan.setup_seconds + len(plan.cells) * plan.cell_seconds
    assert total == pytest.approx(60.0 * (1 - SAFETY_SHARE))


def test_a_short_budget_on_uml_keeps_cbc_with_every_session_it_opens() -> None:
    """The board test of --hwcrypto-baseline measures cbc(aes) in 6 s on UML; priced at the
    50 ms a session costs under TCG, five sessions a driver had left cbc(aes) out."""
    targets = discover_targets(fresh_uml_inventory())
    plan = make_plan(targets, (4096, 65536), 6.0, sessions=SESSIONS)
    assert {"cbc(aes)", "ecb(aes)"} <= {cell.target.algorithm for cell in plan.cells}
    assert setup_seconds(1, SESSIONS) > setup_seconds(1, 1)


def test_short_budget_leaves_out_whole_algorithms_from_the_lowest_rank() -> None:
    targets = discover_targets(qemu_like_inventory())
    plan = make_plan(targets, DEFAULT_BLOCK_SIZES, 30.0)
    measured = {cell.target.algorithm for cell in plan.cells}
    assert "cbc(aes)" in measured
    assert "sha256" in plan.left_out
    assert "--hwcrypto-budget=30 s" in plan.left_out["sha256"]
    assert measured.isdisjoint(plan.left_out)
    # what is measured still gets a useful share
    assert plan.cell_seconds >= 0.5


def test_algorithms_with_profile_rules_are_planned_first() -> None:
    targets = discover_targets(qemu_like_inventory())
    plan = make_plan(targets, DEFAULT_BLOCK_SIZES, 30.0, prefer={"sha256"})
    measured = {cell.target.algorithm for cell in plan.cells}
    assert "sha256" in measured
    assert plan.cells[0].target.algorithm == "sha256"


def test_a_tiny_budget_still_measures_the_first_algorithm() -> None:
    plan = make_plan(discover_targets(fresh_uml_inventory()), DEFAULT_BLOCK_SIZES, 2.0)
    assert {c.target.algorithm for c in plan.cells} == {"ecb(aes)"}
    assert plan.samples == 5


def test_least_budget_says_when_the_first_algorithm_was_kept_beyond_the_budget() -> None:
    """The ARM boards' short matrix (5 s over 28 cbc(aes) series) overshot by design; the
    throughput suite tells that from an engine that broke a budget it could keep."""
    targets = discover_targets(fresh_uml_inventory())
    tiny = make_plan(targets, DEFAULT_BLOCK_SIZES, 2.0)
    assert least_budget(tiny) > tiny.budget
    fits = make_plan(targets, DEFAULT_BLOCK_SIZES, 60.0)
    assert least_budget(fits) <= fits.budget
    # just enough for the first algorithm's series: it fits, and a little less does not
    first = [t for t in targets if t.algorithm == tiny.cells[0].target.algorithm]
    enough = least_budget(make_plan(first, DEFAULT_BLOCK_SIZES, 2.0))
    assert least_budget(make_plan(first, DEFAULT_BLOCK_SIZES, enough)) <= enough
    assert make_plan(first, DEFAULT_BLOCK_SIZES, enough).cell_seconds == pytest.approx(0.6)
    assert least_budget(make_plan(first, DEFAULT_BLOCK_SIZES, enough * 0.9)) > enough * 0.9


def test_no_budget_is_an_error() -> None:
    with pytest.raises(PlanError):
        make_plan([], DEFAULT_BLOCK_SIZES, 0)


def test_no_targets_gives_an_empty_plan() -> None:
    plan = make_plan([], DEFAULT_BLOCK_SIZES, 60.0)
    assert plan.cells == () and plan.samples == 0


def test_split_samples_prefers_short_samples_within_bounds() -> None:
    samples, each = split_samples(1.0)
    assert samples == 10 and each == pytest.approx(0.1)
    assert split_samples(10.0) == (MAX_SAMPLES, pytest.approx(10.0 / MAX_SAMPLES))
    # a higher cap (--hwcrypto-max-samples) turns the same time into more 0.1 s samples
    assert split_samples(3.0, max_samples=50) == (30, pytest.approx(0.1))
    samples, each = split_samples(0.05)
    assert samples == 5 and each == pytest.approx(0.01)


# --- in which order ----------------------------------------------------------------------


def test_round_order_keeps_compared_drivers_together_and_rotates() -> None:
    cells = _cells()
    for round_index in range(6):
        order = [(c.target.driver, c.block_size) for c in round_order(cells, round_index)]
        assert sorted(order) == sorted((c.target.driver, c.block_size) for c in cells)
        assert order[0][1] == order[1][1] and order[2][1] == order[3][1], "pairs adjacent"
        first = "a" if round_index % 2 == 0 else "b"
        assert order[0][0] == order[2][0] == first
    assert round_order([], 3) == []


def test_round_order_is_reproducible_and_shuffles_comparisons() -> None:
    cells = cells_for(_cells_targets(), DEFAULT_BLOCK_SIZES)
    assert round_order(cells, 4) == round_order(cells, 4)
    leading = {round_order(cells, r)[0].block_size for r in range(20)}
    assert len(leading) >= 4, "different comparisons lead different rounds"
    positions = [[c.block_size for c in round_order(cells, r)].index(65536) // 2 for r in range(40)]
    assert min(positions) <= 1 and max(positions) >= 5


def _cells_targets() -> list[Target]:
    return [
        Target("cbc(aes)", "a", "skcipher", 128, 0),
        Target("cbc(aes)", "b", "skcipher", 128, 0),
    ]


def _cells() -> list[Cell]:
    return cells_for(_cells_targets(), (16, 4096))


def test_every_driver_goes_first_equally_often() -> None:
    cells = _cells()
    leaders = [round_order(cells, r)[0].target.driver for r in range(10)]
    assert leaders.count("a") == leaders.count("b") == 5


# --- calibration and pacing --------------------------------------------------------------


def test_calibration_grows_until_the_run_is_long_enough() -> None:
    assert next_calibration_count(1, 0.00001, 0.1) == 10  # capped growth
    assert next_calibration_count(100, 0.04, 0.1) == 300  # aims at 1.2 x target
    assert next_calibration_count(100, 0.09, 0.1) == 200  # at least doubles
    assert next_calibration_count(100, 0.1, 0.1) is None
    assert next_calibration_count(3, 0.0, 0.1) == 30


def test_operations_for_fills_the_time() -> None:
    assert operations_for(1000.0, 0.15) == 150
    assert operations_for(1.0, 0.15) == 1
    assert operations_for(0.0, 0.15) == 1


def test_pacer_spreads_the_time_left_and_stops_in_budget() -> None:
    pacer = Pacer(started_at=0.0, budget=10.0, rounds=5, cells=10, reserve_share=0.0)
    assert pacer.sample_seconds(0.0, 0) == pytest.approx(0.2)
    # behind schedule: shorter samples for the rest
    assert pacer.sample_seconds(6.0, 2) == pytest.approx(4.0 / 30)
    # done
    assert pacer.sample_seconds(9.0, 5) is None


def test_pacer_keeps_the_minimum_number_of_rounds_even_when_late() -> None:
    pacer = Pacer(0.0, 10.0, rounds=7, cells=10, min_rounds=5, reserve_share=0.0)
    assert pacer.sample_seconds(11.0, 3) == MIN_SAMPLE_SECONDS
    assert pacer.sample_seconds(11.0, 5) is None
    # late but one more round fits as it is
    assert pacer.sample_seconds(9.7, 5) == pytest.approx(0.03)


def test_pacer_reserves_the_warmups_before_the_first_round() -> None:
    pacer = Pacer(0.0, 10.0, rounds=5, cells=10, warmup_seconds=0.1, reserve_share=0.0)
    assert pacer.sample_seconds(0.0, 0) == pytest.approx((10.0 - 1.0) / 50)


def test_pacer_for_plan_uses_the_plan() -> None:
    plan = make_plan(discover_targets(fresh_uml_inventory()), DEFAULT_BLOCK_SIZES, 60.0)
    pacer = Pacer.for_plan(plan, started_at=100.0)
    first = pacer.sample_seconds(100.0 + plan.setup_seconds, 0)
    assert first == pytest.approx(plan.sample_seconds, rel=0.01)
