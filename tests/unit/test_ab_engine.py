# SPDX-License-Identifier: MIT
"""ab/: the pair loop (schedule, escalation, budget, resume, failures) with a fake board
whose speed drifts, and the judgement and kernel differences on its documents."""

from __future__ import annotations

import io
import json
import math
import random
from pathlib import Path

import pytest

from pytest_hwcrypto import cli
from pytest_hwcrypto.ab import schedule
from pytest_hwcrypto.ab.document import (
    AbDocument,
    AbFileError,
    Side,
    load_document,
    resume_mismatch,
    save_document,
)
from pytest_hwcrypto.ab.engine import AbError, SliceOutcome, run_ab
from pytest_hwcrypto.ab.series import (
    BY_NAME,
    judge_document,
    kernel_changes,
    one_sided_series,
)
from pytest_hwcrypto.ab.slice import BY_NAME_KEY, SliceSpec
from pytest_hwcrypto.ab.text import format_changes, format_table
from pytest_hwcrypto.verdict.paired import PairedVerdict

MIB = 1024.0 * 1024.0


class DriftingBoard:
    """A fake board: the machine's speed ramps and jumps between plateaus over time (as
    measured here, benchmarks/ab-bisect.md); kernel B's driver 'slow' is `drop` slower."""

    def __init__(self, drop: float = 0.0, seed: int = 0, fail_on: int | None = None) -> None:
        self.drop = drop
        self.rng = random.Random(seed)
        self.slices = 0
        self.fail_on = fail_on
        self.speed = 1.0

    def describe(self, side: str) -> str:
        return f"kernel {side} (fake)"

    def run_slice(self, side: str, pair_index: int) -> SliceOutcome:
        self.slices += 1
        if self.fail_on is not None and self.slices == self.fail_on:
            return SliceOutcome(None, None, "kernel oops: BUG: unable to handle page fault")
        if self.rng.random() < 0.1:  # a plateau change
            self.speed = self.rng.choice([0.6, 0.8, 1.0, 1.2])
        self.speed *= 0.995  # and a slow ramp down (load building up)
        measurements = []
        for driver, base in (("fast", 200.0), ("slow", 100.0)):
            factor = 1.0 - self.drop if (side == "B" and driver == "slow") else 1.0
            samples = [
                base * MIB * self.speed * factor * math.exp(self.rng.gauss(0, 0.03))
                for _ in range(5)
            ]
            measurements.append(
                {
                    "source": "afalg",
                    "algorithm": "cbc(aes)",
                    "driver": driver,
                    "key_bits": 128,
                    "block_size": 4096,
                    "op": "encrypt",
                    "bytes_per_second": sorted(samples)[2],
                    "samples": samples,
                }
            )
        inventory = [
            {"name": "cbc(aes)", "driver": "fast", "priority": 300, "winner": True},
            {"name": "cbc(aes)", "driver": "slow", "priority": 100, "winner": False},
        ]
        if side == "A":
            inventory.append({"name": "xts(aes)", "driver": "xts-old", "winner": True})
        return SliceOutcome(
            {"schema": "pytest-hwcrypto/1", "inventory": inventory, "measurements": measurements},
            0.5,
        )


def make_document(steps: list[int], max_drop: float = 0.05, seed: int = 7) -> AbDocument:
    return AbDocument(
        board="uml",
        sides={"A": Side("A", "/k/a"), "B": Side("B", "/k/b")},
        slice=SliceSpec(seconds=1.0, block_sizes=(4096,)),
        seed=seed,
        max_drop=max_drop,
        alpha=0.05,
        steps=steps,
    )


def test_orders_are_balanced_in_blocks_and_fixed_by_seed() -> None:
    orders = [schedule.pair_order(3, i) for i in range(40)]
    for block in range(20):
        assert sorted(orders[2 * block : 2 * block + 2]) == ["AB", "BA"]
    assert orders == [schedule.pair_order(3, i) for i in range(40)]
    assert orders != [schedule.pair_order(4, i) for i in range(40)]


def test_a_slowed_driver_is_regressed_and_the_other_same_despite_drift() -> None:
    document = make_document([10, 20, 40])
    outcome = run_ab(document, DriftingBoard(drop=0.10, seed=1), None, stream=io.StringIO())
    verdicts = {v.key[5]: v.comparison for v in outcome.verdicts}
    assert verdicts["slow"].verdict is PairedVerdict.REGRESSED
    assert verdicts["fast"].verdict is PairedVerdict.SAME
    assert verdicts["slow"].change == pytest.approx(-0.10, abs=0.03)
    assert outcome.stopped == "decided"
    assert outcome.pairs == 10  # the first look already decided


def test_unchanged_kernels_never_regress_over_many_runs() -> None:
    regressed = 0
    for seed in range(30):
        document = make_document([10, 20, 40])
        outcome = run_ab(document, DriftingBoard(seed=seed), None, stream=io.StringIO())
        regressed += any(v.comparison.verdict is PairedVerdict.REGRESSED for v in outcome.verdicts)
    assert regressed == 0


def test_escalates_while_it_cannot_tell() -> None:
    document = make_document([10, 20, 40], max_drop=0.03)
    board = DriftingBoard(drop=0.03, seed=5)
    outcome = run_ab(document, board, None, stream=io.StringIO())
    assert outcome.pairs in (20, 40)
    assert board.slices == 2 * outcome.pairs


def test_budget_stops_before_the_next_pair_would_pass_it() -> None:
    ticks = iter(range(10_000))
    document = make_document([10, 20, 40], max_drop=0.03)
    outcome = run_ab(
        document,
        DriftingBoard(drop=0.03, seed=5),
        None,
        budget_seconds=13.0,
        wall=lambda: float(next(ticks)),
        stream=io.StringIO(),
    )
    # each slice takes one tick on the fake wall clock: a pair costs 2 s
    assert outcome.stopped == "budget"
    assert outcome.pairs == 6


def test_saved_after_every_pair_and_resumed_with_the_same_schedule(tmp_path: Path) -> None:
    path = tmp_path / "ab.json"
    document = make_document([10])
    with pytest.raises(AbError, match=r"kernel [AB] \(fake\): kernel oops"):
        run_ab(document, DriftingBoard(seed=2, fail_on=9), path, stream=io.StringIO())
    kept = load_document(path)
    assert len(kept.complete_pairs) == 4
    assert not kept.pairs[-1].complete
    resumed = run_ab(kept, DriftingBoard(seed=3), path, stream=io.StringIO())
    assert resumed.pairs == 10
    final = load_document(path)
    assert [p.index for p in final.pairs] == list(range(10))
    assert [p.order for p in final.pairs] == [schedule.pair_order(7, i) for i in range(10)]
    # every sample is kept, and the inventory once per side
    first = final.pairs[0].slices["A"].results or {}
    assert len(first["measurements"][0]["samples"]) == 5
    assert "inventory" not in first
    assert {e["driver"] for e in final.inventory["A"]} == {"fast", "slow", "xts-old"}


def test_resume_refuses_another_kernel(tmp_path: Path) -> None:
    existing = make_document([10])
    wanted = make_document([10])
    wanted.sides["B"] = Side("B", "/k/other")
    assert "sides differ" in (resume_mismatch(existing, wanted) or "")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": "pytest-hwcrypto/1"}))
    with pytest.raises(AbFileError, match="not an A/B results file"):
        load_document(bad)


def test_kernel_changes_and_table(tmp_path: Path) -> None:
    document = make_document([10])
    run_ab(document, DriftingBoard(drop=0.2, seed=4), None, stream=io.StringIO())
    changes = kernel_changes(document)
    assert changes.only_a == ["xts-old"]
    assert changes.only_b == []
    lines = format_changes(changes, one_sided_series(document))
    assert "drivers only in A: xts-old" in lines
    table = format_table(judge_document(document), 0.05)
    assert table[1].startswith("cbc(aes) [afalg 128-bit encrypt] 4096 B slow")
    assert "regressed" in table[1]


def test_by_name_series_pair_across_changed_winners() -> None:
    document = make_document([7])  # two series: 6 pairs cannot reach 0.05 / 2

    class WinnerChanges(DriftingBoard):
        def run_slice(self, side: str, pair_index: int) -> SliceOutcome:
            outcome = super().run_slice(side, pair_index)
            assert outcome.results is not None
            named = dict(outcome.results["measurements"][0])
            named.update({"driver": "fast" if side == "A" else "slow", BY_NAME_KEY: True})
            named["bytes_per_second"] *= 1.0 if side == "A" else 0.5
            outcome.results["measurements"].append(named)
            return outcome

    run_ab(document, WinnerChanges(seed=1), None, stream=io.StringIO())
    by_name = [v for v in judge_document(document) if v.key[5] == BY_NAME]
    assert len(by_name) == 1
    assert by_name[0].served == "fast -> slow"
    assert by_name[0].comparison.verdict is PairedVerdict.REGRESSED


def test_cli_names_the_missing_kernel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(
        [
            "ab",
            "--kernel",
            str(tmp_path / "nope"),
            "--kernel",
            "/bin/sh",
            "--out",
            str(tmp_path / "ab.json"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert err.strip() == f"hwcrypto: error: kernel A: {tmp_path / 'nope'} does not exist"


def test_cli_refuses_an_existing_file_without_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "ab.json"
    save_document(make_document([10]), out)
    code = cli.main(["ab", "--kernel", "/bin/sh", "--kernel", "/bin/sh", "--out", str(out)])
    assert code == 2
    assert "exists: give --resume" in capsys.readouterr().err


def test_cli_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["ab", "--kernel", "/bin/sh"]) == 2
    assert "give --kernel A --kernel B" in capsys.readouterr().err
    assert cli.main(["ab", "--kernel", "a", "--kernel", "b", "--pairs", "3"]) == 2
    assert "at --alpha 0.01 at least 8 pairs" in capsys.readouterr().err
    assert cli.main(["ab", "--kernel", "a", "--kernel", "b", "--pairs", "6", "--alpha", "0.05"])
    assert "--pairs" not in capsys.readouterr().err  # 6 pairs reach 0.05: past that check
    assert cli.main(["ab", "--kernel", "a", "--kernel", "b", "--alpha", "5"]) == 2
    assert "--alpha 5.0: must be between 0 and 1" in capsys.readouterr().err
    assert cli.main(["ab", "--kernel", "a", "--kernel", "b", "--max-drop", "x"]) == 2
    assert "--max-drop" in capsys.readouterr().err


def test_each_side_as_a_results_file_and_the_overlaid_report(tmp_path: Path) -> None:
    from pytest_hwcrypto.ab.series import side_results
    from pytest_hwcrypto.cli.ab import write_side_results
    from pytest_hwcrypto.model.results import Results
    from pytest_hwcrypto.report.document import load_inputs, write_report

    document = make_document([6])
    run_ab(document, DriftingBoard(drop=0.2, seed=4), None, stream=io.StringIO())
    b = Results.from_json(side_results(document, "B"), "B")
    slow = next(m for m in b.measurements if m.driver == "slow")
    assert len(slow.samples) == 6 * 5  # every sample of every pair, pooled
    files = write_side_results(document, tmp_path / "ab.json")
    assert [f.name for f in files] == ["ab.A.json", "ab.B.json"]
    data = write_report(load_inputs([str(f) for f in files]), str(tmp_path / "r.html"), None)
    assert data.panels
    html = (tmp_path / "r.html").read_text()
    assert "ab.A" in html and "ab.B" in html


def test_a_focus_judges_only_its_series_with_a_smaller_family() -> None:
    document = make_document([10])
    run_ab(document, DriftingBoard(drop=0.1, seed=3), None, stream=io.StringIO())
    everything = judge_document(document)
    slow_key = next(v.key for v in everything if v.key[5] == "slow")
    focused = judge_document(document, focus={slow_key})
    assert [v.key for v in focused] == [slow_key]
    # one question instead of two: the decision interval is narrower
    wide = next(v for v in everything if v.key == slow_key).comparison
    narrow = focused[0].comparison
    assert narrow.decision_high - narrow.decision_low < wide.decision_high - wide.decision_low
