# SPDX-License-Identifier: MIT
"""Headless Chromium for the tests that render a page of ours (the report, history show):
the DOM it builds and the screenshots it takes, with what a test counts in the DOM."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Each rendering test module sets `pytestmark = needs_chromium`.
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium not installed: apt-get install chromium (.ci/setup does)"
)


class Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables = 0
        self.rows = 0
        self.images: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables += 1
        elif tag == "tr":
            self.rows += 1
        elif tag == "img":
            self.images.append(dict(attrs).get("src") or "")


def elements(markup: str) -> Elements:
    parser = Elements()
    parser.feed(markup)
    return parser


def chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
