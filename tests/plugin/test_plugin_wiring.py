# SPDX-License-Identifier: MIT
"""The plugin as pytest sees it: inert without --hwcrypto, suites shipped, settings wired."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_hwcrypto.vocabulary import Suite

pytest_plugins = ["pytester"]


def test_inert_without_the_flag(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("-q")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    assert "hwcrypto:" not in result.stdout.str()


def test_without_the_flag_an_ordinary_test_runs_without_hwcrypto_fixtures(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile("""
        def test_plain(request):
            assert "hwcrypto_inventory" not in request.fixturenames
            with __import__("pytest").raises(Exception):
                request.getfixturevalue("hwcrypto_inventory")
    """)
    result = pytester.runpytest("-q")
    result.assert_outcomes(passed=1)


def test_shipped_suites_are_collected_from_an_empty_directory(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--hwcrypto", "--collect-only", "-q")
    out = result.stdout.str()
    assert "test_inventory.py" in out
    assert result.ret == pytest.ExitCode.OK


def test_suite_selection_deselects_other_suites(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_mine="""
        import pytest

        @pytest.mark.hwcrypto_throughput
        def test_fast():
            pass

        @pytest.mark.hwcrypto_inventory
        def test_listed():
            pass

        def test_unmarked():
            pass
    """
    )
    result = pytester.runpytest("--hwcrypto", "--hwcrypto-suite=inventory", "test_mine.py", "-q")
    result.assert_outcomes(passed=2, deselected=1)


def test_unknown_suite_is_one_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--hwcrypto", "--hwcrypto-suite=inventory,speed")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*option --hwcrypto-suite='inventory,speed': unknown suite speed*"]
    )
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


@pytest.mark.parametrize("future", ["containers", "userspace"])
def test_a_suite_that_does_not_exist_yet_is_refused_not_silently_empty(
    pytester: pytest.Pytester, future: str
) -> None:
    result = pytester.runpytest("--hwcrypto", f"--hwcrypto-suite={future}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*unknown suite {future} (choose from {', '.join(Suite.values())})*"]
    )


def test_options_reach_tests_typed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_types="""
        def test_types(hwcrypto_options):
            assert isinstance(hwcrypto_options.budget, float)
            assert hwcrypto_options.block_sizes == (16, 4096)
            assert [str(s) for s in hwcrypto_options.suite] == ["inventory"]
        """
    )
    result = pytester.runpytest(
        "--hwcrypto",
        "--hwcrypto-suite=inventory",
        "--hwcrypto-budget=7",
        "--hwcrypto-block-sizes=4K,16",
        "test_types.py",
    )
    result.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            ["--hwcrypto-block-sizes=16,4k,huge"],
            "ERROR: option --hwcrypto-block-sizes='16,4k,huge': bad block size 'huge'*",
        ),
        (["--hwcrypto-load=gpu:2"], "ERROR: option --hwcrypto-load='gpu:2': unknown load 'gpu:2'*"),
        (
            ["-o", "hwcrypto_load=cpu:x"],
            "ERROR: ini hwcrypto_load='cpu:x': bad load 'cpu:x': N in cpu:N must be a whole*",
        ),
    ],
)
def test_bad_measuring_settings_fail_at_startup_not_mid_run(
    pytester: pytest.Pytester, source: list[str], expected: str
) -> None:
    """A typo in a throughput setting must not cost a board boot and a measuring run."""
    result = pytester.runpytest("--hwcrypto", "--collect-only", *source)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1
    result.stderr.fnmatch_lines([expected])


def test_unreadable_baseline_is_one_usage_error_naming_file_and_line(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(".json", base='{"schema": "pytest-hwcrypto/1",\n "measurements": [}')
    result = pytester.runpytest("--hwcrypto", "--collect-only", "--hwcrypto-baseline=base.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert errors == [
        "ERROR: --hwcrypto-baseline (command line): base.json: invalid JSON at line 2 "
        "column 19: Expecting value"
    ]


def test_missing_board_profile_is_one_line(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--hwcrypto", "--hwcrypto-board=nowhere.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert errors == ["ERROR: board profile nowhere.toml not found"]


def test_bad_profile_names_file_key_and_line(pytester: pytest.Pytester) -> None:
    pytester.makefile(
        ".toml",
        board="""
        [board]
        name = "demo"

        [[expect]]
        algorithm = "cbc(aes)"
        class = "offlaod"
    """,
    )
    result = pytester.runpytest("--hwcrypto", "--hwcrypto-board=board.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    # fnmatch would read "[expect #1]" as a character class: compare the line itself.
    assert result.stderr.lines[0] == (
        "ERROR: board.toml:6: [expect #1] class: unknown class 'offlaod' "
        "(choose from generic, cpu-accel, offload)"
    )


_SHOW_TIMEOUT = """
    def test_show(hwcrypto_run):
        resolved = hwcrypto_run.settings["timeout"]
        print("TIMEOUT", resolved.value, resolved.source)
"""


@pytest.mark.parametrize(
    ("cli", "env", "ini", "profile", "expected"),
    [
        ("3", "4", "5", "6", "TIMEOUT 3.0 command line"),
        (None, "4", "5", "6", "TIMEOUT 4.0 environment HWCRYPTO_TIMEOUT"),
        (None, None, "5", "6", "TIMEOUT 5.0 ini hwcrypto_timeout"),
        (None, None, None, "6", "TIMEOUT 6.0 board.toml [settings] timeout"),
        (None, None, None, None, "TIMEOUT 10.0 default"),
    ],
)
def test_settings_precedence(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    cli: str | None,
    env: str | None,
    ini: str | None,
    profile: str | None,
    expected: str,
) -> None:
    pytester.makepyfile(test_show=_SHOW_TIMEOUT)
    pytester.makeini(f"[pytest]\nhwcrypto_timeout = {ini}\n" if ini else "[pytest]\n")
    settings = f"\n[settings]\ntimeout = {profile}\n" if profile else ""
    pytester.makefile(".toml", board=f'[board]\nname = "demo"\n{settings}')
    monkeypatch.delenv("HWCRYPTO_TIMEOUT", raising=False)
    if env:
        monkeypatch.setenv("HWCRYPTO_TIMEOUT", env)
    args = ["--hwcrypto", "--hwcrypto-board=board.toml", "test_show.py", "-s", "-q"]
    if cli:
        args.append(f"--hwcrypto-timeout={cli}")
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([expected])


def test_bad_environment_value_names_the_variable(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HWCRYPTO_TIMEOUT", "soon")
    result = pytester.runpytest("--hwcrypto")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: environment HWCRYPTO_TIMEOUT='soon': *"])


def test_report_header_names_the_kernel(pytester: pytest.Pytester) -> None:
    import os

    pytester.makepyfile("def test_ok(): pass")
    result = pytester.runpytest("--hwcrypto", "test_report_header_names_the_kernel.py")
    result.stdout.fnmatch_lines([f"hwcrypto: kernel {os.uname().release} *"])


def test_results_json_is_written_with_kernel_and_inventory(pytester: pytest.Pytester) -> None:
    import json
    import os

    result = pytester.runpytest(
        "--hwcrypto", "--hwcrypto-suite=inventory", "--hwcrypto-json=out/results.json"
    )
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    data = json.loads((pytester.path / "out/results.json").read_text())
    assert data["schema"] == "pytest-hwcrypto/1"
    assert data["kernel"]["release"] == os.uname().release
    assert {"name", "driver", "class", "winner"} <= set(data["inventory"][0])


def test_results_json_is_merged_across_xdist_workers(pytester: pytest.Pytester) -> None:
    import json

    pytester.makepyfile(
        test_record="""
        import pytest

        @pytest.mark.parametrize("size", [16, 64, 256, 1024])
        def test_record(hwcrypto_results, size):
            from pytest_hwcrypto.model.results import Measurement
            hwcrypto_results.add_measurement(Measurement(
                source="afalg", algorithm="cbc(aes)", driver="cbc(aes-generic)",
                key_bits=128, block_size=size, op="encrypt",
                bytes_per_second=float(size)))
        """
    )
    result = pytester.runpytest("--hwcrypto", "-n", "2", "--hwcrypto-json=r.json", "test_record.py")
    result.assert_outcomes(passed=4)
    data = json.loads((pytester.path / "r.json").read_text())
    assert sorted(m["block_size"] for m in data["measurements"]) == [16, 64, 256, 1024]


def test_throughput_is_not_measured_by_competing_xdist_workers(pytester: pytest.Pytester) -> None:
    """Under a --dist that would run it beside other tests, the suite skips, saying why (the
    default -n N makes measuring tests take turns instead: test_xdist_measuring.py)."""
    result = pytester.runpytest(
        "--hwcrypto", "--hwcrypto-suite=throughput", "-n", "2", "--dist", "worksteal", "-rs"
    )
    result.stdout.fnmatch_lines(["*throughput is not measured under pytest-xdist with 2 workers*"])
    assert "skcipher" not in result.stdout.str(), "the xdist reason comes before any other"


def test_baseline_may_be_a_pytest_benchmark_run_id(pytester: pytest.Pytester) -> None:
    """`--hwcrypto-baseline=0001` finds .benchmarks/<machine>/0001_*.json, as
    pytest-benchmark's --benchmark-compare=0001 does."""
    saved = Path(__file__).resolve().parent.parent / "data" / "compare_pytest_benchmark.json"
    storage = pytester.path / ".benchmarks" / "Linux-CPython-3.11-64bit"
    storage.mkdir(parents=True)
    (storage / "0001_abc123_20261201_000000.json").write_text(saved.read_text())
    pytester.makepyfile(
        test_show="""
        def test_show(hwcrypto_run):
            drivers = {m.driver for m in hwcrypto_run.baseline.measurements}
            assert "cbc-aes-aesni" in drivers
        """
    )
    assert pytester.runpytest("--hwcrypto", "--hwcrypto-baseline=1", "test_show.py").ret == 0
    result = pytester.runpytest("--hwcrypto", "--hwcrypto-baseline=0002", "test_show.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*'0002' is not a file, and as a pytest-benchmark run id *0*"])


def test_html_report_is_written_at_session_end(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_record="""
        import pytest

        @pytest.mark.parametrize("size", [16, 4096])
        @pytest.mark.parametrize("driver", ["cbc(aes-generic)", "cbc-aes-aesni"])
        def test_record(hwcrypto_results, size, driver):
            from pytest_hwcrypto.model.results import Measurement
            hwcrypto_results.add_measurement(Measurement(
                source="afalg", algorithm="cbc(aes)", driver=driver,
                key_bits=128, block_size=size, op="encrypt", bytes_per_second=float(size),
                driver_class="generic" if "generic" in driver else "cpu-accel"))
        """
    )
    result = pytester.runpytest("--hwcrypto", "--hwcrypto-html=out/report.html", "test_record.py")
    result.assert_outcomes(passed=4)
    page = (pytester.path / "out" / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert "cbc(aes) 128-bit encrypt (afalg)" in page and "cbc-aes-aesni" in page
    assert 'src="data:image/png;base64,' in page


def test_html_report_path_that_cannot_be_written_is_a_warning(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_ok(): pass")
    (pytester.path / "a-file").write_text("")
    result = pytester.runpytest(
        "--hwcrypto",
        "--hwcrypto-html=a-file/report.html",
        "test_html_report_path_that_cannot_be_written_is_a_warning.py",
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*--hwcrypto-html: a-file/report.html: cannot write*"])


_BLIND_VERDICT = """
from pytest_hwcrypto import fixtures
from pytest_hwcrypto.model.results import Verdict

def test_judged(hwcrypto_results, hwcrypto_options):
    verdict = Verdict("no-regression all", True, "no regression (could detect drops ≥ 31 %)",
                      extra={"detectable_drop": 0.31, "max_drop": 0.10})
    fixtures.record_and_judge(hwcrypto_results, verdict, strict=hwcrypto_options.strict)
"""


def test_rule_blind_below_its_max_drop_warns(pytester: pytest.Pytester) -> None:
    import json

    pytester.makepyfile(test_judged=_BLIND_VERDICT)
    result = pytester.runpytest("--hwcrypto", "--hwcrypto-json=r.json", "test_judged.py")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*PytestWarning: no-regression all: no regression (could detect*"])
    (verdict,) = json.loads((pytester.path / "r.json").read_text())["verdicts"]
    assert verdict["passed"] is True and verdict["detectable_drop"] == 0.31


def test_rule_blind_below_its_max_drop_fails_when_strict(pytester: pytest.Pytester) -> None:
    import json

    pytester.makepyfile(test_judged=_BLIND_VERDICT)
    result = pytester.runpytest(
        "--hwcrypto", "--hwcrypto-strict", "--hwcrypto-json=r.json", "test_judged.py"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*could detect drops ≥ 31 %) (--hwcrypto-strict)*"])
    (verdict,) = json.loads((pytester.path / "r.json").read_text())["verdicts"]
    assert verdict["passed"] is False


# A /proc/crypto captured on the QEMU board (aesni, virtio-crypto and generic drivers), so
# what is collected does not depend on the kernel the tests run on.
QEMU_PROC_CRYPTO = (
    Path(__file__).resolve().parent.parent / "data" / "proc_crypto" / "qemu-6.1.0-57-amd64.txt"
)
_READ_THE_CAPTURE = f"""
import pathlib
from pytest_hwcrypto import fixtures

def pytest_configure(config):
    fixtures.PROC_CRYPTO = pathlib.Path({str(QEMU_PROC_CRYPTO)!r})
"""


def _collected(pytester: pytest.Pytester, *args: str) -> list[str]:
    pytester.makeconftest(_READ_THE_CAPTURE)
    result = pytester.runpytest_subprocess(
        "--hwcrypto", "--hwcrypto-suite=inventory,throughput,dmcrypt", "--collect-only", "-q", *args
    )
    assert result.ret == pytest.ExitCode.OK, result.outlines
    return [line.split("::")[-1] for line in result.outlines if "::" in line]


def _of(ids: list[str], test: str) -> set[str]:
    """The algorithms `test` is parametrized over: test_x[cbc(aes):aesni] -> cbc(aes)."""
    prefix = f"{test}["
    return {i[len(prefix) :].split(":")[0].rstrip("]") for i in ids if i.startswith(prefix)}


def test_algorithm_option_leaves_the_other_algorithms_out_of_every_kernel_suite(
    pytester: pytest.Pytester,
) -> None:
    every = _collected(pytester)
    chosen = _collected(pytester, "--hwcrypto-algorithm=cbc(aes),sha256")
    # Without the option the capture gives each suite more than the two algorithms,
    assert {"cbc(aes)", "sha256", "xts(aes)"} <= _of(every, "test_selftest_passed")
    assert {"cbc(aes)", "sha256"} < _of(every, "test_measured_on_every_driver")
    assert "xts(aes)" in _of(every, "test_integrity")
    # and with it each keeps those two alone, every driver of them, and no other test.
    assert _of(chosen, "test_selftest_passed") == {"cbc(aes)", "sha256"}
    assert [i for i in every if i.startswith("test_selftest_passed[sha256:")] == [
        i for i in chosen if i.startswith("test_selftest_passed[sha256:")
    ]
    assert _of(chosen, "test_measured_on_every_driver") == {"cbc(aes)", "sha256"}
    assert _of(chosen, "test_integrity") == {"cbc(aes)"}
    unparametrized = {i for i in every if "[" not in i}
    assert unparametrized <= set(chosen)


def test_algorithm_option_is_named_in_the_header(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_ok(): pass")
    result = pytester.runpytest(
        "--hwcrypto",
        "--hwcrypto-algorithm=authenc(hmac(sha256),cbc(aes)),xts(aes)",
        "test_algorithm_option_is_named_in_the_header.py",
    )
    result.stdout.fnmatch_lines(
        [
            "hwcrypto: only algorithms authenc(hmac(sha256),cbc(aes)), xts(aes) (command line);"
            " the other algorithms are not tested"
        ]
    )


def test_a_mistyped_algorithm_is_one_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--hwcrypto", "--hwcrypto-algorithm=cbc(aes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: option --hwcrypto-algorithm='cbc(aes': the parentheses do not balance"]
    )
    assert "Traceback" not in result.stderr.str() + result.stdout.str()
