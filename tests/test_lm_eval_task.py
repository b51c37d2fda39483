"""docs/lm_eval's task, run by lm-evaluation-harness in its own environment, scores as `dataset evaluate` does.

lm-eval needs NumPy 2 (bpy pins 1.x), so it is installed into a fresh venv: lm_eval without its
dependencies (torch, transformers, scikit-learn... are for other tasks and models) plus the few
packages the task's path imports. A model answering from a file stands in for a real one.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest
from isolated_venv import make_venv, offline_environment
from sample_outputs import write_sample_export

from dataset.cli import main
from dataset.mera.document import read_export
from ruclevr.io import read_json

REPO = Path(__file__).resolve().parents[1]
TASK_DIR = REPO / "docs" / "lm_eval"
LM_EVAL = "lm_eval==0.4.13"
LM_EVAL_NEEDS = ["datasets>=4,<5", "sacrebleu", "pillow", "pyyaml", "jinja2", "tqdm", "typing_extensions",
                 "more_itertools", "dill", "sqlitedict", "packaging", "pytablewriter"]
SHOTS = 2
TASK = "ruclevr_synthetic"  # not MERA's task name `ruclevr`

RUN_HARNESS = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv.pop(1))  # the tests folder, for the answering model
    import lm_eval_file_model  # registers ruclevr_answers_file
    from lm_eval.__main__ import cli_evaluate
    cli_evaluate()
    """
)


def prediction_for(item: dict, position: int) -> str | None:
    """Right, right after lm-eval's normalisation, wrong, or missing, in turn; then replies that reason
    before «ОТВЕТ» (right after the last marker, «ответ - Gold.», two markers, the last one wrong)."""
    gold = item["outputs"]
    wrong = "нет" if gold != "нет" else "да"
    return [gold, gold.upper() + ".", " " + gold, f"«{gold}»", wrong, None,
            f"РАССУЖДЕНИЕ: смотрю на предметы.\nОТВЕТ: {gold}", f"ответ - {gold.capitalize()}.",
            f"ОТВЕТ: {wrong}\nнет, проверю ещё раз. ОТВЕТ: {gold}", f"ОТВЕТ: {gold}. Или ОТВЕТ: {wrong}"][position % 10]


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("lm_eval")
    data = root / "DATA"
    write_sample_export(data, n_scenes=8, shots=SHOTS + 1)
    assert main(["hf", "--data", str(data / "mera"), "--out", str(data / "hf")]) == 0
    test_items = read_export(data / "mera")["data"]["test"]
    answers = [{"id": item["meta"]["id"], "prediction": prediction_for(item, n)} for n, item in enumerate(test_items)]
    answers = [record for record in answers if record["prediction"] is not None]
    predictions = root / "predictions.jsonl"
    predictions.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in answers), encoding="utf-8")
    submission = root / "ruCLEVR.json"  # MERA's submission format
    submission.write_text(json.dumps({"data": {"test": [{"outputs": r["prediction"], "meta": {"id": r["id"]}}
                                                        for r in answers]}}, ensure_ascii=False), encoding="utf-8")
    return {"root": root, "data": data, "predictions": predictions, "submission": submission}


@pytest.fixture(scope="module")
def lm_eval_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_venv(tmp_path_factory.mktemp("venv") / "lm_eval", LM_EVAL_NEEDS, [LM_EVAL])


@pytest.fixture(scope="module")
def harness_samples(build, lm_eval_python: Path) -> Path:
    python = lm_eval_python
    out = build["root"] / "lm_eval_out"
    command = [str(python), "-c", RUN_HARNESS, str(Path(__file__).parent), "run",
               "--model", "ruclevr_answers_file", "--model_args", f"answers={build['predictions']}",
               "--include_path", str(TASK_DIR), "--tasks", TASK, "--num_fewshot", str(SHOTS),
               "--metadata", json.dumps({"data": str(build["data"] / "hf")}),
               "--log_samples", "--output_path", str(out)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=build["root"],
                            env=offline_environment(), check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    samples = sorted(out.rglob(f"samples_{TASK}_2*.jsonl"))
    assert len(samples) == 1, list(out.rglob("*"))
    return samples[0]


def evaluate_per_item(build, predictions: Path, out: Path) -> dict[int, int]:
    assert main(["evaluate", "--data", str(build["data"]), "--predictions", str(predictions), "--out", str(out)]) == 0
    return {row["id"]: row["exact_match"] for row in read_json(out)["results"]["predictions"]["items"]}


@pytest.mark.slow
def test_harness_scores_every_item_as_dataset_evaluate(build, harness_samples, tmp_path) -> None:
    samples = [json.loads(line) for line in harness_samples.read_text(encoding="utf-8").splitlines() if line.strip()]
    harness = {sample["doc"]["meta"]["id"]: int(sample["exact_match"]) for sample in samples}
    assert all(sample["arguments"]["gen_args_0"]["arg_1"]["until"] == ["\n\n"] for sample in samples)
    assert all(sample["arguments"]["gen_args_0"]["arg_1"]["max_gen_toks"] == 256 for sample in samples)
    test_ids = [item["meta"]["id"] for item in read_export(build["data"] / "mera")["data"]["test"]]
    assert sorted(harness) == sorted(test_ids)
    assert 0 < sum(harness.values()) < len(harness)  # both right and wrong answers were scored
    ours = evaluate_per_item(build, build["predictions"], tmp_path / "jsonl.json")
    assert ours == harness
    assert evaluate_per_item(build, build["submission"], tmp_path / "mera.json") == harness
    assert evaluate_per_item(build, harness_samples, tmp_path / "samples.json") == harness
    packed = tmp_path / "submission.zip"  # the zip for MERA's site, read back by evaluate
    assert main(["submission", "--samples", str(harness_samples.parent), "--out", str(packed)]) == 0
    assert evaluate_per_item(build, packed, tmp_path / "zip.json") == harness
    results = json.loads(next(harness_samples.parent.glob("results_*.json")).read_text(encoding="utf-8"))
    overall = read_json(tmp_path / "jsonl.json")["results"]["predictions"]["overall"]
    assert results["results"][TASK]["exact_match,none"] == pytest.approx(overall["exact_match"])
    for rule, scores in overall["other_rules"].items():
        assert results["results"][TASK][f"{rule},none"] == pytest.approx(scores["exact_match"]), rule


@pytest.mark.slow
def test_harness_prompt_is_meras_filled_instruction_after_shots_from_the_shots_split(build, harness_samples) -> None:
    export = read_export(build["data"] / "mera")
    shots = export["data"]["shots"]
    first = json.loads(harness_samples.read_text(encoding="utf-8").splitlines()[0])
    prompt = first["arguments"]["gen_args_0"]["arg_0"]
    doc = first["doc"]
    assert prompt.endswith(doc["instruction"].format(question=doc["inputs"]["question"]))
    shown = [shot for shot in shots if shot["instruction"].format(**shot["inputs"]) + " " + shot["outputs"] in prompt]
    assert len(shown) == SHOTS
    assert "{question}" not in prompt and prompt.count("<image>") == SHOTS + 1


LM_EVAL_EXACT_MATCH = textwrap.dedent(
    """
    import json, sys
    from lm_eval.api.metrics import exact_match_hf_evaluate
    pairs = json.loads(sys.stdin.read())
    scores = [exact_match_hf_evaluate(predictions=[reply], references=[gold], ignore_case=True,
                                      ignore_punctuation=True)["exact_match"] for reply, gold in pairs]
    print(json.dumps(scores))
    """
)


@pytest.mark.slow
def test_headline_is_lm_evals_own_exact_match_as_meras_task_configures_it(lm_eval_python: Path) -> None:
    """MERA's published task: lm-eval's exact_match, ignore_case and ignore_punctuation, on the whole reply."""
    from dataset.mera.em_rules import task_exact_match

    golds = ["да", "нет", "3", "желтый", "сфера", "металл", "большой"]
    shapes = ["{g}", "{G}", "{g}.", " {g}", "{g} ", "{g}\n", "«{g}»", "ОТВЕТ: {g}", "РАССУЖДЕНИЕ: вижу.\nОТВЕТ: {g}",
              "ответ - {G}.", "{g}!!!", "({g})", "{g}…", "{g}\x00", "Жёлтый", "два", "the {g}", "{g}, {g}"]
    pairs = [(shape.format(g=gold, G=gold.capitalize()), gold) for gold in golds for shape in shapes]
    result = subprocess.run([str(lm_eval_python), "-c", LM_EVAL_EXACT_MATCH], input=json.dumps(pairs),
                            capture_output=True, text=True, timeout=300, env=offline_environment(), check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    theirs = json.loads(result.stdout.strip().splitlines()[-1])
    ours = [float(task_exact_match(reply, gold)) for reply, gold in pairs]
    assert ours == theirs
    assert 0 < sum(ours) < len(ours)
