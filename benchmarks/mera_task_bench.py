"""MERA's ruCLEVR task and `dataset evaluate`, item by item, on prediction sets of a build.

Runs lm-evaluation-harness 0.4.13 in a venv of its own (as tests/test_lm_eval_task.py does: it
wants NumPy 2, bpy pins 1.x) on a replica of MERA's published task (MERA-Evaluation/MERA_MULTIMODAL
HEAD 0f32158, ``multimodal_tasks/ruclevr/ruclevr.yaml``) with only the dataset path changed: task
``ruclevr``, splits ``shots``/``test``, ``doc_to_target: "{{outputs}}"``, no ``generation_kwargs``,
and lm-eval's own ``exact_match`` metric with ``ignore_case`` and ``ignore_punctuation`` (the form
the same repository's realvqa.yaml spells out). Nothing of ruclevr's scoring is in the replica: its
``utils.py`` only fills the instruction and opens the picture. A model answering from a file
(tests/lm_eval_file_model.py) replies with each prediction set in turn; the harness's per-item
``exact_match`` is compared with the headline per-item exact match of ``python -m dataset evaluate``
on the same answers.

    python benchmarks/mera_task_bench.py --data DATA [--data DATA_ALL_PROMPTS] --work /tmp/mera_task

Prediction sets (test split): gold; the per-type majority answer; case and space noise; wrong word
forms (another word for the value, a feminine colour, a count as a word); the reasoning form
«РАССУЖДЕНИЕ: … ОТВЕТ: gold» everywhere; and the reasoning form only where the item's prompt asks
for it (gold elsewhere) — what a model that follows every prompt replies; for that set the EM of
each prompt is printed too, in both.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from isolated_venv import make_venv, offline_environment  # noqa: E402

from dataset.cli import main as dataset_main  # noqa: E402
from dataset.mera.document import read_export  # noqa: E402
from dataset.mera.prompt_blocks import reasoning_layouts  # noqa: E402
from translate.answers import russian_answer_words  # noqa: E402

LM_EVAL = "lm_eval==0.4.13"
LM_EVAL_NEEDS = ["datasets>=4,<5", "sacrebleu", "pillow", "pyyaml", "jinja2", "tqdm", "typing_extensions",
                 "more_itertools", "dill", "sqlitedict", "packaging", "pytablewriter"]

MERA_TASK_YAML = """\
task: ruclevr
task_alias: ruclevr
dataset_path: {hf}
validation_split: shots
test_split: test
output_type: generate_until
doc_to_image: !function utils.doc_to_image
doc_to_text: !function utils.doc_to_text
doc_to_target: "{{{{outputs}}}}"
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
    ignore_case: true
    ignore_punctuation: true
metadata:
  version: 1.0
"""

MERA_TASK_UTILS = '''\
import io


def doc_to_text(doc):
    return doc["instruction"].format(**doc["inputs"])


def doc_to_image(doc):
    from PIL import Image
    return [Image.open(io.BytesIO(doc["inputs"]["image"]["bytes"])).convert("RGB")]
'''

RUN_HARNESS = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv.pop(1))
    import lm_eval_file_model
    from lm_eval.__main__ import cli_evaluate
    cli_evaluate()
    """
)

NUMBER_WORDS = ["ноль", "один", "два", "три", "четыре", "пять", "шесть", "семь", "восемь", "девять", "десять"]
FEMININE = {"ый": "ая", "ий": "ая", "ой": "ая"}


def other_word(gold: str, question_type: str, synonyms: dict[str, dict[str, frozenset[str]]]) -> str:
    """A wrong form or another word for the gold value (scored wrong by MERA and by evaluate)."""
    if question_type == "count":
        number = int(gold)
        return NUMBER_WORDS[number] if number < len(NUMBER_WORDS) else gold + " штук"
    if question_type == "binary":
        return "Да, конечно" if gold == "да" else "Нет, не так"
    others = sorted(synonyms.get(question_type, {}).get(gold, ()))
    if others:
        return others[0]
    return gold[:-2] + FEMININE.get(gold[-2:], "ое")


def prediction_sets(items: list[dict], provenance: dict[int, dict]) -> dict[str, Callable[[dict], str]]:
    by_type: dict[str, Counter[str]] = {}
    for item in items:
        by_type.setdefault(item["meta"]["question_type"], Counter())[item["outputs"]] += 1
    majority = {kind: min(counts, key=lambda a: (-counts[a], a)) for kind, counts in by_type.items()}
    synonyms = russian_answer_words()
    reasoning = set(reasoning_layouts())

    def noisy(item: dict) -> str:
        gold, n = item["outputs"], item["meta"]["id"]
        return [gold.upper(), gold.capitalize() + ".", " " + gold, gold + " ", gold + "\n", f"«{gold}»"][n % 6]

    def reasoned(item: dict) -> str:
        return f"РАССУЖДЕНИЕ: смотрю на предметы на картинке.\nОТВЕТ: {item['outputs']}"

    def follows_prompt(item: dict) -> str:
        asks = provenance[item["meta"]["id"]].get("prompt") in reasoning
        return reasoned(item) if asks else item["outputs"]

    return {
        "gold": lambda item: item["outputs"],
        "majority_per_type": lambda item: majority[item["meta"]["question_type"]],
        "case_space_noise": noisy,
        "word_forms": lambda item: other_word(item["outputs"], item["meta"]["question_type"], synonyms),
        "reasoning_everywhere": reasoned,
        "reasoning_where_asked": follows_prompt,
    }


def run_harness(python: Path, task_dir: Path, answers: Path, out: Path) -> dict[int, int]:
    command = [str(python), "-c", RUN_HARNESS, str(REPO / "tests"), "run", "--model", "ruclevr_answers_file",
               "--model_args", f"answers={answers}", "--include_path", str(task_dir), "--tasks", "ruclevr",
               "--num_fewshot", "0", "--log_samples", "--output_path", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=1800, env=offline_environment(),
                            check=False, cwd=out.parent)
    if result.returncode != 0:
        raise SystemExit(f"lm-eval failed:\n{result.stderr[-3000:]}")
    samples = sorted(out.rglob("samples_ruclevr_2*.jsonl"))[-1]
    rows = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {row["doc"]["meta"]["id"]: int(row["exact_match"]) for row in rows}


def evaluate_per_item(data: Path, answers: Path, out: Path) -> tuple[dict[int, int], dict]:
    with contextlib.redirect_stdout(io.StringIO()):  # its table; the figures are read from --out
        status = dataset_main(["evaluate", "--data", str(data), "--predictions", str(answers), "--out", str(out)])
    assert status == 0
    result = json.loads(out.read_text(encoding="utf-8"))["results"]["predictions"]
    return {row["id"]: row["exact_match"] for row in result["items"]}, result["overall"]


def compare_build(python: Path, data: Path, work: Path) -> list[str]:
    document = read_export(data / "mera")
    test = document["data"]["test"]
    provenance = {record["id"]: record for record in document["provenance"]}
    task_dir = work / "mera_task"
    task_dir.mkdir(parents=True, exist_ok=True)
    (task_dir / "ruclevr.yaml").write_text(MERA_TASK_YAML.format(hf=(data / "hf").resolve()), encoding="utf-8")
    (task_dir / "utils.py").write_text(MERA_TASK_UTILS, encoding="utf-8")
    asked = sum(provenance[item["meta"]["id"]].get("prompt") in set(reasoning_layouts()) for item in test)
    lines = [f"{data}: {len(test)} test items, {asked} of them with a prompt that asks for reasoning",
             f"{'prediction set':<24}{'MERA task EM':>14}{'evaluate EM':>13}{'items differing':>17}"
             f"{'answer_split':>14}{'compute_exact':>15}"]
    following: tuple[dict[int, int], dict[int, int]] = ({}, {})  # reasoning_where_asked's per-item EM, both
    for name, predict in prediction_sets(test, provenance).items():
        answers = work / f"{name}.jsonl"
        answers.write_text("".join(json.dumps({"id": item["meta"]["id"], "prediction": predict(item)},
                                              ensure_ascii=False) + "\n" for item in test), encoding="utf-8")
        harness = run_harness(python, task_dir, answers, work / f"lm_eval_{name}")
        ours, overall = evaluate_per_item(data, answers, work / f"evaluate_{name}.json")
        differing = sum(harness.get(item_id) != ours.get(item_id) for item_id in set(harness) | set(ours))
        rules = overall["other_rules"]
        lines.append(f"{name:<24}{sum(harness.values()) / len(harness):>14.4f}{overall['exact_match']:>13.4f}"
                     f"{differing:>17}{rules['answer_split']['exact_match']:>14.4f}"
                     f"{rules['compute_exact']['exact_match']:>15.4f}")
        if name == "reasoning_where_asked":
            following = (harness, ours)
    return lines + per_prompt_lines(test, provenance, *following)


def per_prompt_lines(test: list[dict], provenance: dict[int, dict], harness: dict[int, int],
                     ours: dict[int, int]) -> list[str]:
    """EM per prompt of a model that does what each prompt asks, in MERA's task and in evaluate."""
    by_prompt: dict[str, list[int]] = {}
    for item in test:
        by_prompt.setdefault(str(provenance[item["meta"]["id"]].get("prompt")), []).append(item["meta"]["id"])
    lines = ["a model that follows each prompt (reasoning_where_asked), per prompt:",
             f"{'prompt':<44}{'items':>6}{'MERA task EM':>14}{'evaluate EM':>13}"]
    for prompt, ids in sorted(by_prompt.items()):
        lines.append(f"{prompt:<44}{len(ids):>6}{sum(harness[i] for i in ids) / len(ids):>14.4f}"
                     f"{sum(ours[i] for i in ids) / len(ids):>13.4f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, action="append", required=True, help="a build folder (mera/ and hf/)")
    parser.add_argument("--work", type=Path, required=True, help="scratch folder (the venv is kept under it)")
    parser.add_argument("--python", type=Path, default=None, help="an existing lm-eval 0.4.13 venv's python")
    args = parser.parse_args()
    python = args.python or make_venv(args.work / "venv", LM_EVAL_NEEDS, [LM_EVAL])
    for number, data in enumerate(args.data):
        print("\n".join(compare_build(python, data, args.work / f"build{number}")), flush=True)


if __name__ == "__main__":
    main()
