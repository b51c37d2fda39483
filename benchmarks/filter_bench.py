"""Throughput of the rucola backend: sentences/s with batching against batch size 1, same model, one run.

The real model cannot be downloaded here, so a RoBERTa of the chosen shape is built with random
weights (throughput does not depend on the weights), saved to a temporary folder and loaded
through the same code path as ``RussianNLP/ruRoBERTa-large-rucola`` (``RucolaScorer``). The
sentences are ruCLEVR-style questions built from the vocabulary; they are batched exactly as
``python -m filter`` batches them (shortest first).

    python benchmarks/filter_bench.py                    # base shape (12 x 768), 256 sentences
    python benchmarks/filter_bench.py --shape large      # ruRoBERTa-large's shape (24 x 1024)

Both batch sizes are timed in alternating rounds, and the median round of each is reported, so
load from other processes on the machine hits both alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from assets.vocabulary import load_vocabulary  # noqa: E402
from filter.pipeline import batches_to_score  # noqa: E402
from filter.rucola import RucolaOptions, RucolaScorer  # noqa: E402

SHAPES = {
    "tiny": {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 2, "intermediate_size": 256},
    "base": {"num_hidden_layers": 12, "hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 3072},
    "large": {"num_hidden_layers": 24, "hidden_size": 1024, "num_attention_heads": 16, "intermediate_size": 4096},
}
VOCAB_SIZE = 50265  # ruRoBERTa-large's vocabulary size (the embedding table's size, not speed)


def questions(count: int, seed: int) -> list[str]:
    """ruCLEVR-style questions from the vocabulary, inflected with pymorphy3."""
    import pymorphy3

    morph = pymorphy3.MorphAnalyzer()
    vocabulary = load_vocabulary()

    def phrase(rng: np.random.Generator, grammemes: set[str]) -> str:
        words = [str(rng.choice(vocabulary.value(a, rng.choice(vocabulary.names(a))).ru["synonyms"]))
                 for a in ("size", "color", "material")]
        noun = str(rng.choice(vocabulary.value("shape", rng.choice(vocabulary.names("shape"))).ru["synonyms"]))
        gender = morph.parse(noun)[0].tag.gender
        adjective_grammemes = grammemes | ({gender} if "sing" in grammemes else set())
        inflected = [morph.parse(w)[0].inflect(adjective_grammemes).word for w in words[: rng.integers(1, 4)]]
        return " ".join([*inflected, morph.parse(noun)[0].inflect(grammemes).word])

    patterns = [
        lambda r: f"Сколько {phrase(r, {'plur', 'gent'})}?",
        lambda r: f"Есть ли {phrase(r, {'sing', 'nomn'})}?",
        lambda r: f"Какого цвета {phrase(r, {'sing', 'nomn'})} слева от {phrase(r, {'sing', 'gent'})}?",
        lambda r: f"Есть ли ещё какие-нибудь предметы такой же формы, как и {phrase(r, {'sing', 'nomn'})}?",
        lambda r: f"Сколько предметов либо {phrase(r, {'plur', 'gent'})}, либо {phrase(r, {'plur', 'gent'})} "
                  f"находится позади {phrase(r, {'sing', 'gent'})}?",
    ]
    texts = []
    for index in range(count):
        rng = np.random.default_rng([seed, index])
        texts.append(patterns[int(rng.integers(len(patterns)))](rng).capitalize())
    return texts


def build_model(folder: Path, shape: str, corpus: list[str], seed: int) -> None:
    """A byte-level BPE trained on the corpus and a randomly initialised RoBERTa classifier."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import RobertaConfig, RobertaForSequenceClassification, RobertaTokenizerFast

    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=8000, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(corpus, trainer)
    bpe.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    tokenizer = RobertaTokenizerFast(tokenizer_object=bpe, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                                     cls_token="<s>", pad_token="<pad>", unk_token="<unk>", mask_token="<mask>")
    config = RobertaConfig(vocab_size=VOCAB_SIZE, max_position_embeddings=514, type_vocab_size=1, pad_token_id=1,
                           bos_token_id=0, eos_token_id=2, num_labels=2, **SHAPES[shape])
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = RobertaForSequenceClassification(config)
    tokenizer.save_pretrained(folder)
    model.save_pretrained(folder)


def time_scoring(scorer: RucolaScorer, texts: list[str], batch_size: int) -> tuple[float, list[float]]:
    """Seconds to score every text in the filter's batches, and the scores in text order."""
    scores: dict[str, float] = {}
    start = time.perf_counter()
    for batch in batches_to_score(texts, batch_size):
        scores.update(zip(batch, (v.score for v in scorer.score(batch)), strict=True))
    return time.perf_counter() - start, [scores[t] for t in texts]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", choices=SHAPES, default="base", help="RoBERTa shape (default: base, 12 x 768)")
    parser.add_argument("--sentences", type=int, default=256, help="distinct questions scored per round (default: 256)")
    parser.add_argument("--batch-size", type=int, default=32, help="the batched size compared with 1 (default: 32)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating timed rounds of each (default: 3)")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--seed", type=int, default=0, help="seed for sentences and weights (default: 0)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    args = parser.parse_args(argv)

    import torch

    texts = list(dict.fromkeys(questions(args.sentences * 2, args.seed)))[: args.sentences]
    with tempfile.TemporaryDirectory() as folder:
        build_model(Path(folder), args.shape, texts, args.seed)
        scorer = RucolaScorer(RucolaOptions(model=folder, device="cpu", threads=args.threads))
        parameters = sum(p.numel() for p in scorer.model.parameters())
        tokens = [len(scorer.tokenizer(t)["input_ids"]) for t in texts]
        time_scoring(scorer, texts[: args.batch_size], args.batch_size)  # warm-up
        single_times, batched_times = [], []
        for _ in range(args.rounds):
            seconds, single = time_scoring(scorer, texts, 1)
            single_times.append(seconds)
            seconds, batched = time_scoring(scorer, texts, args.batch_size)
            batched_times.append(seconds)

    single_rate = len(texts) / statistics.median(single_times)
    batched_rate = len(texts) / statistics.median(batched_times)
    figures = {
        "shape": args.shape,
        "parameters": parameters,
        "sentences": len(texts),
        "tokens_per_sentence": {"mean": round(float(np.mean(tokens)), 1), "max": int(max(tokens))},
        "torch_threads": torch.get_num_threads(),
        "rounds": args.rounds,
        "batch_1_sentences_per_s": round(single_rate, 2),
        f"batch_{args.batch_size}_sentences_per_s": round(batched_rate, 2),
        "speedup": round(batched_rate / single_rate, 2),
        "max_score_difference": max(abs(a - b) for a, b in zip(single, batched, strict=True)),
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
