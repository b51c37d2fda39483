"""The ``rucola`` backend with a tiny RoBERTa built here and saved to disk, then loaded through the
same code path as ``RussianNLP/ruRoBERTa-large-rucola`` (``from_pretrained``, local files only)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the rucola backend needs the ml extra (torch)")
transformers = pytest.importorskip("transformers", reason="the rucola backend needs the ml extra (transformers)")
tokenizers = pytest.importorskip("tokenizers", reason="the rucola backend needs the ml extra (tokenizers)")

from filter.cli import main  # noqa: E402
from filter.pipeline import FilterJob, run_filter  # noqa: E402
from filter.rucola import RucolaOptions, RucolaScorer, acceptable_index  # noqa: E402
from ruclevr.cli import UsageError  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
MAX_POSITIONS = 40  # RoBERTa positions start after the padding index: 40 - (1 + 1) = 38 tokens
SENTENCES = [
    "Сколько больших металлических кубов?",
    "Есть ли ещё какие-нибудь предметы такой же формы, как и большой металлический предмет?",
    "Какого цвета маленький резиновый шар слева от зелёного цилиндра?",
    "Из какого материала сделан большой серый цилиндр?",
    "Одинакового ли размера красный куб и голубой шар?",
    "Сколько предметов находится позади большого жёлтого шара?",
    "Есть ли два больших кубов?",
    "Какого цвета small резиновый шар?",
    "Куб?",
]


def build_tiny_classifier(folder: Path, *, labels: dict[int, str] | None = None, pickle: bool = False) -> Path:
    """Train a byte-level BPE on a few sentences, build a 2-layer RoBERTa classifier, save both.

    Weights are drawn from a seeded generator with a wide spread (initializer_range 0.5) so that
    scores differ between sentences and a wrong batching or truncation would show.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import RobertaConfig, RobertaForSequenceClassification, RobertaTokenizerFast

    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(SENTENCES, trainer)
    bpe.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    tokenizer = RobertaTokenizerFast(
        tokenizer_object=bpe, bos_token="<s>", eos_token="</s>", sep_token="</s>", cls_token="<s>",
        pad_token="<pad>", unk_token="<unk>", mask_token="<mask>",
    )
    label_names = labels or {0: "LABEL_0", 1: "LABEL_1"}
    config = RobertaConfig(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=MAX_POSITIONS, type_vocab_size=1,
        pad_token_id=1, bos_token_id=0, eos_token_id=2, initializer_range=0.5,
        num_labels=len(label_names), id2label=label_names, label2id={v: k for k, v in label_names.items()},
    )
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = RobertaForSequenceClassification(config).eval()
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(folder)
    if pickle:  # the layout of ruRoBERTa-large-rucola's main branch: config + pytorch_model.bin
        config.save_pretrained(folder)
        torch.save(model.state_dict(), folder / "pytorch_model.bin")
    else:
        model.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_classifier(tmp_path_factory.mktemp("tiny-rucola"))


@pytest.fixture(scope="module")
def scorer(model_dir: Path) -> RucolaScorer:
    return RucolaScorer(RucolaOptions(model=str(model_dir), device="cpu"))


def test_batched_scores_equal_one_by_one(scorer: RucolaScorer) -> None:
    lengths = {len(scorer.tokenizer(t)["input_ids"]) for t in SENTENCES}
    assert len(lengths) > 3, "sentences of different lengths, so the batch is padded"
    batched = [v.score for v in scorer.score(SENTENCES)]
    single = [scorer.score([t])[0].score for t in SENTENCES]
    assert batched == pytest.approx(single, abs=2e-6)
    assert max(batched) - min(batched) > 0.05, "scores differ, so a mix-up between items would show"
    assert all(0.0 <= s <= 1.0 for s in batched)


def test_long_inputs_are_truncated_to_the_model_limit(scorer: RucolaScorer, model_dir: Path) -> None:
    assert scorer.max_length == MAX_POSITIONS - 2
    long_text = " ".join(SENTENCES * 20)
    assert len(scorer.tokenizer(long_text)["input_ids"]) > 10 * MAX_POSITIONS
    (whole,) = scorer.score([long_text])  # would raise an index error without truncation
    (with_tail,) = scorer.score([long_text + " Сколько кубов?"])
    assert whole.score == with_tail.score, "only the first max_length tokens are read"

    shorter = RucolaScorer(RucolaOptions(model=str(model_dir), device="cpu", max_length=12))
    assert shorter.max_length == 12
    first, later_change = shorter.score([long_text, long_text.replace(SENTENCES[5], "Куб?")])
    early_change, = shorter.score(["Куб? " + long_text])
    assert first.score == later_change.score
    assert first.score != early_change.score


def test_acceptable_class_is_index_1_unless_the_config_names_it(scorer: RucolaScorer, tmp_path: Path) -> None:
    assert scorer.acceptable_index == 1  # LABEL_0/LABEL_1, as ruRoBERTa-large-rucola's config
    named = build_tiny_classifier(tmp_path / "named", labels={0: "acceptable", 1: "unacceptable"})
    by_config = RucolaScorer(RucolaOptions(model=str(named), device="cpu"))
    assert by_config.acceptable_index == 0
    by_index = RucolaScorer(RucolaOptions(model=str(named), device="cpu", acceptable_label="1"))
    by_name = RucolaScorer(RucolaOptions(model=str(named), device="cpu", acceptable_label="UNACCEPTABLE"))
    assert by_name.acceptable_index == by_index.acceptable_index == 1
    p0 = [v.score for v in by_config.score(SENTENCES)]
    p1 = [v.score for v in by_index.score(SENTENCES)]
    assert [a + b for a, b in zip(p0, p1, strict=True)] == pytest.approx([1.0] * len(SENTENCES), abs=2e-6)
    assert p1 == [v.score for v in scorer.score(SENTENCES)], "same seed, same weights: labels only rename"


def test_bad_acceptable_labels_are_usage_errors() -> None:
    from transformers import RobertaConfig

    two = RobertaConfig(num_labels=2)
    with pytest.raises(UsageError, match="out of range"):
        acceptable_index(two, "2", "m")
    with pytest.raises(UsageError, match=r"not a label .* allowed: 0 \(LABEL_0\), 1 \(LABEL_1\)"):
        acceptable_index(two, "acceptable", "m")
    with pytest.raises(UsageError, match="softmax"):
        acceptable_index(RobertaConfig(num_labels=1), None, "m")


def _items(texts: list[str]) -> dict:
    return {
        "info": {"stage": "translate"},
        "questions": [
            {"question": "q", "answer": "yes", "family": f"family/{i % 2}", "question_type": "binary",
             "question_ru": t, "answer_ru": "да", "translator": "native"}
            for i, t in enumerate(texts)
        ],
    }


def test_threshold_decides_what_is_kept(scorer: RucolaScorer, tmp_path: Path) -> None:
    source = tmp_path / "q_ru.json"
    source.write_text(json.dumps(_items(SENTENCES), ensure_ascii=False), encoding="utf-8")
    scores = sorted(v.score for v in scorer.score(SENTENCES))
    threshold = scores[4]  # the median: kept when score >= threshold
    result = run_filter(FilterJob(source, tmp_path / "kept.json", threshold, batch_size=4, progress=False), lambda: scorer)
    assert (result.kept, result.rejected) == (5, 4)
    kept = json.loads((tmp_path / "kept.json").read_text(encoding="utf-8"))["questions"]
    rejected = [json.loads(line) for line in (tmp_path / "kept.rejected.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(i["acceptability"]["score"] >= threshold and i["acceptability"]["reasons"] == [] for i in kept)
    assert all(i["acceptability"]["score"] < threshold for i in rejected)
    assert all(i["acceptability"]["reasons"][0].startswith("low_score: rucola score") for i in rejected)
    assert {i["acceptability"]["backend"] for i in kept + rejected} == {"rucola"}
    assert {i["acceptability"]["threshold"] for i in kept + rejected} == {threshold}


def test_cli_runs_a_local_model_and_records_it(model_dir: Path, tmp_path: Path) -> None:
    source = tmp_path / "q_ru.json"
    source.write_text(json.dumps(_items(SENTENCES), ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "out" / "kept.json"
    argv = ["--in", str(source), "--out", str(out), "--backend", "rucola", "--model", str(model_dir),
            "--device", "cpu", "--threshold", "0", "--batch-size", "3"]
    assert main(argv) == 0
    document = json.loads(out.read_text(encoding="utf-8"))
    assert len(document["questions"]) == len(SENTENCES)
    scorer_info = document["info"]["scorer"]
    assert scorer_info["model"] == str(model_dir)
    assert (scorer_info["acceptable_index"], scorer_info["max_length"], scorer_info["device"]) == (1, 38, "cpu")
    assert document["info"]["settings"] == {"backend": "rucola", "threshold": 0.0, "batch_size": 3}


def test_pickle_weights_load_unless_safetensors_are_required(tmp_path: Path) -> None:
    folder = build_tiny_classifier(tmp_path / "pickle", pickle=True)
    assert not list(folder.glob("*.safetensors"))
    assert len(RucolaScorer(RucolaOptions(model=str(folder), device="cpu")).score(["Куб?"])) == 1
    with pytest.raises(UsageError, match="cannot load the acceptability model .*--backend morph"):
        RucolaScorer(RucolaOptions(model=str(folder), device="cpu", require_safetensors=True))


def test_an_unloadable_model_exits_2_with_one_line(tmp_path: Path) -> None:
    source = tmp_path / "q_ru.json"
    source.write_text(json.dumps(_items(SENTENCES[:2]), ensure_ascii=False), encoding="utf-8")
    # Offline and with an empty cache the download fails at once instead of timing out.
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"), "PYTHONPATH": str(REPO)}
    completed = subprocess.run(
        [sys.executable, "-m", "filter", "--in", str(source), "--out", str(tmp_path / "kept.json"), "--backend", "rucola"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )
    assert completed.returncode == 2
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1, completed.stderr
    assert "RussianNLP/ruRoBERTa-large-rucola" in lines[0] and "--backend morph" in lines[0] and "--model" in lines[0]
    assert "Traceback" not in completed.stderr
    assert not (tmp_path / "kept.json").exists()


def test_a_missing_local_folder_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        RucolaScorer(RucolaOptions(model=str(tmp_path / "nowhere"), device="cpu"))


def test_a_local_model_path_that_is_no_folder_says_so(tmp_path: Path) -> None:
    fifo = tmp_path / "model.fifo"
    os.mkfifo(fifo)
    with pytest.raises(UsageError, match="is not a folder"):
        RucolaScorer(RucolaOptions(model=str(fifo), device="cpu"))


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error raised when CUDA is missing")
def test_asking_for_cuda_without_it_is_a_usage_error(model_dir: Path) -> None:
    with pytest.raises(UsageError, match="no CUDA device"):
        RucolaScorer(RucolaOptions(model=str(model_dir), device="cuda"))
