# SPDX-License-Identifier: MIT
"""`hwcrypto report`: shaping (pure), the figure, the HTML, and the command's errors."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import matplotlib.image
import pytest

from pytest_hwcrypto.cli import main
from pytest_hwcrypto.model.results import Finding, Results, Verdict, load_results
from pytest_hwcrypto.report.document import ReportError, load_inputs
from pytest_hwcrypto.report.html import render_html
from pytest_hwcrypto.report.plots import MAX_PANELS, chosen_panels, render_png
from pytest_hwcrypto.report.shaping import ReportInput, file_labels, shape
from pytest_hwcrypto.verdict.crossover import crossover

DATA = Path(__file__).parent.parent / "data"
QEMU = str(DATA / "board_qemu_results.json")
UML_1 = str(DATA / "board_uml_results_1.json")
UML_2 = str(DATA / "board_uml_results_2.json")
RAW = DATA / "paste" / "raw"
TWO_KERNELS_POST = DATA / "paste" / "variants" / "post_cryptsetup_two_kernels.txt"


def _parsed(tmp_path: Path, source: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """`hwcrypto parse --json` output of a recorded paste, as a file."""
    assert main(["parse", "auto", str(source), "--json"]) == 0
    target = tmp_path / (source.stem + ".json")
    target.write_text(capsys.readouterr().out)
    return str(target)


def test_qemu_run_has_hw_sw_ratios_with_the_crossover_of_the_medians() -> None:
    data = shape(load_inputs([QEMU]))
    panel = next(p for p in data.panels if p.key == ("afalg", "cbc(aes)", 128, "encrypt", 1))
    assert {c.driver_class for c in panel.curves} == {"cpu-accel", "offload", "generic"}
    by_driver = {r.hw_driver: r for r in panel.ratios}
    assert set(by_driver) == {"cbc-aes-aesni", "virtio_crypto_aes_cbc"}
    results = load_results(QEMU)
    medians = {
        (m.driver, m.block_size): m.bytes_per_second
        for m in results.measurements
        if m.source == "afalg" and m.algorithm == "cbc(aes)"
    }
    virtio = by_driver["virtio_crypto_aes_cbc"]
    expected = {
        size: medians[("virtio_crypto_aes_cbc", size)] / medians[("cbc(aes-generic)", size)]
        for size, _ in virtio.ratios
    }
    assert dict(virtio.ratios) == pytest.approx(expected)
    assert virtio.crossover == crossover(expected, 1.0)
    assert virtio.sw_drivers == ("cbc(aes-generic)",)
    # tcrypt measurements carry no class; the inventory gives it
    tcrypt = next(p for p in data.panels if p.key[0] == "tcrypt")
    assert tcrypt.curves[0].driver_class == "cpu-accel"


def test_uml_run_without_hardware_has_no_ratio_and_two_generic_curves() -> None:
    data = shape(load_inputs([UML_1]))
    assert len(data.panels) == 4 and not data.several_files
    for panel in data.panels:
        assert panel.ratios == ()
        assert [c.driver_class for c in panel.curves] == ["generic", "generic"]
        assert panel.block_sizes == (16, 64, 256, 1024, 4096, 16384, 65536)


def test_overlaid_files_are_told_apart_by_board_and_kernel_then_by_name() -> None:
    inputs = load_inputs([QEMU, UML_1, UML_2])
    assert [i.label for i in inputs] == [
        "qemu 6.1.0-57-amd64",
        "uml 6.1.176 [board_uml_results_1.json]",
        "uml 6.1.176 [board_uml_results_2.json]",
    ]
    data = shape(inputs)
    assert data.several_files
    panel = next(p for p in data.panels if p.key == ("afalg", "ecb(aes)", 128, "encrypt", 1))
    labels = [c.label(True) for c in panel.curves]
    assert "uml 6.1.176 [board_uml_results_2.json]: ecb(aes-generic) (generic)" in labels
    assert len(labels) == 6


def test_labels_of_files_without_environment_are_their_names() -> None:
    bare = Results()
    assert file_labels([("a/x.json", bare), ("b/y.json", bare)]) == ["x", "y"]
    assert file_labels([("a/x.json", bare), ("b/x.json", bare)]) == ["x #1", "x #2"]


def test_parse_output_without_block_sizes_becomes_bars_per_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    post = _parsed(tmp_path, TWO_KERNELS_POST, capsys)
    data = shape(load_inputs([post]))
    assert data.panels == ()
    (group,) = data.bar_groups
    assert group.source == "cryptsetup"
    series = {bar.file_label for bar in group.bars}
    assert len(series) == 2 and data.several_files  # two pasted kernels, not pooled
    names = {bar.name for bar in group.bars}
    assert "aes-cbc 128-bit encrypt" in names and len(group.bars) == 48


def test_png_decodes_and_is_not_blank(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    openssl = _parsed(tmp_path, RAW / "openssl_evp.txt", capsys)
    cryptsetup = _parsed(tmp_path, RAW / "uml_cryptsetup_aes_generic.txt", capsys)
    png = render_png(shape(load_inputs([UML_1, openssl, cryptsetup])))
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    pixels = matplotlib.image.imread(io.BytesIO(png), format="png")
    assert pixels.shape[0] > 1000 and pixels[..., :3].std() > 0.05


def test_figure_shows_ratio_panels_first_and_at_most_its_limit() -> None:
    data = shape(load_inputs([QEMU]))
    chosen = chosen_panels(data)
    assert len(data.panels) == 56 and len(chosen) == MAX_PANELS
    with_ratio = [p for p in data.panels if p.ratios]
    assert {p.key for p in chosen[: len(with_ratio)]} == {p.key for p in with_ratio}
    assert len(with_ratio) == 4  # the AF_ALG modes; tcrypt measured only the winners


def test_html_is_self_contained_and_escapes_what_files_say() -> None:
    results = load_results(UML_1)
    results.findings.append(Finding("crossover", "cbc(aes)", "<script>alert(1)</script>"))
    results.verdicts.append(
        Verdict("no-regression all", True, "ok", extra={"detectable_drop": 0.23})
    )
    data = shape([ReportInput("uml <6.1>", "x.json", results)])
    page = render_html(data, b"\x89PNG fake", "title & more")
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "uml &lt;6.1&gt;" in page and "title &amp; more" in page
    assert 'src="data:image/png;base64,' in page
    assert not re.search(r"(src|href)=\"(?!data:)", page)  # nothing fetched from elsewhere
    assert "http://" not in page and "https://" not in page
    assert "23 %" in page  # the verdict's detectable drop
    assert page.count("<table>") >= 4 + 3  # 4 panels, files, verdicts, findings, environment
    assert "ecb(aes-fixed-time)" in page and "6.1.176" in page


def test_command_writes_both_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    html, png = tmp_path / "r.html", tmp_path / "r.png"
    assert main(["report", UML_1, UML_2, "--html", str(html), "--plot", str(png)]) == 0
    assert "4 block-size series" in capsys.readouterr().out  # the same 4 families overlaid
    assert png.read_bytes().startswith(b"\x89PNG")
    assert html.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "invalid JSON at line 1"),
        ('{"schema": "other/1"}', "unsupported schema"),
        ('{"schema": "pytest-hwcrypto/1", "measurements": [{"source": 1}]}', "measurements[0]"),
    ],
)
def test_bad_input_is_one_line_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, expected: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    assert main(["report", UML_1, str(bad), "--html", str(tmp_path / "o.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(bad) in err and expected in err
    assert not (tmp_path / "o.html").exists()


def test_missing_outputs_and_unwritable_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", UML_1]) == 2
    assert "--html" in capsys.readouterr().err
    target = tmp_path / "missing-dir" / "o.png"
    assert main(["report", UML_1, "--plot", str(target)]) == 2
    assert str(target) in capsys.readouterr().err
    with pytest.raises(ReportError, match=r"nope\.json"):
        load_inputs([str(tmp_path / "nope.json")])


def test_pytest_benchmark_files_are_read_too() -> None:
    data = shape(load_inputs([str(DATA / "compare_pytest_benchmark.json")]))
    assert data.panels or data.bar_groups
    json.dumps([p.title for p in data.panels])


def test_a_file_without_measurements_still_gives_a_report(tmp_path: Path) -> None:
    """`hwcrypto inventory --json` output: environment and an empty-figure note, no error."""
    inventory_only = tmp_path / "inventory.json"
    inventory_only.write_text(
        json.dumps({"schema": "pytest-hwcrypto/1", "kernel": {"release": "6.1.176"}})
    )
    html = tmp_path / "r.html"
    assert main(["report", str(inventory_only), "--html", str(html)]) == 0
    page = html.read_text()
    assert "No findings." in page and "6.1.176" in page and "data:image/png;base64," in page
