"""List files read and written one item at a time give exactly what the json module reads and writes."""

from __future__ import annotations

import json
import random

import pytest

import ruclevr.jsonstream as jsonstream
from ruclevr.jsonstream import (
    DocumentError,
    DocumentWriter,
    JsonDocument,
    encode_extended,
    encode_item,
    encode_item_bytes,
)


def random_value(rng: random.Random, depth: int = 0, big: int = 2**63):
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return rng.randrange(-5, big)
    if kind == 1:
        return rng.random() * 10 ** rng.uniform(-12, 20)
    if kind == 2:
        return rng.choice(["a", "б\n}", "    }", '"x', "", "\u2028", "\x01", "e-1", "0.00001"])
    if kind == 3:
        return rng.choice([True, False, None])
    if kind == 4:
        return {}
    if kind == 5:
        return []
    if kind in (6, 7):
        return [random_value(rng, depth + 1, big) for _ in range(rng.randrange(4))]
    return {f"k{i}": random_value(rng, depth + 1, big) for i in range(rng.randrange(4))}


@pytest.mark.parametrize("read_size", [7, 1 << 20])
def test_streamed_documents_read_and_write_as_the_json_module_does(tmp_path, monkeypatch, read_size):
    monkeypatch.setattr(jsonstream, "_READ_SIZE", read_size)  # a tiny buffer cuts items at every place
    rng = random.Random(read_size)
    for trial in range(150):
        items = [random_value(rng) for _ in range(rng.randrange(5))]
        info = {"seed": rng.randrange(9), "nested": [random_value(rng)]} if trial % 3 else {}
        document = {"info": info, "questions": items}
        if trial % 5 == 0:
            document = {"before": [1, {}], "info": info, "questions": items, "after": {"x": "y"}}
        reference = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
        for text in (reference, json.dumps(document, ensure_ascii=False), json.dumps(document)):
            path = tmp_path / "in.json"
            path.write_text(text, encoding="utf-8")
            assert list(JsonDocument(path, "questions").items()) == items
            assert JsonDocument(path, "questions").info() == info
        if list(document) == ["info", "questions"]:
            with DocumentWriter(tmp_path / "out.json", "questions") as writer:
                for item in items:
                    writer.write(item)
                writer.finish(info)
            assert (tmp_path / "out.json").read_text(encoding="utf-8") == reference
    assert sorted(path.name for path in tmp_path.iterdir()) == ["in.json", "out.json"]  # no temporaries left


def test_integers_beyond_64_bits_survive_the_indented_layout(tmp_path):
    rng = random.Random(5)
    items = [random_value(rng, big=10**30) for _ in range(300)]
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"info": {}, "questions": items}, ensure_ascii=False, indent=2), encoding="utf-8")
    assert list(JsonDocument(path, "questions").items()) == items
    assert any(isinstance(item, dict) and any(isinstance(v, int) and v >= 2**64 for v in item.values()) for item in items)


def test_small_floats_are_written_as_the_json_module_writes_them():
    for value in (2.1e-05, 9.99e-05, 1e-09, 5e-324, 1e16, 0.0001, 0.5):
        item = {"score": value, "list": [value]}
        assert encode_item(item) == json.dumps(item, ensure_ascii=False, indent=2).replace("\n", "\n    ")


def test_truncated_and_malformed_files_are_errors_not_short_lists(tmp_path):
    document = {"info": {"a": 1}, "questions": [{"q": i, "p": [{"f": "x"}]} for i in range(50)]}
    for text in (json.dumps(document, indent=2), json.dumps(document)):
        for cut in (len(text) // 2, len(text) - 3, 5):
            path = tmp_path / "cut.json"
            path.write_text(text[:cut], encoding="utf-8")
            with pytest.raises(DocumentError):
                list(JsonDocument(path, "questions").items())
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"info": {}, "scenes": []}, indent=2), encoding="utf-8")
    with pytest.raises(DocumentError, match="no 'questions' list"):
        list(JsonDocument(path, "questions").items())


def test_a_writer_left_without_finish_writes_nothing(tmp_path):
    with pytest.raises(RuntimeError):
        with DocumentWriter(tmp_path / "out.json", "questions") as writer:
            writer.write({"a": 1})
            raise RuntimeError("stopped")
    assert list(tmp_path.iterdir()) == []


def test_an_item_passed_on_with_new_keys_is_encoded_as_the_whole_item_would_be(tmp_path):
    rng = random.Random(11)
    path = tmp_path / "in.json"
    spliced = 0
    for trial in range(300):
        item = {f"k{i}": random_value(rng, big=10**30) for i in range(rng.randrange(5))}
        extra = {"question_ru": rng.choice(["Сколько кубов?", 'a "b"\n', "", "\u2028ё"]), "answer_ru": "да", "translator": "native"}
        if trial % 4 == 0:
            item["answer_ru"] = "old"  # a key the new ones replace: encoded afresh, in its old place
        layout = json.dumps({"info": {}, "questions": [item]}, ensure_ascii=trial % 3 == 0, indent=2)
        path.write_text(layout, encoding="utf-8")
        [(value, text)] = JsonDocument(path, "questions").items_with_text()
        assert value == item
        expected = json.dumps({**item, **extra}, ensure_ascii=False, indent=2).replace("\n", "\n    ").encode()
        assert encode_extended(value, text, extra) == expected
        assert encode_extended(value, None, extra) == expected
        spliced += text is not None and "answer_ru" not in item
    assert spliced > 100  # most items took the spliced path


def test_items_are_written_in_batches_as_one_by_one(tmp_path):
    items = [{"a": i, "b": [i, {"c": "д"}]} for i in range(7)]
    with DocumentWriter(tmp_path / "one.json", "questions") as writer:
        for item in items:
            writer.write(item)
        writer.finish({"n": 7})
    with DocumentWriter(tmp_path / "batched.json", "questions") as writer:
        writer.write_encoded([])
        writer.write_encoded([encode_item_bytes(item) for item in items[:3]])
        writer.write_encoded([encode_item_bytes(item) for item in items[3:]])
        writer.finish({"n": 7})
    assert (tmp_path / "batched.json").read_bytes() == (tmp_path / "one.json").read_bytes()
    assert writer.count == 7


def test_items_written_one_to_a_line_in_an_indented_file_are_read_one_by_one(tmp_path):
    items = [{"a": "}", "b": [1, {"c": "\n    }"}]}, [], {}, [1, [2]], "text", 3]
    path = tmp_path / "lines.json"
    path.write_text('{\n  "info": {},\n  "data": [\n' + ",\n".join("    " + json.dumps(item) for item in items) + "\n  ]\n}\n",
                    encoding="utf-8")
    assert list(JsonDocument(path, "data").items()) == items
