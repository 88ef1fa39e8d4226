# SPDX-License-Identifier: MIT
"""Every verdict and finding on the recorded board results is what it was: a refactoring guard.

The verdict layer turns measurements into pass/fail and into the words a lab reads, so a
reshuffle of its modules must not move a single number or word.  This test recomputes,
from the board results saved in tests/data (see test_compare_board_fixtures.py for where
they come from: two A/A runs and a throttled run on the UML board, one QEMU run with
aesni, virtio-crypto and generic AES), everything the rules, the rule-free findings and
`hwcrypto compare` produce from them, and compares it with tests/data/verdicts_golden.json.

How the golden file was made: this module is its own generator (`--write`), and the file
was written by it on the verdict code of commit a2b2bc8, before verdict/rules.py became
the verdict/rules/ package and verdict/compare.py was split:

    git archive a2b2bc8 | tar -x -C DIR          # the code as it was
    cp tests/unit/test_verdicts_unchanged.py DIR/tests/unit/
    ln -s ../suites DIR/pytest_hwcrypto/suites   # as the installed package maps it
    cd DIR && PYTHONPATH=DIR python tests/unit/test_verdicts_unchanged.py --write

(the first version was written in the branch's own worktree before anything in it was
refactored; the "ties" sections were added later, by the commands above, and every
earlier section came out unchanged).
It reaches the code only through names every caller uses (verdict.rules' public names,
the `hwcrypto compare` command line, the throughput suite's collect_rules), so the same
module runs before and after.  Regenerate only for an intended change of behaviour, on
the code that has it, and say so in the commit.

Floats are compared exactly: a refactoring that keeps the arithmetic keeps every bit.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from pytest_hwcrypto.suites.test_throughput import collect_rules

from pytest_hwcrypto.cli import main
from pytest_hwcrypto.model.results import (
    InventoryItem,
    Measurement,
    Results,
    inventory_items,
    load_results,
    save_results,
)
from pytest_hwcrypto.profile import parse_profile
from pytest_hwcrypto.verdict.rules import (
    RuleError,
    crossover_findings,
    evaluate_rules,
    hw_loses_to_sw_findings,
    rule_from_dict,
    rules_from_list,
    winner_not_fastest_findings,
)

DATA = Path(__file__).resolve().parent.parent / "data"
GOLDEN = DATA / "verdicts_golden.json"
BOARD_FILES = {
    "qemu": DATA / "board_qemu_results.json",
    "uml_1": DATA / "board_uml_results_1.json",
    "uml_2": DATA / "board_uml_results_2.json",
    "uml_slow": DATA / "board_uml_results_slow.json",
}
AES_MODES = ("ecb(aes)", "cbc(aes)", "ctr(aes)", "xts(aes)")


def _hw_sw(algorithm: str, hw: str, sw: str, **more: Any) -> dict[str, Any]:
    return {"type": "hw-beats-sw", "algorithm": algorithm, "hw": hw, "sw": sw, **more}


# Rules judged on every board file: the pairs a lab would write, in every scope variant the
# rule reader takes (classes and driver names, block-size ranges, source, key size, op), and
# the ones that find no data (no offload on UML, no generic in tcrypt, a range beyond 64 KiB).
JUDGED_RULES: list[dict[str, Any]] = [
    *[_hw_sw(a, "offload", "generic") for a in AES_MODES],
    *[_hw_sw(a, "cpu-accel", "generic") for a in AES_MODES],
    _hw_sw("cbc(aes)", "offload", "cpu-accel"),
    _hw_sw("cbc(aes)", "offload", "generic", block_sizes=">=65536", source="afalg"),
    _hw_sw("cbc(aes)", "offload", "generic", block_sizes=">=4096", min_ratio=0.5),
    _hw_sw("cbc(aes)", "cpu-accel", "generic", block_sizes="<=256", name="small blocks"),
    _hw_sw("cbc(aes)", "offload", "cpu-accel", block_sizes=">=64K", min_ratio=1.2),
    _hw_sw("cbc(aes)", "virtio_crypto_aes_cbc", "cbc-aes-aesni", block_sizes=">=64K"),
    _hw_sw("cbc(aes)", "cbc(aes-fixed-time)", "cbc(aes-generic)"),
    _hw_sw("cbc(aes)", "cbc(aes-generic)", "cbc(aes-fixed-time)", block_sizes=">=4096"),
    _hw_sw("cbc(aes)", "cpu-accel", "generic", source="tcrypt"),
    _hw_sw("cbc(aes)", "cpu-accel", "generic", key_bits=256),
    _hw_sw("cbc(aes)", "cpu-accel", "generic", op="decrypt"),
    _hw_sw("cbc(aes)", "offload", "generic", block_sizes=">=1M"),
    {"type": "floor", "algorithm": "cbc(aes)", "class": "offload", "min_mib_s": 10,
     "block_sizes": ">=4096"},
    {"type": "floor", "algorithm": "cbc(aes)", "driver": "cbc-aes-aesni", "min_mib_s": 20,
     "block_sizes": ">=64K"},
    {"type": "floor", "algorithm": "xts(aes)", "class": "cpu-accel", "min_mib_s": 100},
    {"type": "floor", "algorithm": "xts(aes)", "class": "generic", "min_mib_s": 1},
    {"type": "floor", "algorithm": "cbc(aes)", "class": "generic", "min_mib_s": 50,
     "block_sizes": ">=4096"},
    {"type": "floor", "algorithm": "cbc(aes)", "driver": "cbc(aes-fixed-time)",
     "min_mib_s": 0.5},
    {"type": "floor", "algorithm": "cbc(aes)", "driver": "cbc-aes-aesni", "min_mib_s": 1,
     "source": "tcrypt", "key_bits": 256, "op": "decrypt"},
    {"type": "floor", "algorithm": "cbc(aes)", "driver": "cbc-aes-aesni", "min_mib_s": 1,
     "block_sizes": "<=8"},
    *[{"type": "winner-fastest", "algorithm": a} for a in AES_MODES],
    {"type": "winner-fastest", "algorithm": "cbc(aes)", "tolerance": 0.0},
    {"type": "winner-fastest", "algorithm": "cbc(aes)", "tolerance": "50%"},
    {"type": "winner-fastest", "algorithm": "cbc(aes)", "block_sizes": ">=4096"},
    {"type": "winner-fastest", "algorithm": "cbc(aes)", "source": "tcrypt"},
    {"type": "winner-fastest", "algorithm": "lrw(aes)"},
    {"type": "winner-fastest", "algorithm": "gcm(aes)"},
]  # fmt: skip

# no-regression needs a baseline: judged per (baseline, current) pair of board files.
REGRESSION_RULES: list[dict[str, Any]] = [
    {"type": "no-regression"},
    {"type": "no-regression", "max_drop": "20%"},
    {"type": "no-regression", "max_drop": 0.02},
    {"type": "no-regression", "algorithm": "cbc(aes)", "source": "afalg"},
    {"type": "no-regression", "driver": "xts(ecb(aes-generic))", "block_sizes": ">=4096"},
    {"type": "no-regression", "algorithm": "cbc(aes)", "key_bits": 256},
]
REGRESSION_PAIRS = [
    ("uml_1", "uml_1"),
    ("uml_1", "uml_2"),
    ("uml_2", "uml_1"),
    ("uml_1", "uml_slow"),
    ("qemu", "qemu"),
    ("qemu", "uml_1"),
    ("none", "uml_1"),
]

# Tables the reader refuses, with the message each gets (the reader's half of the contract).
BAD_TABLES: list[Any] = [
    "hw-beats-sw",
    {"algorithm": "cbc(aes)"},
    {"type": "faster"},
    _hw_sw("cbc(aes)", "offload", "offload"),
    _hw_sw("cbc(aes)", "offload", "generic", min_ration=1),
    _hw_sw("cbc(aes)", "offload", "generic", min_ratio="1x"),
    _hw_sw("cbc(aes)", "offload", "generic", block_sizes=">=lots"),
    _hw_sw("cbc(aes)", "offload", "generic", key_bits=True),
    {"type": "floor", "algorithm": "cbc(aes)", "class": "fast", "min_mib_s": 1},
    {"type": "floor", "algorithm": "cbc(aes)", "driver": "d", "class": "offload",
     "min_mib_s": 1},
    {"type": "no-regression", "max_drop": "10"},
    {"type": "no-regression", "max_drop": 1.5},
    {"type": "winner-fastest"},
]  # fmt: skip


def uml_instances(flagged: bool, with_priority: bool) -> list[dict[str, Any]]:
    """The mode instances the throughput suite creates on the UML board and then finds in
    /proc/crypto (the saved inventory predates them): fixed-time wins on priority 101.

    Variants: the winner flagged; chosen on priority alone; or, with no priority known,
    the first entry, listed here as the fast aes-generic instance.
    """
    ciphers = [("fixed-time", 101), ("generic", 100)]
    if not with_priority:
        ciphers.reverse()
    entries = []
    for mode in AES_MODES:
        template = mode.split("(")[0]
        inner = "ecb(aes-{})" if template == "xts" else "aes-{}"
        for cipher, priority in ciphers:
            entry: dict[str, Any] = {
                "name": mode,
                "driver": f"{template}({inner.format(cipher)})",
                "class": "generic",
            }
            if flagged:
                entry["winner"] = cipher == "fixed-time"
            if with_priority:
                entry["priority"] = priority
            entries.append(entry)
    return entries


INVENTORY_VARIANTS = {
    "recorded": None,
    "instances": uml_instances(flagged=True, with_priority=True),
    "priority only": uml_instances(flagged=False, with_priority=True),
    "no priority": uml_instances(flagged=False, with_priority=False),
}

PROFILE = """
[board]
name = "golden"

[[rule]]
type = "hw-beats-sw"
algorithm = "cbc(aes)"
hw = "offload"
sw = "generic"
block_sizes = ">=65536"

[[rule]]
type = "floor"
algorithm = "cbc(aes)"
class = "offlaod"
min_mib_s = 1

[[rule]]
type = "winner-fastest"
algorithm = "xts(aes)"
name = "xts winner"

[[rule]]
type = "no-regression"
max_drop = "15%"
speed = 3
"""


# ---------------------------------------------------------------------------------------
# computing everything


def compute_everything() -> dict[str, Any]:
    """Section name -> what the verdict layer says, as plain JSON."""
    boards = {name: load_results(path) for name, path in BOARD_FILES.items()}
    sections: dict[str, Any] = {}
    judged = rules_from_list(JUDGED_RULES, "golden.toml")
    for name, results in boards.items():
        for variant, extra in INVENTORY_VARIANTS.items():
            if extra is not None and not name.startswith("uml"):
                continue
            inventory = inventory_items(results.inventory + (extra or []))
            suffix = "" if extra is None else f" +{variant}"
            sections[f"findings/{name}{suffix}"] = _findings(results.measurements, inventory)
            sections[f"rules/{name}{suffix}"] = [
                _outcome(outcome)
                for outcome in evaluate_rules(judged, results.measurements, inventory)
            ]
    regression = rules_from_list(REGRESSION_RULES, "golden.toml")
    for before, after in REGRESSION_PAIRS:
        baseline = boards.get(before)
        current = boards[after]
        sections[f"no-regression/{before}->{after}"] = [
            _outcome(outcome)
            for outcome in evaluate_rules(
                regression, current.measurements, current.inventory_items(), baseline
            )
        ]

    sections["reader/bad-tables"] = [_read_error(table) for table in BAD_TABLES]
    sections["reader/profile"] = [
        {"label": collected.label, "rule": repr(collected.rule), "error": collected.error}
        for collected in collect_rules(parse_profile(PROFILE, Path("board.toml")))
    ]
    sections.update(_ties(boards))
    sections.update(_compare_command(boards))
    return sections


def _twin(measurements: Sequence[Measurement], driver: str, twin: str) -> list[Measurement]:
    """A second driver with exactly the same numbers as `driver`, listed right before it."""
    out = []
    for measurement in measurements:
        if measurement.driver == driver:
            out.append(dataclasses.replace(measurement, driver=twin))
        out.append(measurement)
    return out


def _ties(boards: Mapping[str, Results]) -> dict[str, Any]:
    """Two drivers equally fast to the last bit: the one seen first stands for the side (a
    class side, the winner's rival, a file in sw/hw mode); recorded data never tie."""
    qemu = boards["qemu"]
    cbc = [m for m in qemu.measurements if m.algorithm == "cbc(aes)" and m.source == "afalg"]
    tied = _twin(cbc, "cbc-aes-aesni", "cbc-aes-aesni-twin")
    qemu_rules = rules_from_list(
        [
            _hw_sw("cbc(aes)", "cpu-accel", "generic"),
            _hw_sw("cbc(aes)", "offload", "cpu-accel", block_sizes=">=64K"),
            {"type": "floor", "algorithm": "cbc(aes)", "class": "cpu-accel", "min_mib_s": 30},
        ],
        "ties.toml",
    )
    uml = boards["uml_1"]
    uml_tied = _twin(uml.measurements, "cbc(aes-generic)", "cbc(aes-generic-twin)")
    uml_inventory = inventory_items(uml.inventory + uml_instances(flagged=True, with_priority=True))
    uml_rules = rules_from_list([{"type": "winner-fastest", "algorithm": "cbc(aes)"}], "t.toml")
    return {
        "ties/qemu rules": [
            _outcome(outcome)
            for outcome in evaluate_rules(qemu_rules, tied, qemu.inventory_items())
        ],
        "ties/qemu findings": _findings(tied, qemu.inventory_items()),
        "ties/uml rules": [
            _outcome(outcome) for outcome in evaluate_rules(uml_rules, uml_tied, uml_inventory)
        ],
        "ties/uml findings": _findings(uml_tied, uml_inventory),
    }


def _findings(
    measurements: Sequence[Measurement], inventory: Sequence[InventoryItem]
) -> dict[str, Any]:
    return {
        "winner-not-fastest": _plain(winner_not_fastest_findings(measurements, inventory)),
        "winner-not-fastest tolerance 0": _plain(
            winner_not_fastest_findings(measurements, inventory, tolerance=0.0)
        ),
        "winner-not-fastest tolerance 0.3": _plain(
            winner_not_fastest_findings(measurements, inventory, tolerance=0.3)
        ),
        "hw-loses-to-sw": _plain(hw_loses_to_sw_findings(measurements, inventory)),
        "hw-loses-to-sw min_ratio 1.5": _plain(
            hw_loses_to_sw_findings(measurements, inventory, min_ratio=1.5)
        ),
        "crossover": _plain(crossover_findings(measurements, inventory)),
        "crossover min_ratio 2": _plain(crossover_findings(measurements, inventory, 2.0)),
        "crossover min_ratio 0.5": _plain(crossover_findings(measurements, inventory, 0.5)),
    }


def _outcome(outcome: Any) -> dict[str, Any]:
    return {"verdict": outcome.verdict.to_json(), "findings": _plain(outcome.findings)}


def _plain(findings: Sequence[Any]) -> list[dict[str, Any]]:
    return [finding.to_json() for finding in findings]


def _read_error(table: Any) -> str:
    try:
        return f"read: {rule_from_dict(table, 'golden.toml rule #1')!r}"
    except RuleError as error:
        return f"RuleError: {error}"


def _compare_command(boards: Mapping[str, Results]) -> dict[str, Any]:
    """`hwcrypto compare` in both modes, as text and as JSON, with its exit code."""
    sections: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        files = {name: str(path) for name, path in BOARD_FILES.items()}
        qemu_afalg = [m for m in boards["qemu"].measurements if m.source == "afalg"]
        aesni_twins = _twin(
            [m for m in qemu_afalg if m.driver_class == "cpu-accel"], "cbc-aes-aesni", "twin"
        )
        subsets = {
            "aesni twins": aesni_twins,
            "generic": [m for m in qemu_afalg if m.driver_class == "generic"],
            "aesni": [m for m in qemu_afalg if m.driver_class == "cpu-accel"],
            "virtio": [m for m in qemu_afalg if m.driver_class == "offload"],
            "hardware": [m for m in qemu_afalg if m.driver_class in ("cpu-accel", "offload")],
        }
        for name, measurements in subsets.items():
            files[name] = str(Path(tmp) / f"{name.replace(' ', '_')}.json")
            save_results(Results(measurements=measurements), files[name])
        for name in ("compare_pytest_benchmark", "compare_pytest_benchmark_data"):
            files[name] = str(DATA / f"{name}.json")
        runs = {
            "uml_1 uml_2": [files["uml_1"], files["uml_2"]],
            "uml_1 uml_slow": [files["uml_1"], files["uml_slow"]],
            "uml_1 uml_slow 30%": [files["uml_1"], files["uml_slow"], "--max-drop", "30%"],
            "uml_1 uml_slow cbc": [files["uml_1"], files["uml_slow"], "--algorithm", "cbc(aes)"],
            "qemu qemu": [files["qemu"], files["qemu"]],
            "pytest-benchmark": [
                files["compare_pytest_benchmark"],
                files["compare_pytest_benchmark_data"],
            ],
            "sw generic hw aesni": ["--sw", files["generic"], "--hw", files["aesni"]],
            "sw generic hw virtio": ["--sw", files["generic"], "--hw", files["virtio"]],
            "sw aesni hw virtio >=4096": [
                "--sw", files["aesni"], "--hw", files["virtio"], "--block-sizes", ">=4096",
            ],
            "sw generic hw hardware 1.5": [
                "--sw", files["generic"], "--hw", files["hardware"], "--min-ratio", "1.5",
            ],
            "ties: sw generic hw aesni twins": ["--sw", files["generic"], "--hw",
                                               files["aesni twins"]],
            "ties: sw aesni twins hw virtio": ["--sw", files["aesni twins"], "--hw",
                                              files["virtio"]],
            "sw generic hw virtio <=64 cbc": [
                "--sw", files["generic"], "--hw", files["virtio"], "--block-sizes", "<=64",
                "--algorithm", "cbc(aes)",
            ],
        }  # fmt: skip
        for name, args in runs.items():
            code, text = _run_cli(["compare", *args])
            json_code, json_text = _run_cli(["compare", *args, "--json"])
            sections[f"compare/{name}"] = {
                "exit": code,
                "lines": text.replace(tmp, "<tmp>").splitlines(),
                "json_exit": json_code,
                "json": json.loads(json_text),
            }
    return sections


def _run_cli(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(args)
    return code, out.getvalue()


# ---------------------------------------------------------------------------------------
# the test


def _golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return data


def _section_names() -> Iterator[str]:
    # read at collection; without the file (while it is being written) there is nothing
    if GOLDEN.exists():
        yield from _golden()


@pytest.fixture(scope="module")
def computed() -> dict[str, Any]:
    # one JSON round trip, so tuples and lists compare as they are stored
    data: dict[str, Any] = json.loads(json.dumps(compute_everything()))
    return data


def test_every_section_is_in_the_golden_file(computed: dict[str, Any]) -> None:
    assert sorted(computed) == sorted(_golden())


@pytest.mark.parametrize("section", list(_section_names()))
def test_section_is_unchanged(section: str, computed: dict[str, Any]) -> None:
    assert computed.get(section) == _golden()[section]


def test_the_golden_file_judges_something() -> None:
    """A guard over empty answers guards nothing: the data exercise passes and failures."""
    golden = _golden()
    verdicts = [
        outcome["verdict"]["passed"]
        for name, outcomes in golden.items()
        if name.startswith(("rules/", "no-regression/"))
        for outcome in outcomes
    ]
    assert True in verdicts and False in verdicts
    kinds = {
        finding["kind"]
        for name, by_kind in golden.items()
        if name.startswith("findings/")
        for findings in by_kind.values()
        for finding in findings
    }
    assert kinds == {"winner-not-fastest", "hw-loses-to-sw", "crossover"}
    rule_kinds = {
        finding["kind"]
        for name, outcomes in golden.items()
        if name.startswith(("rules/", "no-regression/"))
        for outcome in outcomes
        for finding in outcome["findings"]
    }
    assert rule_kinds == {"winner-not-fastest", "hw-loses-to-sw", "below-floor", "regression"}


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(f"usage: {sys.argv[0]} --write   (rewrites {GOLDEN})")
    GOLDEN.write_text(json.dumps(compute_everything(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN}")
