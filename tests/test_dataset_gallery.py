"""The gallery page: escaping, links, filters and paging, checked in the HTML and in headless Chromium."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest
from headless_chromium import ChromiumPage, find_chromium
from sample_outputs import write_sample_stage_outputs

from dataset.mera.document import read_export
from dataset.mera.export import ExportSettings, export_dataset
from dataset.mera.prompt import PromptSet
from dataset.publish.gallery import GallerySettings, files_dir, write_gallery
from dataset.publish.plots import PLOT_FILES
from ruclevr.io import atomic_write_json, read_json

SCRIPT_QUESTION = 'Что это? <script>window.injected = 1;</script><img src=x onerror="window.injected = 2">'
ODD_FAMILY = 'query/"><script>window.injected = 3</script>'
ENGLISH = '<b>bold</b> & "quoted"'


class PageParts(HTMLParser):
    """The page's scripts, image sources, link targets and the text of the question cells."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts = 0
        self.sources: list[str] = []
        self.links: list[str] = []
        self.questions: list[str] = []
        self._in_question = False

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "script":
            self.scripts += 1
        elif tag == "img":
            self.sources.append(attributes["src"])
        elif tag == "a":
            self.links.append(attributes["href"])
        if "question-ru" in (attributes.get("class") or "").split():
            self._in_question = True
            self.questions.append("")

    def handle_endtag(self, tag):
        if tag == "div":
            self._in_question = False

    def handle_data(self, data):
        if self._in_question:
            self.questions[-1] += data


@pytest.fixture()
def export(tmp_path: Path) -> Path:
    """A small export whose texts try to break out of the page."""
    paths = write_sample_stage_outputs(tmp_path / "src", n_scenes=4)
    document = read_json(paths["questions"])
    document["questions"][2]["question_ru"] = SCRIPT_QUESTION
    document["questions"][2]["question"] = ENGLISH
    document["questions"][3]["family"] = ODD_FAMILY
    atomic_write_json(paths["questions"], document)
    export_dataset(paths["questions"], paths["scenes"], tmp_path / "mera", ExportSettings(1, 0, PromptSet.from_paths()))
    return tmp_path / "mera"


def test_page_escapes_every_text_and_links_only_files_that_exist(export, tmp_path) -> None:
    out = tmp_path / "site" / "gallery.html"
    summary = write_gallery(export, out, GallerySettings(per_page=2))
    document = read_export(export)
    n_items = len(document["data"]["shots"]) + len(document["data"]["test"])
    assert summary == {"images": 4, "questions": n_items, "plots": len(PLOT_FILES)}
    page = out.read_text(encoding="utf-8")
    parts = PageParts()
    parts.feed(page)
    assert parts.scripts == 1, "only the page's own script"
    assert SCRIPT_QUESTION in parts.questions  # shown as text, exactly as written
    assert "&lt;script&gt;window.injected = 1;&lt;/script&gt;" in page and "<script>window.injected" not in page
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; &#34;quoted&#34;" in page
    assert 'data-family="query/&#34;&gt;&lt;script&gt;' in page
    assert len(parts.sources) == 4 + len(PLOT_FILES)
    for target in parts.sources + parts.links:
        assert not target.startswith(("/", "file:", "http")), target
        assert (out.parent / unquote(target)).resolve().is_file(), target
    assert sorted(p.name for p in (files_dir(out) / "thumbs").iterdir()) == [f"ruclevr_{i:06d}.jpg" for i in range(4)]
    # The same data gives the same files.
    before = {p: p.read_bytes() for p in out.parent.rglob("*") if p.is_file()}
    write_gallery(export, out, GallerySettings(per_page=2))
    assert {p: p.read_bytes() for p in out.parent.rglob("*") if p.is_file()} == before


def test_a_questions_file_is_shown_with_its_images_scenes_and_recolouring(tmp_path) -> None:
    paths = write_sample_stage_outputs(tmp_path / "DATA", n_scenes=3)
    document = read_json(paths["questions"])
    document["questions"][0]["augmentation"] = {"source_image_filename": "ruclevr_000009.png", "color_map": {"blue": "red"},
                                                "source_question": "What color is the blue cube?", "source_answer": "blue"}
    atomic_write_json(paths["questions"], document)
    out = tmp_path / "gallery.html"
    summary = write_gallery(paths["questions"], out, GallerySettings(max_images=2))
    assert summary["images"] == 2
    page = out.read_text(encoding="utf-8")
    scenes = read_json(paths["scenes"])["scenes"]
    assert f"ruclevr_000000.png, {len(scenes[0]['objects'])} objects" in page  # counted from render/scenes.json
    assert "recoloured from ruclevr_000009.png" in page and "blue&rarr;red" in page
    assert "before recolouring: What color is the blue cube? (blue)" in page
    assert "ruclevr_000002" not in page


def test_bad_input_is_one_line_and_writes_nothing(export, tmp_path, capsys) -> None:
    from dataset.cli import main

    (export / "samples" / "ruclevr_000001.png").unlink()
    for argv, message in (
        (["--data", str(export), "--out", str(tmp_path / "g.html")], "does not exist"),
        (["--data", str(tmp_path / "nowhere"), "--out", str(tmp_path / "g.html")], "no exported dataset"),
        (["--data", str(export), "--out", str(tmp_path / "g.txt")], "must be an .html file"),
        (["--data", str(export), "--out", str(tmp_path / "g.html"), "--per-page", "0"], "must be a positive integer"),
    ):
        assert main(["gallery", *argv]) == 2, argv
        error = capsys.readouterr().err
        assert message in error and error.count("\n") == 1 and "Traceback" not in error, error
    assert not (tmp_path / "g.html").exists() and not (tmp_path / "g_files").exists()


CHROMIUM = find_chromium()


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (make browser installs it)")
def test_page_in_headless_chromium_loads_without_errors_and_filters(export, tmp_path) -> None:
    out = tmp_path / "gallery.html"
    write_gallery(export, out, GallerySettings(per_page=3))
    document = read_export(export)
    items = document["data"]["shots"] + document["data"]["test"]
    with ChromiumPage(CHROMIUM) as page:
        page.open(out)
        assert page.problems() == []
        images = page.evaluate("Array.from(document.images).map(i => [i.complete, i.naturalWidth > 0])")
        assert images == [[True, True]] * (4 + len(PLOT_FILES))
        # The question with <script> is text on the page, and nothing of it ran.
        texts = page.evaluate("Array.from(document.querySelectorAll('.question-ru')).map(e => e.textContent)")
        assert SCRIPT_QUESTION in texts
        assert page.evaluate("typeof window.injected") == "undefined"
        assert page.evaluate("document.scripts.length") == 1
        # Paging: 3 of the 4 images on page 1, the last one on page 2.
        visible_cards = "Array.from(document.querySelectorAll('.card')).filter(c => !c.hidden).map(c => c.dataset.image)"
        assert len(page.evaluate(visible_cards)) == 3
        page.evaluate("document.getElementById('next').click()")
        assert page.evaluate(visible_cards) == ["ruclevr_000003.png"]
        assert page.evaluate("document.getElementById('status').textContent").endswith("page 2 of 2")
        # Filtering by type, then by the odd family name.
        visible_rows = ("Array.from(document.querySelectorAll('.question')).filter(r => !r.hidden && "
                        "!r.closest('.card').hidden).map(r => [r.dataset.type, r.dataset.family])")
        select = "var s = document.getElementById('{0}'); s.value = {1!r}; s.dispatchEvent(new Event('change'));"
        page.evaluate(select.format("filter-type", "count"))
        rows = page.evaluate(visible_rows)
        assert rows and {row[0] for row in rows} == {"count"}
        count_items = sum(item["meta"]["question_type"] == "count" for item in items)
        assert page.evaluate("document.getElementById('status').textContent").startswith(
            f"{len({i['inputs']['image'] for i in items if i['meta']['question_type'] == 'count'})} images, {count_items} questions")
        page.evaluate(select.format("filter-type", ""))
        page.evaluate(select.format("filter-family", ODD_FAMILY))
        assert page.evaluate(visible_rows) == [[next(i["meta"]["question_type"] for i in items
                                                     if document["provenance"][i["meta"]["id"] - 1]["family"] == ODD_FAMILY),
                                                ODD_FAMILY]]
        assert page.problems() == []
