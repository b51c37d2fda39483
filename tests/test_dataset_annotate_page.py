"""The offline annotation page in headless Chromium: typing every answer, reload, the saved JSON, escaping."""

from __future__ import annotations

import base64
import json
import re

import pytest
from annotate_helpers import load, read_dataset, small_export, write_dataset
from headless_chromium import ChromiumPage, find_chromium

from dataset.cli import main

CHROMIUM = find_chromium()
SCRIPT_QUESTION = 'Что это? <script>window.injected = 1;</script><img src=x onerror="window.injected = 2">'
VISIBLE_ID = "document.querySelector('.task:not([hidden])').dataset.id"
PROGRESS = "document.getElementById('progress').textContent"


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (make browser installs it)")
def test_page_keeps_typed_answers_across_a_reload_and_saves_json_that_imports(tmp_path, capsys) -> None:
    export = small_export(tmp_path)
    document = read_dataset(export)
    document["data"]["test"][1]["inputs"]["question"] = SCRIPT_QUESTION
    write_dataset(export, document)
    tasks = tmp_path / "tasks"
    assert main(["annotate", "export", "--data", str(export), "--out", str(tasks), "--overlap", "1",
                 "--annotators", "1", "--seed", "2"]) == 0
    gold = {item["meta"]["id"]: item["outputs"] for split in ("shots", "test") for item in document["data"][split]}
    images = {item["meta"]["id"]: item["inputs"]["image"] for split in ("shots", "test") for item in document["data"][split]}
    n = len(gold)
    typed = {}
    with ChromiumPage(CHROMIUM) as page:
        page.open(tasks / "annotate.html")
        assert page.problems() == []
        assert page.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")
        questions = page.evaluate("Array.from(document.querySelectorAll('.question')).map(e => e.textContent)")
        assert SCRIPT_QUESTION in questions and len(questions) == n
        assert page.evaluate("typeof window.injected") == "undefined" and page.evaluate("document.scripts.length") == 1
        assert page.evaluate(PROGRESS) == f"Вопрос 1 из {n}; отвечено 0 из {n}"
        words = page.evaluate("document.getElementById('words').textContent")
        assert {"да", "нет", "куб", "сфера", "цилиндр", "металл", "резина"} <= set(re.split("[;,] ", words))
        page.evaluate("document.getElementById('name').focus()")
        page.type_text("Тестер")
        page.evaluate("document.getElementById('answer').focus()")
        for position in range(n):
            item_id = int(page.evaluate(VISIBLE_ID))
            # The picture shown is the item's own image, byte for byte.
            shown = page.evaluate("document.getElementById('view').src").split(",", 1)[1]
            assert base64.b64decode(shown) == (export / images[item_id]).read_bytes()
            typed[item_id] = f" {gold[item_id].upper()} " if position % 2 else gold[item_id]
            page.type_text(typed[item_id])
            page.press_key("Enter", 13)
        assert set(typed) == set(gold)
        assert page.evaluate(PROGRESS) == f"Вопрос {n} из {n}; отвечено {n} из {n}"
        page.press_key("Enter", 13, shift=True)  # back one
        assert page.evaluate(PROGRESS).startswith(f"Вопрос {n - 1} из {n}")
        # Both copies of the work hold every answer: localStorage (outlives the tab) and the tab's
        # sessionStorage (Chromium has given a page opened from a file an empty localStorage after a
        # reload, about one in four here, benchmarks/page_storage_bench.py; the tab's copy survives it).
        for store in ("localStorage", "sessionStorage"):
            copy = page.evaluate(f"JSON.parse({store}.getItem(document.body.dataset.key + ':' + "
                                 "document.getElementById('slot').value))")
            assert {int(i): a for i, a in copy["answers"].items()} == typed and copy["name"] == "Тестер"
        page.reload()
        assert page.evaluate(PROGRESS) == f"Вопрос {n - 1} из {n}; отвечено {n} из {n}"
        assert page.evaluate("document.getElementById('name').value") == "Тестер"
        page.evaluate("localStorage.clear()")  # what Chromium's lapse looks like to the page
        page.reload()
        assert page.evaluate(PROGRESS) == f"Вопрос {n - 1} из {n}; отвечено {n} из {n}"
        page.evaluate("document.getElementById('save').click()")
        saved = page.evaluate("document.getElementById('saved').value")
        assert page.problems() == []
    record = json.loads(saved)
    assert record["annotator"] == "Тестер" and {a["id"]: a["answer"] for a in record["answers"]} == typed
    (tmp_path / "answers.json").write_text(saved, encoding="utf-8")
    assert main(["annotate", "import", "--data", str(export), "--answers", str(tmp_path / "answers.json"),
                 "--out", str(tmp_path / "report")]) == 0
    report = load(tmp_path / "report" / "human.json")
    assert report["aggregated_baseline"]["overall"] == {"exact_match": 1.0, "correct": len(document["data"]["test"]),
                                                   "total": len(document["data"]["test"]), "wrong_synonyms": 0}
    assert report["annotators"][0]["control_accuracy"] == 1.0 and report["disputed"] == []
    # One wrong answer: the disputed page shows that item with its image.
    first = document["data"]["test"][0]["meta"]["id"]
    record["answers"] = [dict(a, answer="999") if a["id"] == first else a for a in record["answers"]]
    (tmp_path / "wrong.json").write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    assert main(["annotate", "import", "--data", str(export), "--answers", str(tmp_path / "wrong.json"),
                 "--out", str(tmp_path / "report2")]) == 0
    with ChromiumPage(CHROMIUM) as page:
        page.open(tmp_path / "report2" / "disputed.html")
        assert page.problems() == []
        assert page.evaluate("Array.from(document.querySelectorAll('.item')).map(e => Number(e.dataset.id))") == [first]
        assert page.evaluate("Array.from(document.images).map(i => i.complete && i.naturalWidth > 0)") == [True]
    capsys.readouterr()
