# SPDX-License-Identifier: MIT
"""What `hwcrypto ab` measures: one driver is enough, and asked nothing, the path winners."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.ab.engine import nothing_to_measure
from pytest_hwcrypto.ab.slice import SliceSpec, slice_plan, slice_targets
from pytest_hwcrypto.kernel.inventory import InventoryEntry, build_inventory
from pytest_hwcrypto.kernel.procfs import parse_proc_crypto, read_proc_crypto
from pytest_hwcrypto.measure.plan import make_plan
from pytest_hwcrypto.measure.targets import Target, discover_targets, winner_targets

CAPTURES = Path(__file__).parent.parent / "data" / "proc_crypto"


def uml_inventory(without: str = "", templates: bool = False) -> list[InventoryEntry]:
    """The UML board's /proc/crypto (aes-generic and aes-fixed-time); `without` a driver,
    as a kernel built without it; no template instance unless `templates`."""
    algs = read_proc_crypto(CAPTURES / "uml-6.1.176-templates.txt")
    kept = [a for a in algs if a.driver != without and (templates or "(" not in a.name)]
    return build_inventory(kept)


def drivers(targets: list) -> list[str]:  # type: ignore[type-arg]
    return [t.driver for t in targets]


def test_one_aes_driver_is_nothing_to_compare_within_the_kernel() -> None:
    targets = discover_targets(uml_inventory(without="aes-generic"))
    assert not [t for t in targets if "aes" in t.algorithm]


def test_one_aes_driver_is_measured_when_one_driver_is_enough() -> None:
    targets = discover_targets(uml_inventory(without="aes-generic"), min_drivers=1)
    by_algorithm = {t.algorithm: t.driver for t in targets if "aes" in t.algorithm}
    assert by_algorithm["cbc(aes)"] == "cbc(aes-fixed-time)"
    assert by_algorithm["xts(aes)"] == "xts(ecb(aes-fixed-time))"
    assert "sha256-generic" in drivers(targets)


def test_an_algorithm_asked_for_is_measured_on_its_one_driver() -> None:
    spec = SliceSpec(seconds=1.0, block_sizes=(4096,), algorithms=("cbc(aes)",))
    chosen = slice_targets(uml_inventory(without="aes-generic"), spec)
    assert drivers(chosen) == ["cbc(aes-fixed-time)"]


def test_an_algorithm_with_two_drivers_keeps_both_for_the_relative_view() -> None:
    spec = SliceSpec(seconds=1.0, block_sizes=(4096,), algorithms=("cbc(aes)",))
    chosen = slice_targets(uml_inventory(), spec)
    assert sorted(drivers(chosen)) == ["cbc(aes-fixed-time)", "cbc(aes-generic)"]


def test_asked_nothing_the_winners_of_the_path_algorithms_not_ecb() -> None:
    spec = SliceSpec(seconds=1.0, block_sizes=(4096,))
    chosen = slice_targets(uml_inventory(), spec)
    # aes-fixed-time (101) wins over aes-generic (100); no AEAD (gcm) through this slice
    assert [(t.algorithm, t.driver) for t in chosen] == [
        ("xts(aes)", "xts(ecb(aes-fixed-time))"),
        ("cbc(aes)", "cbc(aes-fixed-time)"),
        ("sha256", "sha256-generic"),
    ]


def test_a_registered_mode_driver_of_higher_priority_is_the_winner() -> None:
    def block(name: str, driver: str, kind: str, priority: int, extra: str) -> str:
        return (
            f"name         : {name}\ndriver       : {driver}\nmodule       : kernel\n"
            f"priority     : {priority}\nrefcnt       : 1\nselftest     : passed\n"
            f"internal     : no\ntype         : {kind}\n{extra}\n"
        )

    cipher = "blocksize    : 16\nmin keysize  : 16\nmax keysize  : 32\n"
    sk = "async        : yes\n" + cipher + "ivsize       : 16\n"
    text = "\n".join(
        [
            block("aes", "aes-generic", "cipher", 100, cipher),
            block("cbc(aes)", "cbc-aes-engine", "skcipher", 300, sk),
            block("sha256", "sha256-generic", "shash", 100, "digestsize   : 32\n"),
            block("sha256", "sha256-engine", "ahash", 300, "digestsize   : 32\n"),
        ]
    )
    chosen = winner_targets(build_inventory(parse_proc_crypto(text, "engine")))
    assert drivers(chosen) == ["xts(ecb(aes-generic))", "cbc-aes-engine", "sha256-engine"]


def test_a_kernel_without_any_path_algorithm_is_told_to_name_one() -> None:
    default = nothing_to_measure(SliceSpec(seconds=1.0, block_sizes=(4096,)))
    assert "xts(aes), cbc(aes), gcm(aes), sha256" in default
    assert "--algorithm" in default
    asked = nothing_to_measure(SliceSpec(seconds=1.0, block_sizes=(4096,), algorithms=("sm4",)))
    assert asked == "no driver of sm4 on this kernel"
    assert "two drivers" not in default + asked


def test_a_profile_chooses_its_rules_then_its_expected_drivers_algorithms(tmp_path: Path) -> None:
    from pytest_hwcrypto.cli.ab import profile_algorithms
    from pytest_hwcrypto.usage import UsageError

    profile = tmp_path / "board.toml"
    profile.write_text(
        '[board]\nname = "b"\n'
        '[[rule]]\nname = "r"\ntype = "floor"\nalgorithm = "xts(aes)"\nmin_mib_s = 5\n'
        '[[expect]]\nalgorithm = "sha256"\ndriver = "sha256-engine"\n'
        '[[expect]]\nalgorithm = "xts(aes)"\ndriver = "xts-aes-engine"\n'
    )
    assert profile_algorithms(str(profile)) == ("xts(aes)", "sha256")
    assert profile_algorithms(None) == ()
    missing = tmp_path / "none.toml"
    with pytest.raises(UsageError) as refused:
        profile_algorithms(str(missing))
    assert str(refused.value) == f"board profile {missing} not found"


def test_a_slice_too_short_for_every_algorithm_asked_for_takes_longer_not_fewer() -> None:

    targets = [
        Target("xts(aes)", "xts(aes-fixed-time)", "skcipher", 256, 0),
        Target("cbc(aes)", "cbc(aes-fixed-time)", "skcipher", 128, 1),
        Target("sha256", "sha256-generic", "hash", 0, 2),
    ]
    spec = SliceSpec(seconds=1.0, block_sizes=(4096, 65536))
    assert make_plan(targets, spec.block_sizes, spec.seconds, sessions=2).left_out  # as before
    plan, seconds = slice_plan(targets, spec)
    assert plan.left_out == {}
    assert {cell.target.algorithm for cell in plan.cells} == {"xts(aes)", "cbc(aes)", "sha256"}
    assert seconds > spec.seconds


def test_a_slice_long_enough_keeps_its_seconds() -> None:

    targets = [Target("cbc(aes)", "cbc(aes-fixed-time)", "skcipher", 128, 0)]
    plan, seconds = slice_plan(targets, SliceSpec(seconds=30.0, block_sizes=(65536,)))
    assert seconds == 30.0 and plan.budget == 30.0
