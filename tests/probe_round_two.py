"""The probes of issue 24 (round two of the hostile sweep), for tests/test_probe_matrix.py.

Small hostile files made in a moment (deep nesting, 5,000-digit integers, lone surrogates, NaN
ids, ``²``, aliases), prompt templates past the sandbox's limits, outputs that would destroy an
input, and flags that once gave a traceback or a quiet wrong result.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

DEPTH = 100_000  # "[" nested this deep: a 200 KB file
PLACEHOLDER = "@@hostile@@"

DEEP = b"[" * DEPTH + b"]" * DEPTH
HOSTILE_VALUES = {
    "deep": DEEP.decode(),
    "5000 digits": "1" + "0" * 4999,
    "lone surrogate": '"caf\\ud800"',
    "NaN": "NaN",
}

SANDBOX_PROMPTS = {
    "'%1000000000d' % 1": "{{ '%1000000000d' % 1 }}<image>{question}",
    "'{:1000000000}'.format(1)": "{{ '{:1000000000}'.format(1) }}<image>{question}",
    "([a]*20000)|join": "{% set a = 'x' * 20000 %}{{ ([a] * 20000)|join }}<image>{question}",
    "replace('x', 'y'*20000)": "{{ ('x' * 20000)|replace('x', 'y' * 20000) }}<image>{question}",
    "s = s ~ s x15": "{% set s = 'x' * 1000 %}" + "{% set s = s ~ s %}" * 15 + "{{ s|length }}<image>{question}",
    "big-integer squaring": "{% set x = 10 ** 9999 %}" + "{% set x = x * x %}" * 30 + "{{ x > 1 }}<image>{question}",
    "three empty range(1000) loops": "{% for a in range(1000) %}{% for b in range(1000) %}{% for c in range(1000) %}"
                                     "{% endfor %}{% endfor %}{% endfor %}<image>{question}",
}


def with_hostile_value(source: Path, target: Path, key: str, where: tuple[Any, ...], raw: str,
                       indent: int | None = 2) -> Path:
    """A copy of the list file ``source`` whose first item holds the raw JSON text ``raw`` at
    ``where`` (keys inside the item), written indented as the stages write or compact."""
    if not target.exists():
        document = json.loads(source.read_text(encoding="utf-8"))
        value = document[key][0]
        for part in where[:-1]:
            value = value[part]
        value[where[-1]] = PLACEHOLDER
        text = json.dumps(document, ensure_ascii=False, indent=indent).replace(f'"{PLACEHOLDER}"', raw)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return target


def deep_document(target: Path, key: str, top_level: bool = False) -> Path:
    """Compact JSON of 200 KB: ``[`` nested 100,000 deep as the list's item, or as a member before the list."""
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        body = (b'{"info": ' + DEEP + b', "' + key.encode() + b'": []}') if top_level else \
            (b'{"info": {}, "' + key.encode() + b'": [' + DEEP + b"]}")
        target.write_bytes(body)
    return target


def mera_copy(export: Path, target: Path, test_json: Path | None = None, raw: str | None = None,
              where: tuple[Any, ...] = ()) -> Path:
    """A copy of the export folder whose test.json is ``test_json``, or holds ``raw`` at ``where`` of its first item."""
    if not target.exists():
        shutil.copytree(export, target)
        if test_json is not None:
            shutil.copyfile(test_json, target / "test.json")
        elif raw is not None:
            staged = target.parent / f".{target.name}.test.json"
            with_hostile_value(export / "test.json", staged, "data", where, raw)
            staged.replace(target / "test.json")
    return target


def write(path: Path, text: str) -> Path:
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return path


def round_two_probes(i: Any, answers: Path, not_an_image: Path) -> dict[str, list[str]]:
    """Probe name -> argv; ``i`` is the matrix's Inputs, ``answers`` its page-JSON answers file,
    ``not_an_image`` its export whose first item's image is text."""
    base = i.root / "hostile2"
    out = str(i.root / "never-written")
    scenes = str(i.scenes / "scenes.json")
    probes: dict[str, list[str]] = {}

    deep_scenes = deep_document(base / "deep-scenes.json", "scenes")
    deep_questions = deep_document(base / "deep-questions.json", "questions")
    deep_mera = mera_copy(i.export, base / "deep-mera", test_json=deep_document(base / "deep-test.json", "data"))
    probes["questions: an item nested 100,000 deep (compact)"] = ["questions", "--in", str(deep_scenes), "--out",
                                                                   out + ".json", "--quiet"]
    probes["questions: a member before the list nested 100,000 deep"] = [
        "questions", "--in", str(deep_document(base / "deep-top.json", "scenes", top_level=True)), "--out",
        out + ".json", "--quiet"]
    probes["translate: an item nested 100,000 deep"] = ["translate", "--in", str(deep_questions), "--out", out + ".json"]
    probes["filter: an item nested 100,000 deep"] = ["filter", "--in", str(deep_questions), "--out", out + ".json",
                                                     "--backend", "morph"]
    probes["export: questions nested 100,000 deep"] = ["dataset", "export", "--questions", str(deep_questions),
                                                       "--scenes", scenes, "--shots", "1", "--out", out]
    probes["export: scenes nested 100,000 deep"] = ["dataset", "export", "--questions", str(i.kept), "--scenes",
                                                    str(deep_scenes), "--shots", "1", "--out", out]
    mera_readers = {
        "hf": ["dataset", "hf", "--data", "{mera}", "--out", out],
        "gallery": ["dataset", "gallery", "--data", "{mera}", "--out", out + ".html"],
        "stats": ["dataset", "stats", "--data", "{mera}"],
        "evaluate": ["dataset", "evaluate", "--data", "{mera}"],
        "annotate export": ["dataset", "annotate", "export", "--data", "{mera}", "--out", out],
        "annotate import": ["dataset", "annotate", "import", "--data", "{mera}", "--answers", str(answers),
                            "--out", out],
    }
    for name, argv in mera_readers.items():
        probes[f"{name}: a test.json item nested 100,000 deep"] = [str(deep_mera) if a == "{mera}" else a for a in argv]

    for label, raw in (("deep", "[" * 5000 + "]" * 5000), ("5000 digits", HOSTILE_VALUES["5000 digits"])):
        slug = "indented-" + label.replace(" ", "-")
        hostile_scenes = with_hostile_value(i.scenes / "scenes.json", base / f"{slug}-scenes.json", "scenes",
                                            ("objects", 0, "rotation"), raw)
        hostile_questions = with_hostile_value(i.questions, base / f"{slug}-questions.json", "questions",
                                               ("question_index",), raw)
        mera = mera_copy(i.export, base / f"{slug}-mera", raw=raw, where=("meta", "question_type"))
        probes[f"questions: {label} value in an indented scene"] = ["questions", "--in", str(hostile_scenes), "--out",
                                                                    out + ".json", "--quiet"]
        probes[f"translate: {label} value in an indented question"] = ["translate", "--in", str(hostile_questions),
                                                                       "--out", out + ".json"]
        probes[f"evaluate: {label} value in test.json"] = ["dataset", "evaluate", "--data", str(mera)]
        probes[f"annotate import: {label} value in test.json"] = ["dataset", "annotate", "import", "--data", str(mera),
                                                                  "--answers", str(answers), "--out", out]
    big_id_answers = write(base / "big-id-answers.json", '{"format": "ruclevr-annotate/1", "annotator": "p", '
                                                         '"answers": [{"id": 1' + "0" * 4999 + ', "answer": "x"}]}')
    probes["annotate import: a 5000-digit id in the answers"] = [
        "dataset", "annotate", "import", "--data", str(i.export), "--answers", str(big_id_answers), "--out", out]

    surrogate = HOSTILE_VALUES["lone surrogate"]
    surrogate_questions = with_hostile_value(i.questions, base / "surrogate-questions.json", "questions",
                                             ("question",), surrogate)
    surrogate_translated = with_hostile_value(i.translated, base / "surrogate-translated.json", "questions",
                                              ("question",), surrogate)
    surrogate_kept = with_hostile_value(i.kept, base / "surrogate-kept.json", "questions", ("question",), surrogate)
    surrogate_mera = mera_copy(i.export, base / "surrogate-mera", raw=surrogate, where=("inputs", "question"))
    probes["translate: a lone surrogate in a question"] = ["translate", "--in", str(surrogate_questions), "--out",
                                                           out + ".json"]
    probes["filter: a lone surrogate in a question"] = ["filter", "--in", str(surrogate_translated), "--out",
                                                        out + ".json", "--backend", "morph"]
    probes["export: a lone surrogate in a question"] = ["dataset", "export", "--questions", str(surrogate_kept),
                                                        "--scenes", scenes, "--shots", "1", "--out", out]
    for name in ("hf", "gallery", "annotate export"):
        probes[f"{name}: a lone surrogate in a question"] = [str(surrogate_mera) if a == "{mera}" else a
                                                            for a in mera_readers[name]]
    nan_mera = mera_copy(i.export, base / "nan-mera", raw="NaN", where=("meta", "id"))
    for name in ("hf", "annotate export"):
        probes[f"{name}: NaN as meta.id"] = [str(nan_mera) if a == "{mera}" else a for a in mera_readers[name]]

    for reader, (label, raw) in zip(("hf", "annotate export", "evaluate", "stats"), (
            ("a 25-digit meta.id", "1" + "0" * 24), ("a string meta.id", '"7"'), ("a float meta.id", "2.5"),
            ("a negative meta.id", "-3")), strict=True):
        mera = mera_copy(i.export, base / f"id-{reader.replace(' ', '-')}", raw=raw, where=("meta", "id"))
        probes[f"{reader}: {label}"] = [str(mera) if a == "{mera}" else a for a in mera_readers[reader]]
    big_index = with_hostile_value(i.scenes / "scenes.json", base / "big-index-scenes.json", "scenes", ("image_index",),
                                   str(2**40))
    probes["questions: image_index 2**40 (past one word of its stream)"] = ["questions", "--in", str(big_index), "--out",
                                                                           out + ".json", "--quiet"]
    probes["augment: image_index 2**40"] = ["dataset", "augment", "--scenes", str(big_index), "--questions",
                                            str(i.questions), "--map", "blue=red", "--device", "cpu", "--out", out]
    superscript_tsv = write(base / "superscript.tsv", "task_id\tannotator\tanswer\n²\tp\tкуб\n")
    probes["annotate import: ² as a task id"] = ["dataset", "annotate", "import", "--data", str(i.export), "--answers",
                                                 str(superscript_tsv), "--out", out]
    probes["questions: --shard ²/3"] = ["questions", "--in", scenes, "--out", out + ".json", "--shard", "²/3", "--quiet"]
    label_studio = write(base / "label-studio.json", json.dumps([{"data": {"ruclevr_id": 2}, "annotations": [
        {"completed_by": 1, "result": [{"from_name": "answer", "type": "textarea", "value": "да"}]}]}]))
    probes['annotate import: a Label Studio "value": "да"'] = [
        "dataset", "annotate", "import", "--data", str(i.export), "--answers", str(label_studio), "--out", out]
    probes["evaluate: --predictions /dev/zero"] = ["dataset", "evaluate", "--data", str(i.export), "--predictions",
                                                   "/dev/zero"]
    probes["annotate export: --annotators 10**12"] = ["dataset", "annotate", "export", "--data", str(i.export),
                                                      "--annotators", str(10**12), "--out", out]

    laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 10):
        laughs.append(f"{chr(97 + level)}: &{chr(97 + level)} [{','.join(['*' + chr(96 + level)] * 9)}]")
    alias_families = write(base / "alias-families" / "laughs.yaml", "\n".join(laughs) + "\n").parent
    deep_families = write(base / "deep-families" / "deep.json", DEEP.decode()).parent
    probes["questions: a YAML family file of nested aliases"] = ["questions", "--in", scenes, "--families",
                                                                 str(alias_families), "--out", out + ".json", "--quiet"]
    probes["questions: a JSON family file nested 100,000 deep"] = ["questions", "--in", scenes, "--families",
                                                                   str(deep_families), "--out", out + ".json", "--quiet"]

    for name, source in SANDBOX_PROMPTS.items():
        prompt = str(write(base / "prompts" / f"{len(probes)}.j2", source))
        probes[f"export: prompt with {name}"] = ["dataset", "export", "--questions", str(i.kept), "--scenes", scenes,
                                                 "--shots", "1", "--prompt", prompt, "--out", out]
        probes[f"build: prompt with {name}"] = ["dataset", "build", "--n", "2", "--shots", "1", "--prompt", prompt,
                                                "--out", out]

    probes["export: --out ''"] = ["dataset", "export", "--questions", str(i.kept), "--scenes", scenes, "--out", ""]
    probes["hf: --out ''"] = ["dataset", "hf", "--data", str(i.export), "--out", ""]
    probes["questions: --out ''"] = ["questions", "--in", scenes, "--out", "", "--quiet"]
    probes["render: --out ''"] = ["render", "--n", "1", "--out", ""]
    probes.update(destroying_outputs(i, base))
    twice_kept = write(base / "list-twice-kept.json", i.kept.read_text(encoding="utf-8").rstrip().removesuffix("}").rstrip()
                       + ',\n  "questions": []\n}\n')
    twice_mera = mera_copy(i.export, base / "list-twice-mera")
    test_json = twice_mera / "test.json"
    if '"data": []' not in test_json.read_text(encoding="utf-8"):
        test_json.write_text(test_json.read_text(encoding="utf-8").rstrip().removesuffix("}").rstrip() + ',\n  "data": []\n}\n',
                             encoding="utf-8")
    for name in ("hf", "annotate export"):
        probes[f"{name}: an image that is not an image"] = [str(not_an_image) if a == "{mera}" else a
                                                           for a in mera_readers[name]]
    probes["export: a questions file with its list key twice"] = [
        "dataset", "export", "--questions", str(twice_kept), "--scenes", scenes, "--shots", "1", "--out", out]
    for name in ("annotate export", "hf"):
        probes[f"{name}: a test.json with its list key twice"] = [str(twice_mera) if a == "{mera}" else a
                                                                 for a in mera_readers[name]]

    probes["translate: --backoff inf"] = ["translate", "--in", str(i.questions), "--out", out + ".json", "--backoff", "inf"]
    probes["build: --width 64 --render-args '--width 72'"] = ["dataset", "build", "--n", "2", "--shots", "1", "--width",
                                                             "64", "--render-args", "--width 72", "--out", out]
    probes["render: --seed 2**128"] = ["render", "--n", "1", "--seed", str(2**128), "--out", out]
    return probes


def destroying_outputs(i: Any, base: Path) -> dict[str, list[str]]:
    """Every --out that once overwrote one of the run's inputs or another stage's file, exit 0."""
    scenes = str(i.scenes / "scenes.json")
    test_json = str(i.export / "test.json")
    predictions = write(base / "pred.jsonl", '{"id": 2, "prediction": "куб"}\n')
    return {
        "filter --out questions.json (another stage's file)": ["filter", "--in", str(i.translated), "--out",
                                                               str(i.questions), "--backend", "morph"],
        "filter --out scenes.json": ["filter", "--in", str(i.translated), "--out", scenes, "--backend", "morph"],
        "filter --out mera/test.json": ["filter", "--in", str(i.translated), "--out", test_json, "--backend", "morph"],
        "stats --out mera/test.json": ["dataset", "stats", "--data", str(i.export), "--out", test_json],
        "evaluate --out mera/test.json": ["dataset", "evaluate", "--data", str(i.export), "--out", test_json],
        "evaluate --out pred.jsonl (its own predictions)": ["dataset", "evaluate", "--data", str(i.export),
                                                            "--predictions", str(predictions), "--out", str(predictions)],
        "questions --in S --out S --overwrite": ["questions", "--in", scenes, "--out", scenes, "--overwrite", "--quiet"],
        "translate --in Q --out Q --overwrite": ["translate", "--in", str(i.questions), "--out", str(i.questions),
                                                 "--overwrite"],
    }
