"""Small stage outputs written in the documented formats, for the tests and benchmarks of the dataset stage.

They stand in for the render and filter stages' files (``docs/interfaces.md``): a
``scenes.json`` with per-scene objects, tiny PNG images, and kept Russian questions whose
answers follow from the objects. The product never imports this module.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, cast

import numpy as np
from PIL import Image

from assets.vocabulary import load_vocabulary
from ruclevr import streams
from ruclevr.io import atomic_write_bytes, atomic_write_json
from ruclevr.names import scene_stem
from translate.answers import answer_to_russian


def masculine_shape_noun(shape: str) -> str:
    """The vocabulary's first masculine Russian noun for a shape (куб, шар, цилиндр): the sample
    questions' «сделан» agrees with it."""
    russian = load_vocabulary().value("shape", shape).ru
    genders = cast(dict[str, str], russian["genders"])
    return next(word for word in cast(list[str], russian["synonyms"]) if genders[word] == "m")


def tiny_png(index: int, width: int = 8, height: int = 6) -> bytes:
    """A PNG whose pixels depend on ``index`` (so no two images have the same bytes)."""
    pixels = np.full((height, width, 3), (index * 37 % 256, index * 91 % 256, 128), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def sample_scene(index: int, rng: np.random.Generator) -> dict[str, Any]:
    vocabulary = load_vocabulary()
    objects = []
    for _ in range(int(rng.integers(3, 7))):
        objects.append({name: str(rng.choice(vocabulary.names(name))) for name in ("shape", "size", "material", "color")})
    return {
        "split": "new",
        "image_index": index,
        "image_filename": f"{scene_stem('ruclevr', index)}.png",
        "objects": objects,
    }


def _question(scene: dict[str, Any], number: int, family: str, question_type: str, text_en: str, text_ru: str,
              answer: str) -> dict[str, Any]:
    return {
        "split": "new",
        "image_index": scene["image_index"],
        "image_filename": scene["image_filename"],
        "question_index": number,
        "question": text_en,
        "program": [{"function": "scene", "inputs": [], "value_inputs": []}],
        "answer": answer,
        "template_filename": family.split("/")[0] + ".yaml",
        "question_family_index": 0,
        "family": family,
        "question_type": question_type,
        "question_ru": text_ru,
        "answer_ru": answer_to_russian(answer),
        "translator": "native",
        "acceptability": {"backend": "morph", "score": 1.0, "threshold": 0.5, "reasons": []},
    }


def questions_for_scene(scene: dict[str, Any]) -> list[dict[str, Any]]:
    """One question of each MERA type about the scene's first object, plus counting questions."""
    first = scene["objects"][0]
    shape_ru = masculine_shape_noun(first["shape"])
    n_same_shape = sum(o["shape"] == first["shape"] for o in scene["objects"]) - 1
    n_color = sum(o["color"] == first["color"] for o in scene["objects"])
    color_ru = answer_to_russian(first["color"])
    rows = [
        ("query/color", "colors", f"What color is the {first['shape']}?", f"Какого цвета {shape_ru}?", first["color"]),
        ("query/material", "materials", f"What is the {first['shape']} made of?", f"Из чего сделан {shape_ru}?",
         first["material"]),
        ("query/size", "size", f"How big is the {first['shape']}?", f"Какого размера {shape_ru}?", first["size"]),
        ("query/shape", "shapes", f"What shape is the {first['color']} thing?",
         f"Какой формы {color_ru} предмет?", first["shape"]),
        ("exist/same_shape", "binary", f"Are there other things of the same shape as the {first['color']} thing?",
         f"Есть ли ещё предметы такой же формы, как {color_ru} предмет?", "yes" if n_same_shape else "no"),
        ("count/color", "count", f"How many {first['color']} things are there?",
         f"Сколько здесь предметов цвета «{color_ru}»?", str(n_color)),
        # The same text on every image: export must keep it out of test when it is a shot.
        ("count/all", "count", "How many things are there?", "Сколько всего предметов?", str(len(scene["objects"]))),
    ]
    return [_question(scene, number, *row) for number, row in enumerate(rows)]


def write_sample_stage_outputs(folder: Path, n_scenes: int = 8, seed: int = 0) -> dict[str, Path]:
    """Write ``folder/render/{scenes.json,images/}`` and ``folder/questions_ru_kept.json``; return their paths."""
    render_dir = folder / "render"
    scenes = [sample_scene(index, streams.generator("render.scene", seed, index=index)) for index in range(n_scenes)]
    for scene in scenes:
        atomic_write_bytes(render_dir / "images" / scene["image_filename"], tiny_png(scene["image_index"]))
        atomic_write_json(render_dir / "scenes" / scene["image_filename"].replace(".png", ".json"), scene)
    render_info = {"stage": "render", "version": "test", "seed": seed, "settings": {"width": 8, "height": 6, "samples": 2}}
    atomic_write_json(render_dir / "scenes.json", {"info": render_info, "scenes": scenes})
    questions = [question for scene in scenes for question in questions_for_scene(scene)]
    # A repeated question about one image: export keeps only the first.
    questions.append(dict(questions[0], question_index=99))
    filter_info = {"stage": "filter", "version": "test", "backend": "morph", "threshold": 0.5}
    kept = folder / "questions_ru_kept.json"
    atomic_write_json(kept, {"info": filter_info, "questions": questions})
    return {"scenes": render_dir / "scenes.json", "images": render_dir / "images", "questions": kept}


def mera_export_problems(export: Path) -> list[str]:
    """Everything wrong with an export (its folder, or a legacy ``ruclevr.json``), checked independently of the exporter.

    Items against the JSON Schema, ids 1..N across shots then test, shots and test disjoint in
    images and in question text (compared case- and punctuation-blind), images present on disk.
    """
    import json
    import string

    import jsonschema

    from dataset.mera.document import LEGACY_DOCUMENT_NAME, PROVENANCE_NAME, SPLIT_FILES
    from dataset.mera.export import SCHEMA_PATH

    export = Path(export)
    if export.name == LEGACY_DOCUMENT_NAME:
        document = json.loads(export.read_text(encoding="utf-8"))
        folder = export.parent
    else:  # MERA's layout: each split file is {"data": [...]}
        folder = export
        document = {"data": {split: json.loads((folder / name).read_text(encoding="utf-8"))["data"]
                             for split, name in SPLIT_FILES.items()},
                    **json.loads((folder / PROVENANCE_NAME).read_text(encoding="utf-8"))}
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    shots, test = document["data"]["shots"], document["data"]["test"]
    problems = [f"item {item['meta']['id']}: {error.message}" for item in shots + test for error in validator.iter_errors(item)]
    ids = [item["meta"]["id"] for item in shots + test]
    if ids != list(range(1, len(ids) + 1)):
        problems.append(f"ids are not 1..{len(ids)} in order: {ids}")

    def text(item: dict[str, Any]) -> str:
        return " ".join(item["inputs"]["question"].lower().translate(str.maketrans("", "", string.punctuation)).split())

    shared_images = {i["inputs"]["image"] for i in shots} & {i["inputs"]["image"] for i in test}
    if shared_images:
        problems.append(f"shots and test share images {sorted(shared_images)}")
    shared_questions = {text(i) for i in shots} & {text(i) for i in test}
    if shared_questions:
        problems.append(f"shots and test share questions {sorted(shared_questions)}")
    missing = sorted({i["inputs"]["image"] for i in shots + test if not (folder / i["inputs"]["image"]).is_file()})
    if missing:
        problems.append(f"images missing on disk: {missing}")
    if [record["id"] for record in document.get("provenance", [])] != ids:
        problems.append("provenance records do not match the items one to one")
    return problems


def write_sample_export(folder: Path, n_scenes: int = 8, shots: int = 3) -> Path:
    """Sample stage outputs under ``folder/in`` exported (shipped prompts, seed 0) to ``folder/mera``; return that."""
    from dataset.mera.export import ExportSettings, export_dataset

    inputs = write_sample_stage_outputs(folder / "in", n_scenes=n_scenes)
    export_dataset(inputs["questions"], inputs["scenes"], folder / "mera", ExportSettings(shots=shots))
    return folder / "mera"
