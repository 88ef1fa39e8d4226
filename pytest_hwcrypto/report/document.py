# SPDX-License-Identifier: MIT
"""`hwcrypto report` and `--hwcrypto-html` end to end: files in, PNG and HTML out.

The one place of the report that touches the file system; shaping, drawing and HTML are
pure modules beside it.  Each output is written atomically (a sibling temporary renamed
over the target), so a reader never sees half a report.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from pytest_hwcrypto.model.results import Results, ResultsError, read_json_object
from pytest_hwcrypto.report import benchmark_import
from pytest_hwcrypto.report.html import render_html
from pytest_hwcrypto.report.shaping import ReportData, ReportInput, file_labels, shape

DEFAULT_TITLE = "pytest-hwcrypto report"
MATPLOTLIB_MISSING = (
    "the report's plots need matplotlib, which is not installed: "
    "pip install 'pytest-hwcrypto[report]' (or apt-get install python3-matplotlib)"
)


class ReportError(ValueError):
    """Bad report input or an unwritable output; one line naming the file."""


def load_inputs(paths: Sequence[str]) -> list[ReportInput]:
    """Each file as Results (our JSON, `hwcrypto parse --json`, or pytest-benchmark's)."""
    documents: list[tuple[str, Results]] = []
    for path in paths:
        try:
            results = benchmark_import.results_from_document(read_json_object(path), path)
        except ResultsError as error:
            raise ReportError(str(error)) from None
        documents.append((path, results))
    return [
        ReportInput(label, path, results)
        for label, (path, results) in zip(file_labels(documents), documents)
    ]


def report_from_results(inputs: Sequence[ReportInput]) -> tuple[ReportData, bytes]:
    """The shaped data and the figure drawn from it (matplotlib is imported only here: a
    board that only runs suites need not carry it)."""
    try:
        from pytest_hwcrypto.report.plots import render_png
    except ImportError as error:
        if error.name is None or not error.name.startswith("matplotlib"):
            raise
        raise ReportError(MATPLOTLIB_MISSING) from None

    data = shape(inputs)
    return data, render_png(data)


def write_report(
    inputs: Sequence[ReportInput],
    html_path: str | None,
    plot_path: str | None,
    title: str = DEFAULT_TITLE,
) -> ReportData:
    data, png = report_from_results(inputs)
    if plot_path is not None:
        _write_atomically(Path(plot_path), png)
    if html_path is not None:
        _write_atomically(Path(html_path), render_html(data, png, title).encode("utf-8"))
    return data


def write_session_report(
    results: Results, path: Path, source: str = "this pytest session", title: str = DEFAULT_TITLE
) -> None:
    """`--hwcrypto-html`: the report of one session's results (no plot file beside it)."""
    label = file_labels([(source, results)])[0]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ReportError(f"{path}: cannot write: {error.strerror or error}") from None
    write_report([ReportInput(label, source, results)], str(path), None, title)


def _write_atomically(target: Path, content: bytes) -> None:
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        temporary.write_bytes(content)
        os.replace(temporary, target)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise ReportError(f"{target}: cannot write: {error.strerror or error}") from None
