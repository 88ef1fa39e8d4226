# SPDX-License-Identifier: MIT
"""Every Markdown link from one repository file to another resolves.

The README points into docs/, docs/ into benchmarks/ and back; a page moved or renamed,
or a heading reworded, must not leave a newcomer at a dead link. Checked: the relative
links of README.md, docs/*.md and benchmarks/*.md, and their anchors into Markdown files
(GitHub's heading slugs); web addresses are not followed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *ROOT.glob("docs/*.md"), *ROOT.glob("benchmarks/*.md")])

# [text](target) and [text](target "title"); images ![alt](target) too. Code spans and
# fenced blocks are removed first, so `[x](y)` shown as code is not taken for a link.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def relative_links(text: str) -> list[tuple[str, str]]:
    """(file, anchor) of each link in a Markdown text that points at a repository file;
    the anchor is "" when the link has none."""
    prose = CODE_SPAN.sub("", FENCE.sub("", text))
    targets = []
    for target in LINK.findall(prose):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a web address, mailto:, or an anchor in the same page
        path, _, anchor = target.partition("#")
        targets.append((path, anchor))
    return targets


def heading_anchors(text: str) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces
    as hyphens, a repeated heading numbered -1, -2..."""
    anchors: set[str] = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#* *$", FENCE.sub("", text), re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        numbered, n = slug, 0
        while numbered in anchors:
            n += 1
            numbered = f"{slug}-{n}"
        anchors.add(numbered)
    return anchors


def test_the_link_finder_sees_links_and_skips_code_and_addresses() -> None:
    text = (
        'See [options](docs/options.md#env) and ![plot](a/b.png "title").\n'
        "Not `[code](nope.md)`, nor [web](https://example.org/x.md) or [here](#top).\n"
        "```sh\n[fenced](also-nope.md)\n```\n"
    )
    assert relative_links(text) == [("docs/options.md", "env"), ("a/b.png", "")]


def test_anchors_are_spelled_as_github_spells_them() -> None:
    text = "# The `hwcrypto` command\n## (g), fifth round: 09:23 - 11:07\n## Notes\n## Notes\n"
    assert heading_anchors(text) == {
        "the-hwcrypto-command",
        "g-fifth-round-0923---1107",
        "notes",
        "notes-1",
    }


def test_the_pages_exist() -> None:
    assert ROOT / "README.md" in PAGES and len(PAGES) > 2


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for path, anchor in relative_links(page.read_text()):
        target = (page.parent / path).resolve()
        if not target.is_relative_to(ROOT) or not target.exists():
            broken.append(path)  # outside the repository, a link works in no clone
            continue
        is_page = target.suffix == ".md"
        if anchor and is_page and anchor not in heading_anchors(target.read_text()):
            broken.append(f"{path}#{anchor}")
    assert not broken, f"{page.relative_to(ROOT)}: links to missing files or headings: {broken}"
