"""The documentation hangs together: every relative link in README.md and docs/ names a file of the
repository (and, with ``#anchor``, a heading of that file), and the README's index lists every doc."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def without_code_blocks(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def prose(text: str) -> str:
    """The text outside code blocks and inline code (links there are examples, not links)."""
    return re.sub(r"`[^`\n]*`", "", without_code_blocks(text))


def heading_anchors(path: Path) -> set[str]:
    """GitHub's anchors for a Markdown file's headings: lower case, punctuation dropped, spaces as hyphens."""
    anchors = set()
    for title in re.findall(r"^#{1,6} (.+)$", without_code_blocks(path.read_text(encoding="utf-8")), flags=re.M):
        words = re.sub(r"[^\w\- ]", "", title.strip().lower())
        anchors.add(words.replace(" ", "-"))
    return anchors


def relative_links(document: Path) -> list[str]:
    links = LINK.findall(prose(document.read_text(encoding="utf-8")))
    return [link for link in links if not re.match(r"[a-z][a-z0-9+.-]*:", link)]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_names_a_repository_file_and_heading(document: Path) -> None:
    broken = []
    for link in relative_links(document):
        target, _, anchor = link.partition("#")
        path = (document.parent / target).resolve() if target else document
        if not path.exists() or ROOT not in path.parents:
            broken.append(f"{link}: no such file")
        elif anchor and anchor not in heading_anchors(path):
            broken.append(f"{link}: no heading #{anchor} in {path.relative_to(ROOT)}")
    assert broken == []


def test_the_readme_index_lists_every_doc() -> None:
    listed = {(ROOT / link).resolve() for link in relative_links(ROOT / "README.md")}
    docs = {path.resolve() for path in (ROOT / "docs").iterdir() if not path.name.startswith(".")}
    assert sorted(path.name for path in docs - listed) == []


def test_the_link_checker_sees_a_broken_link_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Title: the `x` one\n\n[b](b.md) [t](#title-the-x-one) [c](#nothing)\n"
                                   "`[inline](none.md)`\n```\n[code](none.md)\n```\n", encoding="utf-8")
    assert relative_links(tmp_path / "a.md") == ["b.md", "#title-the-x-one", "#nothing"]
    assert heading_anchors(tmp_path / "a.md") == {"title-the-x-one"}
