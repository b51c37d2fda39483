"""Machine-translation backends: what deduplication, the cache and batching save, measured side by side.

google: N questions with U distinct texts against a local fake of Google's page (tests/fake_google.py)
that waits --latency seconds before each answer, as the network would. Three runs in one process:
deep-translator's GoogleTranslator called once per question (how ruCLEVR was translated), the
google backend with an empty cache, and the google backend again with the filled cache.

marian (only with --model FOLDER_OR_HUB_ID): the same texts translated in batches of --batch-size
and one by one, same model, same process.

    python benchmarks/translate_bench.py --questions 1000 --distinct 100 --latency 0.01
    python benchmarks/translate_bench.py --model path/to/opus-mt-en-ru --questions 200 --distinct 200
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from deep_translator import GoogleTranslator
from deep_translator.constants import BASE_URLS

from translate.cache import TranslationCache
from translate.google import GoogleBackend

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from fake_google import FakeGoogle  # noqa: E402  (the test suite's fake server)

COLORS = ("red", "blue", "green", "gray", "brown", "purple", "cyan", "yellow")
SHAPES = ("cube", "sphere", "cylinder", "thing")


def english_texts(questions: int, distinct: int) -> list[str]:
    """``questions`` texts cycling through ``distinct`` different ones, as generated questions repeat."""
    variants = [
        f"How many {size} {color} {shape}s are left of the {other} {shape2}?"
        for size in ("large", "small", "big", "tiny")
        for color in COLORS
        for shape in SHAPES
        for other in COLORS
        for shape2 in SHAPES
    ]
    if distinct > len(variants):
        raise SystemExit(f"--distinct must be at most {len(variants)}")
    return [variants[index % distinct] for index in range(questions)]


def timed(function, *args):
    started = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - started


def bench_google(texts: list[str], latency: float) -> dict[str, object]:
    fake = FakeGoogle().start()
    fake.latency_s = latency
    fake.translations.update({text: f"Перевод номер {i}" for i, text in enumerate(dict.fromkeys(texts))})
    BASE_URLS["GOOGLE_TRANSLATE"] = fake.url
    try:
        translator = GoogleTranslator(source="en", target="ru")
        plain, plain_s = timed(lambda: [translator.translate(text) for text in texts])
        plain_requests = len(fake.requests)
        with tempfile.TemporaryDirectory() as folder, TranslationCache(Path(folder) / "cache.sqlite") as cache:
            cold_backend = GoogleBackend(cache=cache, timeout_s=10)
            cold, cold_s = timed(cold_backend.translate_texts, texts)
            warm_backend = GoogleBackend(cache=cache, timeout_s=10)
            warm, warm_s = timed(warm_backend.translate_texts, texts)
    finally:
        fake.stop()
    assert plain == cold == warm, "the three runs disagree"
    return {
        "questions": len(texts),
        "distinct_texts": len(set(texts)),
        "latency_s": latency,
        "per_question_deep_translator": {"requests": plain_requests, "seconds": round(plain_s, 3)},
        "backend_empty_cache": {"requests": cold_backend.requests_sent, "seconds": round(cold_s, 3)},
        "backend_filled_cache": {"requests": warm_backend.requests_sent, "seconds": round(warm_s, 4)},
        "speedup_empty_cache": round(plain_s / cold_s, 1),
        "speedup_filled_cache": round(plain_s / warm_s, 1),
    }


def bench_marian(texts: list[str], model: str, batch_size: int) -> dict[str, object]:
    from translate.marian import MarianBackend

    distinct = list(dict.fromkeys(texts))
    batched_backend = MarianBackend(model, batch_size=batch_size)
    batched, batched_s = timed(batched_backend.translate_texts, distinct)
    single_backend = MarianBackend(model, batch_size=1)
    single, single_s = timed(single_backend.translate_texts, distinct)
    return {
        "model": model,
        "texts": len(distinct),
        "batch_size": batch_size,
        "batched": {"seconds": round(batched_s, 3), "texts_per_s": round(len(distinct) / batched_s, 1)},
        "one_by_one": {"seconds": round(single_s, 3), "texts_per_s": round(len(distinct) / single_s, 1)},
        "speedup": round(single_s / batched_s, 2),
        "identical_output": batched == single,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1000, help="questions to translate (default 1000)")
    parser.add_argument("--distinct", type=int, default=100, help="distinct English texts among them (default 100)")
    parser.add_argument("--latency", type=float, default=0.01, help="seconds the fake server waits per request (default 0.01)")
    parser.add_argument("--model", help="also benchmark the marian backend with this model (folder or hub id)")
    parser.add_argument("--batch-size", type=int, default=16, help="marian batch size (default 16)")
    args = parser.parse_args()
    texts = english_texts(args.questions, args.distinct)
    figures: dict[str, object] = {"google": bench_google(texts, args.latency)}
    if args.model:
        figures["marian"] = bench_marian(texts, args.model, args.batch_size)
    print(json.dumps(figures, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
